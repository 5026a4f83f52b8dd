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
from tests.sources.helpers import convert_file, one_trace, recognise

KIMI = Path(__file__).parents[1] / "conformance" / "files" / "kimi-code"
SESSION = KIMI / "agent_sessions_kimi_assistant_tools.jsonl"
"""A main agent's journal: eight prompts, reminders Kimi Code injects, a failed ``cat``."""
SUBAGENT = KIMI / "agent_sessions_kimi_subagent_agent-0.jsonl"
"""A subagent's journal: its task, a ``Glob`` and a ``Bash`` call, the answer."""
KIMI_CLI = KIMI / "kimi_code_migration_kimi_cli_1.4_wire.jsonl"
"""Kimi CLI's older wire file: two turns, 28 calls whose arguments ``ToolCallPart``s finish."""
VIS_SAMPLE = KIMI / "kimi_code_vis_sample_main_protocol_1.1_wire.jsonl"
"""Moonshot's sample journal of protocol 1.1: "hi", "hello", no ``llm.request``."""


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_journal_header_is_recognised_and_so_is_kimi_clis() -> None:
    """Kimi Code's header names when the journal began; Kimi CLI's wire file header does not,
    and is read by the same reader; a header with other keys is neither's."""
    assert recognise(lines(SUBAGENT)[0]) == "kimi-code"
    assert recognise({"type": "metadata", "protocol_version": "1.3"}) == "kimi-code"
    assert recognise({"type": "metadata", "protocol_version": "1.3", "x": 1}) != "kimi-code"


def test_kimi_clis_wire_file_is_read_as_the_loop_events_it_holds() -> None:
    """Kimi CLI's ``{timestamp, message: {type, payload}}`` lines: ``TurnBegin`` the user's
    words (text, then parts), ``ContentPart`` thoughts and text, each ``ToolCall`` joined to its
    ``ToolResult``; before, kp refused the file as no trace file it knows."""
    records = lines(KIMI_CLI)
    item = one_trace(KIMI_CLI)
    trace = item.trace
    assert item.warnings == ()
    assert trace.id == "kp:trace:kimi-cli:kimi_code_migration_kimi_cli_1.4_wire"
    assert trace.task.objective == records[1]["message"]["payload"]["user_input"]
    named = [
        r["message"]["payload"]["function"]["name"]
        for r in records[1:]
        if r["message"]["type"] == "ToolCall"
    ]
    calls = [
        s for s in trace.steps if s.type == "tool_call" and s.tool and s.tool.name != "respond"
    ]
    assert [s.tool.name for s in calls if s.tool] == named
    said = [
        s.content
        for s in trace.steps
        if s.type == "observation" and s.tool and s.tool.name == "respond"
    ]
    assert said == [records[21]["message"]["payload"]["user_input"][0]["text"]]
    assert abs(trace.metadata.created_at.timestamp() - records[1]["timestamp"]) < 1e-6
    assert trace.metadata.agent_id == "kimi-cli"
    assert trace.metadata.success is False  # the file ends in the second turn's 13th step


def test_kimi_clis_streamed_arguments_join_the_call_they_finish() -> None:
    """A ``ToolCallPart`` goes on with the step's last call's JSON arguments, though the result
    of an earlier call of the step came between them: the call has its whole arguments."""
    steps = one_trace(KIMI_CLI).trace.steps
    grep = next(s for s in steps if s.type == "tool_call" and s.tool and s.tool.name == "Grep")
    assert grep.input == {
        "pattern": "def _step|notification|claim|publish",
        "path": "src/example_pkg/soul/kimisoul.py",
        "output_mode": "content",
        "-n": True,
    }
    assert all("_raw" not in (s.input or {}) for s in steps if s.type == "tool_call")


def test_a_kimi_cli_result_is_what_the_model_was_given(tmp_path: Path) -> None:
    """Its ``message`` as ``<system>...</system>`` before the output; a failed one's
    ``<system>ERROR: ...</system>``, an evident error the next action recovers from."""
    steps = one_trace(KIMI_CLI).trace.steps
    todo = next(
        s for s in steps if s.type == "observation" and s.tool and s.tool.name == "SetTodoList"
    )
    assert todo.content == "<system>Todo list updated</system>"
    records = lines(KIMI_CLI)
    first = next(r for r in records[1:] if r["message"]["type"] == "ToolResult")
    first["message"]["payload"]["return_value"].update(is_error=True, message="No such file")
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in records))
    steps = one_trace(path).trace.steps
    failed = next(s for s in steps if (s.content or "").startswith("<system>ERROR: No such file"))
    after = steps[steps.index(failed) + 1 :]
    assert next(s for s in after if s.type != "thought").type == "error_recovery"


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


def test_a_journal_that_names_its_model_only_in_its_usage_records_is_of_that_model() -> None:
    """Moonshot's own sample journal of protocol 1.1 makes no ``llm.request``: its
    ``usage.record`` names the model; before, kp named none."""
    item = one_trace(VIS_SAMPLE)
    assert (item.trace.metadata.model_extra or {})["source"]["model"] == "kimi-k2"
    assert item.trace.task.objective == "hi"
    assert item.trace.outcome.result_summary == "hello"


def test_the_model_of_an_llm_request_wins_over_the_alias_a_usage_record_names() -> None:
    """A journal holding both keeps the request's model (``kimi-k2.7-code``), not the
    usage record's alias (``moonshot-ai/kimi-k2.7-code``)."""
    trace = one_trace(SESSION).trace
    assert (trace.metadata.model_extra or {})["source"]["model"] == "kimi-k2.7-code"


def test_an_assistant_message_repeating_its_step_is_no_warning() -> None:
    """Protocol 1.1 writes the reply as loop events and again as an assistant context message:
    nothing is lost, so nothing is said; before, kp warned "1 context message ... passed over"."""
    assert one_trace(VIS_SAMPLE).warnings == ()


def test_an_assistant_message_saying_more_than_its_step_is_passed_over_with_a_warning(
    tmp_path: Path,
) -> None:
    """A text or a call the loop events never gave is lost: the message is still a warning."""
    for change in (
        {"content": [{"type": "text", "text": "hello, and more"}]},
        {"toolCalls": [{"id": "call_1", "name": "Read", "args": {}}]},
    ):
        records = lines(VIS_SAMPLE)
        said = next(r for r in records if r.get("message", {}).get("role") == "assistant")
        said["message"].update(change)
        path = tmp_path / "wire.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in records))
        (warning,) = one_trace(path).warnings
        assert "1 context message of role 'assistant' passed over" in warning
