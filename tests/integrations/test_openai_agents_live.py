"""The real Agents SDK, run offline with scripted models, captured by the processor and readers.

No network and no key: only our processor is installed (``set_trace_processors``), so the SDK's
OpenAI exporter never runs, and the models are scripted (the SDK's own ``ScriptedModel``, with a
response span recorded the way ``OpenAIResponsesModel`` records it, or a generation span the way
``OpenAIChatCompletionsModel`` does).
"""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import agents
import pytest
from agents import Agent, RunConfig, Runner, _debug, function_tool
from agents.agent_output import AgentOutputSchemaBase
from agents.exceptions import MaxTurnsExceeded
from agents.handoffs import Handoff
from agents.items import ModelResponse, TResponseStreamEvent
from agents.model_settings import ModelSettings
from agents.models.interface import ModelTracing
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool import Tool
from agents.tracing import TracingProcessor, generation_span, response_span
from agents.tracing.setup import get_trace_provider
from openai.types.responses import Response
from typing_extensions import override

from knowledgepulse.integrations import openai_agents as oa
from knowledgepulse.integrations._collector import Collector
from knowledgepulse.integrations.openai_agents._live import AgentsTraceProcessor
from knowledgepulse.records import Location, Record
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources.openai_agents._files import convert_records
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem
from tests.sources.helpers import source_of


class ResponsesModel(ScriptedModel):
    """A scripted model that traces like ``OpenAIResponsesModel``: a response span with content."""

    @override
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        **kwargs: Any,
    ) -> ModelResponse:
        call = (system_instructions, input, model_settings, tools, output_schema, handoffs, tracing)
        with response_span(disabled=tracing.is_disabled()) as span:
            result = await super().get_response(*call, **kwargs)
            if tracing.include_data():
                span.span_data.response = Response(
                    id=result.response_id or "resp",
                    created_at=0,
                    model="scripted",
                    object="response",
                    output=result.output,
                    tool_choice="auto",
                    tools=[],
                    parallel_tool_calls=False,
                    status="completed",
                )
                span.span_data.input = input
            return result


class ChatModel(ScriptedModel):
    """A scripted model that traces like ``OpenAIChatCompletionsModel``: a generation span."""

    @override
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        **kwargs: Any,
    ) -> ModelResponse:
        call = (system_instructions, input, model_settings, tools, output_schema, handoffs, tracing)
        with generation_span(model="scripted", disabled=tracing.is_disabled()) as span:
            result = await super().get_response(*call, **kwargs)
            if tracing.include_data():
                model_input = input
                span.span_data.input = (
                    [{"role": "user", "content": model_input}]
                    if isinstance(model_input, str)
                    else model_input
                )
                span.span_data.output = [_chat_message(result)]
            return result


