"""Files written by agent frameworks, converted to ``ReasoningTrace`` documents.

Each source module (``otel``, ``langchain``, ``openai_agents``, ``smolagents``, ``pydantic_ai``,
and the observability tools' exports in ``exports``) reads the records of one file and gives a
:class:`ConvertedTrace` per source trace, or a located :class:`~knowledgepulse.records.Problem`
for what it cannot read; the rest of the file goes on.
``auto`` picks the source from the file's first record. Reading files needs no framework.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Protocol, cast

from knowledgepulse._util.digest import SeenIds
from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.records import Location, Problem, Record, read_records
from knowledgepulse.sources._envelope import ConvertedTrace, TraceOptions
from knowledgepulse.sources.names import SOURCE_CHOICES, SOURCES


class SourceReader(Protocol):
    """What a source module offers for files (module-level names)."""

    CONTENT_HINT: str
    """How to make the framework record message text, for when a file holds none."""

    def recognises(self, value: Any) -> bool:
        """Whether a file's first record is in this source's shape."""

    def convert_records(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[ConvertedTrace | Problem]:
        """Every trace in one file's records, and a located problem for each part it cannot read."""


def reader(source: str) -> SourceReader:
    """The reader of a source format (``otlp``, ``langsmith``...).

    A module, or the object a ``module:attribute`` entry of :data:`SOURCES` names (a dataset
    format's family).

    Raises:
        ValueError: ``source`` is not one of :data:`SOURCES`.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    module, _, attribute = SOURCES[source].partition(":")
    found = importlib.import_module(module)
    return cast(SourceReader, getattr(found, attribute) if attribute else found)


def recognise(value: Any) -> str | None:
    """The source format a record is in, or ``None`` when no reader recognises it."""
    for source in SOURCES:
        if reader(source).recognises(value):
            return source
    return None


ReadAs = Callable[[str, str, int], object]
"""Told, after each file, its name, the source format it was read as, and how many traces."""


def convert_file(
    path: str | Path,
    *,
    source: str = "auto",
    options: TraceOptions | None = None,
    read_as: Callable[[str], object] | None = None,
) -> Iterator[ConvertedTrace | Problem]:
    """Every trace in a framework's file (or ``-``, standard input), in the file's order.

    Args:
        path: a JSON, JSON Lines (``.gz`` too) file, or ``-``.
        source: a key of :data:`SOURCES`, or ``auto`` to recognise it from the first record.
        options: the domain and confidence to give every trace.
        read_as: called with the source format the file is read as, once it is known (not at
            all when no reader recognises the file).

    Raises:
        InputFileError: the file cannot be opened.
        ValueError: ``source`` is unknown.
    """
    options = options or TraceOptions()
    here = Location(str(path))
    for item in _converted(read_records(path), source, options, read_as):
        located = isinstance(item, Problem) or item.location is not None
        yield item if located else dataclasses.replace(item, location=here)


def convert_files(
    paths: Sequence[str | Path],
    *,
    source: str = "auto",
    options: TraceOptions | None = None,
    read_as: ReadAs | None = None,
) -> Iterator[ConvertedTrace | Problem]:
    """Every trace in several files, in order; a trace id seen before gets a warning first.

    ``read_as``, when given, is told after each file what it was read as and how many traces
    it gave (``kp`` says it in one line).

    Raises:
        InputFileError: a file cannot be opened (checked as its turn comes).
        ValueError: ``source`` is unknown.
    """
    seen = SeenIds()
    for path in paths:
        found: list[str] = []
        count = 0
        for item in convert_file(path, source=source, options=options, read_as=found.append):
            count += isinstance(item, ConvertedTrace)
            if isinstance(item, ConvertedTrace) and seen.add(item.trace.id):
                yield Problem(
                    item.location or Location(str(path)),
                    "id",
                    f"the trace {item.trace.id!r} appeared earlier in the input (the same run "
                    "exported twice?); both are kept",
                    warning=True,
                )
            yield item
        if read_as is not None and found:
            read_as(str(path), found[0], count)


def _converted(
    items: Iterator[Record | Problem],
    source: str,
    options: TraceOptions,
    read_as: Callable[[str], object] | None,
) -> Iterator[ConvertedTrace | Problem]:
    if source != "auto":
        if read_as is not None:
            read_as(source)
        yield from reader(source).convert_records(items, options)
        return
    lead: list[Record | Problem] = []
    for item in items:
        lead.append(item)
        if isinstance(item, Record):
            break
    first = lead[-1] if lead else None
    if not isinstance(first, Record):
        yield from cast(list[Problem], lead)  # nothing but problems, or an empty file
        return
    found = recognise(first.value)
    if found is None:
        yield from (item for item in lead if isinstance(item, Problem))
        yield first.problem((), _unrecognised(first.value))
        return
    if read_as is not None:
        read_as(found)
    yield from reader(found).convert_records(chain(lead, items), options)


def _unrecognised(value: Any) -> str:
    return (
        f"not a trace file this tool knows: {describe_value(value)}; give --from with one of "
        f"{', '.join(SOURCES)} (see `kp convert --help` for the shapes each takes)"
    )


__all__ = [
    "SOURCES",
    "SOURCE_CHOICES",
    "ReadAs",
    "SourceReader",
    "convert_file",
    "convert_files",
    "reader",
    "recognise",
]
