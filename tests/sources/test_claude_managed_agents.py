"""Claude Managed Agents' session events (Anthropic's ``/v1/sessions/<id>/events``).

The files are the conformance corpus's (tests/conformance/files/claude-managed-agents, origins
and licences in SOURCES.md there: the Anthropic SDK's calls as LangSmith's wrapper recorded
them); a variant changes lines of one of them to reach a rule it does not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, one_trace, recognise, source_of

MANAGED = Path(__file__).parents[1] / "conformance" / "files" / "claude-managed-agents"
BUILTIN = MANAGED / "langsmith_sdk_anthropic_managed_builtin_tools.jsonl"
"""A built-in ``bash`` call, its result, the answer."""
CUSTOM = MANAGED / "langsmith_sdk_anthropic_managed_custom_tools.jsonl"
"""A client-run ``get_weather`` call, the result the client sent, the answer."""
MCP = MANAGED / "langsmith_sdk_anthropic_managed_mcp_tools.jsonl"
"""An ``exa`` MCP call the user allowed, two thinking events with no text, the answer."""
REJECT = MANAGED / "langsmith_sdk_anthropic_managed_mcp_tools_reject.jsonl"
"""The ``exa`` MCP call refused, then a ``web_fetch`` whose result is a ``document``."""


def lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def events(path: Path) -> list[dict[str, Any]]:
    """The streamed events of a recording, as the API lists them."""
    return [payload for call, payload in lines(path) if call.endswith(".stream")]


def written(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def said(event: dict[str, Any]) -> str:
    return "".join(block["text"] for block in event["content"])


def test_a_recording_an_event_and_a_session_are_recognised() -> None:
    """The recorded SDK calls, a listed event and the session object are read as Managed
    Agents'; a recording of another client call, an event with no ``sevt_`` id are not."""
    (create, session), *_ = lines(BUILTIN)
    assert recognise([create, session]) == "claude-managed-agents"
    assert recognise(session) == "claude-managed-agents"
    assert recognise(events(BUILTIN)[0]) == "claude-managed-agents"
    assert recognise(["client.messages.create", session]) != "claude-managed-agents"
    assert recognise({**events(BUILTIN)[0], "id": "evt_1"}) != "claude-managed-agents"


