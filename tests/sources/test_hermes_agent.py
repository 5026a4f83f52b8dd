"""Hermes Agent sessions (``~/.hermes/sessions/session_<id>.json``, ``hermes sessions export``).

The files are the conformance corpus's (tests/conformance/files/hermes-agent, origins and licences
in SOURCES.md there: session logs of real runs); an export line is made here from a real log as
``SessionDB.export_session`` builds one (the store's session row and its messages), since no
export written by a real run was found under a licence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, one_trace, recognise, source_of

HERMES = Path(__file__).parents[1] / "conformance" / "files" / "hermes-agent"
HOOKS = HERMES / "hermes_agent_54laowang_weixin_supervisor_hooks.json"
"""Two failed calls, each followed by another; a user turn headed by Hermes' system note."""
REVIEW = HERMES / "hermes_agent_54laowang_weixin_readme_review.json"
"""Ends in Hermes' background review prompt, after the answer."""
MERGE = HERMES / "hermes_agent_54laowang_weixin_fork_merge.json"
"""Cut: ends on a tool's result."""
LARGE = HERMES / "agent_sessions_hermes_large.json"
"""An assistant message whose reasoning is both its ``reasoning`` and ``reasoning_content``."""


def log(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    assert isinstance(document, dict)
    return document


def contents(item: TraceItem) -> list[str]:
    return [step.content or "" for step in item.trace.steps]


def exported(session: dict[str, Any]) -> dict[str, Any]:
    """A session log as ``hermes sessions export`` writes the same session: a store row."""
    messages = [
        {"id": n, "session_id": session["session_id"], "timestamp": 1777900000.0 + n, **m}
        for n, m in enumerate(session["messages"])
    ]
    return {
        "id": session["session_id"],
        "source": session["platform"],
        "model": session["model"],
        "started_at": 1777900000.0,
        "ended_at": None,
        "end_reason": None,
        "parent_session_id": None,
        "message_count": len(messages),
        "messages": messages,
    }


def test_a_session_log_is_hermes_agents_not_an_openai_chat_row() -> None:
    assert recognise(log(HOOKS)) == "hermes-agent"
    assert recognise(exported(log(HOOKS))) == "hermes-agent"
    assert recognise({"messages": log(HOOKS)["messages"]}) != "hermes-agent"


def test_a_failed_call_is_an_error_and_the_next_call_its_recovery() -> None:
    item = one_trace(HOOKS)
    steps = item.trace.steps
    failed = [n for n, s in enumerate(steps) if "File not found" in (s.content or "")]
    assert failed
    after = steps[failed[0] + 1 :]
    assert next(s.type for s in after if s.type != "thought") == "error_recovery"
    assert sum(s.type == "error_recovery" for s in steps) == 2


def test_hermes_own_texts_are_no_turns() -> None:
    """The compaction summary is no step; the system note is cut from the user's words."""
    item = one_trace(HOOKS)
    said = contents(item)
    assert not any("CONTEXT COMPACTION" in text for text in said)
    assert not any("[System note:" in text for text in said)
    assert "继续" in said  # the user's word after the note, a reply


def test_the_background_review_is_left_out_and_the_answer_before_it_stands() -> None:
    item = one_trace(REVIEW)
    assert not any("Review the conversation above" in text for text in contents(item))
    assert item.trace.metadata.success is True
    assert (item.trace.outcome.result_summary or "").startswith("✅ **已补充完整")


def test_the_curators_turns_after_the_review_prompt_are_left_out_too(tmp_path: Path) -> None:
    session = log(REVIEW)
    curator = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "skills_list", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"success": true, "skills": []}'},
        {"role": "assistant", "content": "Nothing to save."},
    ]
    path = tmp_path / "session_review.json"
    path.write_text(json.dumps({**session, "messages": [*session["messages"], *curator]}))
    item = one_trace(path)
    assert "skills_list" not in {s.tool.name for s in item.trace.steps if s.tool}
    assert (item.trace.outcome.result_summary or "").startswith("✅ **已补充完整")


def test_a_session_that_ends_on_a_result_has_no_answer() -> None:
    item = one_trace(MERGE)
    assert item.trace.metadata.success is False
    assert item.trace.steps[-1].type == "observation"


def test_the_reasoning_hermes_writes_under_two_names_is_one_thought() -> None:
    (message,) = [m for m in log(LARGE)["messages"] if m.get("reasoning_content")]
    assert message["reasoning"] == message["reasoning_content"]
    said = contents(one_trace(LARGE))
    assert said.count(message["reasoning"]) == 1
    assert message["content"] in said  # the text beside it, still its own thought


def test_the_envelope_is_the_sessions() -> None:
    item = one_trace(HOOKS)
    assert item.trace.id == "kp:trace:20260505_011145_3db412"
    assert (
        item.trace.metadata.created_at.isoformat() == "2026-05-04T21:11:01.254741+00:00"
    )  # its session_start
    found = source_of(item)
    assert (found["model"], found["platform"]) == ("GLM-5", "weixin")
    assert item.trace.metadata.framework == "hermes-agent"


def test_an_export_line_reads_as_its_session_log(tmp_path: Path) -> None:
    session = log(HOOKS)
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(exported(session)) + "\n")
    item = one_trace(path)
    from_log = one_trace(HOOKS)
    assert [s.type for s in item.trace.steps] == [s.type for s in from_log.trace.steps]
    assert item.trace.id == from_log.trace.id
    assert item.trace.metadata.created_at.timestamp() == 1777900000.0
    assert source_of(item)["platform"] == "weixin"


def test_a_broken_message_is_a_problem_at_its_place_and_the_next_session_reads(
    tmp_path: Path,
) -> None:
    good = exported(log(MERGE))
    bad = exported(log(MERGE))
    bad["messages"][5]["tool_calls"] = [{"function": {"name": {}}}]
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    items = convert_file(path)
    problems = [i for i in items if isinstance(i, Problem)]
    traces = [i for i in items if isinstance(i, TraceItem)]
    assert len(traces) == 1
    assert len(problems) == 1
    assert problems[0].location.line == 1
    assert problems[0].path.startswith("messages[5]")


def test_an_export_rows_calls_as_json_text_and_its_flagged_summary_read_as_a_logs(
    tmp_path: Path,
) -> None:
    """The store keeps ``tool_calls`` as JSON text and flags a compaction's summary row."""
    line = exported(log(MERGE))
    for message in line["messages"]:
        if message.get("tool_calls"):
            message["tool_calls"] = json.dumps(message["tool_calls"])
        if str(message.get("content")).startswith("[CONTEXT COMPACTION"):
            message["content"] = "Earlier turns were compacted."
            message["_compressed_summary"] = 1
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(line) + "\n")
    item, from_log = one_trace(path), one_trace(MERGE)
    steps = [(s.type, s.tool.name if s.tool else None) for s in item.trace.steps]
    assert steps == [(s.type, s.tool.name if s.tool else None) for s in from_log.trace.steps]


def test_a_command_that_exited_non_zero_failed_unless_hermes_says_it_is_no_error() -> None:
    """``git push``'s 128 and a timeout's 124 are errors the next call recovers; ``grep``'s 1,
    which Hermes' ``exit_code_meaning`` calls ``not an error``, is none."""
    steps = one_trace(REVIEW).trace.steps

    def after(text: str) -> str:
        at = next(n for n, s in enumerate(steps) if text in (s.content or ""))
        return next(s.type for s in steps[at + 1 :] if s.type != "thought")

    assert after("has no upstream branch") == "error_recovery"
    assert after("[Command timed out after 10s]") == "error_recovery"
    assert after("No matches found (not an error)") == "tool_call"
