"""OTLP JSON, OTLP JSON Lines and console-exporter files, converted by the spec's rules."""

from __future__ import annotations

import base64
import gc
import itertools
import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse import sources
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import _read as sources_read
from knowledgepulse.sources._invariants import check
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.build import CONTENT_HINT
from knowledgepulse.sources.otel.files import convert_records, recognises
from knowledgepulse.sources.otel.logs import logged_content
from knowledgepulse.sources.otel.spans import any_value
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import CORPUS, convert_file, recognise, source_of
from tests.sources.weather import RETRY_SHAPE, step_shape

DATA = Path(__file__).parent / "data" / "otel"
EXAMPLE = Path(__file__).parents[2] / "examples" / "integrations" / "otel"


def steps(trace: ReasoningTrace) -> list[tuple[str, str | None, str]]:
    return [
        (step.type, step.tool.name if step.tool else None, step.content or "")
        for step in trace.steps
    ]


def converted(path: Path | str, source: str = "auto") -> list[TraceItem | Problem]:
    return list(convert_file(path, source=source))


def traces(path: Path | str) -> list[TraceItem]:
    return [item for item in converted(path) if isinstance(item, TraceItem)]


def test_semconv_tool_call_example_gives_the_spec_steps() -> None:
    """The spec's tool-call example: tool_call → observation (from the next chat) → answer."""
    trace = traces(DATA / "genai_semconv_examples.otlp.jsonl")[0].trace
    answer = "The weather in Paris is currently rainy with a temperature of 57°F."
    assert steps(trace) == [
        ("tool_call", "get_weather", 'get_weather {"location":"Paris"}'),
        ("observation", "get_weather", "rainy, 57°F"),
        ("thought", None, answer),
    ]
    assert trace.id == "kp:trace:0af7651916cd43dd8448eb211c80319c"
    assert trace.task.objective == "Weather in Paris?"
    assert trace.steps[0].input == {"location": "Paris"}
    assert trace.steps[0].latency_ms == 250.0
    assert trace.outcome.result_summary == answer
    assert trace.metadata.success is True
    assert trace.metadata.framework == "semconv-example"
    assert trace.metadata.created_at.isoformat() == "2023-11-14T22:13:20+00:00"


def test_an_invoke_agent_run_in_todays_conventions_is_read_from_its_attributes() -> None:
    """GenAI conventions as they stand: the agent span's ``gen_ai.input.messages`` give the
    objective (not ``gen_ai.system_instructions``), a structured (``kvlistValue``) message list
    reads as its JSON form does, ``tool_call`` / ``tool_call_response`` parts and the
    ``execute_tool`` span make one call, and the answer appears once."""
    (item,) = traces(DATA / "genai_invoke_agent.otlp.json")
    trace = item.trace
    assert trace.task.objective == "Weather in Paris?"
    assert steps(trace) == [
        ("tool_call", "get_weather", 'get_weather {"location":"Paris"}'),
        ("observation", "get_weather", "rainy, 57F"),
        ("thought", None, "Rainy, 57F"),
    ]
    assert trace.outcome.result_summary == "Rainy, 57F"
    assert trace.metadata.agent_id == "weather"
    assert check(trace) == []


def test_a_trace_spread_over_lines_is_one_trace() -> None:
    """The tool span sits on its own line; the file still gives one trace per trace id."""
    found = traces(DATA / "genai_semconv_examples.otlp.jsonl")
    assert [item.trace.id for item in found] == [
        "kp:trace:0af7651916cd43dd8448eb211c80319c",
        "kp:trace:5b8efff798038103d269b633813fc60d",
    ]


def test_semconv_reasoning_example_is_a_thought_then_the_answer() -> None:
    """A ``reasoning`` part is a thought; the text part after it is the final answer."""
    trace = traces(DATA / "genai_semconv_examples.otlp.jsonl")[1].trace
    assert [step.type for step in trace.steps] == ["thought", "thought"]
    assert trace.steps[0].content is not None
    assert trace.steps[0].content.startswith("Alright, the user wants a joke about OpenTelemetry")
    assert trace.outcome.result_summary.startswith(" Why did the developer bring OpenTelemetry")
    assert trace.task.objective == "semconv-example run"  # no user text: the placeholder


