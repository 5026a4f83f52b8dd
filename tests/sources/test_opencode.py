"""OpenCode: ``opencode export``'s sessions, lists of its messages, ``opencode run``'s JSON events.

Two real ``opencode run --format json`` outputs are in the conformance corpus
(``tests/conformance/files/opencode``). No real export with calls could be found in a permissively
licensed repository: the exports here are built from OpenCode's own schema, field by field
(``packages/opencode/src/session/message-v2.ts``: ``User`` and ``Assistant`` infos, the
``TextPart``, ``ReasoningPart``, ``ToolPart`` with its ``ToolState*``, ``RetryPart``,
``CompactionPart``, ``StepStartPart`` and ``StepFinishPart``; ``src/cli/cmd/export.ts``'s
``{info, messages, todos}``; ``src/cli/cmd/run.ts``'s ``{type, timestamp, sessionID, ...}``).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

CORPUS = Path(__file__).parents[1] / "conformance" / "files" / "opencode"
SESSION_ID = "ses_6aade4081ffe216ygZUgcUQdR1"
_TOKENS = {"input": 9640, "output": 12, "reasoning": 0, "cache": {"write": 0, "read": 9600}}


def user(text: str, ident: str = "msg_u1", **part: Any) -> dict[str, Any]:
    info = {
        "id": ident,
        "sessionID": SESSION_ID,
        "role": "user",
        "time": {"created": 1758069899229},
        "agent": "build",
        "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
    }
    text_part = {"id": f"prt_{ident}", "type": "text", "text": text, **part}
    return {"info": info, "parts": [text_part]}


def assistant(ident: str, *parts: dict[str, Any], **info: Any) -> dict[str, Any]:
    told = {
        "id": ident,
        "sessionID": SESSION_ID,
        "role": "assistant",
        "time": {"created": 1758069900000, "completed": 1758069901481},
        "parentID": "msg_u1",
        "modelID": "claude-sonnet-4-5",
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/tmp/proj", "root": "/tmp/proj"},
        "cost": 0,
        "tokens": _TOKENS,
        "finish": "stop",
        **info,
    }
    bounds = [{"type": "step-start"}, *parts, {"type": "step-finish", "reason": "stop"}]
    return {"info": told, "parts": [{"id": f"prt_{n}", **p} for n, p in enumerate(bounds)]}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words, "time": {"start": 1, "end": 2}}


def tool(call: str, name: str, given: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool", "callID": call, "tool": name, "state": {"input": given, **state}}


def done(output: str) -> dict[str, Any]:
    time = {"start": 1, "end": 2}
    return {"status": "completed", "output": output, "title": "", "metadata": {}, "time": time}


def failed(error: str) -> dict[str, Any]:
    return {"status": "error", "error": error, "time": {"start": 1, "end": 2}}


MESSAGES = [
    user("List the Python files here"),
    assistant(
        "msg_a1",
        {"type": "reasoning", "text": "I should look.", "time": {"start": 1, "end": 2}},
        tool("toolu_1", "bash", {"command": "lsx"}, failed("lsx: command not found")),
        text("That failed; trying ls."),
        tool("toolu_2", "bash", {"command": "ls *.py"}, done("a.py\nb.py")),
        finish="tool-calls",
    ),
    assistant("msg_a2", text("Two files: a.py and b.py.")),
]
EXPORT = {
    "info": {
        "id": SESSION_ID,
        "slug": "quiet-river",
        "projectID": "global",
        "directory": "/tmp/proj",
        "title": "List the Python files",
        "version": "1.18.21",
        "time": {"created": 1758069899000, "updated": 1758069901481},
    },
    "messages": MESSAGES,
    "todos": [],
}


def written(tmp_path: Path, value: Any, name: str = "session.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=2))
    return path


def lines(tmp_path: Path, events: list[Any], name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


def one_trace(path: Path) -> TraceItem:
    (item,) = [i for i in convert_file(path) if isinstance(i, TraceItem)]
    return item


def shape(item: TraceItem) -> list[tuple[str, str | None]]:
    return [(s.type, s.tool.name if s.tool else None) for s in item.trace.steps]


def test_an_export_a_message_and_a_run_event_are_recognised_as_opencodes() -> None:
    assert recognise(EXPORT) == "opencode"
    assert recognise(MESSAGES[0]) == "opencode"
    event = {"type": "text", "timestamp": 1, "sessionID": "ses_1", "part": text("Hi")}
    assert recognise(event) == "opencode"
    assert recognise({"info": {"id": "x"}, "parts": []}) != "opencode"  # no role


def test_an_export_is_read_with_its_calls_failure_recovery_and_answer(tmp_path: Path) -> None:
    item = one_trace(written(tmp_path, EXPORT))
    trace = item.trace
    assert trace.task.objective == "List the Python files here"
    assert shape(item) == [
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
        ("error_recovery", "bash"),  # the next action after the failure
        ("observation", "bash"),
        ("thought", None),
    ]
    assert trace.steps[2].content == "lsx: command not found"
    assert trace.steps[5].content == "a.py\nb.py"
    assert trace.outcome.result_summary == "Two files: a.py and b.py."
    assert trace.metadata.success is True
    source = source_of(item)
    assert source["trace_id"] == SESSION_ID
    assert source["title"] == "List the Python files"
    # The model as OpenCode writes it (modelID), not joined to its provider: no name of kp's.
    assert (source["model"], source["provider"]) == ("claude-sonnet-4-5", "anthropic")
    assert item.warnings == ()


def test_a_json_list_of_messages_is_read_as_the_export_is(tmp_path: Path) -> None:
    listed = one_trace(written(tmp_path, MESSAGES, "messages.json"))
    exported = one_trace(written(tmp_path, EXPORT, "export.json"))
    assert [(s.type, s.content) for s in listed.trace.steps] == [
        (s.type, s.content) for s in exported.trace.steps
    ]
    assert source_of(listed)["trace_id"] == SESSION_ID


def test_an_assistants_error_fails_the_session_and_is_an_error_step(tmp_path: Path) -> None:
    error = {"name": "APIError", "data": {"message": "Overloaded", "isRetryable": True}}
    broken = assistant("msg_a2", text("Half an"), error=error)
    item = one_trace(written(tmp_path, {**EXPORT, "messages": [*MESSAGES[:2], broken]}))
    assert item.trace.metadata.success is False
    assert ("observation", "Overloaded") in [(s.type, s.content) for s in item.trace.steps]


def test_a_call_the_run_left_running_is_an_interrupted_error(tmp_path: Path) -> None:
    running = {"status": "running", "time": {"start": 1}}
    cut = assistant("msg_a1", tool("toolu_9", "bash", {"command": "sleep 999"}, running))
    item = one_trace(written(tmp_path, [MESSAGES[0], cut, assistant("msg_a2", text("Gave up."))]))
    steps = [(s.type, s.content) for s in item.trace.steps]
    assert ("observation", "[Tool execution was interrupted]") in steps
    assert steps[-1] == ("error_recovery", "Gave up.")


def test_a_retried_model_call_is_an_error_the_next_step_recovers(tmp_path: Path) -> None:
    retry = {
        "type": "retry",
        "attempt": 1,
        "error": {"name": "APIError", "data": {"message": "rate limited", "isRetryable": True}},
        "time": {"created": 5},
    }
    item = one_trace(written(tmp_path, [MESSAGES[0], assistant("msg_a1", retry, text("Done."))]))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        ("observation", "rate limited"),
        ("error_recovery", "Done."),
    ]


def test_what_opencode_wrote_itself_and_a_compaction_are_passed_over(tmp_path: Path) -> None:
    read_for_user = user("Called the Read tool with: a.py", "msg_u0", synthetic=True)
    request = {"info": user("", "msg_u2")["info"], "parts": [{"type": "compaction", "auto": True}]}
    summary = assistant("msg_s", text("Summary of the work so far"), summary=True)
    messages = [read_for_user, *MESSAGES[:2], request, summary, MESSAGES[2]]
    item = one_trace(written(tmp_path, messages))
    contents = [s.content for s in item.trace.steps]
    assert item.trace.task.objective == "List the Python files here"
    assert "Summary of the work so far" not in contents
    assert item.trace.outcome.result_summary == "Two files: a.py and b.py."
    assert item.warnings == ()


def test_a_part_of_a_type_kp_does_not_know_is_warned_about(tmp_path: Path) -> None:
    newer = assistant("msg_a2", {"type": "citation", "url": "x"}, text("Ok."))
    item = one_trace(written(tmp_path, [MESSAGES[0], newer]))
    assert item.warnings == (
        "1 OpenCode part of type 'citation', a type kp does not know, passed over "
        "(a newer OpenCode's?)",
    )


def run_events(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events ``opencode run --format json`` prints for the assistant's messages."""
    kinds = {"step-start": "step_start", "step-finish": "step_finish", "tool": "tool_use"}
    return [
        {
            "type": kinds.get(part["type"], part["type"]),
            "timestamp": 1788952656451 + n,
            "sessionID": SESSION_ID,
            "part": {**part, "messageID": message["info"]["id"], "sessionID": SESSION_ID},
        }
        for n, message in enumerate(messages)
        if message["info"]["role"] == "assistant"
        for part in message["parts"]
    ]


