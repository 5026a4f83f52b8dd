"""Test helpers for the OpenTelemetry integration: spans made the way instrumentations make them,
and written as OTLP JSON the way the OTel file exporter writes them.

``opentelemetry-exporter-otlp-json-file`` is not a dependency, so :func:`otlp_json` writes the
documented mapping (``opentelemetry-proto`` docs/specification.md, "JSON Protobuf Encoding"):
lowerCamelCase keys, ids in lowercase hex, enums as integers, 64-bit integers as decimal strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

USER_TASK = "What is the weather in Paris in Fahrenheit?"


def provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider of its own (never the global one) that keeps finished spans in memory."""
    tracer_provider = TracerProvider()
    exporter = InMemorySpanExporter()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider, exporter


def _messages(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


def _user() -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": USER_TASK}]}


def _call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "content": "I need the weather service."},
            {
                "type": "tool_call",
                "id": call_id,
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            },
        ],
    }


def run_weather_agent(tracer: Tracer, *, attributes: dict[str, Any] | None = None) -> None:
    """Spans as a GenAI instrumentation makes them, with content capture on.

    invoke_agent → chat (asks get_weather) → execute_tool (fails: status ERROR, an exception
    event, ``error.type``) → chat (asks again) → execute_tool (succeeds) → chat (answers).
    """
    with tracer.start_as_current_span(
        "invoke_agent weather",
        kind=SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.input.messages": _messages(_user()),
            **(attributes or {}),
        },
    ) as agent:
        with tracer.start_as_current_span(
            "chat scripted",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages(_user()),
                "gen_ai.output.messages": _messages(_call("call_1")),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            record_exception=False,
            set_status_on_exception=False,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "error.type": "TimeoutError",
            },
        ) as failing:
            failing.record_exception(TimeoutError("weather service timed out"))
            failing.set_status(Status(StatusCode.ERROR, "TimeoutError"))
        with tracer.start_as_current_span(
            "chat scripted",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages(
                    _user(),
                    _call("call_1"),
                    {
                        "role": "tool",
                        "parts": [
                            {
                                "type": "tool_call_response",
                                "id": "call_1",
                                "response": "weather service timed out",
                            }
                        ],
                    },
                ),
                "gen_ai.output.messages": _messages(_call("call_2")),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_2",
                "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "gen_ai.tool.call.result": "rainy, 57°F",
            },
        ):
            pass
        answer = {
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is rainy in Paris, 57°F."}],
        }
        with tracer.start_as_current_span(
            "chat scripted",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": _messages(answer),
            },
        ):
            pass
        agent.set_attribute("gen_ai.output.messages", _messages(answer))


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """Spans as one OTLP ``TracesData`` JSON object, grouped by resource, then by scope."""
    resources: dict[int, tuple[Any, dict[int, tuple[Any, list[dict[str, Any]]]]]] = {}
    for span in spans:
        _, scopes = resources.setdefault(id(span.resource), (span.resource, {}))
        _, encoded = scopes.setdefault(
            id(span.instrumentation_scope), (span.instrumentation_scope, [])
        )
        encoded.append(_span(span))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource.attributes)},
                "scopeSpans": [
                    {
                        "scope": {"name": scope.name, "version": scope.version or ""},
                        "spans": encoded,
                    }
                    for scope, encoded in scopes.values()
                ],
            }
            for resource, scopes in resources.values()
        ]
    }


def write_jsonl(path: Path, spans: Sequence[ReadableSpan]) -> Path:
    """One ``TracesData`` per span and line, as a file exporter behind a simple processor writes."""
    with path.open("w", encoding="utf-8") as file:
        for span in spans:
            file.write(json.dumps(otlp_json([span]), ensure_ascii=False) + "\n")
    return path


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    assert context is not None
    status = span.status
    encoded: dict[str, Any] = {
        "traceId": f"{context.trace_id:032x}",
        "spanId": f"{context.span_id:016x}",
        "name": span.name,
        "kind": span.kind.value + 1,  # the SDK counts from INTERNAL = 0, OTLP from UNSPECIFIED = 0
        "startTimeUnixNano": str(span.start_time),
        "endTimeUnixNano": str(span.end_time),
        "attributes": _attributes(span.attributes),
        "events": [
            {
                "timeUnixNano": str(event.timestamp),
                "name": event.name,
                "attributes": _attributes(event.attributes),
            }
            for event in span.events
        ],
        "status": {"code": status.status_code.value, "message": status.description or ""},
    }
    if span.parent is not None:
        encoded["parentSpanId"] = f"{span.parent.span_id:016x}"
    return encoded


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in (attributes or {}).items()]


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        import base64

        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _attributes(value)}}
    return {"arrayValue": {"values": [_value(item) for item in value]}}
