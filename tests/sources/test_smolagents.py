"""smolagents step dicts to ReasoningTrace: the research payload, runs, files and bad records."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import smolagents as smol
from knowledgepulse.sources.smolagents import _files as smol_files
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, source_of

DATA = Path(__file__).parent / "data" / "smolagents"


def golden_step() -> dict[str, Any]:
    value: dict[str, Any] = json.loads((DATA / "action_step_dict.json").read_text())
    return value


def kinds(converted: TraceItem) -> list[str]:
    return [step.type for step in converted.trace.steps]


def action(
    number: int,
    *,
    calls: list[tuple[str, Any, str]] = (),  # type: ignore[assignment]
    output: str | None = None,
    observations: str | None = None,
    error: dict[str, str] | None = None,
    final: bool = False,
    action_output: Any = None,
    requested: list[tuple[str, Any, str]] | None = None,
) -> dict[str, Any]:
    """An ActionStep dict as smolagents' ``ActionStep.dict()`` writes it."""

    def call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    message = None
    if requested is not None:
        message = {
            "role": "assistant",
            "content": output,
            "tool_calls": [
                {
                    "function": {"arguments": a, "name": n, "description": None},
                    "id": i,
                    "type": "function",
                }
                for n, a, i in requested
            ],
            "raw": None,
            "token_usage": None,
        }
    return {
        "step_number": number,
        "timing": {
            "start_time": 1_700_000_000.0 + number,
            "end_time": 1_700_000_000.5 + number,
            "duration": 0.5,
        },
        "model_input_messages": None,
        "tool_calls": [call(*item) for item in calls],
        "error": error,
        "model_output_message": message,
        "model_output": output,
        "code_action": None,
        "observations": observations,
        "observations_images": None,
        "action_output": action_output,
        "token_usage": None,
        "is_final_answer": final,
    }


def weather_run() -> list[dict[str, Any]]:
    """A ToolCallingAgent run whose tool failed once, as get_full_steps() gives it."""
    failure = {
        "type": "AgentToolExecutionError",
        "message": "Error executing tool 'get_weather' with arguments {'city': 'Paris'}: "
        "RuntimeError: timed out\nPlease try again or use another tool",
    }
    return [
        {"task": "What is the weather in Paris?", "task_images": None},
        action(
            1,
            output="I will look it up.",
            error=failure,
            requested=[("get_weather", {"city": "Paris"}, "call_1")],
        ),
        action(
            2,
            output="Trying again.",
            calls=[("get_weather", {"city": "Paris"}, "call_2")],
            observations="sunny",
        ),
        action(
            3,
            calls=[("final_answer", {"answer": "Sunny in Paris"}, "call_3")],
            observations="Sunny in Paris",
            final=True,
        ),
    ]


def test_the_research_action_step_gives_thought_tool_call_and_observation() -> None:
    """§4.4: thought "Hi", tool_call get_weather {"location": "Paris"} of 1000 ms, observation."""
    converted = smol.to_trace([golden_step()])
    steps = [step.model_dump(exclude_none=True) for step in converted.trace.steps]
    assert steps == [
        {"step_id": 0, "type": "thought", "content": "Hi"},
        {
            "step_id": 1,
            "type": "tool_call",
            "content": 'get_weather {"location":"Paris"}',
            "tool": {"name": "get_weather"},
            "input": {"location": "Paris"},
            "output_summary": "This is a nice observation",
            "latency_ms": 1000.0,
        },
        {
            "step_id": 2,
            "type": "observation",
            "content": "This is a nice observation",
            "tool": {"name": "get_weather"},
            "output_summary": "This is a nice observation",
        },
    ]
    metadata = converted.trace.metadata
    assert metadata.framework == "smolagents"
    assert converted.trace.task.objective == "smolagents run"  # no TaskStep: the fallback
    assert metadata.success is False  # no final answer was recorded


