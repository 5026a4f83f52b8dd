"""Coding agents' own logs: SWE-agent ``.traj``, Claude Code session JSONL, Harbor's ATIF.

The files are the conformance corpus's real ones (tests/conformance/files, origins and licences
in SOURCES.md there); variants change one field of a real file to reach a rule it does not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import convert
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

CORPUS = Path(__file__).parents[1] / "conformance" / "files"
SWE = CORPUS / "swe-agent"
CLAUDE = CORPUS / "claude-code"
ATIF = CORPUS / "atif"


def steps(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def only(items: list[TraceItem | Problem]) -> TraceItem:
    assert [item for item in items if isinstance(item, Problem)] == []
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def tools(trace: ReasoningTrace) -> list[str]:
    return [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("folder", "source"), [(SWE, "swe-agent"), (CLAUDE, "claude-code"), (ATIF, "atif")]
)
def test_each_corpus_file_is_recognised_by_its_own_source_alone(folder: Path, source: str) -> None:
    """Detection: the first record of every real file is claimed by one source, its own."""
    files = [path for path in sorted(folder.iterdir()) if not path.name.endswith(".facts.json")]
    assert files
    for path in files:
        first = next(item for item in read_records(path) if isinstance(item, Record))
        assert recognise(first.value) == source, path.name


def test_a_swe_agent_traj_is_one_run_of_its_commands_ending_in_the_submission() -> None:
    """Each action is a tool call named by its command, with its result; the patch is the answer."""
    path = SWE / "swe-agent__test-repo-i1.traj"
    item = only(convert_file(path))
    trace = item.trace
    document = json.loads(path.read_text())
    assert trace.id == "kp:trace:swe-agent:swe-agent__test-repo-i1"
    assert trace.task.objective.startswith("We're currently solving the following issue")
    assert tools(trace) == ["find_file", "open", "edit", "python", "submit"]
    assert trace.steps[0].type == "thought"
    assert trace.steps[1].input == {"_raw": '"missing_colon.py"'}
    assert trace.steps[2].type == "observation"
    assert trace.outcome.result_summary == document["info"]["submission"][:500]
    assert trace.metadata.success is True
    assert source_of(item)["exit_status"] == "submitted"


def test_a_swe_agent_demonstration_is_not_the_objective() -> None:
    """The user turn marked ``is_demo`` (another task's worked example) is skipped: the issue is."""
    trace = only(convert_file(SWE / "pydicom__pydicom-1458.traj")).trace
    assert trace.task.objective.startswith("We're currently solving the following issue")


def test_a_function_calling_traj_takes_the_arguments_of_its_tool_calls() -> None:
    """SWE-agent 1.x keeps each action's arguments as JSON in the history's ``tool_calls``."""
    trace = only(convert_file(SWE / "6e44b9__sweagenttestrepo-1c2844.traj")).trace
    assert trace.steps[1].tool is not None
    assert trace.steps[1].tool.name == "find_file"
    assert trace.steps[1].input == {"file_name": "missing_colon.py"}
    assert trace.steps[1].latency_ms is not None


def test_a_traj_that_exits_without_submitting_failed_at_a_terminal_error() -> None:
    """Another exit status (out of budget, say) is a terminal error: no recovery, no success."""
    document = json.loads((SWE / "swe-agent__test-repo-i1.traj").read_text())
    document["info"] = {"exit_status": "exit_cost"}
    trace = only(list(convert([document], source="swe-agent"))).trace
    assert trace.metadata.success is False
    assert trace.steps[-1].type == "observation"
    assert "exit_cost" in (trace.steps[-1].content or "")
    assert not any(step.type == "error_recovery" for step in trace.steps)


def test_a_claude_code_session_is_one_trace_of_its_turns() -> None:
    """User and assistant records of one sessionId: first user text, tool uses, the last answer."""
    trace = only(convert_file(CLAUDE / "representative_messages.jsonl")).trace
    assert trace.id == "kp:trace:test_session"
    assert trace.task.objective.startswith("Hello Claude! Can you help me understand")
    assert steps(trace) == [
        ("thought", None),
        ("tool_call", "Edit"),
        ("observation", "Edit"),
        ("thought", None),
        ("tool_call", "Bash"),
        ("observation", "Bash"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary.startswith("Perfect! As you can see")
    assert trace.metadata.success is True


def test_two_sessions_in_one_file_are_two_traces() -> None:
    """One trace per sessionId, in the order the sessions start; summary records hold no turn."""
    records = lines(CLAUDE / "representative_messages.jsonl") + lines(CLAUDE / "session_b.jsonl")
    items = list(convert(records, source="claude-code"))
    assert [item.trace.id for item in items if isinstance(item, TraceItem)] == [
        "kp:trace:test_session",
        "kp:trace:session_b",
    ]
    assert not any(isinstance(item, Problem) for item in items)


def test_a_failed_claude_code_tool_use_then_a_retry_is_an_error_recovery() -> None:
    """A tool_result with ``is_error`` is the failure's observation; the next tool use recovers."""
    records = lines(CLAUDE / "todowrite_examples.jsonl")
    for record in records:
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("tool_use_id") == "toolu_todowrite_001":
                block["is_error"] = True
    trace = only(list(convert(records, source="claude-code"))).trace
    assert [step.type for step in trace.steps][1:5] == [
        "tool_call",
        "observation",
        "thought",
        "error_recovery",
    ]
    assert trace.steps[4].tool is not None
    assert trace.steps[4].tool.name == "TodoWrite"


def test_meta_and_sidechain_records_are_not_turns_of_the_session() -> None:
    """A command caveat (``isMeta``) is not the objective; a sub-agent's records are not steps."""
    records = lines(CLAUDE / "session_b.jsonl")
    meta = {**records[0], "uuid": "meta", "isMeta": True}
    meta["message"] = {"role": "user", "content": "Caveat: the messages below were generated"}
    side = {**records[1], "uuid": "side", "isSidechain": True}
    trace = only(list(convert([meta, side, *records], source="claude-code"))).trace
    assert trace.task.objective.startswith("This is from a different session file")
    assert len(trace.steps) == 1


def test_an_atif_trajectory_maps_reasoning_calls_results_and_the_answer() -> None:
    """Agent steps: reasoning and message thoughts, tool calls joined to their results by id."""
    item = only(convert_file(ATIF / "simple_trajectory.json"))
    trace = item.trace
    assert trace.id == "kp:trace:sess-abc123-simple"
    assert trace.task.objective == "What is the current price of GOOGL?"
    assert steps(trace) == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "financial_search"),
        ("observation", "financial_search"),
        ("thought", None),
    ]
    assert (trace.steps[0].content or "").startswith("User wants current stock price")
    assert trace.steps[2].input == {"ticker": "GOOGL", "metric": "price"}
    assert trace.outcome.result_summary.startswith("Alphabet (GOOGL) is currently trading")
    assert trace.metadata.agent_id == "finance-assistant"
    assert source_of(item)["schema_version"] == "ATIF-v1.4"
    assert trace.metadata.success is True


def test_atif_results_without_a_call_id_answer_the_steps_calls_in_order() -> None:
    """Terminus-2 leaves ``source_call_id`` out: each result is its step's call's observation."""
    trace = only(convert_file(ATIF / "harbor_terminus2_timeout.json")).trace
    observations = [step for step in trace.steps if step.type == "observation"]
    assert [step.tool.name for step in observations if step.tool] == ["bash_command"] * 3
    assert "Hello, world!" in (observations[0].content or "")
    assert trace.metadata.success is False  # it ends on a tool call, with no answer


def test_atif_system_steps_are_not_steps_and_feedback_that_reports_an_error_is_one() -> None:
    """A system step is context; a result answering no call is an error when it says so."""
    document = json.loads((ATIF / "harbor_openhands.json").read_text())
    assert "You are OpenHands agent" not in json.dumps(
        [step.content for step in only(list(convert([document]))).trace.steps]
    )
    agent = next(step for step in document["steps"] if step["source"] == "agent")
    agent["tool_calls"] = []
    agent["observation"] = {"results": [{"content": "Error: the command could not be parsed"}]}
    trace = only(list(convert([document], source="atif"))).trace
    assert [step.type for step in trace.steps][:4] == [
        "thought",
        "observation",
        "thought",
        "error_recovery",
    ]
