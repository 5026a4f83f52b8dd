"""The live span processor, fed by the real OpenTelemetry SDK and a real Pydantic AI agent."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from pydantic_ai import Agent, ModelRetry, UsageLimitExceeded, UsageLimits
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from knowledgepulse.errors import MissingDependencyError
from knowledgepulse.integrations._collector import Collector
from knowledgepulse.integrations.otel import activate, install, to_trace
from knowledgepulse.integrations.otel.live import KPSpanProcessor
from knowledgepulse.sources._steps import MODEL_CALL_FAILED
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.integrations.loops import run_fresh
from tests.integrations.otel_helpers import USER_TASK, provider, run_weather_agent, write_jsonl
from tests.sources.helpers import convert_file
from tests.sources.weather import RETRY_SHAPE, step_shape


def unscored(trace: ReasoningTrace) -> ReasoningTrace:
    metadata = trace.metadata.model_copy(update={"quality_score": 0.0})
    return trace.model_copy(update={"metadata": metadata})


def test_hand_made_genai_spans_become_a_scored_trace() -> None:
    """invoke_agent → chat → failing execute_tool → chat → retry → answer, captured live."""
    tracer_provider, _ = provider()
    collector = install(domain="code", tracer_provider=tracer_provider)
    run_weather_agent(tracer_provider.get_tracer("test"))
    (captured,) = collector.captured
    trace = captured.trace
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.steps[2].content == "weather service timed out"
    assert trace.steps[4].input == {"city": "Paris"}
    assert trace.task.objective == USER_TASK
    assert trace.outcome.result_summary == "It is rainy in Paris, 57°F."
    assert (trace.metadata.task_domain, trace.metadata.agent_id) == ("code", "weather")
    assert trace.metadata.quality_score == captured.breakdown.score > 0
    assert collector.breakdowns == [captured.breakdown]


def test_file_written_from_the_same_spans_gives_the_same_trace(tmp_path: Path) -> None:
    """Live and file (OTLP JSON Lines, one span a line) agree step for step."""
    tracer_provider, exporter = provider()
    collector = install(tracer_provider=tracer_provider)
    run_weather_agent(tracer_provider.get_tracer("test"))
    path = write_jsonl(tmp_path / "spans.jsonl", exporter.get_finished_spans())
    (from_file,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    assert from_file.trace == unscored(collector.traces[0])


def _weather_agent(tracer_provider: Any) -> tuple[Agent[None, str], list[int]]:
    attempts: list[int] = []

    def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if last.part_kind == "tool-return" and last.outcome == "success":
            return ModelResponse(parts=[TextPart(f"It is {last.content} in Paris.")])
        call = ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id=f"c{len(messages)}")
        return ModelResponse(parts=[TextPart("Asking the weather service."), call])

    agent: Agent[None, str] = Agent(FunctionModel(scripted), name="weather_agent")
    agent.instrument = InstrumentationSettings(tracer_provider=tracer_provider)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ModelRetry("the weather service is busy")
        return "rainy"

    return agent, attempts


def test_pydantic_ai_agent_with_a_retried_tool(tmp_path: Path) -> None:
    """A real Pydantic AI run: ModelRetry once → observation, then error_recovery; file agrees."""
    tracer_provider, exporter = provider()
    collector = install(tracer_provider=tracer_provider)
    agent, attempts = _weather_agent(tracer_provider)
    result = agent.run_sync("Weather in Paris?")
    assert result.output == "It is rainy in Paris."
    assert len(attempts) == 2
    (trace,) = collector.traces
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.steps[2].content == "the weather service is busy"
    assert trace.task.objective == "Weather in Paris?"
    assert trace.outcome.result_summary == "It is rainy in Paris."
    assert (trace.metadata.framework, trace.metadata.agent_id) == ("pydantic-ai", "weather_agent")
    assert trace.metadata.success is True
    path = write_jsonl(tmp_path / "pydantic.jsonl", exporter.get_finished_spans())
    (from_file,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    assert from_file.trace == unscored(trace)
    assert to_trace(exporter.get_finished_spans()).trace == unscored(trace)


def test_pydantic_ai_reasoning_two_tools_and_a_retry_read_in_order() -> None:
    """A real Pydantic AI run: reasoning (a ``thinking`` part in its spans), a call refused with
    ModelRetry, its retry, a second tool, then the answer. Before, the reasoning was lost."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)

    def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(1 for message in messages if message.kind == "response")
        said: list[Any] = [
            [
                ThinkingPart("The weather tool knows it."),
                ToolCallPart("weather", {"city": "Pariss"}),
            ],
            [TextPart("Misspelt; again."), ToolCallPart("weather", {"city": "Paris"})],
            [ToolCallPart("to_fahrenheit", {"celsius": 14})],
            [TextPart("Rainy, 14 °C (57.2 °F).")],
        ]
        return ModelResponse(parts=said[turn])

    agent: Agent[None, str] = Agent(FunctionModel(scripted), name="weather_agent")
    agent.instrument = InstrumentationSettings(tracer_provider=tracer_provider)

    @agent.tool_plain
    def weather(city: str) -> str:
        if city != "Paris":
            raise ModelRetry(f"unknown city {city!r}")
        return "rainy, 14 °C"

    @agent.tool_plain
    def to_fahrenheit(celsius: float) -> str:
        return f"{celsius * 9 / 5 + 32:.1f} °F"

    assert agent.run_sync("Weather in Paris?").output == "Rainy, 14 °C (57.2 °F)."
    (trace,) = collector.traces
    assert [(step.type, step.tool.name if step.tool else step.content) for step in trace.steps] == [
        ("thought", "The weather tool knows it."),
        ("tool_call", "weather"),
        ("observation", "weather"),
        ("thought", "Misspelt; again."),
        ("error_recovery", "weather"),
        ("observation", "weather"),
        ("tool_call", "to_fahrenheit"),
        ("observation", "to_fahrenheit"),
        ("thought", "Rainy, 14 °C (57.2 °F)."),
    ]
    assert [step.input for step in trace.steps if step.input] == [
        {"city": "Pariss"},
        {"city": "Paris"},
        {"celsius": 14},
    ]
    assert trace.steps[2].content == "unknown city 'Pariss'"
    assert trace.outcome.result_summary == "Rainy, 14 °C (57.2 °F)."
    assert trace.metadata.success is True