def test_a_failed_tool_is_an_observation_and_the_retry_the_recovery() -> None:
    """The request of a step that raised is read from model_output_message; the retry recovers."""
    converted = smol.to_trace(weather_run(), domain="code")
    assert kinds(converted) == [
        "thought",
        "tool_call",
        "observation",
        "thought",
        "error_recovery",
        "observation",
        "thought",
    ]
    steps = converted.trace.steps
    assert steps[1].tool is not None
    assert steps[1].tool.name == "get_weather"
    assert (steps[2].content or "").startswith("Error executing tool 'get_weather'")
    assert steps[4].tool is not None
    assert steps[4].tool.name == "get_weather"
    assert steps[4].input == {"city": "Paris"}
    assert steps[-1].content == "Sunny in Paris"
    trace = converted.trace
    assert trace.task.objective == "What is the weather in Paris?"
    assert trace.outcome.result_summary == "Sunny in Paris"
    assert trace.metadata.success is True
    assert trace.metadata.task_domain == "code"
    assert source_of(converted)["domain_source"] == "argument"
    assert source_of(converted)["confidence_source"] == "default"
    assert trace.outcome.confidence == 0.8
    assert trace.metadata.created_at.timestamp() == 1_700_000_001.0


def test_final_answer_is_the_answer_not_a_tool() -> None:
    """No step carries the final_answer tool."""
    converted = smol.to_trace(weather_run())
    assert all(
        step.tool is None or step.tool.name != "final_answer" for step in converted.trace.steps
    )


def test_a_run_result_dict_gives_its_state_and_output() -> None:
    """RunResult's state decides success, its output the result summary."""
    run = {"output": "Cloudy", "state": "max_steps_error", "steps": weather_run(), "timing": None}
    converted = smol.to_trace(run)
    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.result_summary == "Cloudy"
    assert converted.trace.outcome.confidence == 0.2


def test_the_model_is_the_one_the_last_provider_response_names() -> None:
    """``model_output_message.raw`` is the provider's reply (a ChatCompletion): its ``model``
    is the run's; the planning step's message keeps no reply."""
    path = Path(__file__).parents[1] / "conformance" / "files" / "smolagents"
    document = json.loads((path / "planning_openai_instructions_with_tool_calls.json").read_text())
    named = [
        step["model_output_message"]["raw"]["model"]
        for step in document["steps"]
        if (step.get("model_output_message") or {}).get("raw")
    ]
    converted = smol.to_trace(document)
    assert named
    assert (converted.trace.metadata.model_extra or {})["source"]["model"] == named[-1]


def test_steps_with_no_provider_reply_name_no_model() -> None:
    converted = smol.to_trace(weather_run())
    assert "model" not in (converted.trace.metadata.model_extra or {})["source"]


def test_running_out_of_steps_is_a_terminal_error() -> None:
    """AgentMaxStepsError: an observation with its text, no error_recovery, success false."""
    steps = weather_run()[:3]
    steps.append(
        action(
            3,
            error={"type": "AgentMaxStepsError", "message": "Reached max steps."},
            action_output="Probably sunny.",
        )
    )
    converted = smol.to_trace(steps)
    assert kinds(converted)[-2:] == ["observation", "thought"]
    assert converted.trace.steps[-2].content == "Reached max steps."
    assert kinds(converted).count("error_recovery") == 1
    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.result_summary == "Probably sunny."


