"""The two fidelity rules every source shares (spec/integrations.md, rules 1 and 2).

A final answer that several span levels repeat is one step; a model-side error that Pydantic AI
answers with a retry prompt makes the model's next action an ``error_recovery``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.sources.otel.build import convert_spans
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.sources.pydantic_ai import RETRY_PROMPT_END

ANSWER = "It is rainy in Paris."


def kinds(builder: StepBuilder) -> list[tuple[str, str]]:
    return [(step["type"], step["content"]) for step in builder.steps()]


@given(levels=st.integers(min_value=1, max_value=4), padded=st.booleans())
def test_an_answer_repeated_at_any_number_of_levels_is_one_step(levels: int, padded: bool) -> None:
    builder = StepBuilder()
    builder.thought("Let me check.", at=1.0)
    builder.tool_result("get_weather", output="rainy", at=2.0)
    for level in range(levels):
        builder.thought(f" {ANSWER}\n" if padded else ANSWER, at=3.0 + level)
    builder.answer(ANSWER)
    assert kinds(builder) == [
        ("thought", "Let me check."),
        ("tool_call", "get_weather"),
        ("observation", "rainy"),
        ("thought", ANSWER),
    ]


def test_the_same_text_before_an_action_is_a_thought_of_its_own() -> None:
    """Only the repeats after the last action are the answer's; earlier text was said then."""
    builder = StepBuilder()
    builder.thought(ANSWER, at=1.0)
    builder.tool_result("get_weather", output="rainy", at=2.0)
    builder.answer(ANSWER)
    assert [kind for kind, _ in kinds(builder)] == [
        "thought",
        "tool_call",
        "observation",
        "thought",
    ]


def _span(span_id: str, name: str, start: int, parent: str | None = "a", **attributes: Any) -> Span:
    return Span(
        trace_id="0" * 31 + "1",
        span_id=span_id,
        parent_id=parent,
        name=name,
        start_ns=start * 1_000_000_000,
        end_ns=start * 1_000_000_000 + 500_000_000,
        attributes=attributes,
        scope="pydantic-ai",
    )


def _messages(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}


def test_a_pydantic_ai_retry_prompt_after_a_refused_output_is_an_error_then_a_recovery() -> None:
    """Pydantic AI's spans carry a retry (no tool) as user text ending its fixed sentence."""
    bad = {"role": "assistant", "parts": [{"type": "text", "content": "{not json"}]}
    retry = f"Validation feedback:\nInvalid JSON: expected value at line 1\n\n{RETRY_PROMPT_END}"
    spans = [
        _span("a", "agent run", 0, None, agent_name="weather", final_result=ANSWER),
        _span(
            "c1",
            "chat gpt-4o",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages(USER),
                "gen_ai.output.messages": _messages(bad),
            },
        ),
        _span(
            "c2",
            "chat gpt-4o",
            2,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages(
                    USER, bad, {"role": "user", "parts": [{"type": "text", "content": retry}]}
                ),
                "gen_ai.output.messages": _messages(
                    {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}
                ),
            },
        ),
    ]
    trace = convert_spans(spans, TraceOptions()).trace
    assert [(step.type, step.content) for step in trace.steps] == [
        ("thought", "{not json"),
        ("observation", retry),
        ("error_recovery", ANSWER),
    ]


def test_a_tool_retry_recorded_without_an_error_status_is_still_an_error() -> None:
    call = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c", "name": "get_weather", "arguments": {"city": 1}}
        ],
    }
    again = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "d", "name": "get_weather", "arguments": {"city": "Paris"}}
        ],
    }
    retry = f"city: Input should be a valid string\n\n{RETRY_PROMPT_END}"
    spans = [
        _span("a", "agent run", 0, None, agent_name="weather", final_result=ANSWER),
        _span(
            "c1",
            "chat",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages(USER),
                "gen_ai.output.messages": _messages(call),
            },
        ),
        _span(
            "t1",
            "running tool",
            2,
            **{
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "c",
                "tool_arguments": '{"city": 1}',
                "tool_response": retry,
            },
        ),
        _span(
            "c2",
            "chat",
            3,
            **{"gen_ai.operation.name": "chat", "gen_ai.output.messages": _messages(again)},
        ),
        _span(
            "t2",
            "running tool",
            4,
            **{
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "d",
                "tool_arguments": '{"city": "Paris"}',
                "tool_response": "rainy",
            },
        ),
    ]
    trace = convert_spans(spans, TraceOptions()).trace
    assert [step.type for step in trace.steps] == [
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert trace.steps[1].content == retry


def test_pydantic_ai_first_instrumentation_version_events_give_the_same_retry() -> None:
    """Version 1 keeps messages as GenAI events in an ``events`` attribute (bodies inlined)."""
    retry = f"Validation feedback:\nInvalid JSON\n\n{RETRY_PROMPT_END}"
    user = {"event.name": "gen_ai.user.message", "role": "user", "content": "Weather in Paris?"}
    bad = {"role": "assistant", "content": "{not json"}
    spans = [
        _span(
            "a",
            "agent run",
            0,
            None,
            agent_name="weather",
            final_result=ANSWER,
            all_messages_events=json.dumps([user]),
        ),
        _span(
            "c1",
            "chat gpt-4o",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "events": json.dumps(
                    [user, {"event.name": "gen_ai.choice", "index": 0, "message": bad}]
                ),
            },
        ),
        _span(
            "c2",
            "chat gpt-4o",
            2,
            **{
                "gen_ai.operation.name": "chat",
                "events": json.dumps(
                    [
                        user,
                        {"event.name": "gen_ai.assistant.message", **bad},
                        {"event.name": "gen_ai.user.message", "role": "user", "content": retry},
                        {
                            "event.name": "gen_ai.choice",
                            "index": 0,
                            "message": {"role": "assistant", "content": ANSWER},
                        },
                    ]
                ),
            },
        ),
    ]
    trace = convert_spans(spans, TraceOptions()).trace
    assert [(step.type, step.content) for step in trace.steps] == [
        ("thought", "{not json"),
        ("observation", retry),
        ("error_recovery", ANSWER),
    ]
    assert trace.task.objective == "Weather in Paris?"
