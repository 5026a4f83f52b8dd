"""Reading defects a sweep of the corpus left open, fixed by the formats' rules.

* jaeger-ui's flame graph fixture: a ``chat`` span's words, then a ``web_search`` and a
  retrieval, and no model call after them. Words that tools follow were said before acting (a
  thought); a run that ends on a tool's result has no final answer.
"""

from __future__ import annotations

import json
from typing import Any

from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.spans import Span
from tests.sources.test_otel_dialects import span, steps

ASKED = "How do I send spans from Go to Jaeger?"
SAID = "Setting up OpenTelemetry with Jaeger involves three components."


def _chat(start: int, parent: Span) -> Span:
    """A GenAI ``chat`` span that asked ``ASKED`` and said ``SAID``, calling no tool."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": ASKED}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": SAID}]),
    }
    return span("chat", attributes, start=start, parent=parent)


def _search(start: int, parent: Span) -> Span:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "web_search",
        "gen_ai.tool.call.arguments": '{"query": "jaeger otlp"}',
        "gen_ai.tool.call.result": '{"results": ["Jaeger natively supports OTLP"]}',
    }
    return span("execute_tool", attributes, start=start, parent=parent)


def _agent() -> Span:
    return span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, start=0)


def test_words_tools_follow_are_a_thought_and_a_run_ending_on_a_tool_has_no_answer() -> None:
    root = _agent()
    retrieval = span(
        "retrieval",
        {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": '["Jaeger v2"]'},
        start=3,
        parent=root,
    )
    trace = to_trace([root, _chat(1, root), _search(2, root), retrieval]).trace
    assert steps(trace)[0] == ("thought", None, SAID)
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "tool_call",
        "observation",
    ]
    assert trace.outcome.result_summary == "completed"  # no answer: the run ended on a result


def test_words_no_tool_follows_are_the_answer() -> None:
    root = _agent()
    trace = to_trace([root, _search(1, root), _chat(2, root)]).trace
    assert trace.outcome.result_summary == SAID
    assert steps(trace)[-1] == ("thought", None, SAID)


def test_a_tool_the_model_call_runs_inside_ran_around_it_not_after() -> None:
    """An agent called as a tool: its tool span starts with the model call inside it."""
    root = _agent()
    delegate = span(
        "execute_tool",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_expert"},
        start=1,
        parent=root,
    )
    trace = to_trace([root, delegate, _chat(1, delegate)]).trace
    assert trace.outcome.result_summary == SAID