def test_a_parse_error_without_a_tool_makes_the_next_call_a_recovery() -> None:
    """An error outside any tool call is still evident: the next call is error_recovery."""
    steps = [
        {"task": "Sum 2 and 3", "task_images": None},
        action(1, output="garbled", error={"type": "AgentParsingError", "message": "no tool call"}),
        action(2, calls=[("add", {"a": 2, "b": 3}, "c1")], observations="5"),
        action(3, calls=[("final_answer", {"answer": "5"}, "c2")], final=True),
    ]
    converted = smol.to_trace(steps)
    assert kinds(converted) == [
        "thought",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert converted.trace.steps[1].content == "no tool call"


def test_parallel_calls_each_get_their_own_line_of_observations() -> None:
    """smolagents joins parallel outputs with newlines in call order; each call gets its line."""
    step = action(
        1,
        calls=[("a", {}, "c1"), ("b", {}, "c2")],
        observations="out of a\nout of b",
    )
    converted = smol.to_trace([step])
    observations = [s.content for s in converted.trace.steps if s.type == "observation"]
    assert observations == ["out of a", "out of b"]


def test_a_planning_step_is_a_thought() -> None:
    """The plan is a thought, placed by its start time."""
    plan: dict[str, Any] = {
        "model_input_messages": [],
        "model_output_message": {"role": "assistant", "content": "1. look"},
        "plan": "1. Look up the weather.\n2. Answer.",
        "timing": {"start_time": 1_700_000_000.5, "end_time": 1_700_000_000.9, "duration": 0.4},
        "token_usage": None,
    }
    steps = weather_run()
    steps.insert(1, plan)
    converted = smol.to_trace(steps)
    assert converted.trace.steps[0].content == "1. Look up the weather.\n2. Answer."


def test_the_same_run_gets_the_same_id_however_it_was_exported() -> None:
    """Full and succinct exports (with or without model_input_messages) share an id."""
    full = weather_run()
    succinct = [{k: v for k, v in step.items() if k != "model_input_messages"} for step in full]
    assert smol.to_trace(full).trace.id == smol.to_trace(succinct).trace.id
    assert smol.to_trace(full, trace_id="run-7").trace.id == "kp:trace:run-7"


def test_something_else_is_refused_with_a_clear_error() -> None:
    """A bad step names its index; a wrong object names what is expected."""
    with pytest.raises(ConversionError, match=r"steps\[1\]: not a smolagents step"):
        smol.to_trace([weather_run()[0], 42])
    with pytest.raises(ConversionError, match="expected a smolagents RunResult"):
        smol.to_trace(42)
    with pytest.raises(ConversionError, match="no step"):
        smol.to_trace([{"task": "only a task", "task_images": None}])


def test_recognises_steps_runs_and_lists_but_not_other_sources() -> None:
    """auto detection: smolagents shapes yes; OTLP, LangSmith, Agents, Pydantic AI no."""
    assert smol_files.recognises(golden_step())
    assert smol_files.recognises(weather_run()[0])
    assert smol_files.recognises(weather_run())
    assert smol_files.recognises({"steps": weather_run(), "state": "success", "output": "x"})
    others: list[Any] = [
        {"resourceSpans": []},
        {"name": "AgentExecutor", "run_type": "chain", "inputs": {}, "child_runs": []},
        {"post": [], "patch": []},
        {"object": "trace.span", "id": "span_1", "span_data": {"type": "function"}},
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
        [{"kind": "request", "parts": []}],
        {"task": "x", "other": 1},
        [],
        "text",
    ]
    assert not any(smol_files.recognises(value) for value in others)


def test_a_json_list_of_steps_is_one_run(tmp_path: Path) -> None:
    """A file of steps (a JSON list) gives one trace."""
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(weather_run()))
    items = list(convert_file(path, source="smolagents"))
    assert len(items) == 1
    assert isinstance(items[0], TraceItem)
    assert kinds(items[0]).count("error_recovery") == 1


