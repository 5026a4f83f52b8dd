"""Shapes an unseen-file sweep of observability exports found kp reading wrong, span by span.

OpenInference's LangChain instrumentor (0.1.x) as any-agent's traces of May 2025 hold it: TOOL
spans with no call id, whose results the next model call is sent again as ToolMessages, and a
LangGraph state of ``str(message)`` reprs as the agent's output; its LlamaIndex instrumentor's
workflow steps (event reprs as inputs, ``AgentOutput`` as the run's output); any-agent's model
call span with no ``gen_ai.output``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources.otel import messages as msg
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.trace import ReasoningTrace
from tests.sources.helpers import CORPUS
from tests.sources.test_otel_dialects import span, steps

ASKED = "What year is it in New York? Write it to a file."
ANSWER = "It is 2025; I wrote it to the file."


def _model(start: int, parent: Span, *messages: dict[str, Any], reply: str = "") -> Span:
    """An OpenInference LLM span sent ``messages``; its output message says ``reply`` (or holds
    no content: the instrumentor lost litellm's tool-call objects)."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
    }
    for number, message in enumerate(messages):
        for key, value in message.items():
            attributes[f"llm.input_messages.{number}.message.{key}"] = value
    if reply:
        attributes["llm.output_messages.0.message.content"] = reply
    return span("ChatLiteLLM", attributes, start=start, parent=parent)


def _tool(name: str, arguments: str, output: str, *, start: int, parent: Span) -> Span:
    """An OpenInference TOOL span of LangChain's: a name, its input and output, no call id."""
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "input.value": arguments,
        "output.value": output,
    }
    return span(name, attributes, start=start, parent=parent)


def _langgraph_run(state_output: str) -> ReasoningTrace:
    root = span(
        "any_agent",
        {
            "openinference.span.kind": "AGENT",
            "input.value": json.dumps({"messages": [["user", ASKED]]}),
            "output.value": state_output,
        },
        start=0,
    )
    user = {"role": "user", "content": ASKED}
    first = _model(1, root, user)
    clock = _tool(
        "get_current_time", "{'timezone': 'America/New_York'}", "2025-05-19", start=2, parent=root
    )
    sent = {
        "role": "tool",
        "content": "2025-05-19",
        "tool_call_id": "call_1",
        "name": "get_current_time",
    }
    second = _model(3, root, user, {"role": "assistant"}, sent)
    write = _tool("write_file", "{'text': '2025'}", "null", start=4, parent=root)
    written = {"role": "tool", "content": "null", "tool_call_id": "call_2", "name": "write_file"}
    last = _model(
        5, root, user, {"role": "assistant"}, sent, {"role": "assistant"}, written, reply=ANSWER
    )
    return to_trace([root, first, clock, second, write, last]).trace


def test_a_tool_message_whose_tool_span_has_no_call_id_is_that_span_s_result_once() -> None:
    """The TOOL span told the call; the ToolMessage the next model call is sent (its id and name)
    is the same result, not a second call with no name."""
    state = json.dumps({"messages": [f"content='{ASKED}' additional_kwargs={{}} id='1'"]})
    trace = _langgraph_run(state)
    assert [(kind, name) for kind, name, _ in steps(trace)] == [
        ("tool_call", "get_current_time"),
        ("observation", "get_current_time"),
        ("tool_call", "write_file"),
        ("observation", "write_file"),
        ("thought", None),
    ]


def test_a_langgraph_state_of_message_reprs_is_no_answer_the_last_reply_is() -> None:
    """``{"messages": ["content='...' ..."]}``: no message kp reads, so not the answer as JSON."""
    reprs = [
        f"content='{ASKED}' additional_kwargs={{}} response_metadata={{}} id='1'",
        f"content='{ANSWER}' additional_kwargs={{}} name='any_agent' id='run-2'",
    ]
    trace = _langgraph_run(json.dumps({"messages": reprs}))
    assert trace.task.objective == ASKED
    assert trace.outcome.result_summary == ANSWER
    assert [step.content for step in trace.steps].count(ANSWER) == 1


def test_an_openinference_tool_message_keeps_its_name() -> None:
    flat = {
        "llm.input_messages.0.message.role": "tool",
        "llm.input_messages.0.message.content": "2025-05-19",
        "llm.input_messages.0.message.tool_call_id": "call_1",
        "llm.input_messages.0.message.name": "get_current_time",
    }
    [message] = msg.openinference_messages(flat, "llm.input_messages")
    assert message["parts"][0]["name"] == "get_current_time"


def test_a_llama_index_workflow_gives_the_user_s_words_and_its_agent_output_s_reply() -> None:
    """The workflow's CHAIN span was called with event reprs (``AgentWorkflowStartEvent()``):
    no objective; its output is an ``AgentOutput`` whose ``response`` message is the answer."""
    output = {
        "response": {"role": "assistant", "additional_kwargs": {}, "blocks": [{"text": ANSWER}]},
        "tool_calls": [{"tool_name": "write_file", "tool_kwargs": {"text": "2025"}}],
        "raw": {"id": "chatcmpl-1"},
    }
    run = span(
        "Workflow.run",
        {
            "openinference.span.kind": "CHAIN",
            "input.value": json.dumps(
                {"ctx": None, "stepwise": False, "start_event": "AgentWorkflowStartEvent()"}
            ),
            "output.value": json.dumps(output),
        },
        start=0,
    )
    reply = f"Thought: I wrote it.\nAnswer: {ANSWER}"
    model = _model(1, run, {"role": "user", "content": ASKED}, reply=reply)
    tool = span(
        "FunctionTool.acall",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "write_file",
            "input.value": json.dumps({"kwargs": {"text": "2025"}}),
            "output.value": "None",
        },
        start=2,
        parent=run,
    )
    trace = to_trace([run, model, tool]).trace
    assert trace.task.objective == ASKED
    assert trace.outcome.result_summary == ANSWER
    call = next(step for step in trace.steps if step.type == "tool_call")
    assert call.input == {"text": "2025"}  # FunctionTool.acall's keywords, ``args`` left out