class StreamingResponsesModel(ScriptedModel):
    """A scripted model that streams like ``OpenAIResponsesModel``: the completed response on a
    response span (the SDK's ``ScriptedModel`` streams under a generation span with no content)."""

    @override
    async def stream_response(
        self, *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:
        tracing: ModelTracing = args[6]
        with response_span(disabled=tracing.is_disabled()) as span:
            async for event in super().stream_response(*args, **kwargs):
                if event.type == "response.completed" and tracing.include_data():
                    span.span_data.response = event.response
                    span.span_data.input = args[1]
                yield event


def _chat_message(result: ModelResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": []}
    for item in result.output:
        if item.type == "message":
            message["content"] = "".join(part.text for part in item.content)  # type: ignore[union-attr]
        elif item.type == "function_call":
            message["tool_calls"].append(
                {
                    "id": item.call_id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": item.arguments},
                }
            )
    return message


@pytest.fixture(autouse=True)
def only_our_processors() -> Iterator[None]:
    """Whatever a test installs is removed after it; the SDK's exporter is never installed."""
    multi = getattr(get_trace_provider(), "_multi_processor", None)
    before = tuple(getattr(multi, "_processors", ()))
    agents.set_trace_processors([])
    yield
    agents.set_trace_processors(list(before))


@pytest.fixture(scope="module", autouse=True)
def close_the_loop_run_sync_leaves() -> Iterator[None]:
    """Runner.run_sync keeps the thread's default loop open on purpose; close it after."""
    yield
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loop = policy.get_event_loop()
    loop.close()
    policy.set_event_loop(None)


def flaky_weather() -> Any:
    """A tool that fails on its first call and works on the second."""
    calls = {"count": 0}

    @function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        calls["count"] += 1
        if calls["count"] == 1:
            raise TimeoutError("weather service timed out")
        return f"Sunny in {city}, 21 C"

    return weather


def retry_script() -> list[Any]:
    return [
        [
            assistant_message("I will check the weather service.", item_id="m1"),
            function_call("weather", {"city": "Paris"}, call_id="call_1"),
        ],
        [function_call("weather", {"city": "Paris"}, call_id="call_2")],
        [assistant_message("It is sunny in Paris, 21 C.", item_id="m2")],
    ]


def kinds(captured: ScoredItem) -> list[tuple[str, str | None]]:
    return [(s.type, s.tool.name if s.tool else None) for s in captured.trace.steps]


RETRY_STEPS = [
    ("thought", None),
    ("tool_call", "weather"),
    ("observation", "weather"),
    ("error_recovery", "weather"),
    ("observation", "weather"),
    ("thought", None),
]


def test_a_failed_tool_and_its_retry_are_captured_live_with_the_error_rule() -> None:
    """Responses-style run: the failure is an observation, the retry the error_recovery."""
    seen: list[ScoredItem] = []
    processor = oa.processor(domain="code", on_trace=seen.append)
    agents.set_trace_processors([processor])
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])

    result = Runner.run_sync(agent, "What is the weather in Paris?")

    assert result.final_output == "It is sunny in Paris, 21 C."
    (captured,) = processor.captured
    assert seen == [captured]
    assert kinds(captured) == RETRY_STEPS
    trace = captured.trace
    assert trace.task.objective == "What is the weather in Paris?"
    assert trace.steps[0].content == "I will check the weather service."
    assert trace.steps[1].input == {"city": "Paris"}
    assert trace.steps[2].content is not None
    assert trace.steps[2].content.startswith("Error running tool")
    assert "An error occurred while running the tool" in trace.steps[2].content
    assert trace.steps[4].content == "Sunny in Paris, 21 C"
    assert trace.outcome.result_summary == "It is sunny in Paris, 21 C."
    assert trace.metadata.success is True
    assert trace.metadata.agent_id == "forecaster"
    assert trace.metadata.task_domain == "code"
    assert trace.id.startswith("kp:trace:trace_")
    assert [step.latency_ms is not None for step in trace.steps] == [
        False,
        True,
        False,
        True,
        False,
        False,
    ]
    assert trace.metadata.quality_score == captured.breakdown.score
    assert processor.open_traces == 0


def test_the_sdk_bad_json_scenario_live_keeps_the_model_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's test_tool_call_error run, live: the texts the export drops are kept."""
    monkeypatch.setattr(_debug, "DONT_LOG_TOOL_DATA", False)
    processor = oa.processor()
    agents.set_trace_processors([processor])
    model = ResponsesModel(
        [
            [assistant_message("a_message"), function_call("foo", "bad_json", call_id="c")],
            [assistant_message("done")],
        ]
    )

    def explain(context: Any, error: Exception) -> str:
        return f"Please send valid JSON: {error}"

    # With its own failure_error_function a tool's error details reach the span (0.24 redacts
    # them under the default one).
    @function_tool(failure_error_function=explain)
    def foo(a: str) -> str:
        """A tool the model calls with bad JSON."""
        return "tool_result"

    Runner.run_sync(Agent(name="test_agent", model=model, tools=[foo]), "first_test")

    (captured,) = processor.captured
    steps = [(s.type, s.content) for s in captured.trace.steps]
    error = "Error running tool: Expecting value: line 1 column 1 (char 0)"
    assert steps[0] == ("thought", "a_message")
    assert steps[1] == ("tool_call", 'foo {"_raw":"bad_json"}')
    assert steps[2][0] == "observation"
    assert steps[2][1] is not None
    assert steps[2][1].startswith(error)
    assert steps[3] == ("error_recovery", "done")  # the reply after the error (research 4.3)
    assert len(steps) == 4
    assert captured.trace.task.objective == "first_test"
    assert captured.breakdown.score > 0


