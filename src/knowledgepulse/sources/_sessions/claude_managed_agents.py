"""Claude Managed Agents' session events (Anthropic's ``/v1/sessions/<id>/events``, 2026).

A session (``{"type": "session", "id": "sesn_...", "agent": {"model": {"id"}, ...},
"created_at"}``) runs one agent; what happens in it is a list of events, ``{"type", "id":
"sevt_...", "processed_at", ...}``, that the API lists and streams. A file holds them one a
line, the session object first where it was kept; or, as the Anthropic SDK's calls are recorded
(LangSmith's wrapper's test data), one ``["client.beta.sessions.<call>", payload]`` a line: the
session ``create``'s session, the events ``stream``'s events (``events.send`` lines, the events
the client sent, come back in the stream and are read there). The conversation is in:

* ``user.message``: the user's words (``content`` blocks), the first the objective;
* ``agent.message``: what the model said (text blocks); ``agent.thinking``: a thought, when it
  holds its text (the API may send it without);
* ``agent.tool_use`` (a tool of the agent's toolset), ``agent.mcp_tool_use`` (an MCP server's,
  ``mcp_server_name``), ``agent.custom_tool_use`` (one the client runs): a call (``id``,
  ``name``, ``input``);
* ``agent.tool_result`` (``tool_use_id``), ``agent.mcp_tool_result`` (``mcp_tool_use_id``),
  ``user.custom_tool_result`` (``custom_tool_use_id``): its result (``content``, ``is_error``);
* ``user.tool_confirmation``: the user allowing a call that waits for it, or refusing it
  (``result: "deny"``, ``deny_message``): the call's failure, ``not approved[: message]``, as
  the other readers read a refused approval (the result the agent then writes says the same);
* ``session.error``: an error met outside a tool (its ``error.message``).

``session.status_*``, ``session.thread_*`` and ``span.*`` events hold no step. Each event is
read as an Anthropic message's block (the steps follow the Anthropic messages' rules); the model
is the session's agent's; success is whether the session ends in the model's answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value, non_empty
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import anthropic
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble, finished
from knowledgepulse.sources._hosted import refusal
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Claude Managed Agents lists a session's events at /v1/sessions/<id>/events"
RECORDED = "client.beta.sessions."
"""How the Anthropic SDK's call a recorded line names begins."""
CALLS = {
    "agent.tool_use": "tool_use",
    "agent.mcp_tool_use": "mcp_tool_use",
    "agent.custom_tool_use": "tool_use",
}
"""Each call event and the Anthropic block it is."""
RESULTS = {
    "agent.tool_result": "tool_use_id",
    "agent.mcp_tool_result": "mcp_tool_use_id",
    "user.custom_tool_result": "custom_tool_use_id",
}
"""Each result event and the field naming the call it answers."""
PASSED_OVER = ("session.status_", "session.thread_", "span.")
EXPECTED = (
    '{"type": "session", "id": "sesn_...", "agent"} then {"type", "id": "sevt_...", '
    '"processed_at", ...} events, as Claude Managed Agents lists them (or the Anthropic SDK\'s '
    'recorded ["client.beta.sessions.<call>", payload] lines)'
)