def test_spans_past_the_limit_are_dropped_and_said() -> None:
    """``max_spans_per_trace`` bounds memory; the trace says how many spans it lost."""
    tracer_provider, _ = provider()
    collector: Collector = Collector()
    processor = KPSpanProcessor(lambda: (collector,), max_spans_per_trace=3)
    tracer_provider.add_span_processor(processor)
    run_weather_agent(tracer_provider.get_tracer("test"))
    (captured,) = collector.captured
    assert captured.item.warnings[-1] == "3 span(s) past the limit of 3 were dropped"
    assert processor.open_traces == 0


def test_unfinished_traces_are_dropped_after_the_age_limit() -> None:
    """A root that never ends does not hold its spans for ever, nor do too many open traces."""
    now = [0.0]
    tracer_provider, _ = provider()
    processor = KPSpanProcessor(
        lambda: (Collector(),), max_age_s=10, max_open_traces=2, clock=lambda: now[0]
    )
    tracer_provider.add_span_processor(processor)
    tracer = tracer_provider.get_tracer("test")
    stuck = tracer.start_span("invoke_agent a")
    assert processor.open_traces == 1
    now[0] = 11.0
    other = tracer.start_span("invoke_agent b")
    assert processor.open_traces == 1  # the stuck one went
    spans = [tracer.start_span(f"invoke_agent {n}") for n in range(3)]
    assert processor.open_traces == 2
    for span in (stuck, other, *spans):
        span.end()


def test_a_trace_with_no_genai_span_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """An HTTP request's trace is not an agent run: nothing captured, nothing logged."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)
    with tracer_provider.get_tracer("test").start_as_current_span("GET /health"):
        pass
    assert collector.captured == []
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_failures_in_the_hook_never_reach_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    """``on_trace`` raising, or a span the processor cannot read: logged, the run goes on."""

    def explode(_: object) -> None:
        raise RuntimeError("user callback broke")

    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider, on_trace=explode)
    agent, _ = _weather_agent(tracer_provider)
    assert agent.run_sync("Weather in Paris?").output == "It is rainy in Paris."
    assert len(collector.captured) == 1
    assert "on_trace raised" in caplog.text
    collector.processor.on_start(object())
    collector.processor.on_end(object())  # type: ignore[arg-type]
    assert "span processor failed" in caplog.text


def test_close_stops_capturing() -> None:
    """After ``close()`` the processor goes idle."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)
    collector.close()
    run_weather_agent(tracer_provider.get_tracer("test"))
    assert collector.captured == []


