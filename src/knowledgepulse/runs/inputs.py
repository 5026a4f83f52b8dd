"""What a Python user hands a run, as trace items: files, row dicts, a DataFrame, a Dataset.

``items_of`` takes any of them. Files go through :func:`~knowledgepulse.runs.read.read_items`;
in-memory rows are read as ``ReasoningTrace`` documents when they are ones (``@type``), else as
dataset rows of a conversation format recognised from the first row. Nothing is fetched and
nothing heavy is imported unless the data is of its kind (pandas, pyarrow, datasets).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.runs.read import ROW_TASK, Notes, read_items
from knowledgepulse.trace import TraceItem, validate_record
from knowledgepulse.trace.item import task_at

if TYPE_CHECKING:
    from knowledgepulse.integrations import TraceOptions

RunInput: TypeAlias = (
    "str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Iterable[Mapping[str, Any]] | Any"
)
"""A path, several paths, row dicts (a list, a generator, a ``datasets.Dataset``), a pandas
``DataFrame`` or a pyarrow ``Table``."""

ROWS_NAME = "rows"
"""What locations and row-number ids call in-memory rows (``kp:trace:rows:<n>``)."""


def items_of(
    data: RunInput,
    *,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    task_field: str | None = None,
    notes: Notes | None = None,
) -> Iterator[TraceItem | Problem]:
    """Every trace item of ``data``, and every problem, in order.

    Args:
        data: see :data:`RunInput`.
        source: for files, as :func:`read_items` takes it; for rows, a conversation format
            (``openai-chat``...) or ``auto``: recognised from the first row.
        options: the domain, confidence and row columns of converted rows.
        task_field: where each item's task is read (a row's column, a trace's dotted path).
        notes: told what a reader says about a whole file.

    Raises:
        TypeError: ``data`` is none of the kinds above (a single dict, say).
        InputFileError: a file cannot be opened.
    """
    paths = _paths(data)
    if paths is not None:
        return read_items(paths, source=source, options=options, task_field=task_field, notes=notes)
    return _from_rows(_rows(data), source or "auto", options, task_field)


def _paths(data: Any) -> list[str | Path] | None:
    if isinstance(data, str | os.PathLike):
        return [Path(data) if not isinstance(data, str) else data]
    if isinstance(data, Sequence) and data and all(isinstance(p, str | os.PathLike) for p in data):
        return [p if isinstance(p, str) else Path(p) for p in data]
    return None


def _rows(data: Any) -> Iterator[Any]:
    """The rows of a table or an iterable, as dicts, lazily."""
    if isinstance(data, Mapping):
        raise TypeError(
            "data is one mapping, not rows (a DatasetDict, or a single trace?): give a list of "
            "rows or traces, or one split, e.g. dataset['train']"
        )
    to_batches = getattr(data, "to_batches", None)
    if callable(to_batches) and hasattr(data, "schema"):  # a pyarrow Table
        return (row for batch in to_batches() for row in batch.to_pylist())
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame
        return iter(data.to_dict(orient="records"))
    if isinstance(data, Iterable):
        return iter(data)
    raise TypeError(
        f"cannot read {type(data).__name__} as traces: give a path, row dicts, a pandas "
        "DataFrame, a pyarrow Table or a datasets.Dataset"
    )


def _from_rows(
    rows: Iterator[Any], source: str, options: TraceOptions | None, task_field: str | None
) -> Iterator[TraceItem | Problem]:
    first = next(rows, None)
    if first is None:
        return
    everything = chain([first], rows)
    if source == "auto" and _is_trace(first):
        for index, value in enumerate(everything):
            record = Record(Location(ROWS_NAME, index + 1, index), value)
            result = validate_record(record)
            if isinstance(result, TraceItem):
                task = None if task_field is None else task_at(result.document, task_field)
                yield dataclasses.replace(result, task=task) if task else result
            else:
                yield from result
        return
    yield from _converted_rows(everything, source, options, task_field)


def _converted_rows(
    rows: Iterable[Any], source: str, options: TraceOptions | None, task_field: str | None
) -> Iterator[TraceItem | Problem]:
    from knowledgepulse.integrations import RowOptions, TraceOptions  # noqa: PLC0415
    from knowledgepulse.integrations.chat import rows_to_traces  # noqa: PLC0415

    options = options or TraceOptions()
    if task_field is not None and options.rows.task_field is None:
        options = dataclasses.replace(
            options, rows=dataclasses.replace(options.rows or RowOptions(), task_field=task_field)
        )
    for item in rows_to_traces(rows, source=source, options=options, name=ROWS_NAME):
        if isinstance(item, Problem):
            yield item
            continue
        location = item.location or Location(ROWS_NAME)
        record = Record(location, item.document)
        task = task_at(item.document, ROW_TASK)
        yield TraceItem(record, item.trace, item.row, task, item.warnings)


def _is_trace(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("@type") == "ReasoningTrace"
