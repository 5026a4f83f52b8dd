"""Real smolagents agents, driven offline by a scripted model, converted with one line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from smolagents import CodeAgent, Model, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)

import knowledgepulse as kp
from knowledgepulse.errors import ConversionError
from knowledgepulse.integrations import smolagents as smol


class ScriptedModel(Model):  # type: ignore[misc]
    """Answers each turn from a script: (text, [(tool, arguments)]), or plain text (CodeAgent)."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__(model_id="scripted")
        self.script = list(script)

    def generate(self, messages: Any, stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        turn = self.script.pop(0)
        if isinstance(turn, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=turn)
        text, calls = turn
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=text,
            tool_calls=[
                ChatMessageToolCall(
                    id=f"call_{len(self.script)}_{index}",
                    type="function",
                    function=ChatMessageToolCallFunction(name=name, arguments=arguments),
                )
                for index, (name, arguments) in enumerate(calls)
            ],
        )


def flaky_weather() -> Any:
    """A get_weather tool that raises on its first call."""
    calls = {"count": 0}

    @tool  # type: ignore[untyped-decorator]
    def get_weather(city: str) -> str:
        """Today's weather in a city.

        Args:
            city: the city's name.
        """
        calls["count"] += 1
        if calls["count"] == 1:
            raise RuntimeError("the weather service timed out")
        return f"sunny in {city}"

    return get_weather


def test_a_tool_calling_agent_with_a_failing_tool_gives_error_recovery() -> None:
    """ToolCallingAgent: failure → observation, retry → error_recovery, final_answer → answer."""
    model = ScriptedModel(
        [
            ("I will look the weather up.", [("get_weather", {"city": "Paris"})]),
            ("The service failed; once more.", [("get_weather", {"city": "Paris"})]),
            (None, [("final_answer", {"answer": "Sunny in Paris"})]),
        ]
    )
    agent = ToolCallingAgent(tools=[flaky_weather()], model=model, verbosity_level=-1)
    result = agent.run("What is the weather in Paris?", return_full_result=True)

    converted = smol.to_trace(result, domain="customer_service")

    trace = converted.trace
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "thought",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert "the weather service timed out" in (trace.steps[2].content or "")
    assert trace.steps[4].tool is not None
    assert trace.steps[4].tool.name == "get_weather"
    assert trace.steps[5].content == "sunny in Paris"
    assert trace.task.objective == "What is the weather in Paris?"
    assert trace.outcome.result_summary == "Sunny in Paris"
    assert trace.metadata.success is True
    assert all(
        step.latency_ms is not None
        for step in trace.steps
        if step.tool and step.type != "observation"
    )
    breakdown = kp.score_trace(trace)
    assert 0.0 < breakdown.score <= 1.0
    # The agent, its memory and the JSON of its steps are the same run.
    steps_json = json.loads(json.dumps(agent.memory.get_full_steps(), default=str))
    assert smol.to_trace(agent).trace.steps == trace.steps
    assert smol.to_trace(steps_json).trace.id == smol.to_trace(agent.memory).trace.id
    agent.name = "weather_bot"
    assert smol.to_trace(agent).trace.metadata.agent_id == "weather_bot"


def test_a_code_agent_records_python_interpreter_calls_and_the_recovery() -> None:
    """CodeAgent: each code action is a python_interpreter call; the failed one is recovered."""
    model = ScriptedModel(
        [
            'Thought: ask the tool.\n<code>\nprint(get_weather("Paris"))\n</code>',
            'Thought: it failed, retry.\n<code>\nw = get_weather("Paris")\nprint(w)\n</code>',
            'Thought: done.\n<code>\nfinal_answer("Sunny in Paris")\n</code>',
        ]
    )
    agent = CodeAgent(tools=[flaky_weather()], model=model, verbosity_level=-1)
    result = agent.run("What is the weather in Paris?", return_full_result=True)

    trace = smol.to_trace(result).trace

    types = [step.type for step in trace.steps]
    assert types.count("error_recovery") == 1
    recovery = types.index("error_recovery")
    tool_used = trace.steps[recovery].tool
    assert tool_used is not None
    assert tool_used.name == "python_interpreter"
    assert "timed out" in (trace.steps[recovery - 2].content or "")  # the failed call's observation
    assert trace.outcome.result_summary == "Sunny in Paris"
    assert trace.metadata.success is True


