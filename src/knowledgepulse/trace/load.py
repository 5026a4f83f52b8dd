"""Loading traces from files, standard input or parsed JSON, with path-precise errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from knowledgepulse._util.seen import SeenIds
from knowledgepulse.errors import TraceValidationError
from knowledgepulse.records import Decoded, Location, Problem, Record, read_records_decoding
from knowledgepulse.trace.views import TraceView, decode_view, trace_view

if TYPE_CHECKING:
    from knowledgepulse.trace.models import ReasoningTrace


class LoadedTrace:
    """A valid trace and the record it was read from (kept for ``--annotate``).

    :func:`load_traces` checks a trace with the compiled check of
    :mod:`knowledgepulse.trace.views` first, from a JSON Lines line's bytes when it can. The
    record (:attr:`record`) and the model (:attr:`trace`) are then made on first use: scoring
    without an embedder reads the view (:attr:`scorable`) and needs neither.
    """

    __slots__ = ("_decoded", "_record", "_trace", "_view", "location")

    def __init__(self, record: Record, trace: ReasoningTrace) -> None:
        self.location = record.location
        self._record: Record | None = record
        self._decoded: Decoded[TraceView] | None = None
        self._trace: ReasoningTrace | None = trace
        self._view: TraceView | None = None

    @classmethod
    def viewed(cls, source: Record | Decoded[TraceView], view: TraceView) -> LoadedTrace:
        """A trace the compiled check accepted, from a parsed record or a decoded line."""
        loaded = cls.__new__(cls)
        loaded.location = source.location
        loaded._record = source if isinstance(source, Record) else None
        loaded._decoded = source if isinstance(source, Decoded) else None
        loaded._trace = None
        loaded._view = view
        return loaded

    @property
    def record(self) -> Record:
        """The parsed document and where it was read from."""
        if self._record is None:
            assert self._decoded is not None  # one of the two is always there
            self._record = self._decoded.record()
            self._decoded = None  # the bytes, once parsed, are not needed again
        return self._record

    @property
    def trace(self) -> ReasoningTrace:
        """The trace as a validated model."""
        if self._trace is None:
            # The compiled check accepts only what the models accept, so this cannot fail.
            self._trace = _model().model_validate(self.record.value)
            self._view = None  # the model scores the same; a run holding every trace keeps one
        return self._trace

    @property
    def scorable(self) -> ReasoningTrace | TraceView:
        """What scoring without an embedder reads: the view when there is one, else the model."""
        return self._view if self._view is not None else self.trace

    def __repr__(self) -> str:
        return f"LoadedTrace({self.location}, {self.scorable.id!r})"


def _model() -> type[ReasoningTrace]:
    # pydantic and the models load with the first record the compiled check leaves to them: a
    # run over valid traces without an embedder never needs them (a tenth of a second).
    from knowledgepulse.trace.models import ReasoningTrace  # noqa: PLC0415

    return ReasoningTrace


def parse_trace(value: Any, *, source: str = "<trace>") -> ReasoningTrace:
    """Validate parsed JSON as a :class:`ReasoningTrace`.

    Raises:
        TraceValidationError: listing every problem with its JSON path, the value found and what
            was expected.
    """
    if isinstance(value, _model()):
        return value
    if isinstance(value, TraceView):
        value = msgspec.to_builtins(value)
    record = Record(Location(source), value)
    result = validate_record(record)
    if isinstance(result, LoadedTrace):
        return result.trace
    raise TraceValidationError(f"{source}: not a valid ReasoningTrace", result)


def validate_record(record: Record) -> LoadedTrace | list[Problem]:
    """A record as a valid trace, or the list of everything wrong with it."""
    from pydantic import ValidationError  # noqa: PLC0415 - see _model

    from knowledgepulse._util.pydantic_errors import problems_from  # noqa: PLC0415

    try:
        trace = _model().model_validate(record.value)
    except ValidationError as error:
        return problems_from(error, record)
    return LoadedTrace(record, trace)


def _checked_record(record: Record) -> LoadedTrace | list[Problem]:
    """:func:`validate_record`, the compiled check first (see :mod:`knowledgepulse.trace.views`)."""
    view = trace_view(record.value)
    if view is not None:
        return LoadedTrace.viewed(record, view)
    return validate_record(record)


def load_traces(
    sources: Iterable[str | Path], *, progress: Callable[[int], object] | None = None
) -> Iterator[LoadedTrace | Problem]:
    """Read traces from JSON files (one trace or a list), JSON Lines files or ``-`` (stdin).

    Yields each valid trace and each problem in input order, as the input is read (a JSON Lines
    file is never held whole); a bad record never stops the records after it. A trace whose id
    appeared earlier in the input is still yielded, after a warning (a :class:`Problem` with
    ``warning=True``) that says so. ``progress`` is called with the bytes read as reading goes.

    Raises:
        InputFileError: a file cannot be opened at all.
    """
    seen = SeenIds()
    for source in sources:
        items = read_records_decoding(
            source, decode_view, formats=("json", "jsonl"), progress=progress
        )
        for item in items:
            if isinstance(item, Problem):
                yield item
                continue
            result = (
                LoadedTrace.viewed(item, item.value)
                if isinstance(item, Decoded)
                else _checked_record(item)
            )
            if isinstance(result, LoadedTrace):
                trace_id = result.scorable.id
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