def test_proto_example_without_genai_spans_is_a_located_warning() -> None:
    """A trace of plain spans is skipped with a warning at the span; ids are read as lower hex."""
    (problem,) = converted(DATA / "opentelemetry_proto_trace.json")
    assert isinstance(problem, Problem)
    assert problem.warning
    assert problem.path == "resourceSpans[0].scopeSpans[0].spans[0]"
    assert "5b8efff798038103d269b633813fc60c has no GenAI span" in problem.message


def test_openinference_spec_spans_give_objective_and_answer() -> None:
    """OpenInference's console-shaped CHAIN root gives the objective and the answer; its LLM
    span, which has no ``llm.output_messages``, says its reply in ``output.value`` (LlamaIndex's
    ``ChatResponse`` as text, ``assistant: ...``): a thought of its own, the label left out."""
    (item,) = traces(DATA / "openinference_traces.json")
    trace = item.trace
    assert trace.id == "kp:trace:ed7b336d-e71a-46f0-a334-5f2e87cb6cfc"
    assert trace.task.objective == "Is anybody there?"
    assert steps(trace) == [
        ("thought", None, "Yes I am here"),
        ("thought", None, "Yes, I am here."),
    ]
    assert trace.outcome.result_summary == "Yes, I am here."
    assert trace.metadata.created_at.isoformat() == "2023-09-07T18:54:47.293922+00:00"


def test_openinference_tool_call_flow_merges_the_tool_result_by_call_id() -> None:
    """The flattened tool call and the ``tool`` message of the next LLM call are one tool step."""
    flow, reasoning = (item.trace for item in traces(DATA / "openinference_tool_calling.jsonl"))
    assert flow.task.objective == "What's the weather in Boston?"
    assert steps(flow) == [
        ("tool_call", "get_weather", 'get_weather {"location":"Boston, MA"}'),
        ("observation", "get_weather", '{"temperature": 65, "condition": "cloudy"}'),
        ("thought", None, "The current weather in Boston is 65°F and cloudy."),
    ]
    assert steps(reasoning) == [
        ("thought", None, "I need the current weather before answering."),
        ("tool_call", "get_weather", 'get_weather {"location":"San Francisco, CA"}'),
    ]
    assert reasoning.outcome.result_summary == "completed"


def test_file_exporter_output_of_the_example_agent_converts() -> None:
    """The example's spans, as the OTel file exporter wrote them: the retry is error_recovery."""
    (item,) = traces(EXAMPLE / "pydantic_ai_weather.otlp.jsonl")
    trace = item.trace
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.steps[2].content == "the weather service is busy, try again"
    assert trace.outcome.result_summary == "It is rainy, 14 °C in Paris today."
    assert trace.task.objective == "What is the weather in Paris?"
    assert (trace.metadata.framework, trace.metadata.agent_id) == ("pydantic-ai", "weather_agent")
    assert (trace.metadata.task_domain, source_of(item)["domain_source"]) == ("weather", "metadata")


def test_domain_and_confidence_arguments_win_over_metadata() -> None:
    """``--domain``/``--confidence`` beat the resource's ``kp.task_domain``."""
    options = TraceOptions(domain="code", confidence=0.6)
    items = list(convert_file(EXAMPLE / "pydantic_ai_weather.otlp.jsonl", options=options))
    (item,) = [found for found in items if isinstance(found, TraceItem)]
    assert (item.trace.metadata.task_domain, source_of(item)["domain_source"]) == (
        "code",
        "argument",
    )
    assert (item.trace.outcome.confidence, source_of(item)["confidence_source"]) == (
        0.6,
        "argument",
    )


def _good_line() -> str:
    return (DATA / "genai_semconv_examples.otlp.jsonl").read_text(encoding="utf-8").splitlines()[2]


def test_bad_records_are_located_and_the_rest_go_on(tmp_path: Path) -> None:
    """Unreadable lines, foreign records and broken spans are problems; the good trace converts."""
    bad_span = {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "eee19b7ec3c1b174"}]}]}]}
    bad_console = {"name": "x", "context": {"trace_id": "", "span_id": "0x1"}}
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                _good_line(),
                "{not json",
                json.dumps({"foo": 1}),
                json.dumps(bad_span),
                json.dumps(bad_console),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    items = converted(path)
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert len(problems) == 4
    assert problems[0].startswith(f"{path}:2: ")
    assert problems[1].startswith(f"{path}:3: not a span record")
    assert problems[2].startswith(f"{path}:4: resourceSpans[0].scopeSpans[0].spans[0].traceId: ")
    assert problems[3].startswith(f"{path}:5: context.trace_id: ")
    assert [item.trace.id for item in items if isinstance(item, TraceItem)] == [
        "kp:trace:5b8efff798038103d269b633813fc60d"
    ]