def test_activate_captures_only_runs_started_inside() -> None:
    """``activate`` (``kp.capture``'s hook) routes traces started in its context, on the global
    provider; a run outside it is not captured."""
    collector = Collector()
    tracer = trace_api.get_tracer("test")
    with activate(collector):
        tracer = trace_api.get_tracer("test")  # the global SDK provider, set up when none was
        run_weather_agent(tracer)
    run_weather_agent(tracer)
    (captured,) = collector.captured
    assert step_shape(captured.trace) == RETRY_SHAPE


def test_nested_activations_give_each_collector_the_run() -> None:
    """An inner ``kp.capture`` keeps the outer one on: both get the run, as with LangChain."""
    outer, inner = Collector(), Collector(domain="code")
    with activate(outer):
        tracer = trace_api.get_tracer("test")
        run_weather_agent(tracer)
        with activate(inner):
            run_weather_agent(tracer)
    assert len(outer.captured) == 2
    (captured,) = inner.captured
    assert captured.trace.id == outer.captured[1].trace.id
    assert captured.trace.metadata.task_domain == "code"  # each its own options
    assert outer.captured[1].trace.metadata.task_domain == "default"


def test_install_without_the_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``opentelemetry-sdk``: ``pip install -e ".[otel]"`` is the message."""
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    monkeypatch.delitem(sys.modules, "knowledgepulse.integrations.otel.live", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install -e \"\.\[otel\]\""):
        install()
    with pytest.raises(MissingDependencyError, match=r"pip install -e \"\.\[otel\]\""):
        activate(Collector())


def test_the_example_runs_offline_and_prints_a_scored_trace() -> None:
    """``examples/integrations/otel/pydantic_ai_agent.py`` (own process: it sets global state)."""
    import json
    import subprocess

    example = (
        Path(__file__).parents[2] / "examples" / "integrations" / "otel" / "pydantic_ai_agent.py"
    )
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, check=True, timeout=120
    )
    document, _, last = done.stdout.rpartition("}\n")
    trace = json.loads(document + "}")
    assert [step["type"] for step in trace["steps"]] == [kind for kind, _ in RETRY_SHAPE]
    assert last.startswith("score 0.")


def test_console_exporter_lines_give_the_same_trace(tmp_path: Path) -> None:
    """The SDK's ``ConsoleSpanExporter`` with a one-line formatter writes a file kp reads."""
    import io

    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    tracer_provider, _ = provider()
    out = io.StringIO()
    console = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    tracer_provider.add_span_processor(SimpleSpanProcessor(console))
    collector = install(tracer_provider=tracer_provider)
    run_weather_agent(tracer_provider.get_tracer("test"))
    path = tmp_path / "console.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    (from_file,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    live = unscored(collector.traces[0])
    # The console shape keeps microseconds, so latencies agree to the microsecond only.
    for read, made in zip(from_file.trace.steps, live.steps, strict=True):
        assert read.model_copy(update={"latency_ms": None}) == made.model_copy(
            update={"latency_ms": None}
        )
        assert (read.latency_ms is None) == (made.latency_ms is None)
        assert abs((read.latency_ms or 0) - (made.latency_ms or 0)) <= 0.002
    assert from_file.trace.task == live.task
    assert from_file.trace.id == live.id


def test_the_real_otel_file_exporter_writes_what_kp_convert_reads(tmp_path: Path) -> None:
    """opentelemetry-exporter-otlp-json-file's output converts to the live trace, via the CLI."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from knowledgepulse.cli.main import main

    tracer_provider, _ = provider()
    path = tmp_path / "traces.jsonl"
    file_exporter = FileSpanExporter(path=path)
    tracer_provider.add_span_processor(SimpleSpanProcessor(file_exporter))
    collector = install(tracer_provider=tracer_provider)
    agent, _ = _weather_agent(tracer_provider)
    agent.run_sync("Weather in Paris?")
    file_exporter.force_flush()
    converted = tmp_path / "converted.jsonl"
    assert main(["convert", str(path), "-o", str(converted)]) == 0
    (line,) = converted.read_text("utf-8").splitlines()
    assert ReasoningTrace.model_validate_json(line) == unscored(collector.traces[0])
    assert step_shape(collector.traces[0]) == RETRY_SHAPE


def test_a_text_answer_that_is_json_is_told_once() -> None:
    """A model's text answer written as JSON ('{"add":0}') is the answer once, kept as written."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)

    def answer_in_json(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('{"sum":3}')])

    agent: Agent[None, str] = Agent(FunctionModel(answer_in_json), name="adder")
    agent.instrument = InstrumentationSettings(tracer_provider=tracer_provider)
    agent.run_sync("Add 1 and 2.")
    (trace,) = collector.traces
    assert [(step.type, step.content) for step in trace.steps] == [("thought", '{"sum":3}')]
    assert trace.outcome.result_summary == '{"sum":3}'


