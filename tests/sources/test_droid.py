"""Factory Droid session files (``~/.factory/sessions/<workspace>/<session>.jsonl``) as traces.

The files are the conformance corpus's (tests/conformance/files/droid, origins and licences in
SOURCES.md there: two projects' test files in Droid's format); a variant changes or adds lines of
one of them to reach a rule it does not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, one_trace, recognise, source_of

DROID = Path(__file__).parents[1] / "conformance" / "files" / "droid"
FAILED = DROID / "agent_sessions_droid_session_store_small.jsonl"
"""An ``Execute`` call whose result is ``Error: Command failed (exit code: 1)``, no flag."""
TWO_REQUESTS = DROID / "agent_sessions_droid_session_store_large.jsonl"
"""Two requests, each answered; the lines chained by ``parentId``."""
PARALLEL = DROID / "espend_ml_llm_multi_tool.jsonl"
"""Two calls of one assistant message; no ``parentId``."""


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def written(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def kinds(item: TraceItem) -> list[str]:
    return [step.type for step in item.trace.steps]


def test_the_header_is_recognised_as_droids_and_a_message_line_alone_is_not() -> None:
    header, message = lines(FAILED)[:2]
    assert recognise(header) == "droid"
    assert recognise(message) != "droid"
    assert recognise({"type": "session_start", "id": "s", "model": "m"}) != "droid"


def test_a_result_that_words_a_failure_is_an_error_and_the_session_has_no_answer() -> None:
    item = one_trace(FAILED)
    trace = item.trace
    assert trace.task.objective == "Run a command"
    assert kinds(item) == ["tool_call", "observation"]
    assert trace.steps[0].tool is not None
    assert trace.steps[0].tool.name == "Execute"
    assert "exit code: 1" in (trace.steps[1].content or "")
    assert trace.metadata.success is False
    assert trace.outcome.result_summary == "failed"
    assert source_of(item)["trace_id"] == "droid_s1"


def _retry() -> dict[str, Any]:
    """The agent's next call after the failed ``Execute``, a line after the result."""
    return {
        "type": "message",
        "id": "m4",
        "parentId": "m3",
        "timestamp": "2025-12-26T23:50:03.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "tu2", "name": "Execute", "input": {}}],
        },
    }


def test_the_next_call_after_a_failed_one_is_its_recovery(tmp_path: Path) -> None:
    item = one_trace(written(tmp_path, [*lines(FAILED), _retry()]))
    assert kinds(item)[-1] == "error_recovery"


def test_a_result_flagged_as_no_error_is_read_as_it_says(tmp_path: Path) -> None:
    records = lines(FAILED)
    records[3]["message"]["content"][0]["is_error"] = False
    item = one_trace(written(tmp_path, [*records, _retry()]))
    assert kinds(item)[-1] == "tool_call"  # no error before it: no recovery


def test_a_later_request_is_the_users_reply_and_the_last_text_the_answer() -> None:
    item = one_trace(TWO_REQUESTS)
    trace = item.trace
    assert trace.task.objective == "Step 1"
    assert kinds(item) == [
        "thought",
        "tool_call",
        "observation",
        "tool_call",  # respond: the text before the user's reply
        "observation",
        "thought",
    ]
    assert trace.metadata.success is True
    assert trace.outcome.result_summary == "Ok"
    assert trace.metadata.created_at.isoformat().startswith("2025-12-26T00:10:00")


def test_a_branch_left_beside_the_last_message_is_not_read(tmp_path: Path) -> None:
    records = lines(TWO_REQUESTS)
    # The second request typed again after going back: a sibling of m6 under m5.
    again = {**records[6], "id": "m6b", "message": {"role": "user", "content": "Step 2, again"}}
    answer = {**records[7], "id": "m7b", "parentId": "m6b"}
    item = one_trace(written(tmp_path, [*records, again, answer]))
    texts = [step.content for step in item.trace.steps]
    assert "Step 2, again" in texts
    assert "Step 2" not in texts


def test_messages_that_name_no_parent_are_read_in_file_order() -> None:
    item = one_trace(PARALLEL)
    names = [s.tool.name for s in item.trace.steps if s.type == "tool_call" and s.tool]
    assert names == ["Read", "LS"]


def test_a_sub_agents_session_names_the_session_that_called_it(tmp_path: Path) -> None:
    records = lines(TWO_REQUESTS)
    records[0] = {**records[0], "callingSessionId": "parent-session"}
    item = one_trace(written(tmp_path, records))
    assert source_of(item)["calling_session"] == "parent-session"


def test_droids_own_lines_are_passed_over_and_an_unknown_type_is_warned(tmp_path: Path) -> None:
    records = lines(TWO_REQUESTS)
    todo = {"type": "todo_state", "id": "t1", "parentId": "m2", "todos": []}
    future = {"type": "future_record", "id": "f1"}
    item = one_trace(written(tmp_path, [*records[:3], todo, *records[3:], future]))
    assert item.trace.outcome.result_summary == "Ok"
    assert any("'future_record'" in warning for warning in item.warnings)
    assert not any("todo_state" in warning for warning in item.warnings)


def test_a_broken_line_is_a_problem_at_its_line_and_the_session_still_reads(
    tmp_path: Path,
) -> None:
    records = lines(TWO_REQUESTS)
    records[2] = {**records[2], "message": {"role": "assistant"}}
    items = convert_file(written(tmp_path, records))
    problems = [i for i in items if isinstance(i, Problem)]
    traces = [i for i in items if isinstance(i, TraceItem)]
    assert len(problems) == 1
    assert problems[0].location.line == 3
    assert problems[0].path == "message.content"
    assert len(traces) == 1


def test_the_users_text_is_read_without_droids_system_reminder() -> None:
    item = one_trace(DROID / "agent_sessions_droid_session_store_schema_drift.jsonl")
    assert item.trace.task.objective == "Do the thing"