def test_a_trace_without_steps_is_a_problem_and_others_go_on(tmp_path: Path) -> None:
    """An agent span with no output, tool or answer cannot make a trace: said, not raised."""
    empty = {
        "name": "invoke_agent a",
        "context": {"trace_id": "0x" + "1" * 32, "span_id": "0x" + "2" * 16},
        "attributes": {"gen_ai.operation.name": "invoke_agent"},
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(empty) + "\n" + _good_line() + "\n", encoding="utf-8")
    items = converted(path, source="otlp")
    assert isinstance(items[0], Problem)
    assert str(items[0]).startswith(f"{path}:1: trace {'1' * 32}: the trace holds no step")
    assert isinstance(items[1], TraceItem)


def test_recognises_otlp_and_console_spans_only() -> None:
    """Each sibling source's first record is not taken for OpenTelemetry."""
    assert recognises({"resourceSpans": []})
    assert recognises({"name": "s", "context": {"trace_id": "0x1", "span_id": "0x2"}})
    others: list[Any] = [
        {"id": "r", "run_type": "chain", "child_runs": [], "name": "agent"},
        {"post": [], "patch": []},
        {"object": "trace.span", "id": "span_1", "trace_id": "trace_1", "span_data": {}},
        {"step_number": 1, "model_output": "x", "tool_calls": []},
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
        {"name": "s", "trace_id": "t"},
        [1],
        "text",
    ]
    for other in others:
        assert not recognises(other)
    assert recognise({"resourceSpans": []}) == "otlp"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"stringValue": "a"}, "a"),
        ({"intValue": "9007199254740993"}, 9007199254740993),
        ({"intValue": 5}, 5),
        ({"doubleValue": 1.5}, 1.5),
        ({"doubleValue": "NaN"}, None),
        ({"boolValue": True}, True),
        ({"bytesValue": base64.b64encode(b"\x00\x01").decode()}, b"\x00\x01"),
        ({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}, ["a", 2]),
        (
            {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": False}}]}},
            {"k": False},
        ),
        ({"string_value": "snake"}, "snake"),
        ({}, None),
    ],
)
def test_every_any_value_kind_is_read(value: dict[str, Any], expected: Any) -> None:
    """OTLP ``AnyValue``: 64-bit ints as strings, arrays, kvlists, bytes, snake_case too."""
    assert any_value(value) == expected


def _otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}


def _tool_span(**fields: Any) -> dict[str, Any]:
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "execute_tool search",
        "kind": 1,
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": "1544712661000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
        ],
    }
    span.update(fields)
    return span


def test_base64_ids_string_enums_and_error_status_are_read() -> None:
    """Base64 ids become hex; ``STATUS_CODE_ERROR`` is an error; the failure is an observation."""
    trace_b64 = base64.b64encode(bytes.fromhex("5b8efff798038103d269b633813fc60c")).decode()
    span = _tool_span(
        traceId=trace_b64,
        spanId=base64.b64encode(bytes.fromhex("eee19b7ec3c1b174")).decode(),
        kind="SPAN_KIND_INTERNAL",
        status={"code": "STATUS_CODE_ERROR", "message": "quota exceeded"},
    )
    trace = to_trace([_otlp([span])]).trace
    assert trace.id == "kp:trace:5b8efff798038103d269b633813fc60c"
    assert steps(trace) == [
        ("tool_call", "search", "search"),
        ("observation", "search", "quota exceeded"),
    ]
    assert trace.steps[0].latency_ms == 1000.0
    assert trace.metadata.success is False  # the root itself failed


