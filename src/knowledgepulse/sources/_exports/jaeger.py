"""Jaeger's query API JSON (``GET /api/traces``, the UI's "Download JSON"), one trace per traceID.

``{"data": [{"traceID", "spans": [...], "processes": {...}}]}``: a span's attributes are its
``tags`` (``{"key", "type", "value"}``), its parent the ``CHILD_OF`` reference, its times
microseconds, its status the ``error`` and ``otel.status_code`` tags (the OTLP receiver's
mapping; the code read as the ``otlp`` source reads one: ``ERROR``, ``STATUS_CODE_ERROR``,
2..., and ``OK`` as final: an exception logged before it failed nothing), its events the
``logs``; a process's tags are the resource. The GenAI / OpenInference
tags are read as the ``otlp`` source reads attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from knowledgepulse._util.jsonpath import Loc, as_string, describe_value, non_empty
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
    is_ok_code,
)
from knowledgepulse.trace import TraceItem

__all__ = ["CONTENT_HINT", "convert_records", "recognises"]


def recognises(value: Any) -> bool:
    """Whether a record is a query-API response (``data``) or one trace (``traceID``, ``spans``)."""
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        first = next(iter(value["data"]), None)
        return _is_trace(first)
    return _is_trace(value)


def _is_trace(value: Any) -> bool:
    return isinstance(value, dict) and "traceID" in value and isinstance(value.get("spans"), list)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trace in one file's records; a located problem for each span it cannot read."""
    yield from convert_span_records(records, options, _spans, source="jaeger")


def _spans(value: Any) -> Iterator[tuple[Span | SpanError, Loc]]:
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        traces: list[tuple[Any, Loc]] = [
            (item, ("data", n)) for n, item in enumerate(value["data"])
        ]
    else:
        traces = [(value, ())]
    for trace, where in traces:
        if not _is_trace(trace):
            yield (
                SpanError(
                    where, f"expected a trace with traceID and spans, found {describe_value(trace)}"
                ),
                where,
            )
            continue
        processes = trace.get("processes") if isinstance(trace.get("processes"), dict) else {}
        for n, raw in enumerate(trace["spans"]):
            loc: Loc = (*where, "spans", n)
            try:
                yield _span(raw, processes), loc
            except SpanError as error:
                yield SpanError((*loc, *error.loc), error.message), loc


def _span(raw: Any, processes: Mapping[str, Any]) -> Span:
    if not isinstance(raw, dict):
        raise SpanError((), f"expected a span object, found {describe_value(raw)}")
    tags = _tags(raw.get("tags"))
    parent = next(
        (
            ref.get("spanID")
            for ref in as_list(raw.get("references"))
            if isinstance(ref, dict) and ref.get("refType", "CHILD_OF") == "CHILD_OF"
        ),
        raw.get("parentSpanID"),
    )
    start = _micros(raw.get("startTime"))
    duration = _micros(raw.get("duration"))
    process = raw.get("process", processes.get(str(raw.get("processID"))))
    resource = _tags(process.get("tags")) if isinstance(process, dict) else {}
    if isinstance(process, dict) and isinstance(process.get("serviceName"), str):
        resource.setdefault("service.name", process["serviceName"])
    status = tags.get("otel.status_code")
    error = tags.get("error") in (True, "true") or is_error_code(status)
    message = tags.get("otel.status_description")
    scope = tags.get("otel.scope.name", tags.get("otel.library.name"))
    return Span(
        trace_id=hex_id(raw.get("traceID"), ("traceID",), 16),
        span_id=hex_id(raw.get("spanID"), ("spanID",), 8),
        parent_id=None if parent in (None, "") else hex_id(parent, ("references",), 8),
        name=str(raw.get("operationName") or ""),
        start_ns=start,
        end_ns=None if start is None or duration is None else start + duration,
        error=error,
        ok=is_ok_code(status),
        status_message=non_empty(message),
        attributes=tags,
        events=tuple(_event(log) for log in as_list(raw.get("logs")) if isinstance(log, dict)),
        resource=resource,
        scope=as_string(scope),
    )


def _event(log: Mapping[str, Any]) -> SpanEvent:
    # The OTLP receiver writes an event as a log whose "event" field is its name.
    fields = _tags(log.get("fields"))
    name = fields.pop("event", "")
    return SpanEvent(str(name), fields, _micros(log.get("timestamp")))


def _tags(value: Any) -> dict[str, Any]:
    return {
        tag["key"]: tag.get("value")
        for tag in as_list(value)
        if isinstance(tag, dict) and isinstance(tag.get("key"), str)
    }


def _micros(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value < 1e17:  # past year 5,000 in microseconds: no time
        return None
    return int(value) * 1000
