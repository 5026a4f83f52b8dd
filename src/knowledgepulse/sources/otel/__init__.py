"""OpenTelemetry spans as ``ReasoningTrace`` documents: trace files and spans already held.

Reads the GenAI semantic conventions (latest, and the legacy / OpenLLMetry names), OpenInference,
and Pydantic AI's own attributes, so it covers every framework that emits GenAI spans itself
(Pydantic AI, AutoGen) or through an instrumentor (LangChain, CrewAI, smolagents, LlamaIndex...).

Files (``kp convert --from otlp``): OTLP JSON and JSON Lines (the OTel file exporter's; Tempo's
``batches`` with OTLP's pre-1.0 names too), and the SDK's ``ConsoleSpanExporter`` JSON. The
observability tools' exports (:mod:`knowledgepulse.sources._exports`) read into the same
:class:`Span`. Reading needs no dependency; the live span processor is
:mod:`knowledgepulse.integrations.otel`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from knowledgepulse.errors import ConversionError
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.otel.build import convert_spans
from knowledgepulse.sources.otel.files import value_spans
from knowledgepulse.sources.otel.spans import Span, SpanError, is_console_span, is_otlp, live_span
from knowledgepulse.trace import TraceItem


def to_traces(
    spans: Iterable[Any], *, domain: str | None = None, confidence: float | None = None
) -> list[TraceItem]:
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
) -> TraceItem:
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
    if isinstance(item, Span):
        return [item]
    if is_otlp(item) or is_console_span(item):
        found = [span for span, _ in value_spans(item)]
        error = next((span for span in found if isinstance(span, SpanError)), None)
        if error is not None:
            raise ConversionError(f"a span cannot be read: {error.message}") from error
        return [span for span in found if isinstance(span, Span)]
    if hasattr(item, "context") and hasattr(item, "attributes"):
        return [live_span(item)]
    raise ConversionError(f"not a span: {type(item).__name__}")
