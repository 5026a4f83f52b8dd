"""Spans in one shape, whatever wrote them: OTLP JSON, the SDK's console JSON, live SDK spans.

OTLP JSON (``opentelemetry-proto``'s "JSON Protobuf Encoding") is what the OTel file exporter and
collectors write: ids in hex (some hand-rolled exporters write base64), 64-bit integers as
decimal strings, enums as integers, attribute values as tagged ``AnyValue`` objects. The Python
SDK's ``ConsoleSpanExporter`` writes another shape (``context.trace_id`` as ``0x…``, enums by
name, plain attribute values, ISO times), which OpenInference's spec also uses. A live
``ReadableSpan`` is read by duck typing, so this module never imports OpenTelemetry.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import Loc, as_object, non_empty
from knowledgepulse._util.times import moment, nanoseconds, units_per_second


class SpanError(ValueError):
    """A span that cannot be read, and where in its record the fault is."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = tuple(loc)
        self.message = message


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event on a span (``exception``, say): its name, attributes, and time in nanoseconds."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int | None = None


@dataclass(frozen=True, slots=True)
class Span:
    """One span, read from any of the shapes this package accepts.

    Attributes:
        trace_id: the trace id, lowercase hex when it was hex or base64.
        span_id: the span id, likewise.
        parent_id: the parent's span id, ``None`` for a root.
        name: the span's name.
        start_ns: start, nanoseconds since the Unix epoch.
        end_ns: end, likewise.
        error: whether the status is ERROR.
        ok: whether the status is OK: set by the instrumentation, and final (the OTel API's
            rule), so an exception the span recorded did not fail it.
        status_message: the status description.
        attributes: the span's attributes, as plain Python values.
        events: its events.
        resource: the resource's attributes.
        scope: the instrumentation scope's name (``pydantic-ai``...).
        unread: the keys of its OTLP attributes (and its events') whose value is no ``AnyValue``
            kp can read (a bare ``"value": "search"`` for ``{"stringValue": "search"}``): kept
            with no value, and said (a warning), never dropped without a word.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None = None
    end_ns: int | None = None
    error: bool = False
    ok: bool = False
    status_message: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=dict)
    scope: str | None = None
    unread: tuple[str, ...] = ()


_HEX = re.compile(r"(?:0x)?([0-9a-fA-F]+)")
_STATUS_ERROR = {2, "2", "ERROR", "STATUS_CODE_ERROR", "StatusCode.ERROR"}
_STATUS_OK = {1, "1", "OK", "STATUS_CODE_OK", "StatusCode.OK"}


_BATCH_KEYS = ("resourceSpans", "resource_spans", "batches")  # Tempo writes OTLP's pre-1.0 name
# OTLP before 0.15 called scope spans instrumentation library spans.
_SCOPE_KEYS = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans")


def is_error_code(code: Any) -> bool:
    """Whether a status code (OTLP's 2, ``STATUS_CODE_ERROR``, the SDK's ``ERROR``...) is ERROR."""
    return _status(code) in _STATUS_ERROR


def is_ok_code(code: Any) -> bool:
    """Whether a status code (OTLP's 1, ``STATUS_CODE_OK``, the SDK's ``OK``...) is OK."""
    return _status(code) in _STATUS_OK


def _status(code: Any) -> int | str | None:
    """A status code as the sets above write it: any-agent's pydantic dump writes ``ok``."""
    if isinstance(code, str):
        return code if code.startswith("StatusCode.") else code.upper()
    return code if isinstance(code, int) else None  # a list or object is no code


def is_otlp(value: Any) -> bool:
    """Whether a record is OTLP ``TracesData`` (``resourceSpans``; Tempo writes ``batches``)."""
    return isinstance(value, dict) and any(isinstance(value.get(key), list) for key in _BATCH_KEYS)


