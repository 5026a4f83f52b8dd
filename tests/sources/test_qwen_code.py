"""Qwen Code sessions (``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``) as traces.

The files are the conformance corpus's (tests/conformance/files/gemini-cli/qwen_code_*, written
by the real CLI with its model scripted; origins in SOURCES.md there); a variant changes their
records to reach a rule they do not show. Before, kp took them for Claude Code sessions (the
same ``uuid`` / ``parentUuid`` / ``sessionId`` fields) and read no trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources._registry import detect
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file

GEMINI = Path(__file__).parents[1] / "conformance" / "files" / "gemini-cli"
ERRORS = GEMINI / "qwen_code_0.24.4_tool_errors.jsonl"
"""``list_directory`` and a ``read_file`` fail, ``read_file`` again, the answer."""
CONTINUED = GEMINI / "qwen_code_0.24.4_continued.jsonl"
"""Two prompts (the second with ``--continue``); an ``edit`` refused, then the answer."""


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def one_trace(items: list[TraceItem | Problem]) -> ReasoningTrace:
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    return item.trace


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_session_is_read_as_gemini_cli_not_claude_code() -> None:
    """Its records have Claude Code's identity fields; their Gemini parts tell them apart."""
    assert [source.name for source in detect(lines_of(ERRORS)[0])] == ["gemini-cli"]


