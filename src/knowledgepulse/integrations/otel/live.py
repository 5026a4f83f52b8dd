"""A ``SpanProcessor`` that turns each finished trace into a scored ``ReasoningTrace``, live.

It keeps the spans of each trace it follows until the trace's local root span ends (no parent,
or a remote one), then converts them with the same rules as the file reader. Memory is bounded:
at most ``max_spans_per_trace`` spans a trace (later ones are counted, not kept), at most
``max_open_traces`` unfinished traces, and an unfinished trace older than ``max_age_s`` seconds
is dropped. Nothing here ever raises into the instrumented code (``docs/integrations.md``,
"Never break the agent").
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Unpack

from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from knowledgepulse.errors import KnowledgePulseError
from knowledgepulse.integrations._collector import Collector, CollectorSettings
from knowledgepulse.sources.otel.build import convert_spans, has_genai
from knowledgepulse.sources.otel.spans import live_span
from knowledgepulse.trace import TraceItem

logger = logging.getLogger("knowledgepulse.integrations")

DEFAULT_MAX_SPANS_PER_TRACE = 10_000
"""Spans kept per trace; a runaway loop's later spans are counted and dropped."""
DEFAULT_MAX_OPEN_TRACES = 1_000
"""Unfinished traces followed at once; the oldest is dropped past this."""
DEFAULT_MAX_AGE_S = 3_600.0
"""An unfinished trace older than this (seconds) is dropped: its root will never end here."""

_ACTIVE: ContextVar[tuple[Collector, ...]] = ContextVar(
    "knowledgepulse_otel_collectors", default=()
)
_ROUTERS: dict[int, KPSpanProcessor] = {}
_ROUTERS_LOCK = threading.Lock()


@dataclass(slots=True)
class _Open:
    collectors: tuple[Collector, ...]
    root_span_id: int
    started: float
    spans: list[ReadableSpan] = field(default_factory=list)
    dropped: int = 0