def test_a_runs_events_are_its_steps_and_an_error_event_fails_it(tmp_path: Path) -> None:
    events = run_events(MESSAGES)
    item = one_trace(lines(tmp_path, events))
    assert shape(item) == shape(one_trace(written(tmp_path, EXPORT)))
    assert item.trace.metadata.success is True
    assert item.trace.task.objective == "opencode run"  # the prompt is not printed
    assert item.warnings[0].startswith("the objective is a placeholder: opencode run")
    closing_events = [
        {"type": "done", "timestamp": 3, "sessionID": SESSION_ID, "reason": "idle"},
        {"type": "permission", "timestamp": 4, "sessionID": SESSION_ID},
    ]
    closed = one_trace(lines(tmp_path, [*events, *closing_events], "closed.jsonl"))
    assert closed.warnings[1:] == (
        "1 OpenCode event of type 'permission', a type kp does not know, passed over "
        "(a newer OpenCode's?)",
    )
    error = {"name": "UnknownError", "data": {"message": "tool not in request.tools"}}
    errored = [*events, {"type": "error", "timestamp": 2, "sessionID": SESSION_ID, "error": error}]
    failing = one_trace(lines(tmp_path, errored, "failed.jsonl"))
    assert failing.trace.metadata.success is False
    said = [(s.type, s.content) for s in failing.trace.steps]
    assert ("observation", "tool not in request.tools") in said