def test_a_failed_call_is_an_error_and_the_next_call_its_recovery() -> None:
    trace = one_trace(convert_file(ERRORS))
    assert trace.task.objective == "How many lines does notes.txt have?"
    assert kinds(trace) == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "list_directory"),
        ("observation", "list_directory"),
        ("error_recovery", "read_file"),
        ("observation", "read_file"),
        ("error_recovery", "read_file"),
        ("observation", "read_file"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three."
    assert trace.metadata.success is True
    assert trace.metadata.agent_id == "qwen-code"
    assert trace.id == "kp:trace:01c70336-c0e5-4542-a8c1-e55cf812797a"


def test_a_second_prompt_is_the_users_reply() -> None:
    trace = one_trace(convert_file(CONTINUED))
    assert trace.task.objective == "What is in todo.md?"
    replies = [
        step.content
        for step in trace.steps
        if step.type == "observation" and step.tool and step.tool.name == "respond"
    ]
    assert replies == ["Add a third item, 'ship', to it."]


def test_a_rewound_branch_is_not_read(tmp_path: Path) -> None:
    """A record whose parent is not the last one's (``/rewind``, then a new answer) starts the
    active branch; the answer it replaced stays in the file, out of the chain."""
    lines = lines_of(ERRORS)
    answer = lines[-1]
    assert answer["type"] == "assistant"
    again = {**answer, "uuid": "again", "message": {"role": "model", "parts": [{"text": "3."}]}}
    trace = one_trace(convert_file(write_lines(tmp_path / "s.jsonl", [*lines, again])))
    assert trace.outcome.result_summary == "3."
    assert not any("one, two and three" in (step.content or "") for step in trace.steps)


def test_a_record_written_again_under_its_uuid_adds_its_parts(tmp_path: Path) -> None:
    lines = lines_of(ERRORS)
    more = {**lines[-1], "message": {"role": "model", "parts": [{"text": " Done."}]}}
    trace = one_trace(convert_file(write_lines(tmp_path / "s.jsonl", [*lines, more])))
    assert trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three. Done."


def test_a_user_record_the_cli_wrote_is_no_reply(tmp_path: Path) -> None:
    """A ``notification`` (``provenance: system``) is the CLI's prompt, not the user's words."""
    lines = lines_of(ERRORS)
    note = {
        **lines[0],
        "uuid": "note",
        "parentUuid": lines[-1]["uuid"],
        "subtype": "notification",
        "provenance": "system",
        "message": {"role": "user", "parts": [{"text": "A background task finished."}]},
    }
    trace = one_trace(convert_file(write_lines(tmp_path / "s.jsonl", [*lines, note])))
    assert not any(step.tool and step.tool.name == "respond" for step in trace.steps)
    assert trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three."


def test_a_line_that_is_no_record_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    lines = lines_of(ERRORS)
    items = convert_file(write_lines(tmp_path / "s.jsonl", [*lines[:3], {"x": 1}, *lines[3:]]))
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert "not a Qwen Code session record" in problem.message
    assert problem.location.line == 4
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    assert item.trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three."


def test_parts_that_are_no_list_are_reported_at_their_record(tmp_path: Path) -> None:
    lines = lines_of(ERRORS)
    lines[3] = {**lines[3], "message": {"role": "model", "parts": "text"}}
    items = convert_file(write_lines(tmp_path / "s.jsonl", lines))
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert problem.location.line == 4
    assert problem.path == "message.parts"
    assert [item for item in items if isinstance(item, TraceItem)]


def test_what_qwen_p_prints_is_claude_codes_stream_json_of_qwen_code() -> None:
    """``qwen -p --output-format stream-json`` prints Claude Code's records; its ``init`` names
    ``qwen_code_version``, so the trace is Qwen Code's, not Claude Code's."""
    path = GEMINI.parent / "claude-code" / "qwen_code_0.24.4_stream_tool_errors.jsonl"
    (item,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    trace = item.trace
    assert trace.metadata.agent_id == "qwen-code"
    assert trace.metadata.framework == "qwen-code"
    assert [name for kind, name in kinds(trace) if kind in ("tool_call", "error_recovery")] == [
        "list_directory",
        "read_file",
        "read_file",
    ]
    assert trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three."


def test_an_older_session_without_provenance_is_read_alike() -> None:
    """Qwen Code 0.7 writes no ``provenance``: a ``user`` record with no subtype is the user's."""
    trace = one_trace(convert_file(GEMINI / "qwen_code_0.7.1_no_provenance.jsonl"))
    assert trace.task.objective == "How many lines does notes.txt have?"
    assert [kind for kind, _ in kinds(trace)].count("error_recovery") == 1
    assert trace.outcome.result_summary == "notes.txt has 3 lines: one, two and three."


def test_the_files_inlined_for_an_at_path_are_no_part_of_the_objective() -> None:
    """``@notes.txt``: the CLI inlines the file after the typed text, between its markers."""
    trace = one_trace(convert_file(GEMINI / "qwen_code_0.24.4_at_file.jsonl"))
    assert trace.task.objective == "How many lines has @notes.txt?"
    assert trace.outcome.result_summary == "It has 3 lines: one, two and three."


def test_a_chat_save_list_loses_its_inlined_files_alike(tmp_path: Path) -> None:
    """The same parts in a ``/chat save`` list of contents (Gemini CLI's, Qwen Code's): the
    markers with no end close at the content's end."""
    contents = [
        {
            "role": "user",
            "parts": [
                {"text": "Sum up @a.md"},
                {"text": "\n--- Content from referenced files ---"},
                {"text": "\nContent from @a.md:\n"},
                {"text": "# A"},
            ],
        },
        {"role": "model", "parts": [{"text": "A heading."}]},
    ]
    path = tmp_path / "checkpoint-a.json"
    path.write_text(json.dumps(contents))
    trace = one_trace(convert_file(path))
    assert trace.task.objective == "Sum up @a.md"


def test_the_api_failing_is_an_error_and_a_session_ending_in_it_failed() -> None:
    """No message says so: the ``qwen-code.api_error`` telemetry record is the one trace of it."""
    trace = one_trace(convert_file(GEMINI / "qwen_code_0.24.4_api_error.jsonl"))
    assert trace.task.objective == "Say hi."
    assert [(step.type, step.content) for step in trace.steps] == [
        ("observation", "[API Error: 400 The model `qwen3-coder-plus` does not exist]")
    ]
    assert trace.metadata.success is False


def test_a_retried_api_error_is_recovered_by_the_next_reply(tmp_path: Path) -> None:
    lines = lines_of(ERRORS)
    failed = {
        **lines[1],
        "uuid": "failed",
        "type": "system",
        "subtype": "ui_telemetry",
        "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_error", "error_message": "429"}},
    }
    failed.pop("message", None)
    lines[1] = {**lines[1], "parentUuid": "failed"}
    failed["parentUuid"] = lines[0]["uuid"]
    trace = one_trace(
        convert_file(write_lines(tmp_path / "s.jsonl", [lines[0], failed, *lines[1:]]))
    )
    assert trace.steps[0].content == "[API Error: 429]"
    # The next action recovers it: the model's call after its thoughts (list_directory).
    assert kinds(trace)[1:5] == [
        ("thought", None),
        ("thought", None),
        ("error_recovery", "list_directory"),
        ("observation", "list_directory"),
    ]
    assert trace.metadata.success is True


def test_a_failed_stream_result_says_its_error_message() -> None:
    """Qwen Code's failed ``result`` holds ``error: {message}`` (Claude Code's, ``errors``)."""
    path = GEMINI.parent / "claude-code" / "qwen_code_0.24.4_stream_api_error.jsonl"
    (item,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    last = item.trace.steps[-1]
    assert last.content == "[API Error: 400 The model `qwen3-coder-plus` does not exist]"
    assert item.trace.metadata.success is False


def test_a_type_or_subtype_that_is_no_text_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    """Found by fuzzing: a list where the CLI writes a name raised ``TypeError`` (unhashable)."""
    for key, record in (("type", 3), ("subtype", 1)):
        lines = lines_of(ERRORS)
        lines[record][key] = []
        items = convert_file(write_lines(tmp_path / f"{key}.jsonl", lines))
        assert items  # what the file holds is read or said, never a Python error
        assert all(isinstance(item, TraceItem | Problem) for item in items)
