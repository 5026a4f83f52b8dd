"""kp.capture with a real framework: a Pydantic AI agent's OpenTelemetry spans, offline."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.result import StreamedRunResult

import knowledgepulse as kp
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import ScoredItem
from tests.integrations.loops import run_fresh


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    turn = sum(1 for message in messages if message.kind == "response")
    if turn < 2:
        return ModelResponse(parts=[ToolCallPart("lookup", {"sku": "A1"}, tool_call_id=f"c{turn}")])
    return ModelResponse(parts=[TextPart("A1 is in stock.")])


def instrumented_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(scripted), system_prompt="Check stock.")
    agent.instrument = True  # this agent only: no global switch left behind
    calls = {"count": 0}

    @agent.tool_plain
    def lookup(sku: str) -> str:
        """Stock of a product."""
        calls["count"] += 1
        if calls["count"] == 1:
            raise ModelRetry("inventory service busy, try again")
        return f"{sku}: 12 in stock"

    return agent


def test_capture_records_a_pydantic_ai_run_through_its_otel_spans() -> None:
    """One line (the decorator) turns the agent's run into a scored trace with its recovery."""
    seen: list[ScoredItem] = []
    agent = instrumented_agent()

    @kp.capture(domain="customer_service", on_trace=seen.append)
    async def ask(question: str) -> str:
        return (await agent.run(question)).output

    # A fresh loop: run_sync reuses the thread's, which other frameworks may leave shut down.
    assert run_fresh(ask("Is A1 in stock?")) == "A1 is in stock."

    assert len(seen) == 1
    trace = seen[0].trace
    types = [step.type for step in trace.steps]
    assert types.count("error_recovery") == 1
    recovery = trace.steps[types.index("error_recovery")]
    assert recovery.tool is not None
    assert recovery.tool.name == "lookup"
    assert trace.task.objective == "Is A1 in stock?"
    assert trace.outcome.result_summary == "A1 is in stock."
    assert trace.metadata.task_domain == "customer_service"
    assert trace.metadata.quality_score == seen[0].breakdown.score
    assert ask.kp_capture.traces == [trace]  # type: ignore[attr-defined]


def test_runs_after_the_call_are_not_captured() -> None:
    """The OTel hook routes only runs started inside the call."""
    agent = instrumented_agent()
    cap = kp.capture()
    run_fresh(cap.wrap(agent.run)("Is A1 in stock?"))
    run_fresh(agent.run("Is A1 in stock?"))
    assert len(cap.traces) == 1


def test_capture_records_an_openai_agents_run_through_its_trace_processor() -> None:
    """The Agents SDK hook: a scripted model, a tool failing once; only our processor runs."""
    from agents import Agent as AgentsAgent
    from agents import Runner, function_tool, set_trace_processors
    from agents.testing import ScriptedModel, assistant_message, function_call
    from agents.tracing.setup import get_trace_provider

    multi = getattr(get_trace_provider(), "_multi_processor", None)
    before = tuple(getattr(multi, "_processors", ()))
    set_trace_processors([])  # never the SDK's OpenAI exporter: no network
    try:
        calls = {"count": 0}

        @function_tool
        def lookup(sku: str) -> str:
            """Stock of a product."""
            calls["count"] += 1
            if calls["count"] == 1:
                raise TimeoutError("inventory service busy")
            return f"{sku}: 12 in stock"

        script = [
            [function_call("lookup", {"sku": "A1"}, call_id="c1")],
            [function_call("lookup", {"sku": "A1"}, call_id="c2")],
            [assistant_message("A1 is in stock.", item_id="m1")],
        ]
        agent = AgentsAgent(name="stock", model=ScriptedModel(script), tools=[lookup])

        @kp.capture(domain="customer_service")
        async def ask(question: str) -> str:
            return str((await Runner.run(agent, question)).final_output)

        assert run_fresh(ask("Is A1 in stock?")) == "A1 is in stock."
    finally:
        set_trace_processors(list(before))

    (trace,) = ask.kp_capture.traces  # type: ignore[attr-defined]
    kinds = [(step.type, step.tool.name if step.tool else None) for step in trace.steps]
    assert ("error_recovery", "lookup") in kinds
    assert kinds.index(("error_recovery", "lookup")) > kinds.index(("observation", "lookup"))
    assert trace.metadata.agent_id == "stock"
    assert trace.metadata.task_domain == "customer_service"


