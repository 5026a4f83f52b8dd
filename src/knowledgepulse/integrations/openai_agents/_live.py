"""The live hook: an Agents SDK ``TracingProcessor`` that scores each trace when it ends.

The exported response span keeps no model text, so the processor snapshots each live span when
it ends (a response span's ``response.output`` items and the first model ``input`` put back into
its ``export()`` dict) and converts the trace's snapshots at ``on_trace_end``, through the same
reader as exported files. Memory is bounded: spans per trace, open traces, and their age; a
model input (the whole conversation so far) is kept only for the trace's first model call, which
holds the objective. Nothing here raises into the SDK: every error is logged and the run goes on.

This module imports ``agents``; the package imports it only when a live hook is made.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Unpack

from agents.tracing import (
    FunctionSpanData,
    GenerationSpanData,
    ResponseSpanData,
    Span,
    Trace,
    TracingProcessor,
    add_trace_processor,
    get_trace_provider,
)

from knowledgepulse.integrations._collector import Collector, CollectorSettings
from knowledgepulse.sources.openai_agents._result import plain
from knowledgepulse.sources.openai_agents._spans import convert_spans
from knowledgepulse.trace import TraceItem

logger = logging.getLogger("knowledgepulse.integrations")

MAX_SPANS_PER_TRACE = 5000
"""Spans kept per trace; later ones are dropped (and the trace says how many)."""
MAX_OPEN_TRACES = 1000
"""Traces kept open at once; the oldest is dropped first."""
MAX_TRACE_AGE_S = 3600.0
"""An unfinished trace older than this many seconds is dropped."""


def _json(value: Any) -> Any:
    """A detached, JSON-only copy: later changes to the live object do not reach it."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=_fallback))


def _fallback(value: Any) -> Any:
    converted = plain(value)
    return str(value) if converted is value else converted


def snapshot(span: Span[Any], *, keep_input: bool) -> dict[str, Any]:
    """A span as ``export()`` gives it, with the model output the export drops put back."""
    data = span.span_data
    exported = dict(data.export())
    if isinstance(data, ResponseSpanData):
        if data.response is not None:
            exported["output"] = [plain(item) for item in data.response.output]
        if keep_input and data.input is not None:
            exported["input"] = data.input
    elif isinstance(data, GenerationSpanData):
        if not keep_input:
            exported.pop("input", None)
    elif isinstance(data, FunctionSpanData):
        exported["output"] = data.output  # the value itself, not its str()
    return {
        "object": "trace.span",
        "id": span.span_id,
        "trace_id": span.trace_id,
        "parent_id": span.parent_id,
        "started_at": span.started_at,
        "ended_at": span.ended_at,
        "span_data": _json(exported),
        "error": _json(span.error),
    }


@dataclass
class _Open:
    collectors: tuple[Collector, ...]
    opened: float
    spans: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    has_input: bool = False


