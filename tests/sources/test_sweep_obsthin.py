"""Shapes a sweep of the thinly covered observability exports found kp reading wrong.

Phoenix's PXI fixture of a turn that delegates to a sub-agent (``call_subagent``) writes every
span a second long, one after another: the sub-agent's spans, inside the tool's, start after the
tool's span has ended, as clocks of two machines apart would put them. The tool's result came
back after what ran inside it, so its observation follows the sub-agent's steps.
"""

from __future__ import annotations

import json
from typing import Any

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.spans import Span
from tests.sources.helpers import CORPUS
from tests.sources.test_otel_dialects import span, steps

ASKED = "please delegate this analysis"
ANSWER = "The delegated analysis is complete."


def _model(
    start: int, parent: Span, *, call: tuple[str, str] | None = None, reply: str = ""
) -> Span:
    """An OpenInference LLM span whose reply asks for ``call`` (its id, its tool) or says
    ``reply``."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": ASKED,
        "llm.output_messages.0.message.role": "assistant",
    }
    if call is not None:
        prefix = "llm.output_messages.0.message.tool_calls.0.tool_call"
        attributes[f"{prefix}.id"], attributes[f"{prefix}.function.name"] = call
        attributes[f"{prefix}.function.arguments"] = "{}"
    if reply:
        attributes["llm.output_messages.0.message.content"] = reply
    return span("claude", attributes, start=start, parent=parent)


def _tool(name: str, output: str, *, start: int, parent: Span) -> Span:
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "input.value": "{}",
        "output.value": output,
    }
    return span(name, attributes, start=start, parent=parent)


def _delegating_turn(*, background: bool = False) -> list[Span]:
    """A turn whose tool runs a sub-agent; each span half a second, the next a second later, so
    the sub-agent's spans start after its tool's span ended (Phoenix's PXI fixture's clock)."""
    root = span(
        "pxi.turn",
        {"openinference.span.kind": "AGENT", "input.value": ASKED, "output.value": ANSWER},
        start=0,
    )
    asks = _model(1, root, call=("call-1", "call_subagent"))
    delegate = _tool("call_subagent", "the sub-agent's report", start=2, parent=root)
    if background:  # the tool's own HTTP call, left running: no step
        return [
            root,
            asks,
            delegate,
            span("POST", {"http.method": "POST"}, start=3, parent=delegate),
        ]
    sub = span(
        "ServerAgent.iter",
        {"openinference.span.kind": "AGENT", "input.value": "[subagent input]"},
        start=3,
        parent=delegate,
    )
    inner = _model(4, sub, call=("call-2", "bash"))
    bash = _tool("bash", "4 spans, all OK", start=5, parent=sub)
    said = _model(6, sub, reply="The trace is fine.")
    last = _model(7, root, reply=ANSWER)
    return [root, asks, delegate, sub, inner, bash, said, last]


def test_a_tool_is_observed_after_the_sub_agent_inside_it_whatever_the_clocks_say() -> None:
    trace = to_trace(_delegating_turn()).trace
    assert [(kind, name) for kind, name, _ in steps(trace)] == [
        ("tool_call", "call_subagent"),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
        ("observation", "call_subagent"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == ANSWER


def test_a_span_inside_a_tool_that_tells_no_step_does_not_hold_its_observation_back() -> None:
    """An HTTP call the tool left running says nothing of when its result came back."""
    spans = _delegating_turn(background=True)
    spans.append(_model(4, spans[0], reply=ANSWER))
    trace = to_trace(spans).trace
    assert [(kind, name) for kind, name, _ in steps(trace)] == [
        ("tool_call", "call_subagent"),
        ("observation", "call_subagent"),
        ("thought", None),
    ]


def test_the_builder_observes_a_tool_after_what_ran_inside_it_ended() -> None:
    builder = StepBuilder()
    builder.tool_request("ask", call_id="o1", at=0.0)
    builder.tool_result(
        "ask", output="Oslo: sunny", call_id="o1", at=1.0, latency_ms=500, inside_until=4.5
    )
    builder.tool_request("weather", call_id="i1", at=2.0)
    builder.tool_result("weather", output="sunny", call_id="i1", at=3.0, latency_ms=100)
    builder.answer("Oslo is sunny.", at=7.0)
    assert [(s["type"], s.get("tool", {}).get("name")) for s in builder.steps()] == [
        ("tool_call", "ask"),
        ("tool_call", "weather"),
        ("observation", "weather"),
        ("observation", "ask"),
        ("thought", None),
    ]


def test_phoenix_s_pxi_sub_agent_turn_is_observed_after_the_sub_agent() -> None:
    path = CORPUS / "otlp" / "phoenix_pxi_turn_subagent_trace.json"
    (item,) = sources.convert(json.loads(path.read_text()), source="otlp")
    assert not isinstance(item, Problem), item
    trace = item.trace
    kinds = [(step.type, step.tool.name if step.tool else None) for step in trace.steps]
    delegated = kinds.index(("observation", "call_subagent"))
    assert kinds[delegated - 1] == ("thought", None)  # the sub-agent's last reply
    assert kinds[delegated + 1 :] == [("thought", None)]  # the turn's answer
    assert trace.task.objective == ASKED


def test_a_tool_span_s_input_and_output_in_sentry_s_names_are_its_arguments_and_result() -> None:
    """Sentry's AI agents module writes ``gen_ai.tool.input`` / ``gen_ai.tool.output`` on its
    ``execute_tool`` spans (jaeger-ui's GenAI fixture too): before, the result was lost."""
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role": "user", "content": "CPU spike on the API pod?"}]',
    }
    asks = span("chat", {**chat, "gen_ai.output.messages": "[]"}, start=1)
    tool = span(
        "execute_tool get_pod_metrics",
        {
            "gen_ai.tool.name": "get_pod_metrics",
            "gen_ai.tool.call.id": "call-1",
            "gen_ai.tool.input": '{"pod": "api-7f9d8b"}',
            "gen_ai.tool.output": '{"goroutines": 18432}',
        },
        start=2,
    )
    said = '[{"role": "assistant", "content": "A goroutine leak."}]'
    answers = span("chat", {**chat, "gen_ai.output.messages": said}, start=3)
    trace = to_trace([asks, tool, answers]).trace
    call = next(step for step in trace.steps if step.type == "tool_call")
    assert call.input == {"pod": "api-7f9d8b"}
    assert [(kind, name) for kind, name, _ in steps(trace)] == [
        ("tool_call", "get_pod_metrics"),
        ("observation", "get_pod_metrics"),
        ("thought", None),
    ]
    assert '"goroutines": 18432' in steps(trace)[1][2]


def test_a_sentry_tool_output_that_says_it_failed_is_a_failed_call() -> None:
    tool = span(
        "execute_tool scale",
        {
            "gen_ai.tool.name": "scale",
            "gen_ai.tool.input": "{}",
            "gen_ai.tool.output": '{"status": "error", "message": "quota exceeded"}',
        },
        start=2,
    )
    reply = '[{"role": "assistant", "content": "Scaling failed: quota."}]'
    answers = span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": '[{"role": "user", "content": "Scale the API."}]',
            "gen_ai.output.messages": reply,
        },
        start=3,
    )
    trace = to_trace([tool, answers]).trace
    assert [kind for kind, _, _ in steps(trace)] == ["tool_call", "observation", "error_recovery"]
