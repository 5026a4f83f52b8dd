"""OpenTelemetry JS spans saved as JSON: ``ReadableSpan`` objects and the console exporter's lines.

What a JS program gets from ``InMemorySpanExporter.getFinishedSpans()`` or a span processor, saved
with ``JSON.stringify``: ``name``, ``spanContext`` (``_spanContext`` when the object itself was
stringified) with ``traceId`` / ``spanId``, ``parentSpanId`` (``parentSpanContext.spanId`` since
SDK 2.0), ``attributes``, ``status`` (``code`` 2 is ERROR), ``events``, times as HrTime
``[seconds, nanoseconds]``; the ``ConsoleSpanExporter``'s objects (``traceId``, ``id``,
``parentId``, ``timestamp`` and ``duration`` in microseconds); and the lines of a file exporter
that writes each span flat, ``{"type": "span", traceId, spanId, parentSpanId, startTime,
endTime, attributes, resource, instrumentationScope}`` with HrTime times, as GitHub Copilot CLI
writes them (``COPILOT_OTEL_FILE_EXPORTER_PATH``), its ``{"type": "metric"}`` lines beside them
(left out: a metric is no span). The Vercel AI SDK's ``ai.*`` spans are read by the OTel
dialects, as they would be from OTLP.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from knowledgepulse._util.jsonpath import Loc, describe_value, non_empty
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.otel.build import CONTENT_HINT
from knowledgepulse.sources.otel.files import convert_span_records
from knowledgepulse.sources.otel.spans import (
    Span,
    SpanError,
    SpanEvent,
    as_list,
    hex_id,
    is_error_code,
    time_ns,
)
from knowledgepulse.trace import TraceItem

__all__ = ["CONTENT_HINT", "convert_records", "recognises"]


def recognises(value: Any) -> bool:
    """Whether a record is one JS span: a ``spanContext`` with a ``traceId``, or console output."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    context = _context(value)
    if context is not None:
        return "traceId" in context
    if _flat(value):
        return True
    return "traceId" in value and "id" in value and "timestamp" in value


def _flat(value: Mapping[str, Any]) -> bool:
    """A span written flat with HrTime times, as Copilot CLI's file exporter writes it.

    A list ``startTime`` tells it from a Langfuse observation (a date) and a Jaeger span
    (microseconds), which have a ``traceId`` and a ``spanId`` too.
    """
    return (
        isinstance(value.get("traceId"), str)
        and isinstance(value.get("spanId"), str)
        and isinstance(value.get("startTime"), list)
    )


def _metric(value: Any) -> bool:
    """A metric line of the file exporter that writes spans flat (``{"type": "metric"}``)."""
    return (
        isinstance(value, dict)
        and value.get("type") == "metric"
        and isinstance(value.get("dataPoints"), list)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trace in one file's records; a located problem for each span it cannot read."""
    yield from convert_span_records(records, options, _spans, source="otel-js")


def _spans(value: Any) -> Iterator[tuple[Span | SpanError, Loc]]:
    if _metric(value):  # the exporter's histograms and counters: no run in them
        return
    if not recognises(value):
        message = f"expected an OTel JS span (name, spanContext), found {describe_value(value)}"
        yield SpanError((), message), ()
        return
    try:
        yield _span(value), ()
    except SpanError as error:
        yield error, error.loc


def _span(value: Mapping[str, Any]) -> Span:
    context = _context(value)
    parent_context = value.get("parentSpanContext")
    if context is not None:
        trace_id = hex_id(context.get("traceId"), ("spanContext", "traceId"), 16)
        own_id = hex_id(context.get("spanId"), ("spanContext", "spanId"), 8)
        parent = value.get("parentSpanId")
        start, end = _hrtime(value.get("startTime")), _hrtime(value.get("endTime"))
    elif _flat(value):
        trace_id = hex_id(value.get("traceId"), ("traceId",), 16)
        own_id = hex_id(value.get("spanId"), ("spanId",), 8)
        parent = value.get("parentSpanId")
        start, end = _hrtime(value.get("startTime")), _hrtime(value.get("endTime"))
    else:  # the console exporter
        trace_id = hex_id(value.get("traceId"), ("traceId",), 16)
        own_id = hex_id(value.get("id"), ("id",), 8)
        parent = value.get("parentId")
        start = time_ns(value.get("timestamp"))
        duration = value.get("duration")
        end = (
            start + int(duration * 1000)
            if start is not None and isinstance(duration, int | float) and 0 <= duration < 1e15
            else None
        )
    if isinstance(parent_context, dict):  # SDK 2.0
        parent = parent_context.get("spanId")
    status = _dict(value.get("status"))
    message = status.get("message")
    scope = value.get("instrumentationScope", value.get("instrumentationLibrary"))
    resource = _dict(value.get("resource"))
    resource_attributes = resource.get("attributes", resource.get("_attributes"))
    return Span(
        trace_id=trace_id,
        span_id=own_id,
        parent_id=hex_id(parent, ("parentSpanId",), 8) if parent not in (None, "") else None,
        name=str(value.get("name") or ""),
        start_ns=start,
        end_ns=end,
        error=is_error_code(status.get("code")),
        status_message=non_empty(message),
        attributes=_dict(value.get("attributes")),
        events=tuple(
            SpanEvent(
                str(event.get("name", "")),
                _dict(event.get("attributes")),
                _hrtime(event.get("time")),
            )
            for event in as_list(value.get("events"))
            if isinstance(event, dict)
        ),
        resource=_dict(resource_attributes),
        scope=scope.get("name")
        if isinstance(scope, dict) and isinstance(scope.get("name"), str)
        else None,
    )


def _context(value: Mapping[str, Any]) -> Mapping[str, Any] | None:
    context = value.get("spanContext", value.get("_spanContext"))
    return context if isinstance(context, dict) else None


def _hrtime(value: Any) -> int | None:
    """HrTime ``[seconds, nanoseconds]``, or a number (milliseconds since the epoch)."""
    if isinstance(value, list) and len(value) == 2:
        seconds, nanos = value
        whole = all(isinstance(item, int) and not isinstance(item, bool) for item in value)
        if whole and 0 < seconds < 10**11 and 0 <= nanos < 10**9:
            return int(seconds) * 1_000_000_000 + int(nanos)
        return None
    return time_ns(value)


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
