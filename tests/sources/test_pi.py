"""Pi's sessions and the Hub's Session Trace Simple Format: what the corpus files do not show.

The corpus (tests/conformance/files/pi) holds version 1 and version 3 sessions that never branch;
the shapes here are those Pi's ``SessionManager`` writes (a tree the user went back in, a
compaction, an API error, a stopped reply, the user's own ``!`` command) and those the Hub's
Session Trace Simple Format page gives (its example; llama.cpp's web UI export, a tree under
``currNode``). No real STS file was found in a public repository. The corpus's ``pi --mode json``
streams are takopi's, with no header (Pi before 0.45): the header Pi prints since is here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.records import Problem
from knowledgepulse.sources._envelope import UNDATED
from knowledgepulse.sources._steps import RESPOND
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from tests.sources.helpers import convert_file, recognise

HEADER = {
    "type": "session",
    "version": 3,
    "id": "019e88ac-c864-7eb4-8ee0-85cd75c8dcc6",
    "timestamp": "2026-06-02T14:11:25.412Z",
    "cwd": "/srv/project",
}


def entry(id_: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": id_,
        "parentId": parent,
        "timestamp": "2026-06-02T14:11:30.000Z",
        "message": message,
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def said(*blocks: dict[str, Any], stop: str = "stop", **more: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "stopReason": stop, **more}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def call(id_: str, name: str = "bash", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": id_, "name": name, "arguments": arguments}


def result(id_: str, output: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": id_,
        "toolName": "bash",
        "content": [{"type": "text", "text": output}],
        "isError": error,
    }


def read(tmp_path: Path, lines: list[dict[str, Any]], name: str = "s.jsonl") -> ReasoningTrace:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem), item
    return item.trace


def shape(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_session_reads_its_calls_results_and_answer(tmp_path: Path) -> None:
    trace = read(
        tmp_path,
        [
            HEADER,
            {"type": "model_change", "id": "m", "parentId": None, "provider": "a", "modelId": "b"},
            entry("u", "m", user("count the files")),
            entry(
                "a", "u", said({"type": "thinking", "thinking": "ls"}, call("c1"), stop="toolUse")
            ),
            entry("r", "a", result("c1", "3 files")),
            entry("f", "r", said(text("There are 3 files."), model="claude-opus-4-7")),
        ],
    )
    assert trace.task.objective == "count the files"
    assert shape(trace) == [
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "There are 3 files."
    assert trace.metadata.success is True
    assert trace.id == f"kp:trace:{HEADER['id']}"


def test_a_branched_session_begins_at_its_first_message_not_its_header() -> None:
    """Pi's author's session branched from another (``branchedFrom``): the header was written
    at 00:53 when the branch was made, the turns it copied ran from 22:41 the evening before."""
    path = Path(__file__).parents[1] / "conformance/files/pi/pi_mono_v1_before_compaction.jsonl"
    header = json.loads(path.read_text().splitlines()[0])
    assert header["timestamp"] == "2025-12-09T00:53:29.825Z"
    assert "branchedFrom" in header
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.created_at.isoformat() == "2025-12-08T22:41:05.306000+00:00"


@pytest.mark.parametrize("name", ["takopi_pi_stream_success.jsonl", "takopi_pi_stream_error.jsonl"])
def test_a_fixtures_placeholder_time_leaves_the_trace_undated(name: str) -> None:
    """takopi's streams stamp their messages ``"timestamp": 1`` (and ``2``): seconds after 1970,
    no run's date. The trace is undated, as a stream with no time is (before, 00:00:01)."""
    path = Path(__file__).parents[1] / "conformance/files/pi" / name
    records = [json.loads(line) for line in path.read_text().splitlines()]
    stamps = {r["message"]["timestamp"] for r in records if isinstance(r.get("message"), dict)}
    assert min(stamps) == 1
    assert max(stamps) < 60
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.created_at == UNDATED


def test_a_session_begins_at_its_header_when_its_messages_come_after(tmp_path: Path) -> None:
    trace = read(
        tmp_path, [HEADER, entry("a", None, user("Hi.")), entry("b", "a", said(text("Hello.")))]
    )
    assert trace.metadata.created_at.isoformat() == "2026-06-02T14:11:25.412000+00:00"


def test_the_branch_read_is_the_one_from_the_last_entry(tmp_path: Path) -> None:
    """The user went back to the request (``/tree``) and asked again: the first try is left."""
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("fix the bug")),
            entry("a1", "u", said(call("c1", cmd="rm -rf build"), stop="toolUse")),
            entry("r1", "a1", result("c1", "removed")),
            entry("f1", "r1", said(text("Removed the build folder."))),
            {
                "type": "branch_summary",
                "id": "b",
                "parentId": "u",
                "fromId": "f1",
                "summary": "Tried removing build.",
            },
            entry("a2", "b", said(call("c2", "read", path="a.py"), stop="toolUse")),
            entry("r2", "a2", result("c2", "def f(): ...")),
            entry("f2", "r2", said(text("Fixed f in a.py."))),
        ],
    )
    assert shape(trace) == [("tool_call", "read"), ("observation", "read"), ("thought", None)]
    assert trace.outcome.result_summary == "Fixed f in a.py."