def test_json_lines_of_runs_give_one_trace_a_line_and_bad_ones_are_located(
    tmp_path: Path,
) -> None:
    """One run a line; a bad step is reported FILE:LINE: PATH and its run still converts."""
    broken = weather_run()
    broken[2] = {"step_number": 2, "timing": "yesterday"}
    lines = [
        json.dumps(weather_run()),
        json.dumps(broken),
        json.dumps({"steps": weather_run(), "state": "success", "output": "Sunny"}),
        json.dumps([{"task": "nothing done", "task_images": None}]),
        "{not json",
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    items = list(convert_file(path, source="smolagents", options=TraceOptions(domain="code")))
    traces = [item for item in items if isinstance(item, TraceItem)]
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert len(traces) == 3
    assert all(t.trace.metadata.task_domain == "code" for t in traces)
    assert problems[0].startswith(f"{path}:2: [2].timing: expected {{start_time")
    assert problems[1].startswith(f"{path}:4: ")
    assert "no step" in problems[1]
    assert problems[2].startswith(f"{path}:5: ")
    assert len(problems) == 3


def test_a_file_with_a_non_step_record_reports_it_and_converts_the_rest(tmp_path: Path) -> None:
    """JSON Lines of steps: a line that is no step is a located problem."""
    steps = weather_run()
    path = tmp_path / "steps.jsonl"
    path.write_text("\n".join([json.dumps(steps[0]), "7", *map(json.dumps, steps[1:])]) + "\n")
    items = list(convert_file(path, source="smolagents"))
    assert [type(item).__name__ for item in items] == ["Problem", "TraceItem"]
    assert str(items[0]).startswith(f"{path}:2: not a smolagents step: a number")


@settings(max_examples=40, deadline=None)
@given(st.permutations(list(range(1, 4))))
def test_the_order_of_steps_in_the_file_does_not_matter(order: list[int]) -> None:
    """Steps are placed by their start time, so a shuffled export gives the same steps."""
    steps = weather_run()
    shuffled = [steps[0], *(copy.deepcopy(steps[index]) for index in order)]
    expected = smol.to_trace(steps, trace_id="t").trace.steps
    assert smol.to_trace(shuffled, trace_id="t").trace.steps == expected


def test_a_file_of_only_a_bad_step_is_reported_once(tmp_path: Path) -> None:
    """No second "no step" problem for a run that never started."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"step_number": 1, "timing": []}]))
    items = [str(item) for item in convert_file(path, source="smolagents")]
    assert items == [
        f"{path}[0]: timing: expected {{start_time, end_time, duration}}, found a list"
    ]


def test_a_timestamp_past_year_9999_is_not_a_crash(tmp_path: Path) -> None:
    """A corrupt start_time (found by bench/fuzz_loaders.py) converts; created_at is then now."""
    example = Path(__file__).parents[2] / "examples" / "integrations" / "smolagents" / "steps.json"
    steps = json.loads(example.read_text())
    for step in steps:
        if isinstance(step.get("timing"), dict):
            step["timing"]["start_time"] = 1.8e28
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(steps))
    items = list(convert_file(path, source="smolagents"))
    assert any(isinstance(item, TraceItem) for item in items)


@pytest.mark.parametrize("timing", ["2025-01-01", 12.5, ["x"]])
def test_a_run_result_whose_timing_is_no_object_reads_as_one_without_timing(
    tmp_path: Path, timing: Any
) -> None:
    """A RunResult's ``timing`` that is no object holds no start time: the run converts as one
    without ``timing`` (before: a string, number or list raised AttributeError; found by
    bench/fuzz_loaders.py --structured)."""
    corpus = Path(__file__).parents[1] / "conformance" / "files" / "smolagents"
    result = json.loads((corpus / "google_model_retry.json").read_text())
    result["timing"] = timing
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(result))
    del result["timing"]
    without = tmp_path / "without.json"
    without.write_text(json.dumps(result))
    (item,) = convert_file(odd, source="smolagents")
    (expected,) = convert_file(without, source="smolagents")
    assert isinstance(item, TraceItem)
    assert isinstance(expected, TraceItem)
    assert item.trace.steps == expected.trace.steps
    assert item.trace.metadata.created_at == expected.trace.metadata.created_at


def test_a_memory_kept_across_runs_gives_one_trace_per_run(tmp_path: Path) -> None:
    """Steps of ``run(task, reset=False)``: each ``TaskStep`` starts a run, in a list or lines."""
    second = weather_run()
    second[0] = {"task": "And in Lyon?", "task_images": None}
    memory = weather_run() + second
    listed = tmp_path / "memory.json"
    listed.write_text(json.dumps(memory))
    lines = tmp_path / "memory.jsonl"
    lines.write_text("".join(json.dumps(step) + "\n" for step in memory))
    for path in (listed, lines):
        items = list(convert_file(path, source="smolagents", options=TraceOptions()))
        assert [item.trace.task.objective for item in items if isinstance(item, TraceItem)] == [
            "What is the weather in Paris?",
            "And in Lyon?",
        ], path.name
        assert len(items) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps(memory) + "\n[]\n")
    *_, nothing = convert_file(empty, source="smolagents")
    assert isinstance(nothing, Problem)
    assert "no step" in str(nothing)
    result = {"steps": memory, "state": "success", "output": "Sunny in Lyon"}
    (item,) = smol_files.convert_records([Record(Location("run.json"), result)], TraceOptions())
    assert isinstance(item, TraceItem)
    assert item.trace.task.objective == "And in Lyon?"
    assert len(item.trace.steps) == len(smol.to_trace(weather_run()).trace.steps)


BENCHMARK = Path(__file__).parents[1] / "conformance" / "files" / "smolagents"


@pytest.mark.parametrize(
    "name",
    ["benchmark_tool_calling_math_gpt-4o.jsonl", "benchmark_code_math_gpt-4o_auth_error.jsonl"],
)
def test_a_benchmark_row_names_the_model_it_ran(name: str) -> None:
    """smolagents' benchmark writes each row's ``model_id`` (gpt-4o), its messages no reply's
    model: the trace names it, even for a run refused at its first model call. Before, none."""
    rows = [json.loads(line) for line in (BENCHMARK / name).read_text().splitlines()]
    traces = [item.trace for item in convert_file(BENCHMARK / name) if isinstance(item, TraceItem)]
    assert len(traces) == len(rows)
    for row, trace in zip(rows, traces, strict=True):
        assert (trace.metadata.model_extra or {})["source"].get("model") == row["model_id"]