def test_structured_message_values_read_as_json_strings_do() -> None:
    """``gen_ai.*.messages`` as arrayValue/kvlistValue give the same steps as JSON text."""
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]

    def encode(value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            entries = [{"key": k, "value": encode(v)} for k, v in value.items()]
            return {"kvlistValue": {"values": entries}}
        if isinstance(value, list):
            return {"arrayValue": {"values": [encode(item) for item in value]}}
        return {"stringValue": value}

    def chat(messages: dict[str, Any]) -> dict[str, Any]:
        return _tool_span(
            name="chat m",
            attributes=[
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.output.messages", "value": messages},
            ],
        )

    structured = to_trace([_otlp([chat(encode(output))])]).trace
    as_text = to_trace([_otlp([chat({"stringValue": json.dumps(output)})])]).trace
    assert steps(structured) == steps(as_text) == [("thought", None, "Done.")]


def test_no_message_text_warns_with_the_content_switch(tmp_path: Path) -> None:
    """Spans with names and timings only convert, and say which switch records the text."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(_otlp([_tool_span()])), encoding="utf-8")
    (item,) = list(convert_records(read_records(path), TraceOptions()))
    assert isinstance(item, TraceItem)
    # said once a file by the CLI, once by a collector; the placeholder objective's is its own
    (warning,) = (warning for warning in item.warnings if "hold no message text" in warning)
    assert warning.endswith(CONTENT_HINT)
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in CONTENT_HINT
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in CONTENT_HINT


def _example_spans() -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    for line in (
        (EXAMPLE / "pydantic_ai_weather.otlp.jsonl").read_text(encoding="utf-8").splitlines()
    ):
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                spans.extend(scope["spans"])
    return spans


EXAMPLE_SPANS = _example_spans()
EXPECTED = to_trace([_otlp(EXAMPLE_SPANS)]).trace


def _recode_id(value: str, how: str) -> str:
    if how == "upper":
        return value.upper()
    if how == "base64":
        return base64.b64encode(bytes.fromhex(value)).decode()
    return value


@settings(max_examples=40, deadline=None)
@given(
    order=st.permutations(range(len(EXAMPLE_SPANS))),
    cuts=st.lists(st.integers(min_value=1, max_value=len(EXAMPLE_SPANS) - 1), max_size=4),
    ids=st.sampled_from(["hex", "upper", "base64"]),
    numeric_times=st.booleans(),
)
def test_span_order_lines_and_encodings_do_not_change_the_trace(
    order: list[int], cuts: list[int], ids: str, numeric_times: bool
) -> None:
    """Shuffled spans, split over any lines, ids in any encoding, times as strings or numbers."""
    shuffled = []
    for index in order:
        span = dict(EXAMPLE_SPANS[index])
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = _recode_id(span[key], ids)
        if numeric_times:
            span["startTimeUnixNano"] = int(span["startTimeUnixNano"])
            span["endTimeUnixNano"] = int(span["endTimeUnixNano"])
        shuffled.append(span)
    bounds = [0, *sorted(set(cuts)), len(shuffled)]
    lines = [_otlp(shuffled[start:end]) for start, end in itertools.pairwise(bounds)]
    assert to_trace(lines).trace == EXPECTED


def test_a_start_time_of_thousands_of_digits_is_not_a_crash(tmp_path: Path) -> None:
    """A 5,000-digit startTimeUnixNano string (found by bench/fuzz_loaders.py) is no time."""
    text = (EXAMPLE / "pydantic_ai_weather.otlp.jsonl").read_text()
    start = json.loads(text.splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0][
        "startTimeUnixNano"
    ]
    path = tmp_path / "spans.otlp.jsonl"
    path.write_text(text.replace(f'"{start}"', '"' + "9" * 5000 + '"'))
    (item,) = convert_file(path, source="otlp")
    assert isinstance(item, TraceItem)  # the span, its time unknown, still makes the trace


class _Watched(dict[str, Any]):
    """A parsed document that a weak reference can watch (a plain dict cannot be)."""


def test_a_parsed_span_file_is_let_go_before_its_traces_come_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the spans outlive reading: the parsed document (a whole OTLP file) is not kept alive
    through conversion, so a file's peak memory is its spans and one trace (issue 28, item 15)."""
    value = json.loads((DATA / "genai_semconv_examples.otlp.jsonl").read_text().splitlines()[0])
    watched: list[weakref.ref[_Watched]] = []

    def read_records(path: str | Path, **_: Any) -> Iterator[Record]:
        document = _Watched(value)
        watched.append(weakref.ref(document))
        yield Record(Location(str(path)), document)

    monkeypatch.setattr(sources_read, "read_records", read_records)
    monkeypatch.setattr(sources_read, "check_openable", lambda path: None)  # no file is opened
    items = sources.read(["spans.json"], source="auto")
    first = next(item for item in items if isinstance(item, TraceItem))
    gc.collect()
    assert first.trace.steps
    assert watched[0]() is None


def _logged(span: dict[str, Any], *records: dict[str, Any]) -> dict[str, Any]:
    """An OTLP document of one span and log records tied to it, as a collector saves both."""
    ids = {"traceId": span["traceId"], "spanId": span["spanId"]}
    logs = [{"scopeLogs": [{"logRecords": [{**ids, **record} for record in records]}]}]
    return {**_otlp([span]), "resourceLogs": logs}


def _chat_span() -> dict[str, Any]:
    operation = {"key": "gen_ai.operation.name", "value": {"stringValue": "generate_content"}}
    return _tool_span(name="generate_content m", attributes=[operation])


def test_model_call_content_recorded_in_log_records_is_the_spans() -> None:
    """Content captured as events: the ``operation.details`` log record (structured messages)
    gives its span the messages; before, the trace held no step."""

    def text(role: str, said: str) -> dict[str, Any]:
        part = [{"key": "type", "value": {"stringValue": "text"}}]
        part.append({"key": "content", "value": {"stringValue": said}})
        parts = {"arrayValue": {"values": [{"kvlistValue": {"values": part}}]}}
        message = [
            {"key": "role", "value": {"stringValue": role}},
            {"key": "parts", "value": parts},
        ]
        return {"arrayValue": {"values": [{"kvlistValue": {"values": message}}]}}

    details = {
        "eventName": "gen_ai.client.inference.operation.details",
        "attributes": [
            {"key": "gen_ai.input.messages", "value": text("user", "Who are you?")},
            {"key": "gen_ai.output.messages", "value": text("assistant", "An assistant.")},
        ],
    }
    trace = to_trace([_logged(_chat_span(), details)]).trace
    assert trace.task.objective == "Who are you?"
    assert steps(trace) == [("thought", None, "An assistant.")]


def test_details_recorded_as_span_events_are_the_spans_content() -> None:
    """Strands Agents records the ``operation.details`` event on the span itself, the input and
    the output in two events: read as the log records are (before, the objective was the
    agent's name and the run had no answer). The span's own attributes win."""

    def details(key: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        told = {"key": key, "value": {"stringValue": json.dumps(messages)}}
        return {"name": "gen_ai.client.inference.operation.details", "attributes": [told]}

    asked = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    own = [{"role": "user", "parts": [{"type": "text", "content": "Its own words"}]}]
    span = _chat_span()
    span["events"] = [details("gen_ai.input.messages", asked)]
    span["events"].append(details("gen_ai.output.messages", said))
    trace = to_trace([_otlp([span])]).trace
    assert trace.task.objective == "Weather in Paris?"
    assert steps(trace) == [("thought", None, "Sunny.")]
    span["attributes"].append(
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(own)}}
    )
    assert to_trace([_otlp([span])]).trace.task.objective == "Its own words"


