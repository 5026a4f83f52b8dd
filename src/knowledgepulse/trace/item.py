"""The one thing that flows through a run: a trace, where it was read, and what came with it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from knowledgepulse.records import Location, Record
from knowledgepulse.trace.models import ReasoningTrace


@dataclass(frozen=True, slots=True, repr=False)
class TraceItem:
    """A valid trace and the facts about it that were known where it was read.

    Every reader makes one (a trace file, a framework's export, a dataset row, a live run), and
    every step after (redact, score, select, dedupe, write) takes it and gives it on. A fact is
    set here, once, and carried: never written into the trace's JSON and read back.

    Attributes:
        record: the trace's JSON and where it starts (file, line, index); for a converted trace,
            the document the converter made, located where its source starts.
        trace: the validated trace.
        row: the dataset row the trace was made from, when it came from one: it is written back
            with ``kp_`` columns, its other columns untouched.
        task: the task the trace is a run of, when the input says (a task column or field);
            ``None``: not said, left to inference.
        warnings: what reading lost or guessed, in words (each said once a file).
        reward: the run's reward, when the input gave its outcome as a number (a dataset's
            success column: ``metadata.success`` is whether it reaches the threshold).
        tools: the tools the source offered the model, as OpenAI function definitions (a
            dataset row's ``tools`` column): a training row written from the trace lists them.
        system: the system prompt the source opened the conversation with: a training row
            written from the trace opens with it too.
    """

    record: Record
    trace: ReasoningTrace
    row: Record | None = None
    task: str | None = None
    warnings: tuple[str, ...] = ()
    reward: float | None = None
    tools: tuple[dict[str, Any], ...] = ()
    system: str | None = None

    @property
    def location(self) -> Location:
        """Where the trace was read from."""
        return self.record.location

    @property
    def document(self) -> Any:
        """The trace as JSON: the value read, or the document a converter made."""
        return self.record.value

    def __repr__(self) -> str:
        # Short: a notebook shows a list of items, and the whole trace and row would bury them.
        return f"TraceItem({self.trace.id!r}, at={str(self.location)!r}, task={self.task!r})"


def value_at(document: Any, path: str) -> Any:
    """The value at a dotted ``path`` of a JSON value (``metadata.task_id``, ``extra.0``).

    A number segment indexes a list; ``None`` when a segment is missing.
    """
    value = document
    for segment in path.split("."):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
    return value


def task_at(document: Any, path: str) -> str | None:
    """The task key at a dotted ``path`` of a trace's JSON (``metadata.task_id``, ``extra.0``).

    A number segment indexes a list. A string is the key itself; another JSON value is its
    compact JSON text with sorted keys, so equal values make equal keys. ``None`` when a
    segment is missing or the value is null.
    """
    value = value_at(document, path)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    # default=str: a Parquet value JSON has no type for (a decimal, a timestamp) is its text.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def number_at(document: Any, path: str) -> float | None:
    """The finite number at a dotted ``path`` of a JSON value (see :func:`value_at`).

    A boolean, a string or a missing value is no number: ``None``.
    """
    return finite_number(value_at(document, path))


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float when it is a number (a Parquet decimal too), else ``None``.

    A boolean is no number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def with_task(item: TraceItem, task_field: str | None) -> TraceItem:
    """``item`` with its task: its own, else its row's ``task_field``, else its trace's JSON's."""
    if item.task is not None or task_field is None:
        return item
    task = task_in(None if item.row is None else item.row.value, item.document, task_field)
    return item if task is None else replace(item, task=task)


def task_in(row: Any, document: Any, task_field: str) -> str | None:
    """The task at ``task_field``: the row's column (a dotted path), else the trace's JSON's."""
    task = None if row is None else task_at(row, task_field)
    return task if task is not None else task_at(document, task_field)
