"""Block's goose: its session JSONL, ``goose run``'s json and stream-json, its session exports.

No real goose file with calls could be found in a permissively licensed repository (see
docs/integrations.md): these files are built from goose's own code, field by field:
``SessionMetadata`` (crates/goose/src/session/storage.rs), ``Message`` and ``MessageContent``
(crates/goose/src/conversation/message.rs, its test_deserialization JSON), ``tool_result_serde``
(the ``{status, value}`` / ``{status, error}`` results, the older list-of-content value), and the
goose-cli's ``JsonOutput`` and ``StreamEvent`` (crates/goose-cli/src/session/mod.rs).
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

HEADER = {
    "working_dir": "/tmp/proj",
    "description": "List files",
    "schedule_id": None,
    "message_count": 6,
    "total_tokens": 100,
    "input_tokens": 80,
    "output_tokens": 20,
    "accumulated_total_tokens": 100,
    "accumulated_input_tokens": 80,
    "accumulated_output_tokens": 20,
}


def user(text: str, created: int = 1747178328) -> dict[str, Any]:
    return {"role": "user", "created": created, "content": [{"type": "text", "text": text}]}


def call(ident: str, command: str, text: str | None = None) -> dict[str, Any]:
    request = {
        "type": "toolRequest",
        "id": ident,
        "toolCall": {
            "status": "success",
            "value": {"name": "developer__shell", "arguments": {"command": command}},
        },
    }
    words = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "created": 1747178334, "content": [*words, request]}


def result(ident: str, output: str, *, failed: bool = False) -> dict[str, Any]:
    """A tool's response as goose writes it: an error, or the model's and the user's copies."""
    told: dict[str, Any] = (
        {"status": "error", "error": f"-32603: {output}"}
        if failed
        else {
            "status": "success",
            "value": [
                {"type": "text", "text": output, "annotations": {"audience": ["assistant"]}},
                {"type": "text", "text": output, "annotations": {"audience": ["user"]}},
            ],
        }
    )
    return {
        "role": "user",
        "created": 1747178335,
        "content": [{"type": "toolResponse", "id": ident, "toolResult": told}],
    }


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "created": 1747178338, "content": [{"type": "text", "text": text}]}


SESSION = [
    HEADER,
    user("List the files here"),
    call("t1", "lsx", "Let me look."),
    result("t1", "command not found: lsx", failed=True),
    call("t2", "ls"),
    result("t2", "a.py\nb.py"),
    answer("Two files: a.py and b.py."),
]


def written(tmp_path: Path, records: list[Any], name: str = "20250514_101010.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def one_trace(path: Path) -> TraceItem:
    items = convert_file(path)
    (item,) = [i for i in items if isinstance(i, TraceItem)]
    return item


def shape(item: TraceItem) -> list[tuple[str, str | None]]:
    return [(s.type, s.tool.name if s.tool else None) for s in item.trace.steps]


def test_a_session_files_metadata_line_and_a_goose_message_are_recognised_as_gooses() -> None:
    assert recognise(HEADER) == "goose"
    assert recognise(user("hi")) == "goose"
    assert recognise({"role": "user", "content": [{"type": "text", "text": "hi"}]}) != "goose"
    assert recognise({"type": "message", "message": answer("Hi")}) == "goose"


def test_a_session_files_calls_results_failure_and_answer_are_read(tmp_path: Path) -> None:
    """The failed call is an error the next call recovers; the model's copy of a result only."""
    item = one_trace(written(tmp_path, SESSION))
    trace = item.trace
    assert trace.task.objective == "List the files here"
    assert shape(item) == [
        ("thought", None),
        ("tool_call", "developer__shell"),
        ("observation", "developer__shell"),
        ("error_recovery", "developer__shell"),
        ("observation", "developer__shell"),
        ("thought", None),
    ]
    assert trace.steps[4].content == "a.py\nb.py"
    assert trace.outcome.result_summary == "Two files: a.py and b.py."
    assert trace.metadata.success is True
    assert source_of(item)["trace_id"] == "20250514_101010"
    assert item.warnings == ()


def test_a_json_list_of_goose_messages_is_read_with_its_calls(tmp_path: Path) -> None:
    """Before, kp read it as a conversation and warned that its calls were not read."""
    path = tmp_path / "goose.json"
    path.write_text(json.dumps(SESSION[1:]))
    item = one_trace(path)
    assert [kind for kind, _ in shape(item)].count("tool_call") + [
        kind for kind, _ in shape(item)
    ].count("error_recovery") == 2
    assert item.warnings == ()


def test_a_call_goose_could_not_read_is_an_error_and_its_repeated_response_no_step(
    tmp_path: Path,
) -> None:
    bad = {
        "role": "assistant",
        "created": 2,
        "content": [
            {"type": "text", "text": "Trying."},
            {
                "type": "toolRequest",
                "id": "x",
                "toolCall": {"status": "error", "error": "bad json"},
            },
        ],
    }
    repeated = {
        "role": "user",
        "created": 3,
        "content": [
            {"type": "toolResponse", "id": "x", "toolResult": {"status": "error", "error": "bad"}}
        ],
    }
    item = one_trace(written(tmp_path, [user("Go"), bad, repeated, answer("Done.")]))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        ("thought", "Trying."),
        ("observation", "bad json"),
        ("error_recovery", "Done."),
    ]