def test_a_tool_told_by_its_messages_has_its_arguments_and_result() -> None:
    """Strands Agents' ``execute_tool`` span (latest conventions) has no call attributes: its
    details events tell the call (input: a ``tool_call`` part) and the result (output: a
    ``tool_call_response`` whose response is content blocks of text)."""
    call = {"type": "tool_call", "id": "t1", "name": "search", "arguments": {"q": "Paris"}}
    response = {"type": "tool_call_response", "id": "t1", "response": [{"text": "Sunny."}]}

    def told(key: str, part: dict[str, Any]) -> dict[str, Any]:
        value = {"stringValue": json.dumps([{"role": "tool", "parts": [part]}])}
        return {"key": key, "value": value}

    events = [
        {"name": "gen_ai.client.inference.operation.details", "attributes": [told(key, part)]}
        for key, part in (("gen_ai.input.messages", call), ("gen_ai.output.messages", response))
    ]
    trace = to_trace([_otlp([_tool_span(events=events)])]).trace
    (called, seen) = trace.steps
    assert called.tool is not None
    assert called.tool.name == "search"
    assert called.input == {"q": "Paris"}
    assert (seen.type, seen.content) == ("observation", "Sunny.")


def test_strands_default_message_span_events_give_the_run() -> None:
    """Strands Agents' default telemetry records each message as a span event (its tracer's
    ``_add_event_messages``): ``gen_ai.user.message`` with its Converse content blocks as JSON
    text, ``gen_ai.choice`` with the reply's blocks (``toolUse`` too), or the agent's answer as
    text. Before, only names were read: the objective was the agent's name, no answer."""

    def event(name: str, **told: str) -> dict[str, Any]:
        attributes = [{"key": key, "value": {"stringValue": value}} for key, value in told.items()]
        return {"name": name, "attributes": attributes}

    def span(span_id: str, operation: str, *events: dict[str, Any], **extra: str) -> dict[str, Any]:
        told = {"gen_ai.operation.name": operation, **extra}
        attributes = [{"key": key, "value": {"stringValue": value}} for key, value in told.items()]
        start = 1544712660000000000 + int(span_id) * 1000
        return _tool_span(
            spanId=f"{int(span_id):016x}",
            name=operation,
            startTimeUnixNano=str(start),
            endTimeUnixNano=str(start + 500),
            attributes=attributes,
            events=list(events),
            **({"parentSpanId": f"{1:016x}"} if span_id != "1" else {}),
        )

    asked = json.dumps([{"text": "Weather in Paris?"}])
    use = {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}
    result = {"toolUseId": "t1", "status": "success", "content": [{"text": "sunny"}]}
    spans = [
        span(
            "1",
            "invoke_agent",
            event("gen_ai.user.message", content=asked),
            event("gen_ai.choice", message="Sunny in Paris."),
            **{"gen_ai.agent.name": "weather"},
        ),
        span(
            "2",
            "chat",
            event("gen_ai.user.message", content=asked),
            event("gen_ai.choice", message=json.dumps([{"toolUse": use}])),
        ),
        span(
            "3",
            "execute_tool",
            event("gen_ai.tool.message", role="tool", content='{"city": "Paris"}', id="t1"),
            event("gen_ai.choice", message=json.dumps([{"text": "sunny"}]), id="t1"),
            **{"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "t1"},
        ),
        span(
            "4",
            "chat",
            event("gen_ai.user.message", content=asked),
            event("gen_ai.assistant.message", content=json.dumps([{"toolUse": use}])),
            event("gen_ai.tool.message", content=json.dumps([{"toolResult": result}])),
            event("gen_ai.choice", message=json.dumps([{"text": "Sunny in Paris."}])),
        ),
    ]
    trace = to_trace([_otlp(spans)]).trace
    assert trace.task.objective == "Weather in Paris?"
    assert steps(trace) == [
        ("tool_call", "get_weather", 'get_weather {"city":"Paris"}'),
        ("observation", "get_weather", "sunny"),
        ("thought", None, "Sunny in Paris."),
    ]
    assert trace.steps[0].input == {"city": "Paris"}
    assert trace.outcome.result_summary == "Sunny in Paris."


def test_a_server_tool_call_has_its_details_and_its_response() -> None:
    """The conventions' ``server_tool_call`` keeps its details in ``server_tool_call``, its
    response part (no id) the outcome in ``server_tool_call_response``, typed by the tool: the
    call's input and its observation (before, a bare ``web_search`` call, no result)."""
    search = {"type": "web_search", "query": "otel genai"}
    output = [
        {
            "role": "assistant",
            "parts": [
                {"type": "server_tool_call", "name": "web_search", "server_tool_call": search},
                {
                    "type": "server_tool_call_response",
                    "server_tool_call_response": {"type": "web_search", "results": 3},
                },
                {"type": "text", "content": "Found it."},
            ],
        }
    ]
    span = _chat_span()
    span["attributes"].append(
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(output)}}
    )
    trace = to_trace([_otlp([span])]).trace
    assert [(step.type, step.tool.name if step.tool else None) for step in trace.steps] == [
        ("tool_call", "web_search"),
        ("observation", "web_search"),
        ("thought", None),
    ]
    assert trace.steps[0].input == search