def test_chat_completions_generation_spans_are_captured_the_same_way() -> None:
    """A model that traces generation spans gives the same steps as a Responses model."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(name="forecaster", model=ChatModel(retry_script()), tools=[flaky_weather()])
    Runner.run_sync(agent, "What is the weather in Paris?")
    (captured,) = processor.captured
    assert kinds(captured) == RETRY_STEPS
    assert captured.trace.task.objective == "What is the weather in Paris?"


def test_the_run_result_reader_gives_the_same_steps_with_a_stable_id() -> None:
    """to_trace(result): new_items merged by call_id; the default error wording is an error."""
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    result = Runner.run_sync(agent, "What is the weather in Paris?")
    converted = oa.to_trace(result, domain="code", confidence=0.9)
    assert [(s.type, s.tool.name if s.tool else None) for s in converted.trace.steps] == (
        RETRY_STEPS
    )
    assert converted.trace.steps[2].content == (
        "An error occurred while running the tool. Please try again."
    )
    assert converted.trace.task.objective == "What is the weather in Paris?"
    assert converted.trace.outcome.result_summary == "It is sunny in Paris, 21 C."
    assert (converted.trace.outcome.confidence, source_of(converted)["confidence_source"]) == (
        0.9,
        "argument",
    )
    assert oa.to_trace(result).trace.id == converted.trace.id


def test_a_handoff_is_one_transfer_tool_call_then_the_other_agents_answer() -> None:
    """The model's transfer_to_<agent> call and the handoff span are one step."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    billing = Agent(
        name="Billing Desk", model=ResponsesModel([[assistant_message("Refund issued.")]])
    )
    triage = Agent(
        name="triage",
        model=ResponsesModel([[function_call("transfer_to_billing_desk", {}, call_id="h1")]]),
        handoffs=[billing],
    )
    result = Runner.run_sync(triage, "I was charged twice.")
    assert result.final_output == "Refund issued."
    (captured,) = processor.captured
    assert kinds(captured) == [("tool_call", "transfer_to_billing_desk"), ("thought", None)]
    assert oa.to_trace(result).trace.steps[0].tool is not None


def test_an_agent_as_tool_is_observed_after_the_steps_of_its_run() -> None:
    """``agent.as_tool``: the inner agent's call and answer come before the tool's result."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    researcher = Agent(
        name="researcher",
        model=ResponsesModel(
            [
                [function_call("weather", {"city": "Oslo"}, call_id="i1")],
                [assistant_message("Oslo: sunny", item_id="i2")],
            ]
        ),
        tools=[flaky_weather()],
    )
    boss = Agent(
        name="boss",
        model=ResponsesModel(
            [
                [function_call("ask", {"input": "Oslo?"}, call_id="o1")],
                [assistant_message("Oslo is sunny.", item_id="o2")],
            ]
        ),
        tools=[researcher.as_tool(tool_name="ask", tool_description="Ask the researcher.")],
    )
    result = Runner.run_sync(boss, "Ask about Oslo")
    (captured,) = processor.captured
    assert kinds(captured) == [
        ("tool_call", "ask"),
        ("tool_call", "weather"),
        ("observation", "weather"),
        ("error_recovery", None),
        ("observation", "ask"),
        ("thought", None),
    ]
    (reply,) = [item for item in result.new_items if item.type == "tool_call_output_item"]
    assert captured.trace.steps[4].content == reply.output
    assert captured.trace.outcome.result_summary == result.final_output


def test_running_out_of_turns_is_a_failed_trace_and_the_error_still_reaches_the_caller() -> None:
    """MaxTurnsExceeded propagates as usual; the trace says the run failed."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    model = ResponsesModel([[function_call("weather", {"city": "Oslo"}, call_id="c1")]])
    agent = Agent(name="forecaster", model=model, tools=[flaky_weather()])
    with pytest.raises(MaxTurnsExceeded):
        Runner.run_sync(agent, "Weather in Oslo?", max_turns=1)
    (captured,) = processor.captured
    assert captured.trace.metadata.success is False
    assert captured.trace.outcome.confidence == 0.2
    assert "Max turns" in captured.trace.outcome.result_summary
    # The tool failed first, but that is not why the run stopped: its last step says why.
    assert kinds(captured) == [
        ("tool_call", "weather"),
        ("observation", "weather"),
        ("observation", None),
    ]
    assert "Max turns" in (captured.trace.steps[-1].content or "")