def test_a_message_hidden_from_the_user_and_the_apps_own_parts_are_passed_over(
    tmp_path: Path,
) -> None:
    summary = {**answer("Summary of earlier turns"), "metadata": {"userVisible": False}}
    note = {
        "role": "assistant",
        "created": 4,
        "content": [
            {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "hi"},
            {"type": "redactedThinking", "data": "xx"},
            {"type": "thinking", "thinking": "Plan it.", "signature": "s"},
        ],
    }
    item = one_trace(written(tmp_path, [user("Go"), summary, note, answer("Done.")]))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        ("thought", "Plan it."),
        ("thought", "Done."),
    ]
    assert item.warnings == ()


def test_a_part_of_a_type_kp_does_not_know_is_warned_about(tmp_path: Path) -> None:
    parts = [{"type": "text", "text": "Ok."}, {"type": "reasoning", "text": "x"}]
    newer = {"role": "assistant", "created": 4, "content": parts}
    item = one_trace(written(tmp_path, [user("Go"), newer]))
    assert item.warnings == (
        "1 goose part of type 'reasoning', a type kp does not know, passed over (a newer goose's?)",
    )


def test_goose_runs_json_output_says_its_status(tmp_path: Path) -> None:
    for status, success in (("completed", True), ("failed", False)):
        path = tmp_path / f"{status}.json"
        messages = [user("Go"), call("t", "ls"), result("t", "a"), answer("One file.")]
        path.write_text(
            json.dumps({"messages": messages, "metadata": {"total_tokens": 9, "status": status}})
        )
        item = one_trace(path)
        assert item.trace.metadata.success is success
        assert source_of(item)["status"] == status


def test_a_stream_joins_a_replys_pieces_and_its_complete_event_is_success(tmp_path: Path) -> None:
    pieces = [
        {"type": "message", "message": {**answer("Two "), "id": "m1"}},
        {"type": "message", "message": {**answer("files."), "id": "m1"}},
    ]
    events = [
        {"type": "model_change", "model": "claude-sonnet-4", "mode": "auto"},
        {"type": "message", "message": {**call("t", "ls"), "id": "m0"}},
        {"type": "notification", "extension_id": "developer", "log": {"message": "x"}},
        {"type": "message", "message": {**result("t", "a\nb"), "id": "r0"}},
        *pieces,
        {"type": "complete", "total_tokens": 42},
    ]
    item = one_trace(written(tmp_path, events, "stream.jsonl"))
    assert item.trace.outcome.result_summary == "Two files."
    assert item.trace.metadata.success is True
    assert source_of(item)["model"] == "claude-sonnet-4"
    cut = one_trace(written(tmp_path, events[:-1], "cut.jsonl"))
    assert cut.trace.metadata.success is False
    assert "no complete event" in cut.warnings[0]
    failed = [*events[:-1], {"type": "error", "error": "rate limited"}, events[-1]]
    errored = one_trace(written(tmp_path, failed, "failed.jsonl"))
    assert errored.trace.metadata.success is False
    assert ("observation", "rate limited") in [(s.type, s.content) for s in errored.trace.steps]