def test_a_line_that_is_no_event_is_a_problem_and_the_rest_is_read(tmp_path: Path) -> None:
    events = run_events(MESSAGES)
    path = lines(tmp_path, [*events[:3], [1, 2], {"type": "text", "part": 7}, *events[3:]])
    items = convert_file(path, source="opencode")
    problems = [i.message for i in items if isinstance(i, Problem)]
    assert len(problems) == 2
    assert "not an opencode run event" in problems[0]
    assert "expected the event's part" in problems[1]
    assert sum(isinstance(i, TraceItem) for i in items) == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_every_failed_call_the_agent_goes_on_from_is_recovered(failures: list[bool]) -> None:
    """A step a call: a failure is recovered by the next call, the last one's by the answer;
    every result is one observation, and the answer is read once."""
    messages = [MESSAGES[0]]
    for number, fails in enumerate(failures):
        state = failed("boom") if fails else done("ok")
        messages.append(assistant(f"msg_{number}", tool(f"t{number}", "bash", {}, state)))
    messages.append(assistant("msg_end", text("Done.")))
    with tempfile.TemporaryDirectory() as folder:
        item = one_trace(written(Path(folder), {**EXPORT, "messages": messages}))
    steps = item.trace.steps
    assert sum(s.type == "observation" for s in steps) == len(failures)
    assert sum(s.type == "error_recovery" for s in steps) == sum(failures)
    assert [s.content for s in steps].count("Done.") == 1
    assert item.trace.outcome.result_summary == "Done."