def test_a_session_is_the_users_words_the_calls_and_the_answer() -> None:
    """The objective is the user's message, the built-in ``bash`` call's observation its
    result, the last message the answer; the model is the session's agent's, the time the
    session's creation, the id the session's."""
    streamed = events(BUILTIN)
    item = one_trace(BUILTIN)
    trace = item.trace
    assert trace.task.objective == said(streamed[2])
    assert [(s.type, s.tool.name if s.tool else None) for s in trace.steps] == [
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    assert trace.steps[1].content == said(streamed[6])
    assert trace.outcome.result_summary == said(streamed[8])
    assert trace.metadata.success is True
    assert source_of(item)["model"] == "claude-sonnet-5"
    assert trace.metadata.created_at.isoformat().startswith("2026-07-06T16:26:33")
    assert trace.id == f"kp:trace:claude-managed-agents:{lines(BUILTIN)[0][1]['id']}"


def test_a_custom_tools_result_is_the_one_the_stream_echoes() -> None:
    """The client's ``user.custom_tool_result`` answers the ``agent.custom_tool_use``; the
    ``events.send`` line that sent it is not read a second time."""
    trace = one_trace(CUSTOM).trace
    assert [s.type for s in trace.steps] == ["tool_call", "observation", "thought"]
    assert trace.steps[1].content == "It's 23°C and sunny in Prague."
    assert trace.task.objective == "What's the weather in Prague?"


def test_an_allowed_mcp_call_keeps_its_server_and_textless_thinking_is_no_step() -> None:
    trace = one_trace(MCP).trace
    assert [s.type for s in trace.steps] == ["tool_call", "observation", "thought"]
    assert trace.steps[0].tool is not None
    assert trace.steps[0].tool.mcp_server == "exa"
    assert str(trace.steps[1].content).startswith("Title: langchain-ai/langsmith-sdk")
    assert trace.metadata.success is True


def test_a_refused_call_fails_not_approved_and_a_fetched_document_is_its_text() -> None:
    """The user's ``deny`` is the MCP call's failure, ``not approved: <deny_message>``, as a
    refused approval reads elsewhere; the agent's own rejection result after it is no second
    observation; the next call recovers. The ``web_fetch`` result is its document's text."""
    streamed = events(REJECT)
    denied = next(e for e in streamed if e["type"] == "user.tool_confirmation")
    fetched = next(e for e in streamed if e["type"] == "agent.tool_result")
    trace = one_trace(REJECT).trace
    assert [(s.type, s.tool.name if s.tool else None) for s in trace.steps] == [
        ("thought", None),
        ("tool_call", "web_search_exa"),
        ("observation", "web_search_exa"),
        ("thought", None),
        ("error_recovery", "web_fetch"),
        ("observation", "web_fetch"),
        ("thought", None),
    ]
    assert trace.steps[2].content == f"not approved: {denied['deny_message']}"
    page, read = fetched["content"][0]["source"]["data"], str(trace.steps[5].content)
    assert read.rstrip("…") == page[: len(read) - 1]
    assert trace.metadata.success is True


def test_listed_events_read_as_the_recording_does(tmp_path: Path) -> None:
    """The events alone (as ``events.list`` gives them, no session object) make the same
    steps; the file names no model, its id is the first event's."""
    recorded = one_trace(REJECT).trace
    item = one_trace(written(tmp_path, events(REJECT)))
    assert item.trace.steps == recorded.steps
    assert item.trace.outcome == recorded.outcome
    assert source_of(item).get("model") is None
    assert item.trace.id == f"kp:trace:claude-managed-agents:{events(REJECT)[0]['id']}"


def test_a_bad_event_is_located_and_the_batch_goes_on(tmp_path: Path) -> None:
    """A call with no name and a line that is no event are problems at their lines (file:line,
    the field); the session's other lines still make its trace."""
    records = lines(BUILTIN)
    at = next(
        n
        for n, r in enumerate(records)
        if r[0].endswith(".stream") and r[1]["type"] == "agent.tool_use"
    )
    del records[at][1]["name"]
    path = written(tmp_path, [*records[:at], 42, *records[at:]])
    stray, nameless, item = convert_file(path)
    assert isinstance(stray, Problem)
    assert isinstance(nameless, Problem)
    assert str(stray).startswith(f"{path}:{at + 1}: not a session event: ")
    assert str(nameless).startswith(
        f"{path}:{at + 2}: [1].name: expected the agent.tool_use event's name"
    )
    assert isinstance(item, TraceItem)
    assert item.trace.outcome.result_summary == said(events(BUILTIN)[8])


def test_a_first_line_that_is_no_recorded_call_is_a_problem_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """A recorded first line that lost its call's name (``[payload]``) is a problem at line 1;
    the session's other lines still make its trace (found by bench/fuzz_loaders.py, seed 5016)."""
    records = lines(REJECT)
    del records[0][0]
    path = written(tmp_path, records)
    problem, item = convert_file(path, source="claude-managed-agents")
    assert isinstance(problem, Problem)
    assert str(problem).startswith(f"{path}:1: ")
    assert isinstance(item, TraceItem)
    assert item.trace.task.objective == said(events(REJECT)[2])


def test_a_session_error_is_an_error_and_a_session_ending_on_it_failed(tmp_path: Path) -> None:
    """``session.error`` is an evident error, never the answer; an unknown event is counted."""
    streamed = events(BUILTIN)[:8]
    error = {"type": "session.error", "id": "sevt_9", "processed_at": None}
    failed = {**error, "error": {"type": "model_overloaded_error", "message": "Overloaded"}}
    item = one_trace(written(tmp_path, [*streamed, failed, {**error, "type": "agent.new"}]))
    assert "Overloaded" in [s.content for s in item.trace.steps]
    assert item.trace.metadata.success is False
    assert item.warnings == (
        "1 event of type 'agent.new' passed over (kp reads the messages, thoughts, tool calls, "
        "results and errors)",
    )