def test_azure_message_span_events_give_the_spans_messages() -> None:
    """Azure AI Inference's tracing records each message as a span event whose
    ``gen_ai.event.content`` is the message as JSON text."""

    def event(name: str, message: dict[str, Any]) -> dict[str, Any]:
        told = {"key": "gen_ai.event.content", "value": {"stringValue": json.dumps(message)}}
        return {"name": name, "attributes": [told]}

    span = _chat_span()
    span["events"] = [
        event("gen_ai.user.message", {"role": "user", "content": "Hi?"}),
        event("gen_ai.choice", {"finish_reason": "stop", "message": {"content": "Hello."}}),
    ]
    trace = to_trace([_otlp([span])]).trace
    assert trace.task.objective == "Hi?"
    assert steps(trace) == [("thought", None, "Hello.")]


def test_a_reply_under_the_callers_own_operation_is_a_model_call() -> None:
    """LiteLLM names its span's operation by its call type (``acompletion``), no operation of
    the conventions: with the model's reply in ``gen_ai.output.messages`` it is a model call
    (before, the trace was skipped as holding no GenAI span)."""
    asked = [{"role": "user", "parts": [{"type": "text", "content": "Where is A-1?"}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "Shipped."}]}]
    told = {
        "gen_ai.operation.name": "acompletion",
        "gen_ai.input.messages": json.dumps(asked),
        "gen_ai.output.messages": json.dumps(said),
    }
    attributes = [{"key": key, "value": {"stringValue": value}} for key, value in told.items()]
    trace = to_trace([_otlp([_tool_span(name="litellm_request", attributes=attributes)])]).trace
    assert trace.task.objective == "Where is A-1?"
    assert steps(trace) == [("thought", None, "Shipped.")]