def test_a_run_that_fails_before_any_step_is_captured_as_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An agent span that ends in an exception, with no model output, is a failed one-step trace."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)

    async def unreachable(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise ConnectionError("the model is unreachable")
        yield ""  # pragma: no cover - makes this an async generator

    agent: Agent[None, str] = Agent(FunctionModel(stream_function=unreachable), name="streamer")
    agent.instrument = InstrumentationSettings(tracer_provider=tracer_provider)

    async def stream() -> None:
        async with agent.run_stream("Weather in Paris?") as result:
            async for _ in result.stream_text():
                pass

    with pytest.raises(ConnectionError):
        run_fresh(stream())
    (trace,) = collector.traces
    # Its model span records the failure too from pydantic-ai 2.78: a model call's failure then.
    shown = [
        (step.type, (step.content or "").removeprefix(MODEL_CALL_FAILED)) for step in trace.steps
    ]
    assert shown == [("observation", "the model is unreachable")]
    assert trace.metadata.success is False
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_the_error_that_ends_a_run_is_its_last_step() -> None:
    """A run stopped by its agent (a usage limit) after a tool call ends in that error."""
    tracer_provider, _ = provider()
    collector = install(tracer_provider=tracer_provider)
    agent, _ = _weather_agent(tracer_provider)
    with pytest.raises(UsageLimitExceeded):
        agent.run_sync("Weather in Paris?", usage_limits=UsageLimits(request_limit=1))
    (trace,) = collector.traces
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "observation",
    ]
    assert "request_limit of 1" in (trace.steps[-1].content or "")
    assert trace.metadata.success is False


_OWN_PROVIDER_AFTER_CAPTURE = """
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import knowledgepulse as kp
from tests.integrations.otel_helpers import run_weather_agent

with kp.capture():
    pass
assert "pydantic_ai" not in sys.modules
mine, exporter = TracerProvider(), InMemorySpanExporter()
mine.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(mine)
assert trace.get_tracer_provider() is mine, "the user's provider was refused"
with kp.capture() as cap:
    run_weather_agent(trace.get_tracer("app"))
print(len(exporter.get_finished_spans()), len(cap.traces))
"""

_PYDANTIC_AI_WITH_NO_SETUP = """
import asyncio
import logging
from opentelemetry import trace
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
import knowledgepulse as kp

said = []
logger = logging.getLogger("knowledgepulse.integrations")
logger.setLevel(logging.INFO)
logger.addHandler(logging.Handler())
logger.handlers[-1].emit = lambda record: said.append(record.getMessage())
agent = Agent(TestModel(custom_output_text="done"))
agent.instrument = True
with kp.capture() as cap:
    asyncio.run(agent.run("Say done."))
told = sum("set an OpenTelemetry SDK TracerProvider globally" in line for line in said)
print(type(trace.get_tracer_provider()).__name__, len(cap.traces), told)
"""


def _fresh_python(script: str) -> str:
    """What ``script`` prints, run in its own interpreter (the global provider is set once)."""
    import os
    import subprocess

    root = Path(__file__).parents[2]
    path = os.pathsep.join([str(root / "src"), str(root)])
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,  # the assertion below shows its stderr
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_provider_set_after_a_capture_is_the_users_and_gets_their_spans() -> None:
    """A capture with nothing that emits spans loaded sets no global provider: the user's own,
    set later, is accepted, exports their spans, and the next capture routes from it."""
    assert _fresh_python(_OWN_PROVIDER_AFTER_CAPTURE) == "6 1"


def test_an_instrumented_pydantic_ai_agent_is_captured_with_no_otel_setup() -> None:
    """With Pydantic AI loaded and no provider set, kp.capture sets the SDK one it needs, and
    logs that it did (OpenTelemetry now refuses another)."""
    assert _fresh_python(_PYDANTIC_AI_WITH_NO_SETUP) == "TracerProvider 1 1"