def test_a_version_1_session_is_every_entry_in_order(tmp_path: Path) -> None:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    plain = [
        {"type": "message", "message": user("say hi")},
        {"type": "message", "message": said(text("hi"))},
    ]
    trace = read(tmp_path, [header, *plain])
    assert trace.task.objective == "say hi"
    assert trace.outcome.result_summary == "hi"


def test_a_failed_result_is_an_error_the_next_call_recovers(tmp_path: Path) -> None:
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("run the tests")),
            entry("a", "u", said(call("c1", cmd="pytest"), stop="toolUse")),
            entry("r", "a", result("c1", "Command exited with code 1", error=True)),
            entry("a2", "r", said(call("c2", cmd="pytest -x"), stop="toolUse")),
            entry("r2", "a2", result("c2", "1 passed")),
            entry("f", "r2", said(text("Tests pass."))),
        ],
    )
    kinds = [step.type for step in trace.steps]
    assert kinds == ["tool_call", "observation", "error_recovery", "observation", "thought"]
    assert (trace.steps[1].content or "").startswith("Command exited with code 1")


def test_an_api_error_is_an_error_and_its_unrun_calls_are_left_out(tmp_path: Path) -> None:
    """``stopReason: error`` (the stream ``terminated``): what it wrote is no answer, no call."""
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("edit the file")),
            entry(
                "a",
                "u",
                said(
                    text("Editing now."),
                    call("c1", "edit"),
                    stop="error",
                    errorMessage="terminated",
                ),
            ),
        ],
    )
    assert [step.type for step in trace.steps] == ["thought", "observation"]
    assert "terminated" in (trace.steps[-1].content or "")
    assert trace.metadata.success is False
    assert trace.outcome.result_summary != "Editing now."


def test_a_reply_the_user_stopped_is_no_answer_and_no_error(tmp_path: Path) -> None:
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("explain the code")),
            entry("a", "u", said(text("The code does"), stop="aborted", errorMessage="aborted")),
        ],
    )
    assert [step.type for step in trace.steps] == ["thought"]
    assert trace.metadata.success is False


def test_a_request_the_user_took_back_is_not_the_objective(tmp_path: Path) -> None:
    """The user stopped the reply before it said anything and typed another request."""
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u0", None, user("/mode")),
            entry("a0", "u0", said(stop="aborted", errorMessage="Request was aborted")),
            entry("u", "a0", user("read the docs")),
            entry("f", "u", said(text("Done."))),
        ],
    )
    assert trace.task.objective == "read the docs"
    assert RESPOND not in [step.tool.name for step in trace.steps if step.tool]


def test_the_users_own_command_and_extension_messages_are_no_turn(tmp_path: Path) -> None:
    bash = {"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 0}
    custom = {"role": "custom", "customType": "x", "content": "note", "display": True}
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("list the files")),
            entry("b", "u", bash),
            entry("c", "b", custom),
            entry("f", "c", said(text("a.py"))),
        ],
    )
    assert trace.task.objective == "list the files"
    assert shape(trace) == [("thought", None)]


def test_a_later_user_turn_is_a_reply(tmp_path: Path) -> None:
    trace = read(
        tmp_path,
        [
            HEADER,
            entry("u", None, user("plan it")),
            entry("a", "u", said(text("Plan: A then B. Go?"))),
            entry("u2", "a", user("yes")),
            entry("f", "u2", said(text("Done."))),
        ],
    )
    assert shape(trace) == [("tool_call", RESPOND), ("observation", RESPOND), ("thought", None)]
    assert trace.steps[1].content == "yes"


def test_a_message_that_is_not_one_is_a_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [HEADER, entry("u", None, user("hi")), entry("a", "u", "oops")]  # type: ignore[arg-type]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (problem,) = convert_file(path)
    assert isinstance(problem, Problem)
    assert problem.location.line == 3
    assert "not a Pi message" in problem.message


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (HEADER, "pi"),
        ({**HEADER, "harness": "swarmlab"}, "pi"),  # the Hub asks a harness to name itself
        ({"type": "session", "harness": "my-agent", "id": "abc123"}, "sts"),
        ({"type": "session", "id": "x"}, None),
    ],
)
def test_pi_and_sts_headers_are_told_apart(header: dict[str, Any], expected: str | None) -> None:
    assert recognise(header) == expected


