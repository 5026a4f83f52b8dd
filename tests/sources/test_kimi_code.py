"""Kimi Code's wire journals (``~/.kimi-code/sessions/*/*/agents/<agent>/wire.jsonl``) as traces.

The files are the conformance corpus's (tests/conformance/files/kimi-code, origins and licences in
SOURCES.md there: a real session's journals); a variant changes lines of one of them to reach a
rule it does not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, recognise

KIMI = Path(__file__).parents[1] / "conformance" / "files" / "kimi-code"
SESSION = KIMI / "agent_sessions_kimi_assistant_tools.jsonl"
"""A main agent's journal: eight prompts, reminders Kimi Code injects, a failed ``cat``."""
SUBAGENT = KIMI / "agent_sessions_kimi_subagent_agent-0.jsonl"
"""A subagent's journal: its task, a ``Glob`` and a ``Bash`` call, the answer."""


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def one_trace(path: Path) -> TraceItem:
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem), item
    return item


def test_the_journal_header_is_recognised_and_kimi_clis_header_is_not() -> None:
    """Kimi Code's header names when the journal began; Kimi CLI's wire file header does not."""
    header = lines(SUBAGENT)[0]
    assert recognise(header) == "kimi-code"
    assert recognise({"type": "metadata", "protocol_version": "1.3"}) != "kimi-code"


def test_a_subagents_journal_is_its_task_thoughts_calls_results_and_answer() -> None:
    """Each think part is a thought, each call joined to its result, the last text the answer."""
    trace = one_trace(SUBAGENT).trace
    assert trace.task.objective.startswith("<git-context>")
    calls = [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool]
    assert calls == ["Glob", "Bash"]
    assert [s.type for s in trace.steps[:3]] == ["thought", "tool_call", "observation"]
    assert (trace.steps[5].content or "").strip() == "3124"
    assert trace.outcome.result_summary is not None
    assert trace.outcome.result_summary.startswith("**Exact count:** 3,124 Swift files")
    assert trace.metadata.success is True
    source = (trace.metadata.model_extra or {})["source"]
    assert source["model"] == "kimi-k2.7-code"


def test_a_failed_result_is_an_error_the_agents_next_action_recovers_from(tmp_path: Path) -> None:
    """``result.isError`` makes the result an error: what the agent says next is its recovery."""
    steps = one_trace(SESSION).trace.steps
    failed = next(n for n, s in enumerate(steps) if "No such file" in (s.content or ""))
    recovery = next(s for s in steps[failed + 1 :] if s.type != "thought")
    assert recovery.type == "error_recovery"
    records = lines(SESSION)
    for record in records:
        if record.get("event", {}).get("type") == "tool.result":
            record["event"]["result"]["isError"] = False
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in records))
    assert all(s.type != "error_recovery" for s in one_trace(path).trace.steps)


def test_reminders_kimi_code_injects_are_no_words_of_the_user() -> None:
    """A user message of ``origin.kind`` ``injection`` is passed over; real prompts are replies."""
    trace = one_trace(SESSION).trace
    said = [
        s.content or ""
        for s in trace.steps
        if s.type == "observation" and s.tool is not None and s.tool.name == "respond"
    ]
    assert "run ls command" in said
    assert not any("<system-reminder>" in text for text in said)


def test_a_journal_whose_model_never_answered_is_a_problem_at_its_header(tmp_path: Path) -> None:
    """Prompts whose model calls were all cancelled leave no step: one problem, no trace."""
    kept = [
        line
        for line in lines(SUBAGENT)
        if line["type"] != "context.append_loop_event" or line["event"]["type"] == "step.begin"
    ]
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in kept))
    (problem,) = convert_file(path)
    assert isinstance(problem, Problem)
    assert problem.location.line == 1
    assert "no step" in problem.message


def test_a_tool_call_without_its_id_is_a_problem_at_its_line_and_the_rest_reads(
    tmp_path: Path,
) -> None:
    """A broken line is reported where it is; the journal's other lines still make the trace."""
    records = lines(SUBAGENT)
    at = next(n for n, r in enumerate(records) if r.get("event", {}).get("type") == "tool.call")
    del records[at]["event"]["toolCallId"]
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in records))
    problem, item = convert_file(path)
    assert isinstance(problem, Problem)
    assert problem.location.line == at + 1
    assert isinstance(item, TraceItem)