def test_a_tool_error_that_ends_the_run_is_told_once() -> None:
    """A tool without a failure_error_function raises through: its span and the agent's say it."""
    processor = oa.processor()
    agents.set_trace_processors([processor])

    @function_tool(failure_error_function=None)
    def weather(city: str) -> str:
        """The weather in a city."""
        raise TimeoutError("weather service timed out")

    model = ResponsesModel([[function_call("weather", {"city": "Oslo"}, call_id="c1")]])
    agent = Agent(name="forecaster", model=model, tools=[weather])
    with pytest.raises(agents.UserError, match="weather service timed out"):
        Runner.run_sync(agent, "Weather in Oslo?")
    (captured,) = processor.captured
    assert kinds(captured) == [("tool_call", "weather"), ("observation", "weather")]
    assert captured.trace.metadata.success is False


def test_a_tripped_input_guardrail_is_a_failed_trace_that_says_so() -> None:
    """Stopped before any model call: the trace is kept, its one step the guardrail's error."""
    from agents import GuardrailFunctionOutput, InputGuardrailTripwireTriggered, input_guardrail

    @input_guardrail
    async def no_passwords(context: Any, agent: Any, given: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="password" in given)

    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(
        name="desk",
        model=ResponsesModel([[assistant_message("Done.")]]),
        input_guardrails=[no_passwords],
    )
    with pytest.raises(InputGuardrailTripwireTriggered):
        Runner.run_sync(agent, "My password is hunter2, reset it.")
    (captured,) = processor.captured
    trace = captured.trace
    assert [(step.type, step.content) for step in trace.steps] == [
        ("observation", "guardrail no_passwords tripped")
    ]
    assert trace.metadata.success is False
    assert trace.outcome.confidence == 0.2


def test_metadata_on_the_run_config_gives_domain_and_confidence() -> None:
    """RunConfig(trace_metadata={"kp.task_domain": ..., "kp.confidence": ...})."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    config = RunConfig(
        workflow_name="forecast", trace_metadata={"kp.task_domain": "finance", "kp.confidence": "1"}
    )
    Runner.run_sync(agent, "Weather?", run_config=config)
    (captured,) = processor.captured
    assert captured.trace.metadata.task_domain == "finance"
    assert captured.trace.outcome.confidence == 1.0
    assert captured.breakdown.profile == "finance"


def test_without_sensitive_data_the_trace_has_no_text_and_the_switch_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """trace_include_sensitive_data=False: names and timings only, and one hint in the log."""
    processor = oa.processor()
    agents.set_trace_processors([processor])

    @function_tool
    def weather(city: str) -> str:
        """The weather."""
        return "Sunny"

    script = [
        [function_call("weather", {"city": "Rome"}, call_id="c1")],
        [assistant_message("Sunny.")],
    ]
    agent = Agent(name="forecaster", model=ResponsesModel(script), tools=[weather])
    config = RunConfig(trace_include_sensitive_data=False)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        Runner.run_sync(agent, "Weather in Rome?", run_config=config)
    (captured,) = processor.captured
    assert [s.type for s in captured.trace.steps] == ["tool_call"]
    assert captured.trace.task.objective == "openai-agents run"  # no input, a default name
    hints = [r for r in caplog.records if "trace_include_sensitive_data" in r.getMessage()]
    assert len(hints) == 1


def test_activate_captures_only_runs_started_inside() -> None:
    """kp.capture's protocol: a run inside the context is captured, one outside is not."""
    collector = Collector(domain="code")

    def run() -> None:
        agent = Agent(
            name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()]
        )
        Runner.run_sync(agent, "What is the weather in Paris?")

    run()
    with oa.activate(collector):
        run()
    run()
    assert [kinds(c) for c in collector.captured] == [RETRY_STEPS]
    with oa.activate(collector):  # installing again does not register it twice
        run()
    assert len(collector.captured) == 2