def printed(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message as ``pi --mode json`` prints it: a start, a delta, its end."""
    update = {"type": "message_update", "message": message, "assistantMessageEvent": {}}
    return [
        {"type": "message_start", "message": message},
        update,
        {"type": "message_end", "message": message},
    ]


def test_a_printed_stream_with_its_header_reads_the_messages_at_their_end(tmp_path: Path) -> None:
    """Since Pi 0.45 ``pi --mode json`` prints the session's header first, then its events."""
    asked = said(text("Counting."), call("c1", cmd="ls"), stop="toolUse")
    trace = read(
        tmp_path,
        [
            HEADER,
            {"type": "agent_start"},
            {"type": "turn_start"},
            *printed(user("count the files")),
            *printed(asked),
            {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {}},
            {
                "type": "tool_execution_end",
                "toolCallId": "c1",
                "toolName": "bash",
                "result": {"content": [text("3 files")]},
                "isError": False,
            },
            *printed(result("c1", "3 files")),
            {"type": "turn_end", "message": asked, "toolResults": [result("c1", "3 files")]},
            *printed(said(text("There are 3 files."))),
            {"type": "agent_end", "messages": [user("count the files"), asked]},
        ],
    )
    assert trace.task.objective == "count the files"
    assert shape(trace) == [
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "There are 3 files."
    assert trace.metadata.success is True
    assert trace.id == f"kp:trace:{HEADER['id']}"
    assert trace.model_dump()["metadata"]["source"]["printed"] == "pi --mode json"


def test_a_tool_run_no_message_holds_is_read_from_its_execution_events(tmp_path: Path) -> None:
    """A stream cut to some events (no header, no ``toolResult`` message): the runs stand in."""
    trace = read(
        tmp_path,
        [
            {"type": "agent_start"},
            *printed(user("write notes")),
            {"type": "tool_execution_start", "toolCallId": "w", "toolName": "write", "args": {}},
            {
                "type": "tool_execution_end",
                "toolCallId": "w",
                "toolName": "write",
                "result": {"content": [text("permission denied")]},
                "isError": True,
            },
            {"type": "tool_execution_start", "toolCallId": "w2", "toolName": "write", "args": {}},
            {
                "type": "tool_execution_end",
                "toolCallId": "w2",
                "toolName": "write",
                "isError": False,
            },
            {"type": "message_end", "message": said(text("Wrote notes.md."))},
        ],
        name="run.jsonl",
    )
    assert [step.type for step in trace.steps] == [
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert trace.steps[1].content == "permission denied"
    assert trace.id == "kp:trace:run"
    assert trace.outcome.result_summary == "Wrote notes.md."


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ({"type": "agent_start"}, "pi"),
        ({"type": "agent_start", "agent": "other"}, None),  # Pi's carries nothing else
        ({"type": "turn_start"}, None),
    ],
)
def test_a_headerless_stream_is_pis_by_its_bare_agent_start(
    first: dict[str, Any], expected: str | None
) -> None:
    assert recognise(first) == expected


STS_EXAMPLE: list[dict[str, Any]] = [
    {"type": "session", "harness": "my-agent", "id": "abc123", "name": "what time is it"},
    {"type": "message", "message": {"role": "user", "content": "what time is it?"}},
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": "",
            "toolCalls": [{"id": "t1", "function": {"name": "get_time", "arguments": "{}"}}],
        },
    },
    {"type": "message", "message": {"role": "tool", "toolCallId": "t1", "content": "15:00Z"}},
    {"type": "message", "message": {"role": "assistant", "content": "it is 15:00 UTC"}},
]
"""The example of the Hub's page (docs/hub/session-traces-format.md)."""


def test_the_sts_example_of_the_hubs_page(tmp_path: Path) -> None:
    trace = read(tmp_path, STS_EXAMPLE)
    assert trace.task.objective == "what time is it?"
    assert shape(trace) == [
        ("tool_call", "get_time"),
        ("observation", "get_time"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "it is 15:00 UTC"
    assert trace.id == "kp:trace:abc123"


def test_an_sts_assistants_reasoning_is_a_thought(tmp_path: Path) -> None:
    lines = [
        STS_EXAMPLE[0],
        {"type": "message", "message": {"role": "system", "content": "Be exact."}},
        {"type": "message", "message": {"role": "user", "content": "Fix the bug."}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": "Done.",
                "reasoningContent": "inspect first",
                "timestamp": 1_751_809_805_123,
                "model": "qwen",
            },
        },
    ]
    trace = read(tmp_path, lines)
    assert [step.content for step in trace.steps] == ["inspect first", "Done."]
    assert trace.metadata.created_at.year == 2025


def test_an_sts_tree_is_read_from_its_current_node(tmp_path: Path) -> None:
    """llama.cpp's web UI: a regenerated reply is a sibling; ``currNode`` names the one shown."""
    conv = "9f13a7d0"

    def node(id_: str, parent: str | None, role: str, content: str, kind: str = "text") -> Any:
        message = {"id": id_, "convId": conv, "type": kind, "role": role, "content": content}
        return {"type": "message", "message": {**message, "parent": parent}}

    lines = [
        {"type": "session", "harness": "llama.app", "currNode": "a2", "id": conv, "name": "Q&A"},
        node("root", None, "system", "", "root"),
        node("u", "root", "user", "Why can't I return a reference to a local?"),
        node("a1", "u", "assistant", "It would dangle."),
        node("a2", "u", "assistant", "The frame is gone: error E0515."),
    ]
    trace = read(tmp_path, lines)
    assert trace.outcome.result_summary == "The frame is gone: error E0515."
    assert [step.content for step in trace.steps] == ["The frame is gone: error E0515."]