@dataclass
class _Session:
    """One session as read: its first record, the session object and its messages."""

    first: Record
    session: Mapping[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    errors: set[int] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    """The calls refused: the result the agent writes after is no second result."""
    unread: Counter[str] = field(default_factory=Counter)


def recognises(value: Any) -> bool:
    """Whether a file's first record is a session, a session event or a recorded SDK call."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        return value[0].startswith(RECORDED)
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return False
    if value.get("type") == "session":
        return value["id"].startswith("sesn_") and isinstance(value.get("agent"), dict)
    return value["id"].startswith("sevt_") and "processed_at" in value


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace of a session; an event that cannot be read is a problem, the rest go on."""
    session: _Session | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        if session is None:
            session = _Session(item)
        try:
            _take(session, item.value)
        except PathError as error:
            yield item.problem(error.path, error.message)
    if session is not None:
        yield finished(partial(_finish, session, options), session.first)


def _take(session: _Session, value: Any) -> None:
    """Note one line: a recorded call's payload, the session, or an event."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        if value[0].endswith((".create", ".retrieve")):
            session.session = as_object(value[1])
        elif value[0].endswith((".stream", ".list")):
            try:
                _take(session, value[1])
            except PathError as error:  # located in the recorded line
                raise PathError((1, *error.path), error.message) from None
        return
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PathError((), f"not a session event: {describe_value(value)}; expected {EXPECTED}")
    if value["type"] == "session":
        session.session = value
    elif not value["type"].startswith(PASSED_OVER):
        _event(session, value["type"], value)


def _event(session: _Session, kind: str, value: Mapping[str, Any]) -> None:
    """Note an event of the conversation as the block of an Anthropic message it is."""
    if kind in ("user.message", "agent.message"):
        content = value.get("content")
        if not isinstance(content, list):
            raise PathError(("content",), f"expected blocks, found {describe_value(content)}")
        _add(session, "user" if kind == "user.message" else "assistant", *content)
    elif kind == "agent.thinking":
        if value.get("thinking"):
            _add(session, "assistant", {"type": "thinking", "thinking": value["thinking"]})
    elif kind in CALLS:
        call = {"type": CALLS[kind], "id": _named(value, "id"), "name": _named(value, "name")}
        server = value.get("mcp_server_name")
        _add(session, "assistant", call | {"input": value.get("input"), "server_name": server})
    elif kind in RESULTS:
        call_id = _named(value, RESULTS[kind])
        if call_id not in session.refused:
            _result(session, call_id, value.get("content"), value.get("is_error"))
    elif kind == "user.tool_confirmation":
        reason = value.get("deny_message")
        said = refusal({"approve": value.get("result") != "deny", "reason": reason})
        if said is not None:
            session.refused.add(call_id := _named(value, "tool_use_id"))
            _result(session, call_id, said, True)
    elif kind == "session.error":
        error = value.get("error")
        session.errors.add(len(session.messages))
        said = as_string(as_object(error).get("message")) or describe_value(error)
        session.messages.append({"role": "assistant", "content": said})
    else:
        session.unread[kind] += 1


def _result(session: _Session, call_id: str, content: Any, is_error: Any) -> None:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    _add(session, "user", block | {"is_error": is_error})


def _named(value: Mapping[str, Any], key: str) -> str:
    """An event's id of a call, or its tool's name: required."""
    found = non_empty(value.get(key))
    if found is None:
        raise PathError((key,), f"expected the {value['type']} event's {key}")
    return found


def _add(session: _Session, role: str, *blocks: Any) -> None:
    """Add blocks to the last message when it is the role's (not an error), else a new one."""
    last = session.messages[-1] if session.messages else None
    if last is None or last["role"] != role or len(session.messages) - 1 in session.errors:
        session.messages.append(last := {"role": role, "content": []})
    last["content"].extend(blocks)


def _finish(session: _Session, options: TraceOptions) -> TraceItem:
    builder = StepBuilder()
    told = anthropic.tell(session.messages, builder, errors=session.errors)
    found = session.session
    agent = as_object(found.get("agent"))
    event = _first_event(session.first.value)
    return assemble(
        builder,
        source="claude-managed-agents",
        source_id=f"claude-managed-agents:{found.get('id') or event.get('id')}",
        success=told.answered and builder.final_answer is not None,
        options=options,
        objective=told.objective,
        created_at=iso_time(found.get("created_at")) or iso_time(event.get("processed_at")),
        result_summary=builder.final_answer,
        agent_id=as_string(agent.get("name")),
        framework="claude-managed-agents",
        model=as_string(as_object(agent.get("model")).get("id")),
        warnings=tuple(
            f"{count} event{'s' if count != 1 else ''} of type {kind!r} passed over "
            "(kp reads the messages, thoughts, tool calls, results and errors)"
            for kind, count in sorted(session.unread.items())
        ),
        source_extra={"agent": agent.get("id"), "title": found.get("title")},
        content_hint=CONTENT_HINT,
        location=Location(session.first.location.file, session.first.location.line),
    )


def _first_event(first: Any) -> Mapping[str, Any]:
    """The first line's event (a recorded call's payload), for a file with no session object.

    Empty when the first line is no event (a problem already said).
    """
    if isinstance(first, list):
        return as_object(first[1]) if len(first) == 2 else {}
    return as_object(first)


__all__ = ["CONTENT_HINT", "convert_records", "recognises"]
