"""Spans as AWS exports them to CloudWatch (``aws/spans``) and AgentCore's ``sessionSpans``.

ADOT (the AWS Distro for OpenTelemetry) writes each span as one JSON document, OTLP's span fields
flattened beside its ``resource`` and ``scope`` with plain attribute values, and the spans'
GenAI content as log records of the same shape (its LLO handler's ``{"input": {"messages"},
"output": {"messages"}}`` bodies, or a message event's own body). Before this sweep kp refused
every such file ("not a trace file this tool knows").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file, recognise

TRACE = "691bb6a875f4b80435ad36816864e7c2"
ASKED = "What is my BMI? I weigh 70 kg and am 1.75 m tall."
ANSWER = "Your BMI is 22.9, a normal weight."
RESULT = "BMI: 22.9 (Normal weight)"
CALL = "tooluse_1"


def _span(
    span_id: str, name: str, attributes: dict[str, Any], *, parent: str = "", start: int = 1
) -> dict[str, Any]:
    """An ADOT span document as the ``aws/spans`` log group holds it."""
    return {
        "resource": {
            "attributes": {
                "service.name": "agent.DEFAULT",
                "cloud.platform": "aws_bedrock_agentcore",
            }
        },
        "scope": {"name": "strands.telemetry.tracer"},
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "flags": 256,
        "name": name,
        "kind": "INTERNAL",
        "startTimeUnixNano": 1763423912171758991 + start,
        "endTimeUnixNano": 1763423917517663228 + start,
        "durationNano": 5345904237,
        "attributes": attributes,
        "status": {"code": "OK"},
    }


def _llo(
    span_id: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    """ADOT's LLO log record of a span (the runtime's ``otel-rt-logs``)."""
    return {
        "resource": {"attributes": {"service.name": "agent.DEFAULT"}},
        "scope": {"name": "strands.telemetry.tracer"},
        "timeUnixNano": 1763423917517663228,
        "observedTimeUnixNano": 1763423917517663228,
        "severityNumber": 9,
        "severityText": "",
        "body": {"input": {"messages": inputs}, "output": {"messages": outputs}},
        "attributes": {"event.name": "strands.telemetry.tracer"},
        "flags": 1,
        "traceId": TRACE,
        "spanId": span_id,
    }


def _blocks(*blocks: dict[str, Any]) -> str:
    return json.dumps(list(blocks))


def _strands_run() -> list[dict[str, Any]]:
    """One Strands run: agent, a model call asking for ``calculate_bmi``, the tool, the answer."""
    use = {"toolUse": {"toolUseId": CALL, "name": "calculate_bmi", "input": {"weight_kg": 70}}}
    answered = {
        "toolResult": {"toolUseId": CALL, "status": "success", "content": [{"text": RESULT}]}
    }
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "health"}
    chat = {"gen_ai.operation.name": "chat"}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "calculate_bmi",
        "gen_ai.tool.call.id": CALL,
        "gen_ai.tool.status": "success",
    }
    user = {"content": {"content": _blocks({"text": ASKED})}, "role": "user"}
    return [
        _span("a000000000000001", "invoke_agent health", agent, start=0),
        _span("a000000000000002", "chat", chat, parent="a000000000000001", start=1),
        _span(
            "a000000000000003",
            "execute_tool calculate_bmi",
            tool,
            parent="a000000000000001",
            start=2,
        ),
        _span("a000000000000004", "chat", chat, parent="a000000000000001", start=3),
        _llo("a000000000000001", [user], [{"content": {"message": ANSWER}, "role": "assistant"}]),
        _llo(
            "a000000000000002",
            [user],
            [
                {
                    "content": {"message": _blocks(use), "finish_reason": "tool_use"},
                    "role": "assistant",
                }
            ],
        ),
        _llo(
            "a000000000000003",
            [
                {
                    "content": {"content": '{"weight_kg": 70}', "role": "tool", "id": CALL},
                    "role": "tool",
                }
            ],
            [{"content": {"message": _blocks({"text": RESULT}), "id": CALL}, "role": "assistant"}],
        ),
        _llo(
            "a000000000000004",
            # ADOT keeps one message of each kind, the request's last: the user's question, the
            # assistant's call (history, in the output), the call's result
            [user, {"content": {"content": _blocks(answered)}, "role": "tool"}],
            [
                {"content": {"content": _blocks(use)}, "role": "assistant"},
                {"content": {"message": _blocks({"text": ANSWER})}, "role": "assistant"},
            ],
        ),
    ]


def _converted(tmp_path: Path, name: str, text: str) -> list[TraceItem | Problem]:
    path = tmp_path / name
    path.write_text(text)
    return convert_file(path)


def _only_trace(items: list[TraceItem | Problem]) -> TraceItem:
    assert not [item for item in items if isinstance(item, Problem)], items
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def test_a_cloudwatch_span_document_is_recognised_as_otlp() -> None:
    documents = _strands_run()
    assert recognise(documents[0]) == "otlp"  # a span
    assert recognise(documents[-1]) == "otlp"  # an LLO log record
    assert recognise({"sessionSpans": documents}) == "otlp"


def test_spans_and_their_log_records_on_lines_of_their_own_are_one_run(tmp_path: Path) -> None:
    """The log records join their spans across the file's lines (the records come after)."""
    lines = "".join(json.dumps(document) + "\n" for document in _strands_run())
    trace = _only_trace(_converted(tmp_path, "aws-spans.jsonl", lines)).trace
    assert trace.task.objective == ASKED
    assert [(step.type, step.tool.name if step.tool else None) for step in trace.steps] == [
        ("tool_call", "calculate_bmi"),
        ("observation", "calculate_bmi"),
        ("thought", None),
    ]
    assert trace.steps[1].content == RESULT
    assert trace.outcome.result_summary == ANSWER
    assert trace.metadata.success is True