# OpenCode's SQLite store, the tables kp reads as session/session.sql.ts declares them (drizzle's
# `sqliteTable`: `Timestamps` is `time_created` and `time_updated`; `data` JSON as text).
OPENCODE_STORE_SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL);
CREATE TABLE session (
    id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id), workspace_id TEXT,
    parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
    version TEXT NOT NULL, share_url TEXT, cost REAL NOT NULL DEFAULT 0,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL
);
CREATE TABLE message (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id),
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL
);
CREATE TABLE part (
    id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id),
    session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
    data TEXT NOT NULL
);
"""


def stored(path: Path, messages: list[dict[str, Any]]) -> Path:
    """A store as OpenCode writes it: the session, each message's info and each part, ids apart.

    Rows are inserted newest first, so that the order read is the store's, not the rowids'."""
    with closing(sqlite3.connect(path)) as database:
        database.executescript(OPENCODE_STORE_SCHEMA)
        database.execute("INSERT INTO project VALUES ('global', '/tmp/proj')")
        database.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
            "time_updated) VALUES (?, 'global', 'quiet-river', '/tmp/proj', ?, '1.18.21', 1, 2)",
            (SESSION_ID, "List the Python files"),
        )
        for number, message in reversed(list(enumerate(messages))):
            info = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID")}
            ident = message["info"]["id"]
            database.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (ident, SESSION_ID, 1000 + number, 1000 + number, json.dumps(info)),
            )
            for index, part in reversed(list(enumerate(message["parts"]))):
                data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                database.execute(
                    "INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)",
                    (f"prt_{ident}_{index:03}", ident, SESSION_ID, json.dumps(data)),
                )
        database.commit()
    return path


def test_opencodes_store_is_read_as_its_sessions_in_its_own_order(tmp_path: Path) -> None:
    path = stored(tmp_path / "opencode.db", MESSAGES)
    before = path.read_bytes()
    item = one_trace(path)
    exported = one_trace(written(tmp_path, EXPORT, "export.json"))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        (s.type, s.content) for s in exported.trace.steps
    ]
    assert source_of(item)["trace_id"] == SESSION_ID
    assert source_of(item)["title"] == "List the Python files"
    assert item.trace.metadata.success is True
    assert path.read_bytes() == before
    with closing(sqlite3.connect(path)) as database:
        database.execute("UPDATE part SET data = 'oops' WHERE id = 'prt_msg_a2_001'")
        database.commit()
    items = convert_file(path)
    problems = [item for item in items if isinstance(item, Problem)]
    assert len(problems) == 1
    assert "not a JSON object" in problems[0].message
    assert "opencode.db:part:" in str(problems[0].location)


def test_an_error_whose_message_is_the_apis_json_body_is_told_by_its_message() -> None:
    """OpenCode's ``UnknownError`` passes the model API's JSON body on as its message: the error
    step says the body's message, as a person reads it, not the JSON around it."""
    path = CORPUS / "mantis_opencode_stream_denied.jsonl"
    event = json.loads(path.read_text().splitlines()[1])
    body = json.loads(event["error"]["data"]["message"])  # the file's message is JSON text
    (item,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    assert [(step.type, step.content) for step in item.trace.steps] == [
        ("observation", body["message"])
    ]
    assert body["message"].startswith("Tool call validation failed:")