def is_console_span(value: Any) -> bool:
    """Whether a record is one span in the SDK console / OpenInference shape."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    context = value.get("context")
    return isinstance(context, dict) and "trace_id" in context and "span_id" in context


def otlp_spans(value: Mapping[str, Any]) -> Iterator[tuple[Span, Loc] | SpanError]:
    """Each span of an OTLP ``TracesData`` object with its path, or a :class:`SpanError`."""
    key = next((key for key in _BATCH_KEYS if key in value), "resourceSpans")
    for r, resource_spans in enumerate(as_list(value.get(key))):
        where: Loc = (key, r)
        if not isinstance(resource_spans, dict):
            yield SpanError(where, "expected an object with scopeSpans")
            continue
        resource = key_values(as_object(resource_spans.get("resource")).get("attributes"))
        scope_key = next((key for key in _SCOPE_KEYS if key in resource_spans), "scope_spans")
        if not isinstance(resource_spans.get(scope_key, []), list):
            yield SpanError((*where, scope_key), "expected a list of scope spans")
            continue
        for s, scope_spans in enumerate(as_list(resource_spans.get(scope_key))):
            if not isinstance(scope_spans, dict):
                yield SpanError((*where, scope_key, s), "expected an object with spans")
                continue
            scope_value = as_object(
                pick(scope_spans, "scope", "instrumentationLibrary", "instrumentation_library")
            )
            scope = scope_value.get("name") if isinstance(scope_value.get("name"), str) else None
            if not isinstance(scope_spans.get("spans", []), list):
                yield SpanError((*where, scope_key, s, "spans"), "expected a list of spans")
                continue
            for n, raw in enumerate(as_list(scope_spans.get("spans"))):
                loc: Loc = (*where, scope_key, s, "spans", n)
                try:
                    yield _otlp_span(raw, resource, scope), loc
                except SpanError as error:
                    yield SpanError((*loc, *error.loc), error.message)


def is_flat_span(value: Any) -> bool:
    """Whether a record is one span as AWS writes it to CloudWatch's ``aws/spans`` log group.

    The ADOT (AWS Distro for OpenTelemetry) span document, one a log event, which Transaction
    Search, Bedrock AgentCore's observability and its Evaluate API (``sessionSpans``) give back:
    OTLP's span fields flattened beside its ``resource`` and ``scope`` (``traceId``, ``spanId``,
    ``name``, ``startTimeUnixNano`` as a number, ``durationNano``), the attributes and the
    resource's attributes as plain JSON objects, the status code by name (``UNSET``). The rule:
    OTLP's span keys at the top (``traceId``, ``spanId``, ``name`` and a start time) with no
    ``resourceSpans`` around them.
    """
    return (
        isinstance(value, dict)
        and isinstance(value.get("traceId"), str)
        and isinstance(value.get("spanId"), str)
        and isinstance(value.get("name"), str)
        and "startTimeUnixNano" in value
        and not is_otlp(value)
    )


def is_flat_log(value: Any) -> bool:
    """Whether a record is one log record as ADOT writes it beside its spans (``otel-rt-logs``).

    The same flattening as :func:`is_flat_span`: a log record's fields (``timeUnixNano``, a
    plain ``body``, ``traceId`` / ``spanId`` of the span it belongs to) beside its ``resource``
    and ``scope``. The GenAI content of the spans is there: ADOT moves it out of the spans.
    """
    return (
        isinstance(value, dict)
        and isinstance(value.get("traceId"), str)
        and isinstance(value.get("spanId"), str)
        and "body" in value
        and "name" not in value
        and ("timeUnixNano" in value or "observedTimeUnixNano" in value)
    )


_TELEMETRY_KEYS = frozenset(
    {"traceId", "spanId", "trace_id", "span_id", "context", "resourceSpans", "resourceLogs", "body"}
)
"""Keys a span or log record of any shape read here holds: a line with none is no telemetry."""


def is_app_log_line(value: Any) -> bool:
    """Whether a record is the application's own log line, as a runtime's log group holds them.

    Bedrock AgentCore's runtime log group takes the container's output beside ADOT's log
    records: the ``bedrock_agentcore`` app's JSON logger writes ``{"timestamp", "level",
    "message", "logger", "requestId", "sessionId"}`` a line (``Invocation completed
    successfully``), which an export of the group keeps among the records. The rule: a
    ``level`` and a ``message`` in text, and none of a span's or log record's keys.
    """
    return (
        isinstance(value, dict)
        and isinstance(value.get("level"), str)
        and isinstance(value.get("message"), str)
        and _TELEMETRY_KEYS.isdisjoint(value)
    )


def flat_span(value: Mapping[str, Any]) -> Span:
    """A span as ADOT writes it to CloudWatch (:func:`is_flat_span`): plain attribute values.

    Raises:
        SpanError: its ids are missing or unreadable.
    """
    parent = value.get("parentSpanId")
    status = as_object(value.get("status"))
    scope = as_object(value.get("scope")).get("name")
    return Span(
        trace_id=hex_id(value.get("traceId"), ("traceId",), 16),
        span_id=hex_id(value.get("spanId"), ("spanId",), 8),
        parent_id=None if parent in (None, "") else hex_id(parent, ("parentSpanId",), 8),
        name=str(value.get("name") or ""),
        start_ns=_nanos(value.get("startTimeUnixNano")),
        end_ns=_nanos(value.get("endTimeUnixNano")),
        error=is_error_code(status.get("code")),
        ok=is_ok_code(status.get("code")),
        status_message=non_empty(status.get("message")),
        attributes=dict(as_object(value.get("attributes"))),
        events=tuple(
            SpanEvent(
                str(event.get("name", "")),
                dict(as_object(event.get("attributes"))),
                _nanos(event.get("timeUnixNano")),
            )
            for event in as_list(value.get("events"))
            if isinstance(event, dict)
        ),
        resource=dict(as_object(as_object(value.get("resource")).get("attributes"))),
        scope=scope if isinstance(scope, str) else None,
    )


def console_span(value: Mapping[str, Any]) -> Span:
    """A span in the SDK console / OpenInference shape.

    Raises:
        SpanError: its ids are missing or unreadable.
    """
    context = as_object(value.get("context"))
    trace_id = hex_id(context.get("trace_id"), ("context", "trace_id"), 16)
    span_id = hex_id(context.get("span_id"), ("context", "span_id"), 8)
    parent = value.get("parent_id")
    parent_id = None if parent in (None, "") else hex_id(parent, ("parent_id",), 8)
    outer = value.get("parent")  # the SDK's own parent context, as any-agent's AgentTrace dumps it
    if parent_id is None and isinstance(outer, dict) and outer.get("span_id") is not None:
        parent_id = hex_id(outer["span_id"], ("parent", "span_id"), 8)
    status = as_object(value.get("status"))
    code = status.get("status_code", value.get("status_code"))
    message = status.get("description", value.get("status_message"))
    attributes = dict(as_object(value.get("attributes")))
    kind = value.get("span_kind")
    if isinstance(kind, str) and not kind.startswith("SPAN_KIND_"):
        # OpenInference's spec puts its own kind (CHAIN, LLM...) where OTel puts the span kind.
        attributes.setdefault("openinference.span.kind", kind)
    events = tuple(
        SpanEvent(
            str(event.get("name", "")),
            dict(as_object(event.get("attributes"))),
            time_ns(event.get("timestamp")),
        )
        for event in as_list(value.get("events"))
        if isinstance(event, dict)
    )
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=str(value.get("name") or ""),
        start_ns=time_ns(value.get("start_time")),
        end_ns=time_ns(value.get("end_time")),
        error=is_error_code(code),
        ok=is_ok_code(code),
        status_message=non_empty(message),
        attributes=attributes,
        events=events,
        resource=dict(as_object(as_object(value.get("resource")).get("attributes"))),
        scope=None,
    )


def live_span(span: Any) -> Span:
    """A span from the SDK (a ``ReadableSpan``), read by duck typing."""
    context = span.context
    parent = span.parent
    status = span.status
    code = getattr(getattr(status, "status_code", None), "name", None)
    scope = getattr(span, "instrumentation_scope", None)
    resource = getattr(span, "resource", None)
    return Span(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=None if parent is None else f"{parent.span_id:016x}",
        name=str(span.name),
        start_ns=span.start_time,
        end_ns=span.end_time,
        error=code == "ERROR",
        ok=code == "OK",
        status_message=getattr(status, "description", None) or None,
        attributes=_plain(span.attributes),
        events=tuple(
            SpanEvent(event.name, _plain(event.attributes), event.timestamp)
            for event in span.events
        ),
        resource=_plain(getattr(resource, "attributes", None)),
        scope=getattr(scope, "name", None),
    )


def _plain(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    # SDK attribute values are str/bool/int/float or tuples of them; JSON wants lists.
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in (attributes or {}).items()
    }


def _otlp_span(raw: Any, resource: Mapping[str, Any], scope: str | None) -> Span:
    if not isinstance(raw, dict):
        raise SpanError((), f"expected a span object, found {type(raw).__name__}")
    trace_key = "trace_id" if "trace_id" in raw else "traceId"
    span_key = "span_id" if "span_id" in raw else "spanId"
    parent_key = "parent_span_id" if "parent_span_id" in raw else "parentSpanId"
    parent = raw.get(parent_key)
    status = as_object(raw.get("status"))
    message = status.get("message")
    return Span(
        trace_id=hex_id(raw.get(trace_key), (trace_key,), 16),
        span_id=hex_id(raw.get(span_key), (span_key,), 8),
        parent_id=None if parent in (None, "") else hex_id(parent, (parent_key,), 8),
        name=str(raw.get("name") or ""),
        start_ns=_nanos(pick(raw, "startTimeUnixNano", "start_time_unix_nano")),
        end_ns=_nanos(pick(raw, "endTimeUnixNano", "end_time_unix_nano")),
        error=is_error_code(status.get("code")),
        ok=is_ok_code(status.get("code")),
        status_message=non_empty(message),
        attributes=key_values(raw.get("attributes")),
        events=tuple(
            SpanEvent(
                str(event.get("name", "")),
                key_values(event.get("attributes")),
                _nanos(pick(event, "timeUnixNano", "time_unix_nano")),
            )
            for event in as_list(raw.get("events"))
            if isinstance(event, dict)
        ),
        resource=resource,
        scope=scope,
        unread=(
            *unread_keys(raw.get("attributes")),
            *(
                key
                for event in as_list(raw.get("events"))
                if isinstance(event, dict)
                for key in unread_keys(event.get("attributes"))
            ),
        ),
    )


def hex_id(value: Any, loc: Loc, size: int) -> str:
    """An id as lowercase hex: hex as written (``0x`` too), base64 decoded; other text kept.

    An integer is the SDK's own id (``SpanContext.trace_id``), as a pydantic dump of it writes it.
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << (size * 8):
        return f"{value:0{size * 2}x}"
    if not isinstance(value, str) or not value.strip():
        raise SpanError(loc, f"expected a {size * 2}-digit hex id, found {value!r}")
    text = value.strip()
    hex_match = _HEX.fullmatch(text)
    if hex_match and len(hex_match.group(1)) == size * 2:
        return hex_match.group(1).lower()
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) == size:
        return decoded.hex()
    return text  # OpenInference's spec writes UUIDs; they still group spans