def test_agentcore_session_spans_are_read_as_the_same_run(tmp_path: Path) -> None:
    text = json.dumps({"sessionSpans": _strands_run()})
    trace = _only_trace(_converted(tmp_path, "session.json", text)).trace
    assert trace.task.objective == ASKED
    assert [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool] == [
        "calculate_bmi"
    ]


def test_an_earlier_turns_tool_result_in_the_history_is_no_call_of_this_run(tmp_path: Path) -> None:
    """ADOT's record of a model call keeps the last tool message of its history: a result the
    assistant turn it keeps did not ask for was an earlier turn's, not a nameless call here."""
    documents = _strands_run()
    earlier = {
        "toolResult": {"toolUseId": "tooluse_0", "status": "success", "content": [{"text": "old"}]}
    }
    first_call = documents[5]
    first_call["body"]["input"]["messages"].append(
        {"content": {"content": _blocks(earlier)}, "role": "tool"}
    )
    first_call["body"]["output"]["messages"].insert(
        0, {"content": {"content": _blocks({"text": "An earlier answer."})}, "role": "assistant"}
    )
    trace = _only_trace(
        _converted(tmp_path, "aws-spans.jsonl", "\n".join(map(json.dumps, documents)))
    ).trace
    assert [step.tool.name for step in trace.steps if step.tool] == [
        "calculate_bmi",
        "calculate_bmi",
    ]
    assert "old" not in [step.content for step in trace.steps]


def test_an_openinference_spans_text_goes_back_to_its_input_and_output_value(
    tmp_path: Path,
) -> None:
    """ADOT moves ``input.value`` / ``output.value`` into its record as text: the span's own
    dialect says where that text belongs."""
    agent = _span("b000000000000001", "LangGraph", {"openinference.span.kind": "AGENT"})
    record = _llo(
        "b000000000000001",
        [
            {
                "content": json.dumps({"messages": [{"type": "human", "content": ASKED}]}),
                "role": "user",
            }
        ],
        [{"content": ANSWER, "role": "assistant"}],
    )
    model = _span(
        "b000000000000002",
        "ChatBedrock",
        {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant"},
        parent="b000000000000001",
        start=1,
    )
    reply = _llo("b000000000000002", [], [{"content": ANSWER, "role": "assistant"}])
    lines = "\n".join(json.dumps(document) for document in (agent, model, record, reply))
    trace = _only_trace(_converted(tmp_path, "aws-spans.jsonl", lines)).trace
    assert trace.outcome.result_summary == ANSWER


def test_the_corpus_agentcore_file_reads_the_failed_tool_and_the_answer() -> None:
    items = convert_file(CORPUS / "otlp" / "agentcore_toolkit_strands_openai_cloudwatch.jsonl")
    traces = [item.trace for item in items if isinstance(item, TraceItem)]
    assert len(traces) == 2
    failed = next(trace for trace in traces if trace.task.objective.startswith("calculate"))
    assert [step.type for step in failed.steps][:2] == ["tool_call", "observation"]
    assert failed.steps[-1].type == "error_recovery"


def test_log_records_without_their_spans_are_a_warning_that_says_what_to_export(
    tmp_path: Path,
) -> None:
    """The runtime's log group exported alone: no run, and the user is told why (was: 0 traces
    and nothing said)."""
    logs = [document for document in _strands_run() if "body" in document]
    items = _converted(tmp_path, "otel-rt-logs.jsonl", "\n".join(map(json.dumps, logs)))
    (problem,) = items
    assert isinstance(problem, Problem)
    assert problem.warning
    assert "aws/spans" in problem.message
