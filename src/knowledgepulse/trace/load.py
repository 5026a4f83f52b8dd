"""Loading traces from files, standard input or parsed JSON, with path-precise errors.

An unknown key is kept, but one or two edits from a known key of its object (``steps[2].tols``)
it is a typo that silently changes the score: a warning says so. The known keys are the models'.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from knowledgepulse._util.digest import SeenIds
from knowledgepulse._util.jsonpath import format_path
from knowledgepulse._util.settings import paths_of
from knowledgepulse._util.text import closest
from knowledgepulse.errors import TraceValidationError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import (
    LONE_SURROGATE,
    JsonError,
    check_python,
    without_lone_surrogates,
)
from knowledgepulse.records.readers import is_text_name, listed_inputs, read_records
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.models import CONTEXT_URLS, ReasoningTrace

_IN_A_FILE = (
    "a file is read in one format, its first record's: give such records a file of their "
    "own (kp score FILE and knowledgepulse.score(path) convert it)"
)
"""What to do with another format's record in a file of traces (:func:`trace_items`)."""

MAX_EDITS = 2
"""The most edits (insertions, deletions, substitutions) between a misspelt key and the known one;
a known key of two letters (``id``) allows one, or every short extra key would be its typo."""


def parse_trace(value: Any, *, source: str = "<trace>") -> ReasoningTrace:
    """Parsed JSON as a :class:`ReasoningTrace`, or a TraceValidationError listing every problem.

    Each problem names its JSON path, the value found and what was expected. A value no JSON
    file could hold (NaN, a reference cycle, a set, bytes) is refused at its path, as in a file.
    """
    if isinstance(value, ReasoningTrace):
        return value
    try:
        check_python(value)
    except JsonError as problem:
        found = [Problem(Location(source), problem.path, problem.message)]
        raise TraceValidationError(
            f"{Location(source)}: not a valid ReasoningTrace", found
        ) from None
    try:
        return validated_trace(value, source=source)
    except TraceValidationError as error:
        hint = _not_a_document(value)
        if hint is None:
            raise
        summary = f"{Location(source)}: not a valid ReasoningTrace: {hint}"
        raise TraceValidationError(summary, error.problems) from None


def _not_a_document(value: Any) -> str | None:
    """What a value given as a trace is instead, and the call that reads it; else ``None``.

    A string is a path or JSON text; a mapping with neither ``@context`` nor ``@type`` another
    format's record, told otherwise only as every required field missing, which says nothing
    of what to do (``None`` for one that may be a trace with mistakes, and ``{}``).
    """
    if isinstance(value, str):
        return (
            "it is a string; give the parsed JSON (json.loads(text)), or read a file with "
            "load_traces(path) or score(path)"
        )
    described = other_format(value)
    if described is None:
        return None
    return (
        f"{described}: dataset rows and other frameworks' records are recognised and "
        "converted by knowledgepulse.score([record]) (kp score FILE), or kp convert FILE"
    )


def other_format(value: Any) -> str | None:
    """What a mapping read as a trace is instead: another format's record; else ``None``.

    One with neither ``@context`` nor ``@type`` (``None`` for one that may be a trace with
    mistakes, and for ``{}``). Said in place of every required field missing, which says
    nothing of what to do: by :func:`parse_trace` with the call that reads it, by
    :func:`trace_items` with how a file of traces holding it is read.
    """
    if isinstance(value, Mapping) and value and not {"@context", "@type"} & value.keys():
        keys = ", ".join(sorted(map(str, value))[:5])
        return (
            f"it has neither @context nor @type (its keys: {keys}), so it is a record of "
            "another format"
        )
    return None


def validated_trace(value: Any, *, source: str = "<trace>") -> ReasoningTrace:
    """:func:`parse_trace` of a value known to be JSON (a source's document made of read rows)."""
    try:
        return ReasoningTrace.model_validate(value)
    except ValidationError as error:
        problems = Record(Location(source), value).problems_from(error)
    raise TraceValidationError(f"{Location(source)}: not a valid ReasoningTrace", problems)


def validate_record(record: Record) -> TraceItem | list[Problem]:
    """A record as a valid trace, or the list of everything wrong with it."""
    try:
        trace = ReasoningTrace.model_validate(record.value)
    except ValidationError as error:
        return record.problems_from(error)
    return TraceItem(record, trace)


def load_traces(
    sources: str | Path | Iterable[str | Path],
    *,
    progress: Callable[[int], object] | None = None,
) -> Iterator[TraceItem | Problem]:
    """Read traces from JSON files (one trace or a list), JSON Lines files or ``-`` (stdin).

    ``sources``: one path, or several; a folder is read as the files in it kp reads, at any
    depth, in path order (:func:`~knowledgepulse.records.readers.input_files`).

    Yields each valid trace and each problem in input order, as read; a bad record never stops
    the rest. A repeated id or a misspelt key (``steps[2].tols``: did you mean ``tool``?) is a
    warning (``warning=True``) before the trace. ``progress`` is called with the bytes read.
    An ``InputFileError`` if a file cannot be opened at all, or a folder holds none kp reads;
    a ``SettingTypeError`` if ``sources`` is not a path or paths.
    """
    seen = SeenIds()
    for source in _trace_files(sources):
        records = read_records(source, formats=("json", "jsonl"), progress=progress)
        for item in trace_items(records):
            if isinstance(item, TraceItem) and seen.add(item.trace.id):
                yield repeated_id(item)
            yield item