def test_a_pydantic_ai_run_awaiting_approval_is_no_success_and_gives_no_answer() -> None:
    """DeferredToolRequests ends the run: its dump is no answer, the run no success."""
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    from knowledgepulse.integrations import pydantic_ai as pai
    from knowledgepulse.sources.otel.build import AWAITING

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(message.kind == "response" for message in messages):
            return ModelResponse(parts=[TextPart("Booked.")])
        call = ToolCallPart("book", {"city": "Paris"}, tool_call_id="c1")
        return ModelResponse(parts=[TextPart("I will book it."), call])

    agent = Agent(FunctionModel(script), output_type=[str, DeferredToolRequests])
    agent.instrument = True

    @agent.tool_plain(requires_approval=True)
    def book(city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    with kp.capture() as cap:
        paused = run_fresh(agent.run("Book Paris"))
        approved = DeferredToolResults(approvals={"c1": True})
        done = run_fresh(
            agent.run(message_history=paused.all_messages(), deferred_tool_results=approved)
        )
    assert isinstance(paused.output, DeferredToolRequests)
    first, second = cap.captured
    assert [step.type for step in first.trace.steps] == ["thought", "tool_call"]
    assert first.trace.metadata.success is False
    assert (
        first.trace.metadata.success == pai.to_trace(paused.all_messages()).trace.metadata.success
    )
    assert AWAITING in first.item.warnings
    assert "approvals" not in first.trace.outcome.result_summary
    assert second.trace.outcome.result_summary == done.output


def text_with_a_failing_call() -> Agent[None, str]:
    """An instrumented agent whose model says text and asks for a tool that fails, streamed."""
    calls = [ToolCallPart("lookup", {"sku": "A1"}, tool_call_id="a")]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Checking A1."), *calls])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield "Checking A1."
        yield {0: DeltaToolCall("lookup", json.dumps({"sku": "A1"}), tool_call_id="a")}

    agent: Agent[None, str] = Agent(FunctionModel(model, stream_function=stream))
    agent.instrument = True

    @agent.tool_plain
    def lookup(sku: str) -> str:
        """Stock of a product."""
        raise ModelRetry("inventory service busy, try again")

    return agent


async def streamed(agent: Agent[None, str]) -> tuple[str, StreamedRunResult[None, str]]:
    """The agent's run_stream, its output awaited, and the result left after the stream."""
    async with agent.run_stream("Is A1 in stock?") as result:
        output = await result.get_output()
    return output, result


def test_a_streamed_answer_said_with_failing_tool_calls_recovers_none_of_them() -> None:
    """run_stream ends on the first text, and runs the tools that turn asked for: that text is
    the answer, said before their errors were seen, so it is no error_recovery."""
    with kp.capture() as cap:
        output, result = run_fresh(streamed(text_with_a_failing_call()))
    (trace,) = cap.traces
    messages = result.all_messages()
    returns = [
        part for message in messages for part in message.parts if part.part_kind == "tool-return"
    ]
    assert [part.tool_name for part in returns] == ["lookup"]  # the tool ran, and failed
    assert [(step.type, step.tool.name if step.tool else None) for step in trace.steps] == [
        ("tool_call", "lookup"),
        ("observation", "lookup"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == output == "Checking A1."


def test_a_stream_result_said_with_tool_calls_converts_as_the_live_capture_records_it() -> None:
    """to_trace(stream result) reads the output its messages end after (the tools' returns come
    last): the steps and the answer, once, are the live capture's; before, it had no answer."""
    from knowledgepulse.integrations import pydantic_ai as pai

    with kp.capture() as cap:
        output, result = run_fresh(streamed(text_with_a_failing_call()))
    (live,) = cap.traces

    converted = pai.to_trace(result).trace

    def steps(trace: ReasoningTrace) -> list[dict[str, Any]]:
        return [step.model_dump(exclude={"latency_ms"}) for step in trace.steps]  # spans' timing

    assert steps(converted) == steps(live)
    assert converted.outcome.result_summary == live.outcome.result_summary == output
    assert [step.content for step in converted.steps].count(output) == 1
    assert converted.metadata.success is live.metadata.success is True