def test_per_message_events_in_log_records_give_the_spans_messages(tmp_path: Path) -> None:
    """The earlier conventions' ``gen_ai.user.message`` / ``gen_ai.choice`` log records, the
    message in the body, read as the same events on the span are."""
    user = {
        "eventName": "gen_ai.user.message",
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hi?"}}]}},
    }
    reply = [{"key": "content", "value": {"stringValue": "Hello."}}]
    choice = {
        "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.choice"}}],
        "body": {
            "kvlistValue": {
                "values": [{"key": "message", "value": {"kvlistValue": {"values": reply}}}]
            }
        },
    }
    path = tmp_path / "logged.json"
    path.write_text(json.dumps(_logged(_chat_span(), user, choice)), encoding="utf-8")
    (trace,) = [item.trace for item in traces(path)]
    assert trace.task.objective == "Hi?"
    assert steps(trace) == [("thought", None, "Hello.")]


def test_elided_message_events_give_no_text() -> None:
    """``<elided>`` (the text OTel's Python instrumentations write when capture is off) is no
    message: it is never read as the user's request."""
    elided = {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "<elided>"}}]}}
    document = _logged(_chat_span(), {"eventName": "gen_ai.user.message", "body": elided})
    assert logged_content(document) == {}


def test_a_trace_whose_spans_are_spread_over_files_is_said_to_come_in_parts(
    tmp_path: Path,
) -> None:
    """A file is read on its own: a trace split over two gives two parts, and the warning says so.

    Rotating file exporters and paged exports spread a run's spans over files; the parts joined
    into one file (``cat``, for JSON Lines) give the run whole, as the file it was cut from does.
    """
    source = CORPUS / "otlp" / "openinference_crewai_calculator.jsonl"
    lines = source.read_text().splitlines()
    documents = [
        {"resourceSpans": [{**resource, "scopeSpans": [{**scope, "spans": [span]}]}]}
        for line in lines
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    parts = [tmp_path / "part1.jsonl", tmp_path / "part2.jsonl"]
    for n, part in enumerate(parts):
        part.write_text("".join(json.dumps(doc) + "\n" for doc in documents[n::2]))
    found = list(sources.read(parts))
    repeated = [p for p in found if isinstance(p, Problem) and "appeared earlier" in p.message]
    whole = {item.trace.id for item in found if isinstance(item, TraceItem)}
    assert len(repeated) == len(whole) == 2
    assert all("spread over several files" in p.message for p in repeated)
    assert all("put the parts in one file" in p.message for p in repeated)
    joined = tmp_path / "joined.jsonl"
    joined.write_text("".join(part.read_text() for part in parts))
    assert [steps(item.trace) for item in sources.read(joined) if isinstance(item, TraceItem)] == [
        steps(item.trace) for item in sources.read(source) if isinstance(item, TraceItem)
    ]


def _any_agent_span(name: str, span_id: int, start: int, **attributes: Any) -> dict[str, Any]:
    trace_id = 0x9707D5FD6D4A546D47757044C6127E04  # past 64 bits, as the SDK's int
    return {
        "name": name,
        "context": {"trace_id": trace_id, "span_id": span_id},
        "parent": {"trace_id": trace_id, "span_id": 1},
        "start_time": start,
        "end_time": start + 1,
        "status": {"status_code": "ok", "description": None},
        "attributes": attributes,
    }


def test_an_any_agent_trace_reads_its_calls_tools_and_structured_answer(tmp_path: Path) -> None:
    """any-agent's ``{"spans", "final_output"}``: integer ids, ``call_llm`` and ``gen_ai.output``;
    its ``final_output`` tool is the answer, no tool; the 128-bit trace id is read exactly."""
    asked = [{"role": "user", "content": "What year is it?"}]
    calls = [{"tool.name": "get_current_time", "tool.args": "{}"}]
    answer = [{"tool.name": "final_output", "tool.args": {"answer": '{"year": 2025}'}}]
    spans = [
        _any_agent_span(
            "call_llm m",
            2,
            10,
            **{
                "gen_ai.operation.name": "call_llm",
                "gen_ai.input.messages": json.dumps(asked),
                "gen_ai.output": json.dumps(calls),
                "gen_ai.output.type": "json",
            },
        ),
        _any_agent_span(
            "execute_tool get_current_time",
            3,
            20,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_current_time",
                "gen_ai.tool.args": "{}",
                "gen_ai.output": "2025-09-16",
            },
        ),
        _any_agent_span(
            "call_llm m",
            4,
            30,
            **{
                "gen_ai.operation.name": "call_llm",
                "gen_ai.output": json.dumps(answer),
                "gen_ai.output.type": "json",
            },
        ),
        _any_agent_span(
            "execute_tool final_output",
            5,
            40,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "final_output",
                "gen_ai.tool.args": json.dumps({"answer": '{"year": 2025}'}),
            },
        ),
    ]
    path = tmp_path / "AGENT_trace.json"
    path.write_text(json.dumps({"spans": spans, "final_output": {"year": 2025}}))
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    trace = item.trace
    assert trace.id == "kp:trace:9707d5fd6d4a546d47757044c6127e04"
    assert trace.task.objective == "What year is it?"
    assert [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool] == [
        "get_current_time"
    ]
    assert trace.outcome.result_summary == '{"year": 2025}'


