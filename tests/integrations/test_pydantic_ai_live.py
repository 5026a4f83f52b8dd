"""Real Pydantic AI agents, driven offline by FunctionModel and TestModel, converted in one line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, AgentRunResult, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

import knowledgepulse as kp
from knowledgepulse.errors import ConversionError
from knowledgepulse.integrations import pydantic_ai as pai
from tests.integrations.loops import run_fresh


def flaky_agent(model: Any, **kwargs: Any) -> Agent[None, Any]:
    """An agent whose get_weather tool asks for a retry on its first call."""
    agent: Agent[None, Any] = Agent(model, system_prompt="Answer weather questions.", **kwargs)
    calls = {"count": 0}

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        calls["count"] += 1
        if calls["count"] == 1:
            raise ModelRetry("the weather service timed out, try again")
        return f"sunny in {city}"

    return agent


def run(agent: Agent[None, Any], prompt: str) -> AgentRunResult[Any]:
    """agent.run on a fresh event loop: run_sync reuses the thread's loop, which other
    frameworks' sync runners may leave half shut down."""
    return run_fresh(agent.run(prompt))


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    turn = sum(1 for message in messages if message.kind == "response")
    if turn == 0:
        return ModelResponse(
            parts=[
                ThinkingPart("I need the weather tool."),
                ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_1"),
            ]
        )
    if turn == 1:
        return ModelResponse(
            parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_2")]
        )
    return ModelResponse(parts=[TextPart("Sunny in Paris.")])


def test_a_function_model_run_with_model_retry_gives_error_recovery() -> None:
    """FunctionModel: the retried call is an observation with the error, the next call recovers."""
    result = run(flaky_agent(FunctionModel(scripted)), "What is the weather in Paris?")

    converted = pai.to_trace(result.all_messages(), domain="customer_service")

    trace = converted.trace
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert trace.steps[0].content == "I need the weather tool."
    assert trace.steps[2].content == "the weather service timed out, try again"
    assert trace.steps[3].input == {"city": "Paris"}
    assert trace.steps[4].content == "sunny in Paris"
    assert trace.task.objective == "What is the weather in Paris?"
    assert trace.outcome.result_summary == "Sunny in Paris."
    assert trace.metadata.success is True
    assert trace.metadata.task_domain == "customer_service"
    assert trace.id == f"kp:trace:pydantic-ai-{result.all_messages()[-1].run_id}"
    breakdown = kp.score_trace(trace)
    # C = 4 types / 4 * 0.5 + 0.3 (a recovery) + 6 steps / 20 * 0.2
    assert breakdown.dimensions.complexity == pytest.approx(0.86)
    # The result, its JSON bytes and the live messages are one trace.
    assert pai.to_trace(result).trace.steps == trace.steps
    dumped = ModelMessagesTypeAdapter.dump_json(result.all_messages())
    assert pai.to_trace(dumped, domain="customer_service").trace == trace


def test_a_test_model_run_with_model_retry_gives_error_recovery() -> None:
    """TestModel calls every tool; the retry it makes after ModelRetry is the recovery."""
    result = run(flaky_agent(TestModel()), "Weather?")

    trace = pai.to_trace(result.all_messages()).trace

    types = [step.type for step in trace.steps]
    assert types.count("error_recovery") == 1
    recovery = types.index("error_recovery")
    assert types[recovery - 2 : recovery] == ["tool_call", "observation"]
    retried = trace.steps[recovery].tool
    assert retried is not None
    assert retried.name == "get_weather"
    assert trace.metadata.success is True


def test_structured_output_is_the_answer() -> None:
    """A structured output arrives through the final_result tool: the answer, not a tool step."""

    class Forecast(BaseModel):
        city: str
        sky: str

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(message.kind == "response" for message in messages):
            return ModelResponse(
                parts=[ToolCallPart("get_weather", {"city": "Lyon"}, tool_call_id="w")]
            )
        name = info.output_tools[0].name
        return ModelResponse(
            parts=[ToolCallPart(name, {"city": "Lyon", "sky": "clear"}, tool_call_id="o")]
        )

    agent = flaky_agent(FunctionModel(model), output_type=Forecast, retries=2)
    result = run(agent, "Forecast for Lyon?")

    trace = pai.to_trace(result).trace

    assert {step.tool.name for step in trace.steps if step.tool} == {"get_weather"}
    assert trace.outcome.result_summary == '{"city": "Lyon", "sky": "clear"}'
    assert trace.metadata.success is True


def test_a_run_continued_with_message_history_is_a_trace_of_its_own() -> None:
    """``all_messages()`` of a run given ``message_history`` holds the earlier run: left out."""

    def echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = getattr(messages[-1].parts[-1], "content", None)
        return ModelResponse(parts=[TextPart(f"about {prompt}")])

    agent: Agent[None, str] = Agent(FunctionModel(echo))
    first = run(agent, "Weather in Paris?")
    second = run_fresh(agent.run("And in Lyon?", message_history=first.all_messages()))
    assert len(second.all_messages()) > len(second.new_messages())

    trace = pai.to_trace(second).trace

    assert trace.task.objective == "And in Lyon?"
    assert trace.outcome.result_summary == "about And in Lyon?"
    assert trace.steps == pai.to_trace(second.new_messages()).trace.steps
    assert trace.id == pai.to_trace(second.new_messages()).trace.id != pai.to_trace(first).trace.id


def test_a_cancelled_stream_is_no_success() -> None:
    """run_stream's result after stream.cancel() keeps the messages so far: no success, or no
    trace (the documented ConversionError) where they hold no step."""
    agent = flaky_agent(FunctionModel(scripted, stream_function=streamed_text))

    async def cancelled() -> Any:
        async with agent.run_stream("What is the weather in Paris?") as stream:
            async for _ in stream.stream_text(delta=True):
                await stream.cancel()
                break
        return stream

    async def finished() -> Any:
        async with agent.run_stream("What is the weather in Paris?") as stream:
            await stream.get_output()
        return stream

    stream = run_fresh(cancelled())
    assert stream.cancelled
    if any(message.kind == "response" for message in stream.all_messages()):
        assert pai.to_trace(stream).trace.metadata.success is False
    else:  # pydantic-ai 2.78 keeps no response of a stream cancelled at its first word
        with pytest.raises(ConversionError, match="the trace holds no step"):
            pai.to_trace(stream)
    assert pai.to_trace(run_fresh(finished())).trace.metadata.success is True


async def streamed_text(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    """The scripted run streamed: only its text (the final answer), a word at a time."""
    yield "Sunny "
    yield "in Paris."