class _Recorder(TracingProcessor):
    """Keeps the span snapshots of open traces (bounded) and hands each finished one on."""

    def __init__(
        self,
        *,
        max_spans_per_trace: int = MAX_SPANS_PER_TRACE,
        max_open_traces: int = MAX_OPEN_TRACES,
        max_trace_age_s: float = MAX_TRACE_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._guard = threading.Lock()
        self._max_spans = max(1, max_spans_per_trace)
        self._max_open = max(1, max_open_traces)
        self._max_age = max_trace_age_s
        self._clock = clock

    def _collectors_for(self, trace: Trace) -> tuple[Collector, ...]:
        raise NotImplementedError

    @property
    def open_traces(self) -> int:
        """How many traces are open (started, not ended) now."""
        with self._guard:
            return len(self._open)

    def on_trace_start(self, trace: Trace) -> None:
        """Start keeping a trace's spans, if any collector wants it."""
        try:
            collectors = self._collectors_for(trace)
            if not collectors:
                return
            now = self._clock()
            with self._guard:
                while self._open and (
                    len(self._open) >= self._max_open
                    or now - next(iter(self._open.values())).opened > self._max_age
                ):
                    dropped, _ = self._open.popitem(last=False)
                    logger.warning("knowledgepulse dropped unfinished Agents trace %s", dropped)
                self._open[trace.trace_id] = _Open(collectors, now)
        except Exception:
            logger.exception("knowledgepulse: could not start an Agents trace; the run goes on")

    def on_span_start(self, span: Span[Any]) -> None:
        """Nothing to do: a span is read when it ends, complete."""

    def on_span_end(self, span: Span[Any]) -> None:
        """Snapshot an ended span of an open trace."""
        try:
            with self._guard:
                opened = self._open.get(span.trace_id)
                if opened is None:
                    return
                if len(opened.spans) >= self._max_spans:
                    opened.dropped += 1
                    return
                keep_input = not opened.has_input and isinstance(
                    span.span_data, ResponseSpanData | GenerationSpanData
                )
                opened.has_input = opened.has_input or keep_input
            record = snapshot(span, keep_input=keep_input)
            with self._guard:
                opened.spans.append(record)
        except Exception:
            logger.exception("knowledgepulse: could not read an Agents span; the run goes on")

    def on_trace_end(self, trace: Trace) -> None:
        """Convert, score and hand on a finished trace."""
        try:
            with self._guard:
                opened = self._open.pop(trace.trace_id, None)
            if opened is None or not opened.spans:
                return
            exported = _json(trace.export() or {"id": trace.trace_id})
            for collector in opened.collectors:
                collector.finish(_builder(exported, opened, collector))
        except Exception:
            logger.exception("knowledgepulse: could not finish an Agents trace; the run goes on")

    def shutdown(self) -> None:
        """Forget every open trace."""
        with self._guard:
            self._open.clear()

    def force_flush(self) -> None:
        """Nothing is queued: each trace is handed on when it ends."""


def _builder(
    exported: dict[str, Any], opened: _Open, collector: Collector
) -> Callable[[], TraceItem]:
    def build() -> TraceItem:
        converted = convert_spans(exported, opened.spans, collector.options)
        if not opened.dropped:
            return converted
        note = f"{opened.dropped} span(s) past the first {len(opened.spans)} were dropped"
        return dataclasses.replace(converted, warnings=(*converted.warnings, note))

    return build


class AgentsTraceProcessor(Collector, _Recorder):
    """An Agents SDK tracing processor that converts and scores every trace when it ends.

    Use it with ``agents.add_trace_processor(...)`` (the SDK's own export goes on) or
    ``agents.set_trace_processors([...])`` (only this one). The traces it made are in
    :attr:`captured`, :attr:`traces` and :attr:`breakdowns`; see :class:`Collector` for the
    arguments it shares with every live hook.

    Args:
        max_spans_per_trace: spans kept per trace.
        max_open_traces: unfinished traces kept at once.
        max_trace_age_s: an unfinished trace older than this is dropped.
    """

    def __init__(
        self,
        *,
        max_spans_per_trace: int = MAX_SPANS_PER_TRACE,
        max_open_traces: int = MAX_OPEN_TRACES,
        max_trace_age_s: float = MAX_TRACE_AGE_S,
        **settings: Unpack[CollectorSettings],
    ) -> None:
        Collector.__init__(self, **settings)
        _Recorder.__init__(
            self,
            max_spans_per_trace=max_spans_per_trace,
            max_open_traces=max_open_traces,
            max_trace_age_s=max_trace_age_s,
        )

    def _collectors_for(self, trace: Trace) -> tuple[Collector, ...]:
        return (self,)


_ACTIVE: ContextVar[tuple[Collector, ...]] = ContextVar("kp_openai_agents_active", default=())


class _Dispatcher(_Recorder):
    """The one processor ``activate`` installs: it records traces started inside an activation."""

    def _collectors_for(self, trace: Trace) -> tuple[Collector, ...]:
        return _ACTIVE.get()


_DISPATCHER = _Dispatcher()
_INSTALL = threading.Lock()
_installed = False


def _install() -> None:
    """Register the dispatcher with the SDK, again if ``set_trace_processors`` removed it."""
    global _installed  # noqa: PLW0603 - one registration per process, like the SDK's own
    with _INSTALL:
        # The SDK has no public way to list processors; where its private list is missing,
        # registering once is the best that can be done.
        multi = getattr(get_trace_provider(), "_multi_processor", None)
        installed = getattr(multi, "_processors", None)
        if installed is None and _installed:
            return
        if installed is not None and _DISPATCHER in installed:
            return
        add_trace_processor(_DISPATCHER)
        _installed = True


@contextlib.contextmanager
def activate(collector: Collector) -> Iterator[None]:
    """Give ``collector`` every Agents trace started in this context while inside."""
    _install()
    token = _ACTIVE.set((*_ACTIVE.get(), collector))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