def test_a_llama_index_chat_message_s_blocks_are_its_text() -> None:
    blocks = [{"block_type": "text", "text": "Hello."}, {"block_type": "image", "url": "x"}]
    found = msg.messages([{"role": "assistant", "additional_kwargs": {}, "blocks": blocks}])
    assert msg.last_assistant_text(found) == "Hello."


def test_an_any_agent_model_call_with_no_output_says_nothing() -> None:
    """No ``gen_ai.output`` (any-agent's own spans of May 2025 wrote ``genai.output``): no
    thought ``null``."""
    root = span("invoke_agent [a]", {"gen_ai.operation.name": "invoke_agent"}, start=0)
    call = span("call_llm m", {"gen_ai.operation.name": "call_llm"}, start=1, parent=root)
    tool = span(
        "execute_tool t",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
        start=2,
        parent=root,
    )
    trace = to_trace([root, call, tool]).trace
    assert [step.content for step in trace.steps if step.type == "thought"] == []


def test_a_workflow_that_returns_a_chat_completion_of_tool_calls_answers_nothing() -> None:
    """OpenLLMetry's ``@workflow`` whose function returned the client's response: the Chat
    Completion's text is the answer; one that only calls tools is none (not its JSON)."""
    completion: dict[str, Any] = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "content": None,
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "function": {"arguments": "{}", "name": "lookup_order"}}
                    ],
                },
            }
        ],
    }
    workflow = span(
        "support_triage.workflow",
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.name": "support_triage",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {}}),
            "traceloop.entity.output": json.dumps(json.dumps(completion, indent=2)),
        },
        start=0,
    )
    asked = [{"role": "user", "parts": [{"type": "text", "content": "Where is order A-1187?"}]}]
    called = [{"type": "tool_call", "id": "c1", "name": "lookup_order", "arguments": {}}]
    chat = span(
        "openai.chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(asked),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": called}]),
        },
        start=1,
        parent=workflow,
    )
    trace = to_trace([workflow, chat]).trace
    assert trace.task.objective == "Where is order A-1187?"
    assert [step.type for step in trace.steps] == ["tool_call"]
    assert "chatcmpl" not in (trace.outcome.result_summary or "")
    completion["choices"][0]["message"] = {"content": "It ships today.", "role": "assistant"}
    said = dataclasses.replace(
        workflow,
        attributes={**workflow.attributes, "traceloop.entity.output": json.dumps(completion)},
    )
    assert to_trace([said, chat]).trace.outcome.result_summary == "It ships today."


STRUCTURED = CORPUS / "otlp" / "any_agent_2025-07-08_langchain_structured_trace.json"
"""any-agent's LangGraph run with an output type: its text reply, then one more model call
whose reply is one call of the schema (``Steps``) that no tool runs."""


def _kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def _structured(change: Any = None) -> ReasoningTrace:
    document = json.loads(STRUCTURED.read_text())
    if change is not None:
        change(document["spans"])
    (item,) = sources.convert([document], source="otlp")
    assert not isinstance(item, Problem), item
    return item.trace


def test_langgraphs_structured_response_call_is_the_answer_not_a_call_that_never_ran() -> None:
    """``generate_structured_response`` puts the agent's text answer into the schema by a forced
    call: its arguments are the answer (as Pydantic AI's ``final_result``), no ``tool_call``."""
    trace = _structured()
    assert _kinds(trace) == [
        ("tool_call", "get_current_time"),
        ("observation", "get_current_time"),
        ("tool_call", "write_file"),
        ("observation", "write_file"),
        ("thought", None),
        ("thought", None),
    ]
    answer = json.loads(trace.outcome.result_summary or "")
    assert [step["number"] for step in answer["steps"]] == [1, 2, 3]
    assert trace.steps[-1].content == trace.outcome.result_summary


def test_a_call_after_a_text_reply_that_a_tool_then_runs_is_a_call() -> None:
    """The same call answered by a tool span after it is a tool the agent ran."""

    def ran(spans: list[dict[str, Any]]) -> None:
        asked = spans[-2]
        tool = json.loads(json.dumps(spans[1]))  # a tool span, moved after the last model call
        tool["name"] = "execute_tool Steps"
        tool["attributes"]["gen_ai.tool.name"] = "Steps"
        tool["start_time"] = tool["end_time"] = asked["end_time"]
        tool["context"]["span_id"] += 1  # a span of its own
        spans.insert(len(spans) - 1, tool)

    assert ("tool_call", "Steps") in _kinds(_structured(ran))


def test_a_lone_unanswered_call_with_no_text_reply_before_it_stays_a_call() -> None:
    """A model call asked for a call and the run ended (cut short): no answer made of it."""

    def cut(spans: list[dict[str, Any]]) -> None:
        del spans[-3]  # the text reply: the call now follows a tool's result

    trace = _structured(cut)
    assert _kinds(trace)[-1] == ("tool_call", "Steps")