def test_tempo_s_v2_trace_by_id_answer_reads_as_the_trace_it_wraps(tmp_path: Path) -> None:
    """Grafana Tempo's ``GET /api/v2/traces/{id}`` (what Grafana's Tempo data source asks for)
    answers a ``TraceByIDResponse``: ``{"trace": {"batches" or "resourceSpans"}, "metrics",
    "status"}``. It is the trace it wraps; before, it was no file kp knew."""
    for name in (
        "agentevals_tempo_export_with_batches",
        "mlflow_genai_semconv_langgraph_google_model_retry",
    ):
        plain = CORPUS / "otlp" / f"{name}.json"
        wrapped = tmp_path / f"{name}_v2.json"
        answer = {"trace": json.loads(plain.read_text()), "metrics": {}, "status": "COMPLETE"}
        wrapped.write_text(json.dumps(answer))
        assert recognise(answer) == "otlp"
        expected = [item.trace for item in convert_file(plain) if isinstance(item, TraceItem)]
        read = [item.trace for item in convert_file(wrapped) if isinstance(item, TraceItem)]
        assert read == expected != []


def test_a_bad_span_in_tempo_s_v2_answer_is_located_inside_its_trace(tmp_path: Path) -> None:
    document = json.loads(
        (CORPUS / "otlp" / "agentevals_tempo_export_with_batches.json").read_text()
    )
    document["batches"][0]["instrumentationLibrarySpans"][0]["spans"][0] = 7
    path = tmp_path / "v2.json"
    path.write_text(json.dumps({"trace": document, "status": "COMPLETE"}))
    problems = [item for item in convert_file(path) if isinstance(item, Problem)]
    assert problems
    assert problems[0].path.startswith("trace.batches[0]")


def test_jaeger_s_api_v3_answer_reads_as_the_otlp_trace_it_wraps(tmp_path: Path) -> None:
    """Jaeger v2's ``GET /api/v3/traces/{id}`` answers ``{"result": {"resourceSpans": [...]}}``
    (its own snapshot in the corpus has no GenAI span: read, then skipped with a warning); a
    GenAI trace so wrapped is the trace. Before, neither was a file kp knew."""
    snapshot = CORPUS / "otlp" / "jaeger_apiv3_GetTrace.json"
    assert recognise(json.loads(snapshot.read_text())) == "otlp"
    (warned,) = convert_file(snapshot)
    assert isinstance(warned, Problem)
    assert warned.warning
    assert "no GenAI span" in warned.message
    plain = CORPUS / "otlp" / "mlflow_genai_semconv_openai_agent_google_model_retry.json"
    wrapped = tmp_path / "v3.json"
    wrapped.write_text(json.dumps({"result": json.loads(plain.read_text())}))
    expected = [item.trace for item in convert_file(plain) if isinstance(item, TraceItem)]
    assert [item.trace for item in convert_file(wrapped) if isinstance(item, TraceItem)] == expected