def test_a_failing_scorer_or_callback_never_breaks_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Errors inside the hook are logged; the run returns what it returned."""

    class Broken:
        def score(self, trace: object) -> None:
            raise RuntimeError("scorer broke")

    def explode(captured: ScoredItem) -> None:
        raise RuntimeError("callback broke")

    broken = oa.processor(scorer=Broken())  # type: ignore[arg-type]
    noisy = oa.processor(on_trace=explode)
    agents.set_trace_processors([broken, noisy])
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    with caplog.at_level(logging.ERROR, logger="knowledgepulse.integrations"):
        result = Runner.run_sync(agent, "What is the weather in Paris?")
    assert result.final_output == "It is sunny in Paris, 21 C."
    assert broken.captured == []
    assert len(noisy.captured) == 1
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "could not capture" in messages
    assert "on_trace raised" in messages


def test_garbage_from_the_sdk_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """Every processor method swallows its own errors."""
    processor = oa.processor()
    with caplog.at_level(logging.ERROR, logger="knowledgepulse.integrations"):
        processor.on_trace_start(SimpleNamespace(trace_id="t"))  # type: ignore[arg-type]
        processor.on_span_end(SimpleNamespace(trace_id="t", span_data=None))  # type: ignore[arg-type]
        processor.on_trace_end(SimpleNamespace())  # type: ignore[arg-type]
    assert processor.captured == []
    assert caplog.records


def test_memory_is_bounded_in_spans_per_trace_and_open_traces() -> None:
    """Spans past the cap are dropped and said; the oldest open trace goes first."""
    processor = AgentsTraceProcessor(max_spans_per_trace=2, max_open_traces=2)
    agents.set_trace_processors([processor])
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    Runner.run_sync(agent, "What is the weather in Paris?")
    (captured,) = processor.captured
    assert any("were dropped" in warning for warning in captured.item.warnings)
    for number in range(3):
        processor.on_trace_start(SimpleNamespace(trace_id=f"open_{number}"))  # type: ignore[arg-type]
    assert processor.open_traces == 2


def test_a_processor_is_a_tracing_processor_and_needs_no_network_to_be_made() -> None:
    """It is what add_trace_processor takes, and it kept nothing before a run."""
    processor = oa.processor()
    assert isinstance(processor, TracingProcessor)
    assert processor.traces == []
    processor.force_flush()
    processor.shutdown()


def test_exported_lines_of_a_live_run_convert_with_a_warning_about_model_text() -> None:
    """What the SDK's exporter sends (export() of each trace and span) reads back as a trace."""
    exported: list[dict[str, Any]] = []

    class Exporter(TracingProcessor):
        def on_trace_start(self, trace: Any) -> None:
            exported.append(trace.export())

        def on_trace_end(self, trace: Any) -> None:
            pass

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            exported.append(json.loads(json.dumps(span.export(), default=str)))

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    agents.set_trace_processors([Exporter()])
    agent = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    Runner.run_sync(agent, "What is the weather in Paris?")
    records = [Record(Location("x.jsonl", n, n - 1), v) for n, v in enumerate(exported, 1)]
    (converted,) = convert_records(records, TraceOptions())
    assert isinstance(converted, TraceItem)
    assert [s.type for s in converted.trace.steps] == [
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
    ]
    assert any("hold no model text" in w for w in converted.warnings)


def run_streamed(agent: Agent[Any], prompt: str, *, cancel_at_first_item: bool = False) -> Any:
    """Runner.run_streamed to its end (or cancelled at its first run item), on a loop of its own."""

    async def run() -> Any:
        streamed = Runner.run_streamed(agent, prompt)
        async for event in streamed.stream_events():
            if cancel_at_first_item and event.type == "run_item_stream_event":
                streamed.cancel()
        return streamed

    # A loop of its own, closed after: asyncio.run would orphan the loop run_sync keeps open.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run())
    finally:
        loop.close()