def test_an_agent_that_runs_out_of_steps_fails() -> None:
    """max_steps reached: state max_steps_error → success false, confidence 0.2."""
    model = ScriptedModel(
        [
            ("Looking.", [("get_weather", {"city": "Paris"})]),
            "It is probably sunny.",  # the forced final answer
        ]
    )
    agent = ToolCallingAgent(tools=[flaky_weather()], model=model, verbosity_level=-1, max_steps=1)
    result = agent.run("What is the weather in Paris?", return_full_result=True)
    assert result.state == "max_steps_error"

    converted = smol.to_trace(result)

    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.confidence == 0.2
    assert "error_recovery" not in [step.type for step in converted.trace.steps]


def test_a_run_that_keeps_the_memory_is_a_trace_of_its_own() -> None:
    """``run(task, reset=False)``: the earlier run's steps stay in memory, but not in this trace."""
    model = ScriptedModel(
        [
            ("I will look the weather up.", [("get_weather", {"city": "Paris"})]),
            ("The service failed; once more.", [("get_weather", {"city": "Paris"})]),
            (None, [("final_answer", {"answer": "Sunny in Paris"})]),
            ("Now Lyon.", [("get_weather", {"city": "Lyon"})]),
            (None, [("final_answer", {"answer": "Sunny in Lyon"})]),
        ]
    )
    agent = ToolCallingAgent(tools=[flaky_weather()], model=model, verbosity_level=-1)
    first = agent.run("What is the weather in Paris?", return_full_result=True)
    second = agent.run("And in Lyon?", reset=False, return_full_result=True)
    assert len(second.steps) > len(first.steps)  # smolagents hands over the whole memory

    trace = smol.to_trace(second).trace

    assert trace.task.objective == "And in Lyon?"
    assert trace.outcome.result_summary == "Sunny in Lyon"
    assert [step.type for step in trace.steps] == ["thought", "tool_call", "observation", "thought"]
    assert trace.steps[1].input == {"city": "Lyon"}
    from_memory = smol.to_trace(agent).trace
    assert (from_memory.steps, from_memory.task) == (trace.steps, trace.task)
    assert smol.to_trace(first).trace.outcome.result_summary == "Sunny in Paris"
    assert smol.to_trace(first).trace.id != trace.id


def test_a_streamed_run_converts_from_the_agent_like_a_plain_one() -> None:
    """agent.run(task, stream=True): the agent's memory after the stream is the plain run's."""
    script = [
        ("I will look the weather up.", [("get_weather", {"city": "Paris"})]),
        ("The service failed; once more.", [("get_weather", {"city": "Paris"})]),
        (None, [("final_answer", {"answer": "Sunny in Paris"})]),
    ]
    plain = ToolCallingAgent(
        tools=[flaky_weather()], model=ScriptedModel(script), verbosity_level=-1
    )
    plain.run("What is the weather in Paris?")
    streamed = ToolCallingAgent(
        tools=[flaky_weather()], model=ScriptedModel(script), verbosity_level=-1
    )
    events = list(streamed.run("What is the weather in Paris?", stream=True))

    trace = smol.to_trace(streamed).trace

    def told(steps: list[Any]) -> list[Any]:  # all but the latencies, which differ
        return [step.model_dump(exclude={"latency_ms"}) for step in steps]

    assert told(trace.steps) == told(smol.to_trace(plain).trace.steps)
    assert trace.task.objective == "What is the weather in Paris?"
    with pytest.raises(ConversionError, match=r"stream=True.*pass the agent itself"):
        smol.to_trace(events)
