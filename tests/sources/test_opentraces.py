"""opentraces.ai's ``TraceRecord`` JSON Lines (``schema_version`` ``0.x``) as traces.

The files are the conformance corpus's (tests/conformance/files/opentraces, origins and licence
in SOURCES.md there: the opentraces project's own test records); a variant changes a record of
one of them to reach a rule it does not show (sub-agents, failed calls, recorded outcomes).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources._envelope import UNDATED
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

OPENTRACES = Path(__file__).parents[1] / "conformance" / "files" / "opentraces"
CAPTURE = OPENTRACES / "opentraces_a4_real_capture_coordinate.jsonl"
"""Schema 0.9.0, cut from a real capture: the request, a warm-up step, a ``Bash`` call."""
LEGACY = OPENTRACES / "opentraces_legacy_world_v033.jsonl"
"""Schema 0.3.0, written by opentraces 0.3.3: an ``Edit`` call, then the answer."""
TRAILS = OPENTRACES / "opentraces_trace_trails_corpus_v1.jsonl"
"""Schema 0.7.0: a ``Bash`` call, then a ``user`` step."""
PREVIEW = OPENTRACES / "opentraces_preview_0.1.0_find_folder.jsonl"
"""Schema 0.1.0, a real session: the request, a thinking line marked warm-up, a call, the answer."""


def record(path: Path) -> dict[str, Any]:
    (line,) = path.read_text().splitlines()
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def written(tmp_path: Path, *records: Any) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def traces(path: Path) -> list[TraceItem]:
    items = convert_file(path)
    assert all(isinstance(item, TraceItem) for item in items), items
    return [item for item in items if isinstance(item, TraceItem)]


def kinds(item: TraceItem) -> list[str]:
    return [step.type for step in item.trace.steps]


def test_every_schema_version_in_use_is_recognised_and_atifs_trajectories_are_not() -> None:
    for path in (CAPTURE, LEGACY, TRAILS, PREVIEW):
        assert recognise(record(path)) == "opentraces"
    legacy = record(LEGACY)
    assert recognise({**legacy, "schema_version": "ATIF-v1.6"}) != "opentraces"
    assert recognise({**legacy, "schema_version": "1.4"}) != "opentraces"
    assert recognise({**legacy, "schema_version": "99.99.99"}) != "opentraces"
    assert recognise({k: v for k, v in legacy.items() if k != "trace_id"}) != "opentraces"
    # ATIF names its run by session_id, never trace_id: its trajectories stay ATIF's.
    atif = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a"}, "steps": []}
    assert recognise(atif) != "opentraces"


def test_a_call_its_observation_and_the_answer_of_the_last_agent_step() -> None:
    (item,) = traces(LEGACY)
    trace = item.trace
    assert trace.task.objective == "add a farewell() helper to app.py"
    assert kinds(item) == ["thought", "tool_call", "observation", "thought"]
    assert trace.steps[1].tool is not None
    assert trace.steps[1].tool.name == "Edit"
    assert trace.steps[1].input is not None
    assert "farewell" in trace.steps[1].input["new_string"]
    assert trace.steps[2].content == "edit applied"
    assert trace.outcome.result_summary == "Done \u2014 added farewell()."
    assert trace.metadata.success is True  # no outcome recorded: it ends in the answer
    assert trace.id == "kp:trace:6961102e-e930-4c67-aeff-6335858fcdea"
    assert trace.metadata.agent_id == "claude-code"
    assert trace.metadata.created_at == UNDATED  # the record has no time
    source = source_of(item)
    assert source["schema_version"] == "0.3.0"
    assert source["session_id"] == "sess-legacy-v033-refactor"
    assert source["model"] == "anthropic/claude-sonnet-4-5"


def test_warm_up_steps_and_withheld_reasoning_are_no_steps() -> None:
    (item,) = traces(CAPTURE)
    trace = item.trace
    # The image Claude Code attached is a warm-up step: not the user's words.
    assert trace.task.objective.startswith("Review the public command surface")
    assert kinds(item) == ["tool_call", "observation"]
    assert not any("redacted" in (step.content or "") for step in trace.steps)
    assert trace.metadata.success is False  # it ends on the call's result, no answer
    assert trace.metadata.created_at.isoformat().startswith("2026-04-29T10:23:00")


def test_a_thinking_line_marked_warm_up_keeps_its_reasoning() -> None:
    (item,) = traces(PREVIEW)
    assert kinds(item) == ["thought", "tool_call", "observation", "thought"]
    assert (item.trace.steps[0].content or "").startswith("The user wants me to search")
    assert (item.trace.outcome.result_summary or "").startswith("Here are the relevant paths")
    assert item.trace.metadata.success is True
    assert source_of(item)["schema_version"] == "0.1.0"


def test_a_subagents_warm_up_alone_is_no_trace(tmp_path: Path) -> None:
    value = copy.deepcopy(record(PREVIEW))
    value["steps"][1]["parent_step"] = 1  # the thinking line, as a sub-agent's warm-up
    (item,) = traces(written(tmp_path, value))
    assert kinds(item) == ["tool_call", "observation", "thought"]


def test_a_user_step_after_the_call_answers_the_agent() -> None:
    (item,) = traces(TRAILS)
    assert kinds(item)[-1] == "observation"
    last = item.trace.steps[-1]
    assert last.tool is not None
    assert last.tool.name == "respond"
    assert last.content == "Generated the artifact."


def test_a_calls_recorded_duration_is_its_latency() -> None:
    """A tool call's ``duration_ms`` (the Trace Trails ``Bash`` call's 12) is the latency of
    its step; before, kp dropped it and the step had none."""
    (call,) = record(TRAILS)["steps"][1]["tool_calls"]
    (item,) = traces(TRAILS)
    (step,) = (step for step in item.trace.steps if step.type == "tool_call")
    assert step.latency_ms == call["duration_ms"] == 12
    (legacy,) = traces(LEGACY)  # its duration_ms is null: no latency made up
    assert all(step.latency_ms is None for step in legacy.trace.steps)


def _failed_then_retried() -> dict[str, Any]:
    """The legacy record with its ``Edit`` failed (``tool_error``) and a retry after it."""
    value = copy.deepcopy(record(LEGACY))
    edit = value["steps"][1]
    edit["observations"][0].update(error="tool_error", content="old_string not found")
    retry = copy.deepcopy(edit)
    retry.update(step_index=3, content=None)
    retry["tool_calls"][0]["tool_call_id"] = "toolu_retry"
    retry["observations"][0].update(source_call_id="toolu_retry", error=None, content="ok")
    value["steps"][2:2] = [retry]
    return value


def test_an_observation_with_an_error_is_one_and_the_next_call_recovers(tmp_path: Path) -> None:
    (item,) = traces(written(tmp_path, _failed_then_retried()))
    steps = item.trace.steps
    assert kinds(item) == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert steps[2].content == "old_string not found"
    assert steps[3].tool is not None
    assert steps[3].tool.name == "Edit"


def test_an_error_with_no_content_says_the_code_and_no_result_is_no_observation(
    tmp_path: Path,
) -> None:
    value = copy.deepcopy(record(CAPTURE))
    observation = value["steps"][2]["observations"][0]
    observation.update(error="exit_code:2", content=None)
    (item,) = traces(written(tmp_path, value))
    assert item.trace.steps[-1].content == "the tool failed (exit_code:2)"
    observation.update(error="no_result")
    (item,) = traces(written(tmp_path, value))
    assert kinds(item) == ["tool_call"]


def test_the_recorded_outcome_and_reward_are_the_success(tmp_path: Path) -> None:
    value = record(LEGACY)
    failed = {**value, "outcome": {**value["outcome"], "success": False}}
    reached = {**value, "outcome": {**value["outcome"], "terminal_state": "goal_reached"}}
    abandoned = {**value, "outcome": {"terminal_state": "abandoned", "reward": 0.25}}
    items = traces(written(tmp_path, failed, reached, abandoned))
    assert [item.trace.metadata.success for item in items] == [False, True, False]
    assert source_of(items[2])["reward"] == 0.25


def _with_subagent() -> dict[str, Any]:
    """The legacy record whose ``Edit`` is made by a sub-agent its ``Task`` call started."""
    value = copy.deepcopy(record(LEGACY))
    user, edit, answer = value["steps"]
    task = {
        "step_index": 4,
        "role": "agent",
        "content": None,
        "call_type": "main",
        "tool_calls": [
            {"tool_call_id": "toolu_task", "tool_name": "Task", "input": {"prompt": "add it"}}
        ],
        "observations": [{"source_call_id": "toolu_task", "content": "added", "error": None}],
    }
    prompt = {"step_index": 2, "role": "user", "content": "add it", "call_type": "subagent"}
    sub_edit = {**copy.deepcopy(edit), "step_index": 3, "call_type": "subagent"}
    for step in (prompt, sub_edit):
        step["parent_step"] = 4
    value["steps"] = [user, prompt, sub_edit, task, answer]
    return value


def test_a_subagents_steps_are_a_trace_of_their_own(tmp_path: Path) -> None:
    main, sub = traces(written(tmp_path, _with_subagent()))
    assert main.trace.id == "kp:trace:6961102e-e930-4c67-aeff-6335858fcdea"
    assert [s.tool.name for s in main.trace.steps if s.tool and s.type == "tool_call"] == ["Task"]
    assert main.trace.outcome.result_summary == "Done \u2014 added farewell()."
    assert sub.trace.id == "kp:trace:6961102e-e930-4c67-aeff-6335858fcdea/subagent-4"
    assert sub.trace.task.objective == "add it"
    assert kinds(sub) == ["thought", "tool_call", "observation"]
    assert source_of(sub)["parent_step"] == 4


def test_without_a_user_step_the_task_description_is_the_objective(tmp_path: Path) -> None:
    value = record(LEGACY)
    value["steps"] = value["steps"][1:]
    (item,) = traces(written(tmp_path, value))
    assert item.trace.task.objective == "add a farewell() helper to app.py"


def test_a_bad_line_is_a_problem_and_the_batch_goes_on(tmp_path: Path) -> None:
    value = copy.deepcopy(record(LEGACY))
    value["steps"][1]["tool_calls"].append({"input": {}})
    value["steps"].append({"role": "tool", "content": "x"})
    items = convert_file(written(tmp_path, value, {"trace_id": "x"}, record(CAPTURE)))
    first, problem, last = items
    assert isinstance(first, TraceItem)
    assert isinstance(last, TraceItem)
    assert isinstance(problem, Problem)
    assert "not an opentraces TraceRecord" in problem.message
    assert any("steps[1].tool_calls[1]" in warning for warning in first.warnings)
    assert any("steps[3] has role 'tool'" in warning for warning in first.warnings)


def test_hostile_values_give_problems_or_warnings_never_a_crash(tmp_path: Path) -> None:
    value = record(LEGACY)
    hostile = [
        {**value, "steps": [None, 3, {"role": None}, {"role": "agent", "tool_calls": "x"}]},
        {**value, "steps": [{"role": "agent", "observations": [None, {"source_call_id": 3}]}]},
        {**value, "agent": {"name": 5}, "task": "x", "outcome": [], "system_prompts": None},
        {**value, "steps": []},
    ]
    for item in convert_file(written(tmp_path, *hostile)):
        assert isinstance(item, TraceItem | Problem)