def test_a_streamed_run_is_captured_like_a_plain_one() -> None:
    """Runner.run_streamed: the same spans, the same trace, its answer once."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    plain = Agent(name="forecaster", model=ResponsesModel(retry_script()), tools=[flaky_weather()])
    Runner.run_sync(plain, "What is the weather in Paris?")
    model = StreamingResponsesModel(retry_script())
    agent = Agent(name="forecaster", model=model, tools=[flaky_weather()])
    streamed = run_streamed(agent, "What is the weather in Paris?")
    first, second = processor.captured
    assert kinds(second) == kinds(first) == RETRY_STEPS
    assert [step.content for step in second.trace.steps] == [
        step.content for step in first.trace.steps
    ]
    assert second.trace.outcome.result_summary == streamed.final_output
    assert second.trace.metadata.success is True


def test_a_streamed_run_cancelled_before_its_tools_ran_is_no_success() -> None:
    """RunResultStreaming.cancel() between a model turn and its tools: no span says so."""
    from knowledgepulse.sources.openai_agents._spans import CANCELLED

    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(
        name="forecaster", model=StreamingResponsesModel(retry_script()), tools=[flaky_weather()]
    )
    streamed = run_streamed(agent, "What is the weather in Paris?", cancel_at_first_item=True)
    assert streamed.final_output is None
    assert not any(item.type == "tool_call_output_item" for item in streamed.new_items)
    (captured,) = processor.captured
    assert kinds(captured) == [("thought", None), ("tool_call", "weather")]
    assert captured.trace.metadata.success is False
    assert f"{CANCELLED}: weather" in captured.item.warnings


def test_something_that_is_not_a_run_result_is_refused_clearly() -> None:
    """to_trace names what it expected."""
    with pytest.raises(TypeError, match="expected an Agents SDK RunResult"):
        oa.to_trace({"final_output": "x"})


def approval_script() -> list[Any]:
    return [
        [
            assistant_message("I will delete the file.", item_id="m1"),
            function_call("delete", {"path": "notes.txt"}, call_id="call_1"),
        ],
        [assistant_message("Deleted notes.txt.", item_id="m2")],
    ]


def guarded_delete() -> Any:
    @function_tool(needs_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    return delete


@pytest.mark.parametrize("model", [ResponsesModel, ChatModel])
def test_a_run_interrupted_for_approval_is_no_success_live_as_in_its_result(model: Any) -> None:
    """The live trace of a run stopped at a tool awaiting approval agrees with ``to_trace``:
    not a success, and a warning that says so."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(name="janitor", model=model(approval_script()), tools=[guarded_delete()])

    result = Runner.run_sync(agent, "Delete notes.txt")

    assert [item.tool_name for item in result.interruptions] == ["delete"]
    (captured,) = processor.captured
    after = oa.to_trace(result)
    assert kinds(captured) == [("thought", None), ("tool_call", "delete")]
    assert [(s.type, s.content, s.input) for s in captured.trace.steps] == [
        (s.type, s.content, s.input) for s in after.trace.steps
    ]  # the result holds no times
    assert captured.trace.metadata.success is after.trace.metadata.success is False
    assert captured.trace.outcome.result_summary == after.trace.outcome.result_summary
    (warning,) = captured.item.warnings
    assert warning.startswith(after.warnings[0])
    assert "delete gave no output" in warning


def test_a_resumed_run_is_not_captured_live_and_its_result_converts_whole() -> None:
    """The SDK reopens an interrupted run's trace without telling processors: its resumption is
    not captured live (as the docs say); ``to_trace`` of the resumed result gives the whole run."""
    processor = oa.processor()
    agents.set_trace_processors([processor])
    agent = Agent(name="janitor", model=ResponsesModel(approval_script()), tools=[guarded_delete()])
    interrupted = Runner.run_sync(agent, "Delete notes.txt")
    state = interrupted.to_state()
    for pending in interrupted.interruptions:
        state.approve(pending)

    resumed = Runner.run_sync(agent, state)

    assert resumed.final_output == "Deleted notes.txt."
    assert len(processor.captured) == 1  # the interrupted part only
    assert processor.open_traces == 0
    whole = oa.to_trace(resumed).trace
    assert [(s.type, s.tool.name if s.tool else None) for s in whole.steps] == [
        ("thought", None),
        ("tool_call", "delete"),
        ("observation", "delete"),
        ("thought", None),
    ]
    assert whole.metadata.success is True


def test_a_run_a_tool_ends_is_still_a_success() -> None:
    """``stop_on_first_tool``: the run ends at a tool, with its output: no pending approval."""

    @function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    processor = oa.processor()
    agents.set_trace_processors([processor])
    script = [[function_call("weather", {"city": "Paris"}, call_id="call_1")]]
    agent = Agent(
        name="forecaster",
        model=ResponsesModel(script),
        tools=[weather],
        tool_use_behavior="stop_on_first_tool",
    )

    assert Runner.run_sync(agent, "What is the weather in Paris?").final_output == "Sunny in Paris"

    (captured,) = processor.captured
    assert captured.trace.metadata.success is True
    assert captured.item.warnings == ()