def _trace_files(sources: object) -> Iterator[str | Path]:
    """The files ``sources`` names; of a folder, those of JSON text (a table is a dataset's)."""
    for path, in_folder in listed_inputs(paths_of(sources)):
        if not in_folder or is_text_name(path):
            yield path


def trace_items(
    records: Iterable[Record | Problem], *, instead: str = _IN_A_FILE
) -> Iterator[TraceItem | Problem]:
    """Each record as a valid trace, or its problems; a misspelt key is a warning before it.

    The problems among ``records`` are passed on where they are. A record of another format
    (:func:`other_format`) is one problem saying so, then ``instead`` (what to do).
    """
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        record, result = item, validate_record(item)
        if not isinstance(result, TraceItem):
            # A lone surrogate (a value made in Python: json.loads keeps one) reads as U+FFFD
            # with a warning, as in a file, rather than losing the trace.
            value, paths = without_lone_surrogates(item.value)
            if paths:
                record = Record(item.location, value, item.lines)
                for path in paths:
                    yield Problem(item.location, path, LONE_SURROGATE, warning=True)
                result = validate_record(record)
        described = None if isinstance(result, TraceItem) else other_format(record.value)
        if described is not None:  # one line, not each required field missing
            said = f"not a ReasoningTrace: {described}" + (f"; {instead}" if instead else "")
            result = [record.problem((), said)]
        if not isinstance(result, TraceItem) or has_unknown_keys(result.trace):
            for path, known in misspelt_keys(record.value):
                message = f"unknown key, kept but not read: did you mean {known!r}?"
                yield Problem(item.location, path, message, warning=True)
        if isinstance(result, TraceItem):
            yield result
        else:
            yield from result


def repeated_id(item: TraceItem) -> Problem:
    """The warning for a trace whose id appeared earlier in the input."""
    return Problem(
        item.location,
        "id",
        f"the id {item.trace.id!r} appeared earlier in the input; "
        "both traces are kept (give each trace its own id)",
        warning=True,
    )


class _Shape(NamedTuple):
    """An object's known keys, and the shapes of the objects under them."""

    known: frozenset[str]
    nested: dict[str, _Shape]


def _shape_of(model: type[BaseModel]) -> _Shape:
    known = frozenset(info.alias or name for name, info in model.model_fields.items())
    nested: dict[str, _Shape] = {}
    for name, info in model.model_fields.items():
        # A model, or one inside ``X | None`` or ``list[X]``.
        for inner in (info.annotation, *typing.get_args(info.annotation)):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                nested[info.alias or name] = _shape_of(inner)
    return _Shape(known, nested)


_TRACE = _shape_of(ReasoningTrace)


@functools.lru_cache(maxsize=1024)  # bounded: a producer's many extra keys cannot grow it
def _closest(key: str, known: frozenset[str]) -> str | None:
    """The known key within :data:`MAX_EDITS` of ``key`` (case aside), the nearest first."""
    # Edits, not difflib's similarity: a producer's own short keys ('kind') are near 'id' by that;
    # underscores count, or 'x_id' would be near 'id' too.
    return closest(key, known, ignore_case=True, max_edits=MAX_EDITS)


def has_unknown_keys(trace: ReasoningTrace) -> bool:
    """Whether any object of a valid trace kept a key the models do not know.

    Every trace read takes this test, so it is written out over the models' nesting: 3 us a
    trace, against 40 for a generic walk (``test_keys`` checks it sees every nested model).
    """
    if (
        trace.__pydantic_extra__
        or trace.metadata.__pydantic_extra__
        or trace.task.__pydantic_extra__
        or trace.outcome.__pydantic_extra__
    ):
        return True
    for step in trace.steps:
        if step.__pydantic_extra__ or (step.tool is not None and step.tool.__pydantic_extra__):
            return True
    delta = trace.knowledge_graph_delta
    return delta is not None and bool(
        delta.__pydantic_extra__
        or any(entity.__pydantic_extra__ for entity in delta.entities)
        or any(fact.__pydantic_extra__ for fact in delta.relationships)
    )


def misspelt_keys(document: Any) -> list[tuple[str, str]]:
    """The path (``steps[2].tols``) and known key (``tool``) of each misspelt key, in order.

    A document naming neither the trace's ``@context`` nor its ``@type`` is another kind of
    record (a framework's file read without ``--from``), not a misspelt trace.
    """
    found: list[tuple[str, str]] = []
    if is_trace_document(document):
        _walk(document, _TRACE, (), found)
    return found


def is_trace_document(document: Any) -> bool:
    """Whether a record names the trace's ``@type`` or ``@context`` (else another kind of row)."""
    return type(document) is dict and (
        document.get("@type") == "ReasoningTrace" or document.get("@context") in CONTEXT_URLS
    )


def _walk(
    value: Any, shape: _Shape, loc: tuple[str | int, ...], found: list[tuple[str, str]]
) -> None:
    if type(value) is not dict:
        return
    for key, item in value.items():
        if key not in shape.known:
            guess = _closest(str(key), shape.known)
            if guess is not None:
                found.append((format_path((*loc, str(key))), guess))
            continue
        inner = shape.nested.get(key)
        if inner is None:
            continue
        if type(item) is list:
            for index, element in enumerate(item):
                _walk(element, inner, (*loc, key, index), found)
        else:
            _walk(item, inner, (*loc, key), found)
