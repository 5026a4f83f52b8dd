"""Reading inputs into trace items: ``ReasoningTrace`` files, framework exports, dataset rows.

Problems come in input order beside the items, never raised: a bad record never stops a run.
What a reader says about a whole file (the source it was read as, the columns it guessed) goes
to ``notes``, once a file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knowledgepulse._util.text import counted
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.trace import TraceItem, load_traces
from knowledgepulse.trace.item import task_at

if TYPE_CHECKING:  # the converters bring pydantic: loaded for a source only
    from knowledgepulse.sources import TraceOptions

Notes = Callable[[str], object]
"""Told each line a reader says about a whole file (``traces.json: read as otlp (3 traces)``)."""

ROW_TASK = "metadata.source.task"
"""Where a row converter keeps the row's task column (until the converters set it on the item)."""


def read_items(
    paths: Sequence[str | Path],
    *,
    source: str | None = None,
    options: TraceOptions | None = None,
    task_field: str | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
) -> Iterator[TraceItem | Problem]:
    """Every trace item of ``paths`` (``-``: standard input), and every problem, in input order.

    Args:
        paths: trace files (JSON, JSON Lines, ``.gz``), or a framework's or dataset's files.
        source: ``None`` for ``ReasoningTrace`` files; a source name (``otlp``...) or ``auto``
            to convert a framework's files or dataset rows as they are read.
        options: the domain, confidence and row columns of converted traces.
        task_field: where each item's task is read: a dataset's column (with a source), else a
            dotted path in the trace's JSON (``metadata.task_id``). ``None``: a dataset's task
            column when one is found, else no task (left to inference).
        notes: told what a reader says about a whole file.
        progress: told the bytes read so far (``ReasoningTrace`` files only).

    Raises:
        InputFileError: a file cannot be opened (checked as its turn comes).
    """
    if source is None:
        items: Iterator[TraceItem | Problem] = load_traces(paths, progress=progress)
    else:
        items = _converted(paths, source, options, notes or _ignore)
    for item in items:
        if isinstance(item, TraceItem) and (task := _task(item, source, task_field)):
            yield dataclasses.replace(item, task=task)
        else:
            yield item


def _task(item: TraceItem, source: str | None, task_field: str | None) -> str | None:
    if source is not None:  # a dataset's task column, kept in the converted trace's metadata
        return task_at(item.document, ROW_TASK)
    return None if task_field is None else task_at(item.document, task_field)


def _converted(
    paths: Sequence[str | Path], source: str, options: TraceOptions | None, notes: Notes
) -> Iterator[TraceItem | Problem]:
    """The traces converted from a framework's files, in order, with their problems.

    A source whose files hold no message text (only names and timings) is told once, with the
    switch that turns content capture on; a loss said by every trace of a file, once.
    """
    from knowledgepulse.sources.convert import convert_files, reader  # noqa: PLC0415

    hinted: set[str] = set()
    warned: set[str] = set()

    def read_as(path: str, found: str, count: int) -> None:
        notes(f"{path}: read as {found} ({counted(count, 'trace')})")

    for item in convert_files(paths, source=source, options=options, read_as=read_as):
        if isinstance(item, Problem):
            yield item
            continue
        location = item.location or Location("-")
        if not item.has_text and (found := item.source_format) not in hinted:
            hinted.add(found)
            notes(
                f"kp: warning: {location}: the {found} traces hold no message text, only "
                "names and timings, so novelty has little to go on; "
                + (reader(found).CONTENT_HINT if found else "")
            )
        for warning in item.warnings:
            if warning not in warned:
                warned.add(warning)
                yield Problem(location, "", warning, warning=True)
        for note in item.notes:  # how a file's rows are read, once per file
            notes(f"{location.file}: {note}")
        yield TraceItem(Record(location, item.document), item.trace, item.row, None, item.warnings)


def _ignore(_: str) -> None:
    return None
