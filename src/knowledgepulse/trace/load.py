"""Loading traces from files, standard input or parsed JSON, with path-precise errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowledgepulse._util.digest import SeenIds
from knowledgepulse._util.jsonpath import problems_from
from knowledgepulse.errors import TraceValidationError
from knowledgepulse.records import Location, Problem, Record, read_records
from knowledgepulse.trace.keys import has_unknown_keys, misspelt_keys
from knowledgepulse.trace.models import ReasoningTrace


@dataclass(frozen=True, slots=True)
class LoadedTrace:
    """A valid trace and the record it was read from (kept for ``--annotate``).

    A trace converted from a dataset row keeps the row too: its other columns travel beside
    the trace, so that the row can be written back in its own form with ``kp_`` columns.
    """

    record: Record
    trace: ReasoningTrace
    row: Record | None = None

    @property
    def location(self) -> Location:
        """Where the trace was read from."""
        return self.record.location


def parse_trace(value: Any, *, source: str = "<trace>") -> ReasoningTrace:
    """Validate parsed JSON as a :class:`ReasoningTrace`.

    Raises:
        TraceValidationError: listing every problem with its JSON path, the value found and what
            was expected.
    """
    if isinstance(value, ReasoningTrace):
        return value
    record = Record(Location(source), value)
    result = validate_record(record)
    if isinstance(result, LoadedTrace):
        return result.trace
    raise TraceValidationError(f"{source}: not a valid ReasoningTrace", result)


def validate_record(record: Record) -> LoadedTrace | list[Problem]:
    """A record as a valid trace, or the list of everything wrong with it."""
    try:
        trace = ReasoningTrace.model_validate(record.value)
    except ValidationError as error:
        return problems_from(error, record)
    return LoadedTrace(record, trace)


def load_traces(
    sources: Iterable[str | Path], *, progress: Callable[[int], object] | None = None
) -> Iterator[LoadedTrace | Problem]:
    """Read traces from JSON files (one trace or a list), JSON Lines files or ``-`` (stdin).

    Yields each valid trace and each problem in input order, as the input is read (a JSON Lines
    file is never held whole); a bad record never stops the records after it. A trace whose id
    appeared earlier in the input is still yielded, after a warning (a :class:`Problem` with
    ``warning=True``) that says so; so is a record with an unknown key one or two edits from a
    known one (``steps[2].tols``: did you mean ``tool``?). ``progress`` is called with the bytes
    read as reading goes.

    Raises:
        InputFileError: a file cannot be opened at all.
    """
    seen = SeenIds()
    for source in sources:
        for item in read_records(source, formats=("json", "jsonl"), progress=progress):
            if isinstance(item, Problem):
                yield item
                continue
            result = validate_record(item)
            if not isinstance(result, LoadedTrace) or has_unknown_keys(result.trace):
                yield from _misspelt(item)
            if isinstance(result, LoadedTrace):
                trace_id = result.trace.id
                if seen.add(trace_id):
                    yield Problem(
                        result.location,
                        "id",
                        f"the id {trace_id!r} appeared earlier in the input; "
                        "both traces are scored (give each trace its own id)",
                        warning=True,
                    )
                yield result
            else:
                yield from result


def _misspelt(record: Record) -> Iterator[Problem]:
    """A warning for each key of the record that looks like a misspelt known key."""
    for path, known in misspelt_keys(record.value):
        yield Problem(
            record.location,
            path,
            f"unknown key, kept but not read: did you mean {known!r}?",
            warning=True,
        )