class KPSpanProcessor(SpanProcessor):
    """Follows the traces whose root starts while ``route()`` names collectors, and finishes them.

    Args:
        route: called when a local root span starts; the collectors to give the trace to (each
            its own conversion, with its options), none to leave the trace alone.
        max_spans_per_trace: spans kept per trace.
        max_open_traces: unfinished traces followed at once.
        max_age_s: seconds after which an unfinished trace is dropped.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        route: Callable[[], tuple[Collector, ...]],
        *,
        max_spans_per_trace: int = DEFAULT_MAX_SPANS_PER_TRACE,
        max_open_traces: int = DEFAULT_MAX_OPEN_TRACES,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._route = route
        self._max_spans = max(1, max_spans_per_trace)
        self._max_open = max(1, max_open_traces)
        self._max_age = max_age_s
        self._clock = clock
        self._open: OrderedDict[int, _Open] = OrderedDict()
        self._lock = threading.Lock()
        self.enabled = True

    @property
    def open_traces(self) -> int:
        """How many unfinished traces are held now."""
        with self._lock:
            return len(self._open)

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        """Follow the trace when ``span`` is a local root and ``route`` names collectors."""
        try:
            parent = span.parent
            if not self.enabled or (parent is not None and not parent.is_remote):
                return
            collectors = self._route()
            if not collectors:
                return
            context = span.get_span_context()
            now = self._clock()
            with self._lock:
                self._sweep(now)
                self._open[context.trace_id] = _Open(collectors, context.span_id, now)
                while len(self._open) > self._max_open:
                    trace_id, _ = self._open.popitem(last=False)
                    logger.warning("knowledgepulse: dropped unfinished trace %032x", trace_id)
        except Exception:
            logger.exception("knowledgepulse: span processor failed on start; the run goes on")

    def on_end(self, span: ReadableSpan) -> None:
        """Keep the span; when it is its trace's root, convert and score the trace."""
        try:
            context = span.context
            if context is None:
                return
            with self._lock:
                entry = self._open.get(context.trace_id)
                if entry is None:
                    return
                if len(entry.spans) < self._max_spans:
                    entry.spans.append(span)
                else:
                    entry.dropped += 1
                if context.span_id != entry.root_span_id:
                    return
                del self._open[context.trace_id]
            self._finish(entry)
        except Exception:
            logger.exception("knowledgepulse: span processor failed on end; the run goes on")

    def _finish(self, entry: _Open) -> None:
        spans = [live_span(span) for span in entry.spans]
        if not has_genai(spans):
            return  # an HTTP request, a database job: not an agent run

        for collector in entry.collectors:
            collector.finish(self._builder(spans, collector, entry.dropped))

    def _builder(
        self, spans: list[Any], collector: Collector, dropped: int
    ) -> Callable[[], TraceItem]:
        def build() -> TraceItem:
            converted = convert_spans(spans, collector.options)
            if not dropped:
                return converted
            note = f"{dropped} span(s) past the limit of {self._max_spans} were dropped"
            return dataclasses.replace(converted, warnings=(*converted.warnings, note))

        return build

    def _sweep(self, now: float) -> None:
        while self._open:
            trace_id, oldest = next(iter(self._open.items()))
            if now - oldest.started <= self._max_age:
                return
            del self._open[trace_id]
            logger.warning(
                "knowledgepulse: dropped trace %032x, unfinished after %.0f s",
                trace_id,
                self._max_age,
            )

    def shutdown(self) -> None:
        """Stop following traces and forget the unfinished ones."""
        self.enabled = False
        with self._lock:
            self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered for export: traces are finished as their roots end."""
        return True


class OTelCollector(Collector):
    """A :class:`~knowledgepulse.integrations._collector.Collector` fed by a span processor.

    Attributes:
        processor: the :class:`KPSpanProcessor` added to the tracer provider.
    """

    processor: KPSpanProcessor

    def close(self) -> None:
        """Stop capturing (an SDK tracer provider cannot remove a processor, so it goes idle)."""
        self.processor.shutdown()


def install(
    *,
    tracer_provider: TracerProvider | None = None,
    max_spans_per_trace: int = DEFAULT_MAX_SPANS_PER_TRACE,
    max_open_traces: int = DEFAULT_MAX_OPEN_TRACES,
    max_age_s: float = DEFAULT_MAX_AGE_S,
    **settings: Unpack[CollectorSettings],
) -> OTelCollector:
    """Capture every agent run traced by OpenTelemetry, as a scored ``ReasoningTrace``.

    Adds a :class:`KPSpanProcessor` to ``tracer_provider``, else to the global SDK provider (set
    one up when none is set). See :class:`~knowledgepulse.integrations._collector.Collector` for the
    arguments; the ``max_*`` ones bound memory.

    Raises:
        KnowledgePulseError: the global tracer provider is not the OpenTelemetry SDK's.
    """
    collector = OTelCollector(**settings)
    collector.processor = KPSpanProcessor(
        lambda: (collector,),
        max_spans_per_trace=max_spans_per_trace,
        max_open_traces=max_open_traces,
        max_age_s=max_age_s,
    )
    (tracer_provider or sdk_provider()).add_span_processor(collector.processor)
    return collector


SPAN_SOURCES: tuple[str, ...] = (
    "pydantic_ai",
    "autogen_core",
    "google.adk",
    "openinference.instrumentation",
    "opentelemetry.instrumentation",
)
"""Modules that emit GenAI spans on the global tracer provider: ``activate`` sets an SDK one up
(when none is set) only once one of them is imported."""


@contextmanager
def activate(collector: Collector) -> Iterator[None]:
    """Give ``collector`` the traces whose root span starts inside this block (this context)."""
    provider = _capture_provider()
    if provider is not None:
        with _ROUTERS_LOCK:
            if id(provider) not in _ROUTERS:
                router = KPSpanProcessor(_ACTIVE.get)
                provider.add_span_processor(router)
                _ROUTERS[id(provider)] = router
    # Kept with the collectors already on (an outer kp.capture): each gets the trace, as the
    # LangChain and Agents SDK hooks do.
    token = _ACTIVE.set((*_ACTIVE.get(), collector))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def _capture_provider() -> TracerProvider | None:
    """The global SDK provider ``kp.capture`` routes from; ``None`` until one may be set.

    OpenTelemetry lets the global provider be set once per process, so one set by kp refuses the
    user's own later ``trace.set_tracer_provider``. Until a provider is set every span is a no-op
    anyway, so kp sets one only when something that emits spans is loaded (an instrumented
    Pydantic AI agent needs it to run with no setup); the user's own, set later, gets the router
    at the next capture.
    """
    if isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider) and not any(
        name in sys.modules for name in SPAN_SOURCES
    ):
        return None
    return sdk_provider()


def sdk_provider() -> TracerProvider:
    """The global SDK ``TracerProvider``; one is set when nothing has set any.

    Raises:
        KnowledgePulseError: another kind of provider is set globally.
    """
    provider = trace_api.get_tracer_provider()
    if isinstance(provider, trace_api.ProxyTracerProvider):
        trace_api.set_tracer_provider(TracerProvider())
        provider = trace_api.get_tracer_provider()
        # Said, since OpenTelemetry now refuses the user's own provider set after this.
        logger.info(
            "knowledgepulse: set an OpenTelemetry SDK TracerProvider globally, since none was "
            "set; to export spans too, add your span processor to "
            "opentelemetry.trace.get_tracer_provider(), or set your provider before kp.capture "
            "or install()"
        )
    if not isinstance(provider, TracerProvider):
        raise KnowledgePulseError(
            f"the global OpenTelemetry tracer provider is a {type(provider).__name__}, not the "
            "SDK's TracerProvider, so no span processor can be added to it; pass "
            "tracer_provider= (an opentelemetry.sdk.trace.TracerProvider)"
        )
    return provider