def _nanos(value: Any) -> int | None:
    """A 64-bit time: OTLP writes it as a decimal string, some writers as a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value or None  # 0 means unset in OTLP
    if isinstance(value, float) and math.isfinite(value):
        return int(value) or None
    # A 64-bit integer has at most 20 digits; a longer string is no time (and int() of one past
    # 4,300 digits raises).
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 20:
        return int(value) or None
    return None


def time_ns(value: Any) -> int | None:
    """A time as nanoseconds since the epoch: ISO 8601 text, a datetime, or a number.

    A number's unit is told by its size (:func:`units_per_second`); text and datetimes are
    :func:`moment`'s (a zone-less time is UTC).
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value) or value <= 0 or value >= 1e20:
            return None
        return int(value * (1_000_000_000 // units_per_second(value)))
    at = moment(value)
    return None if at is None else nanoseconds(at) or None  # as 0 above: unset


def dotted(attributes: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects under the dotted names OTel gives them: ``{"llm": {"x": 1}}``.

    That is ``{"llm.x": 1}``; lists and other values stay as they are. An object under a dotted
    name is that attribute's value, JSON the exporter parsed (Langfuse's UI export does, to
    BeeAI's ``tool.parameters``), so it stays whole.
    """
    found: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value and "." not in str(key):
            found.update(dotted(value, name))
        else:
            found[name] = value
    return found


def key_values(value: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list → a dict of plain values (a bad entry is skipped, not fatal)."""
    return {
        entry["key"]: any_value(entry.get("value"))
        for entry in as_list(value)
        if isinstance(entry, dict) and isinstance(entry.get("key"), str)
    }


def unread_keys(value: Any) -> tuple[str, ...]:
    """The keys of an OTLP ``KeyValue`` list whose value is no ``AnyValue`` kp can read.

    OTLP JSON tags every value (``{"stringValue": "search"}``); a bare one (``"value":
    "search"``, as some hand-written exporters do) is outside the encoding, and an empty
    ``AnyValue`` (``{}``) is OTLP's way to say no value, no fault.
    """
    return tuple(
        entry["key"]
        for entry in as_list(value)
        if isinstance(entry, dict)
        and isinstance(entry.get("key"), str)
        and entry.get("value") not in (None, {})
        and any_value(entry.get("value")) is None
    )


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value: string, int, float, bool, list, dict or bytes."""
    if not isinstance(value, dict) or not value:
        return None
    for key, item in value.items():
        kind = key.replace("_", "").lower()
        if kind == "stringvalue":
            return item
        if kind == "boolvalue":
            return bool(item)
        if kind == "intvalue":
            return _int(item)
        if kind == "doublevalue":
            return _float(item)
        if kind == "arrayvalue":
            return [any_value(element) for element in as_list(as_object(item).get("values"))]
        if kind == "kvlistvalue":
            return key_values(as_object(item).get("values"))
        if kind == "bytesvalue":
            try:
                return base64.b64decode(str(item))
            except (binascii.Error, ValueError):
                return b""
    return None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    try:
        number = float(value)  # "NaN", "Infinity" as the proto JSON mapping writes them
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def pick(value: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` that ``value`` has (the spellings of one field)."""
    return next((value[key] for key in keys if key in value), None)


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one: for optional keys."""
    return value if isinstance(value, list) else []
