"""OpenTelemetry: trace files, spans in memory, and a live span processor, as ``ReasoningTrace``s.

Reads the GenAI semantic conventions (latest, and the legacy / OpenLLMetry names), OpenInference,
and Pydantic AI's own attributes, so it covers every framework that emits GenAI spans itself
(Pydantic AI, AutoGen) or through an instrumentor (LangChain, CrewAI, smolagents, LlamaIndex...)::

    import knowledgepulse as kp

    collector = kp.integrations.otel.install(domain="code")  # a SpanProcessor, live
    ...  # run the agent; each finished trace is converted and scored
    collector.breakdowns

    converted = kp.integrations.otel.to_trace(exporter.get_finished_spans())  # after the fact

Files (``kp convert --from otlp``): OTLP JSON and JSON Lines (the OTel file exporter's; Tempo's
``batches`` with OTLP's pre-1.0 names too), and the SDK's ``ConsoleSpanExporter`` JSON. The
observability tools' exports (:mod:`knowledgepulse.integrations.exports`) read into the same
:class:`Span`. Reading needs no dependency; the live hooks need the ``otel``
extra (``opentelemetry-sdk``), imported only when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from knowledgepulse.errors import missing_extra
from knowledgepulse.integrations._collector import DEFAULT_KEEP, Collector, OnTrace
from knowledgepulse.integrations._envelope import ConversionError, ConvertedTrace, TraceOptions
from knowledgepulse.integrations.otel.build import CONTENT_HINT, convert_spans
from knowledgepulse.integrations.otel.files import convert_records, recognises
from knowledgepulse.integrations.otel.spans import (
    Span,
    SpanError,
    SpanEvent,
    console_span,
    is_console_span,
    is_otlp,
    live_span,
    otlp_spans,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from knowledgepulse.integrations.otel.live import OTelCollector
    from knowledgepulse.value import TraceValueScorer


def to_traces(
    spans: Iterable[Any], *, domain: str | None = None, confidence: float | None = None
) -> list[ConvertedTrace]:
    """One ``ReasoningTrace`` per trace id among ``spans``, in the order each first appears.

    Args:
        spans: SDK spans (``InMemorySpanExporter().get_finished_spans()``), :class:`Span` objects,
            or parsed JSON: OTLP ``TracesData`` objects and console-exporter span objects.
        domain: the ``task_domain`` of every trace.
        confidence: the outcome confidence of every trace.

    Raises:
        ConversionError: a trace gives no step, or an item cannot be read as a span.
    """
    options = TraceOptions(domain=domain, confidence=confidence)
    return [convert_spans(found, options) for found in _by_trace(spans).values()]


def to_trace(
    spans: Iterable[Any], *, domain: str | None = None, confidence: float | None = None
) -> ConvertedTrace:
    """The ``ReasoningTrace`` of one trace's spans (see :func:`to_traces` for what they may be).

    Raises:
        ConversionError: the spans hold no step, or belong to no trace or several.
    """
    traces = _by_trace(spans)
    if len(traces) != 1:
        raise ConversionError(f"expected the spans of one trace, found {len(traces)} traces")
    options = TraceOptions(domain=domain, confidence=confidence)
    return convert_spans(next(iter(traces.values())), options)


def _by_trace(spans: Iterable[Any]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = {}
    for item in spans:
        for span in _as_spans(item):
            traces.setdefault(span.trace_id, []).append(span)
    return traces


def _as_spans(item: Any) -> list[Span]:
    try:
        if isinstance(item, Span):
            return [item]
        if is_otlp(item):
            found = list(otlp_spans(item))
            errors = [error for error in found if isinstance(error, SpanError)]
            if errors:
                raise errors[0]
            return [pair[0] for pair in found if not isinstance(pair, SpanError)]
        if is_console_span(item):
            return [console_span(item)]
        if hasattr(item, "context") and hasattr(item, "attributes"):
            return [live_span(item)]
    except SpanError as error:
        raise ConversionError(f"a span cannot be read: {error.message}") from error
    raise ConversionError(f"not a span: {type(item).__name__}")


def install(
    *,
    domain: str | None = None,
    confidence: float | None = None,
    scorer: TraceValueScorer | None = None,
    on_trace: OnTrace | None = None,
    tracer_provider: TracerProvider | None = None,
    keep: int = DEFAULT_KEEP,
    redact: bool = False,
) -> OTelCollector:
    """Add a span processor that converts and scores every agent run traced with OpenTelemetry.

    Args:
        domain: the ``task_domain`` of every trace (else the root's ``kp.task_domain``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the default scorer when ``None``.
        on_trace: called with each captured trace.
        tracer_provider: the SDK provider to add the processor to; else the global one (an SDK
            provider is set globally when none is).
        keep: how many captured traces the collector keeps.
        redact: redact each trace (secrets always, personal identifiers by its
            ``metadata.privacy_level``; see :mod:`knowledgepulse.redact`) before it is scored
            and kept; only novelty reads its text, so only novelty can change.

    Returns:
        The collector: ``.captured``, ``.traces``, ``.breakdowns``; ``.close()`` stops it.

    Raises:
        MissingDependencyError: ``opentelemetry-sdk`` is not installed.
    """
    collector = _live().install(
        domain=domain,
        confidence=confidence,
        scorer=scorer,
        on_trace=on_trace,
        tracer_provider=tracer_provider,
        keep=keep,
        redact=redact,
    )
    return cast("OTelCollector", collector)


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, traces whose root span starts in this context go to ``collector``.

    The hook ``kp.capture`` uses; spans go through the global SDK tracer provider.

    Raises:
        MissingDependencyError: ``opentelemetry-sdk`` is not installed.
    """
    return cast("AbstractContextManager[None]", _live().activate(collector))


def _live() -> ModuleType:
    try:
        return importlib.import_module("knowledgepulse.integrations.otel.live")
    except ImportError as error:
        raise missing_extra("opentelemetry-sdk", "otel", error) from error


__all__ = [
    "CONTENT_HINT",
    "Span",
    "SpanEvent",
    "activate",
    "convert_records",
    "install",
    "recognises",
    "to_trace",
    "to_traces",
]