def test_an_export_is_read_with_its_id_name_and_model(tmp_path: Path) -> None:
    session = {
        "id": "20251108_1",
        "working_dir": "/tmp/proj",
        "name": "List files",
        "created_at": "2025-11-08T10:00:00Z",
        "conversation": SESSION[1:],
        "message_count": 6,
        "provider_name": "anthropic",
        "model_config": {"model_name": "claude-sonnet-4", "context_limit": 200000},
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(session, indent=2))
    item = one_trace(path)
    assert source_of(item)["trace_id"] == "20251108_1"
    assert source_of(item)["title"] == "List files"
    assert source_of(item)["model"] == "claude-sonnet-4"
    assert item.trace.metadata.success is True


def test_a_line_that_is_no_message_is_a_problem_and_the_rest_is_read(tmp_path: Path) -> None:
    items = convert_file(written(tmp_path, [*SESSION[:3], [1, 2], *SESSION[3:]]), source="goose")
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(problems) == 1
    assert "not a goose message" in problems[0].message
    assert sum(isinstance(i, TraceItem) for i in items) == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_every_failed_call_the_agent_goes_on_from_is_recovered(failures: list[bool]) -> None:
    """Calls one after another: a failure is recovered by the next call, the last one's by the
    answer; every result is one observation, and the answer is read once."""
    messages: list[Any] = [HEADER, user("Go")]
    for number, failed in enumerate(failures):
        messages += [call(f"t{number}", "run"), result(f"t{number}", "boom", failed=failed)]
    messages.append(answer("Done."))
    with tempfile.TemporaryDirectory() as folder:
        item = one_trace(written(Path(folder), messages))
    steps = item.trace.steps
    assert sum(s.type == "observation" for s in steps) == len(failures)
    assert sum(s.type == "error_recovery" for s in steps) == sum(failures)
    assert [s.content for s in steps].count("Done.") == 1
    assert steps[-1].type == ("error_recovery" if failures[-1] else "thought")
    assert item.trace.outcome.result_summary == "Done."


def test_a_streamed_replys_thinking_pieces_join_and_its_model_is_the_one_it_asked_for(
    tmp_path: Path,
) -> None:
    """As goose 1.50 prints a streamed reply: a piece a line, the model in its inference."""
    inference = {"provider": "openrouter", "requestedModel": "nvidia/nemotron"}

    def piece(kind: str, text: str) -> dict[str, Any]:
        part = {"type": kind, kind: text, **({"signature": ""} if kind == "thinking" else {})}
        message = {
            "id": "gen-1",
            "role": "assistant",
            "created": 1789551821,
            "content": [part],
            "metadata": {"userVisible": True, "agentVisible": True, "inference": inference},
        }
        return {"type": "message", "message": message}

    events = [
        {"type": "message", "message": user("Say hi")},
        piece("thinking", "Greet"),
        piece("thinking", " them."),
        piece("text", "Hi"),
        piece("text", "!"),
        {"type": "complete", "total_tokens": 5357, "input_tokens": 5257, "output_tokens": 100},
    ]
    item = one_trace(written(tmp_path, events, "stream.jsonl"))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        ("thought", "Greet them."),
        ("thought", "Hi!"),
    ]
    assert item.trace.task.objective == "Say hi"
    assert source_of(item)["model"] == "nvidia/nemotron"


def test_a_result_that_says_it_only_in_structured_content_is_read(tmp_path: Path) -> None:
    structured = {"stdout": "a.py", "exit_code": 0}
    response = result("t", "")
    response["content"][0]["toolResult"] = {
        "status": "success",
        "value": {"content": [], "structuredContent": structured, "isError": False},
    }
    item = one_trace(written(tmp_path, [user("Go"), call("t", "ls"), response, answer("a.py")]))
    assert item.trace.steps[1].content == json.dumps(structured)


# goose's session store: the schema goose 1.x creates (crates/goose/src/session/session_manager.rs,
# schema version 5, `SessionStorage::create`), copied statement for statement.
GOOSE_STORE_SCHEMA = """
CREATE TABLE schema_version (
    version INTEGER PRIMARY KEY,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO schema_version (version) VALUES (5);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER,
    schedule_id TEXT,
    recipe_json TEXT,
    user_recipe_values_json TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content_json TEXT NOT NULL,
    created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER,
    metadata_json TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id);
"""
_VISIBLE = json.dumps({"userVisible": True, "agentVisible": True})


def stored(path: Path, sessions: dict[str, list[dict[str, Any]]]) -> Path:
    """A store as goose writes it: a session row each, then its messages (``add_message``)."""
    with closing(sqlite3.connect(path)) as database:
        database.executescript(GOOSE_STORE_SCHEMA)
        for ident, messages in sessions.items():
            database.execute(
                "INSERT INTO sessions (id, name, working_dir) VALUES (?, ?, ?)",
                (ident, f"Session {ident}", "/tmp/proj"),
            )
            for message in messages:
                database.execute(
                    "INSERT INTO messages (session_id, role, content_json, created_timestamp, "
                    "metadata_json) VALUES (?, ?, ?, ?, ?)",
                    (
                        ident,
                        message["role"],
                        json.dumps(message["content"]),
                        message["created"],
                        _VISIBLE,
                    ),
                )
        database.execute("INSERT INTO sessions (id, working_dir) VALUES ('empty', '/tmp')")
        database.commit()
    return path


def test_goose_session_store_gives_a_trace_a_session_read_as_its_messages(tmp_path: Path) -> None:
    path = stored(tmp_path / "sessions.db", {"20251201_1": SESSION[1:], "20251201_2": SESSION[1:4]})
    before = path.read_bytes(), path.stat().st_mtime_ns
    items = convert_file(path)
    traces = [item for item in items if isinstance(item, TraceItem)]
    assert [source_of(t)["trace_id"] for t in traces] == ["20251201_1", "20251201_2"]
    assert shape(traces[0]) == shape(one_trace(written(tmp_path, SESSION)))
    assert traces[0].trace.task.objective == "List the files here"
    assert source_of(traces[0])["title"] == "Session 20251201_1"
    assert traces[0].trace.metadata.success is True
    assert traces[1].trace.metadata.success is False  # a failed call, no answer yet
    assert "model" not in source_of(traces[0])  # before schema version 6, no model_config_json
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # read, never written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20250514_101010.jsonl", "sessions.db"]


def test_a_newer_stores_model_is_kept(tmp_path: Path) -> None:
    """Schema version 6 adds the session's provider_name and model_config_json."""
    path = stored(tmp_path / "sessions.db", {"s1": SESSION[1:]})
    with closing(sqlite3.connect(path)) as database:
        database.execute("ALTER TABLE sessions ADD COLUMN model_config_json TEXT")
        config = json.dumps({"model_name": "claude-sonnet-4-5", "context_limit": 200000})
        database.execute("UPDATE sessions SET model_config_json = ?", (config,))
        database.commit()
    (trace,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    assert source_of(trace)["model"] == "claude-sonnet-4-5"


def test_a_stored_message_goose_cannot_read_back_is_a_problem_at_its_row(tmp_path: Path) -> None:
    path = stored(tmp_path / "sessions.db", {"s1": SESSION[1:]})
    with closing(sqlite3.connect(path)) as database:
        database.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp) "
            "VALUES ('s1', 'user', '{not json', 9), ('s1', 'system', '[]', 9)"
        )
        database.commit()
    items = convert_file(path)
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert len(problems) == 2
    assert "sessions.db:messages:7: " in problems[0]
    assert "not JSON" in problems[0]
    assert "messages:8" in problems[1]
    assert "role" in problems[1]
    (trace,) = [item for item in items if isinstance(item, TraceItem)]
    assert trace.trace.outcome.result_summary == "Two files: a.py and b.py."


def test_another_sqlite_database_is_refused_once_naming_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with closing(sqlite3.connect(path)) as database:
        database.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        database.executemany("INSERT INTO notes (body) VALUES (?)", [("a",), ("b",), ("c",)])
        database.commit()
    for source in ("auto", "goose"):
        items = convert_file(path, source=source)
        assert len(items) == 1
        assert isinstance(items[0], Problem)
        assert "notes" in items[0].message
        assert "SQLite database" in items[0].message
