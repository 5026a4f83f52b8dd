"""OpenCode (anomalyco/opencode, formerly sst/opencode): its session exports and run output.

Checked against OpenCode's own source, anomalyco/opencode: ``packages/opencode/src/session/
message-v2.ts`` at 007a9409bafe, ``src/cli/cmd/export.ts`` at 07fa81066b42 and
``src/cli/cmd/run.ts`` at 00f9806cfed2 (its ``emit``: the events, ``done`` included).

OpenCode keeps a message as its ``info`` and its ``parts`` (``message-v2.ts``).
``info.role`` is ``user`` or ``assistant``; an assistant's ``info`` names its ``modelID``,
``providerID``, ``finish`` (the model's finish reason) and, when the turn failed,
its ``error`` (``{name, data: {message}}``: ``ProviderAuthError``, ``APIError``,
``MessageAbortedError``, ``MessageOutputLengthError``...). A part is typed: ``text`` (``text``,
``synthetic`` when OpenCode wrote it, ``ignored``), ``reasoning``, ``tool`` (``callID``,
``tool``, ``state``: ``{status: completed, input, output}``, ``{status: error, input, error}``,
or ``pending`` / ``running`` when the run stopped before the tool did), ``file``, ``agent``,
``subtask``, ``retry`` (a failed call to the model, retried: its ``error``), ``compaction``,
``step-start`` and ``step-finish`` (one model call's bounds, its tokens and cost), ``snapshot``
and ``patch``.

Four files hold such messages:

- OpenCode's store, ``~/.local/share/opencode/opencode.db`` (SQLite, ``session/session.sql.ts``):
  a ``session`` row a session (``id``, ``title``, ``directory``), a ``message`` row a message
  (``session_id``, ``time_created``, ``data``: its ``info`` without the ids), a ``part`` row a part
  (``message_id``, ``data``), read as OpenCode reads them back, a trace a session with a message;

- what ``opencode export <session>`` prints: ``{info, messages: [{info, parts}], todos}``, the
  session's ``info`` holding its ``id``, ``title`` and ``directory``;
- a JSON list of ``{info, parts}`` (what OpenCode's server answers for a session's messages,
  ``GET /session/<id>/message``, and what its SDK returns);
- what ``opencode run --format json`` prints, one event a line, each ``{type, timestamp,
  sessionID}`` with the ``part`` it is about: ``step_start``, ``step_finish``, ``text``,
  ``reasoning``, ``tool_use`` (a tool part once it completed or failed), then ``error``
  (``error``: the session's) and, in newer OpenCode, ``done``. Only the assistant's parts are
  printed, not the prompt, so such a run has no objective of its own.

The messages are read as Anthropic Messages (the Anthropic reader): the first user text is the
objective, a later one the user's reply to the assistant text before it; ``reasoning`` is a
thought, the last assistant text after its last call the answer; a tool part is a call and its
observation, an evident error when its state is ``error`` or the run left it ``pending`` or
``running`` (OpenCode tells the model "[Tool execution was interrupted]"; the next action is its
``error_recovery``). An assistant message's ``error`` and a ``retry`` part are evident errors
outside a tool, as is a run's ``error`` event.

Passed over knowingly: text OpenCode wrote itself (``synthetic``, ``ignored``: a file's contents
read for the user, a reminder), files, agent mentions, subtasks (the ``task`` call that runs one
is read), step bounds, snapshots and patches, and a context compaction (the user message that
asks for it and the assistant's ``summary: true`` reply). A part of another type, and an event
of another type, are passed over with a warning. Success: the last assistant message has no
``error`` and the session ends in its answer (a run: and no ``error`` event).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import epoch_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records._sqlite import ROW_KEY, TABLE_KEY, holds
from knowledgepulse.sources._chat._text import api_error_text, one_of
from knowledgepulse.sources._envelope import PLACEHOLDER_OBJECTIVE, TraceOptions, assemble, finished
from knowledgepulse.sources._sessions import pi
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "OpenCode keeps every session's messages and their parts; opencode export prints one"
MAPPING = {
    "steps": (
        "the messages' parts (an export's messages, the store's message and part rows, a list "
        "of {info, parts}, the part of each event opencode run --format json prints)"
    ),
    "id": (
        "the session's id (an export's info.id, the store's session id, the messages' or events' "
        "sessionID)"
    ),
    "success": (
        "the last assistant message has no error and ends in an answer; a run: and no error event"
    ),
    "created_at": "the first message's time.created (an event's timestamp)",
}
ROLES = frozenset({"user", "assistant"})
PARTS = frozenset(
    {
        "text",
        "reasoning",
        "tool",
        "file",
        "agent",
        "subtask",
        "retry",
        "compaction",
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
    }
)
"""The part types OpenCode writes (``MessageV2.Part``)."""
_PASSED = frozenset(
    {"file", "agent", "subtask", "compaction", "step-start", "step-finish", "snapshot", "patch"}
)
EVENTS = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use", "error", "done"})
"""The events ``opencode run --format json`` prints."""
_PART_EVENTS = EVENTS - {"error", "done"}
INTERRUPTED = "[Tool execution was interrupted]"
"""What OpenCode tells the model of a call the run left pending or running."""
EXPORT = "opencode export"
MESSAGES = "OpenCode's messages ({info, parts})"
RUN = "opencode run --format json"
STORE = "OpenCode's store (opencode.db)"
_STORE_TABLES = {
    "session": frozenset({"id", "title"}),
    "message": frozenset({"id", "session_id", "time_created", "data"}),
    "part": frozenset({"id", "message_id", "data"}),
}
"""The tables and columns of OpenCode's SQLite store kp reads (``session/session.sql.ts``)."""
NO_PROMPT = (
    f"{PLACEHOLDER_OBJECTIVE}: opencode run --format json does not print the prompt it was "
    "given (the session's export, opencode export <session>, keeps it; kp reads that too)"
)


def is_message(value: Any) -> bool:
    """Whether a value is OpenCode's message with its parts: ``{info: {role, ...}, parts}``."""
    if not isinstance(value, dict) or set(value) != {"info", "parts"}:
        return False
    info, parts = value["info"], value["parts"]
    return (
        isinstance(info, dict)
        and one_of(info.get("role"), ROLES)
        and isinstance(info.get("id"), str)
        and isinstance(parts, list)
        and all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in parts)
    )


def _is_export(value: Any) -> bool:
    """``opencode export``'s document: the session's ``info`` and its ``messages``."""
    return (
        isinstance(value, dict)
        and {"info", "messages"} <= set(value) <= {"info", "messages", "todos"}
        and isinstance(value["info"], dict)
        and isinstance(value["info"].get("id"), str)
        and isinstance(value["messages"], list)
        and all(is_message(message) for message in value["messages"][:1])
    )


def _is_event(value: Any) -> bool:
    """A line of ``opencode run --format json``: a typed event of a session, at a time."""
    if not isinstance(value, dict) or not one_of(value.get("type"), EVENTS):
        return False
    stamp = value.get("timestamp")
    return (
        isinstance(value.get("sessionID"), str)
        and isinstance(stamp, int)
        and not isinstance(stamp, bool)
        and (isinstance(value.get("part"), dict) or value["type"] in ("error", "done"))
    )


def _is_store(value: Any) -> bool:
    """An SQLite database's schema, holding the tables of OpenCode's store."""
    return holds(value, _STORE_TABLES)


def recognises(value: Any) -> bool:
    """Whether a file's first record is one of OpenCode's (see the module's docstring)."""
    return is_message(value) or _is_event(value) or _is_export(value) or _is_store(value)


@dataclass
class _Session:
    """One session as read: its first record, its messages with the record each came from."""

    first: Record
    form: str
    ident: str | None = None
    title: str | None = None
    messages: list[tuple[Record, Any]] = field(default_factory=list)
    errors: list[tuple[Record, str]] = field(default_factory=list)
    """Errors of the session outside its messages (a run's ``error`` events), after them."""
    created: Any = None
    unknown: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Parts and events of a type kp does not know: (``part`` or ``event``, the type)."""


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace of each export a file holds; one of a file's messages or run events."""
    session: _Session | None = None
    records = iter(records)
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = item.value
        if session is None and _is_store(value):
            yield from _stored(records, options)
            return
        if _is_export(value):
            info = value["info"]
            whole = _Session(item, EXPORT, as_string(info.get("id")), non_empty(info.get("title")))
            whole.created = _created(info)
            whole.messages = [(item, message) for message in value["messages"]]
            yield from _told(whole, options)
            continue
        if session is None:
            session = _Session(item, RUN if _is_event(value) else MESSAGES)
        said = _take(session, item)
        if said is not None:
            yield item.problem((), said)
    if session is not None:
        yield from _told(session, options)


def _stored(
    rows: Iterator[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace of each session of OpenCode's store that holds a message, as OpenCode reads it.

    A message's ``data`` is its ``info`` without the ``id`` and ``sessionID`` its row holds, a
    part's its part without its ids; messages in the order of their ``time_created`` and id,
    parts in their id's (``MessageV2``'s ``hydrate``). A row whose ``data`` is no JSON object is
    a problem at its row, and its session is read without it.
    """
    sessions: dict[str, tuple[Record, Mapping[str, Any]]] = {}
    messages: dict[str, list[tuple[tuple[Any, str], Record, dict[str, Any]]]] = {}
    parts: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for item in rows:
        if isinstance(item, Problem):
            yield item
            continue
        table, row = item.value.get(TABLE_KEY), item.value.get(ROW_KEY)
        if table not in _STORE_TABLES or not isinstance(row.get("id"), str):
            continue
        if table == "session":
            sessions[row["id"]] = (item, row)
            continue
        data = _data(row)
        if data is None:
            yield item.problem((), "data: not a JSON object; OpenCode cannot read the row back")
        elif table == "message":
            info = {**data, "id": row["id"], "sessionID": row.get("session_id")}
            order = (row.get("time_created") or 0, row["id"])
            found = messages.setdefault(str(row.get("session_id")), [])
            found.append((order, item, {"info": info, "parts": []}))
        else:
            parts.setdefault(str(row.get("message_id")), []).append((row["id"], data))
    for ident, told in messages.items():
        told.sort(key=lambda found: found[0])
        record, header = sessions.get(ident, (told[0][1], {}))
        session = _Session(record, STORE, ident, non_empty(header.get("title")))
        session.created = header.get("time_created") or told[0][0][0]
        for _, item, message in told:
            own = sorted(parts.get(message["info"]["id"], []), key=lambda part: part[0])
            message["parts"] = [part for _, part in own]
            session.messages.append((item, message))
        yield from _told(session, options)


def _data(row: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        data = json.loads(row["data"]) if isinstance(row.get("data"), str) else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _created(info: Mapping[str, Any]) -> Any:
    time = info.get("time")
    return time.get("created") if isinstance(time, dict) else None


def _take(session: _Session, record: Record) -> str | None:
    """Note one record; returns why it is no record of OpenCode's, if it is not."""
    value = record.value
    if session.form == MESSAGES:
        if not is_message(value):
            return (
                f"not an OpenCode message: {describe_value(value)}; expected {{info: {{id, role}}, "
                "parts: [...]}"
            )
        session.ident = session.ident or as_string(value["info"].get("sessionID"))
        session.created = session.created or _created(value["info"])
        session.messages.append((record, value))
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):
        return f"not an opencode run event: {describe_value(value)}; expected {{type, part, ...}}"
    session.ident = session.ident or as_string(value.get("sessionID"))
    session.created = session.created or value.get("timestamp")
    if kind in _PART_EVENTS:
        part = value.get("part")
        if not isinstance(part, dict):
            return f"part: {describe_value(part)}; expected the event's part, an object"
        _streamed(session, record, part)
    elif kind == "error":
        session.errors.append((record, _error_text(value.get("error")) or "OpenCode's run failed"))
    elif kind != "done":  # newer OpenCode's closing event: the run went idle, nothing more
        session.unknown["event", kind] += 1
    return None


def _streamed(session: _Session, record: Record, part: dict[str, Any]) -> None:
    """A run's part, put in the assistant message its ``messageID`` names (the last one's)."""
    own = as_string(part.get("messageID"))
    last = session.messages[-1][1] if session.messages else None
    if last is not None and own is not None and last["info"]["id"] == own:
        last["parts"].append(part)
    else:
        info = {"id": own or f"message-{len(session.messages)}", "role": "assistant"}
        session.messages.append((record, {"info": info, "parts": [part]}))


def _error_text(error: Any) -> str | None:
    """What an OpenCode error says: its ``data.message``, else its ``name``.

    A message that is the model API's JSON body (an ``UnknownError``'s) is told by the body's
    own message (:func:`api_error_text`).
    """
    if isinstance(error, str):
        return non_empty(error)
    if not isinstance(error, dict):
        return None
    data = error.get("data")
    message = non_empty(data.get("message")) if isinstance(data, dict) else None
    message = message or non_empty(error.get("message"))
    return api_error_text(message) if message else non_empty(error.get("name"))


def _told(session: _Session, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    try:
        yield finished(_Finish(session, options), session.first)
    except pi.Located as error:
        yield error.record.problem((), error.message)


@dataclass
class _Finish:
    """Makes the trace of a session (a callable for :func:`finished`)."""

    session: _Session
    options: TraceOptions

    def __call__(self) -> TraceItem:
        session = self.session
        told, errors, origin = anthropic_messages(session.messages, session.unknown)
        for record, error in session.errors:
            errors.add(len(told))
            told.append({"role": "assistant", "content": [{"type": "text", "text": error}]})
            origin.append(record)
        builder = StepBuilder()
        said = pi.tell(told, builder, errors, origin)
        last = _last_assistant(session.messages)
        success = (
            said.answered
            and builder.final_answer is not None
            and not session.errors
            and (last is None or last.get("error") is None)
        )
        location = session.first.location
        return assemble(
            builder,
            source="opencode",
            source_id=session.ident or Path(location.file).stem,
            success=success,
            options=self.options,
            objective=said.objective,
            created_at=epoch_time(session.created),
            result_summary=builder.final_answer,
            agent_id="opencode",
            framework="opencode",
            warnings=_warnings(session, said.objective),
            source_extra=_extra(session, last),
            content_hint=CONTENT_HINT,
            location=Location(location.file, location.line),
        )


def anthropic_messages(
    messages: list[tuple[Record, Any]], unknown: Counter[tuple[str, str]]
) -> tuple[list[dict[str, Any]], set[int], list[Record]]:
    """OpenCode's messages as Anthropic ones, the indexes of errors outside a tool, their records.

    An assistant message's calls are answered in a user message after it, as Anthropic's API
    has them; words after a call (OpenCode keeps a model's steps in one message) start the next
    assistant message. ``unknown`` counts the parts of a type kp does not know.
    """
    told: list[dict[str, Any]] = []
    errors: set[int] = set()
    origin: list[Record] = []

    def say(role: str, content: list[dict[str, Any]], record: Record) -> None:
        if content:
            told.append({"role": role, "content": content})
            origin.append(record)

    def fail(text: str, record: Record) -> None:
        errors.add(len(told))
        say("assistant", [{"type": "text", "text": text}], record)

    for record, message in messages:
        info = message.get("info") if isinstance(message, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(info, dict) or not one_of(info.get("role"), ROLES):
            raise pi.Located(
                record,
                f"not an OpenCode message: {describe_value(message)}; expected "
                "{info: {role: user|assistant, ...}, parts: [...]}",
            )
        parts = (
            [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []
        )
        if _compaction(info, parts):
            continue
        if info["role"] == "user":
            say("user", [b for p in parts if (b := _user_block(p, unknown)) is not None], record)
            continue
        said: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "tool":
                said.append(_call(part))
                results.append(_result(part))
            elif kind == "retry":
                say("assistant", said, record)
                say("user", results, record)
                said, results = [], []
                fail(_error_text(part.get("error")) or "the call to the model failed", record)
            elif (block := _assistant_block(part, unknown)) is not None:
                if results:  # words after a call: the model's next step
                    say("assistant", said, record)
                    say("user", results, record)
                    said, results = [], []
                said.append(block)
        say("assistant", said, record)
        say("user", results, record)
        failure = _error_text(info.get("error"))
        if failure is not None:
            fail(failure, record)
    return told, errors, origin


def _compaction(info: Mapping[str, Any], parts: list[dict[str, Any]]) -> bool:
    """Whether a message is a context compaction's: its request, or the summary that answers."""
    if info.get("role") == "assistant":
        return info.get("summary") is True
    return any(part.get("type") == "compaction" for part in parts)


def _known(part: Mapping[str, Any], unknown: Counter[tuple[str, str]]) -> str | None:
    """A part's type when kp reads it; counted when OpenCode's but of a type kp does not know."""
    kind = part.get("type")
    if not isinstance(kind, str) or kind in _PASSED:
        return None
    if kind not in PARTS:
        unknown["part", kind] += 1
        return None
    return kind


def _written(part: Mapping[str, Any]) -> str | None:
    """A text part's words when a person or the model wrote them (not OpenCode itself)."""
    if part.get("synthetic") is True or part.get("ignored") is True:
        return None
    text = part.get("text")
    return text if isinstance(text, str) and text.strip() else None


def _user_block(
    part: Mapping[str, Any], unknown: Counter[tuple[str, str]]
) -> dict[str, Any] | None:
    if _known(part, unknown) != "text":
        return None
    text = _written(part)
    return {"type": "text", "text": text} if text is not None else None


def _assistant_block(
    part: Mapping[str, Any], unknown: Counter[tuple[str, str]]
) -> dict[str, Any] | None:
    kind = _known(part, unknown)
    text = _written(part) if kind in ("text", "reasoning") else None
    if text is None:
        return None
    return (
        {"type": "thinking", "thinking": text}
        if kind == "reasoning"
        else {"type": "text", "text": text}
    )


def _call(part: Mapping[str, Any]) -> dict[str, Any]:
    """A tool part as the ``tool_use`` block it is."""
    state = part.get("state")
    given = state.get("input") if isinstance(state, dict) else None
    return {
        "type": "tool_use",
        "id": as_string(part.get("callID")) or as_string(part.get("id")),
        "name": part.get("tool"),
        "input": given if isinstance(given, dict) else {},
    }


def _result(part: Mapping[str, Any]) -> dict[str, Any]:
    """A tool part's state as the ``tool_result`` block that answers its call."""
    state = part.get("state")
    state = state if isinstance(state, dict) else {}
    status = state.get("status")
    if status == "completed":
        text, failed = as_string(state.get("output")) or "", False
    elif status == "error":
        text, failed = as_string(state.get("error")) or "the tool failed", True
    else:  # pending or running: the run stopped first
        text, failed = INTERRUPTED, True
    return {
        "type": "tool_result",
        "tool_use_id": as_string(part.get("callID")) or as_string(part.get("id")),
        "content": text,
        "is_error": failed,
    }


def _last_assistant(messages: list[tuple[Record, Any]]) -> Mapping[str, Any] | None:
    """The last assistant message's ``info`` (not a compaction's summary)."""
    for _, message in reversed(messages):
        info = message.get("info") if isinstance(message, dict) else None
        if (
            isinstance(info, dict)
            and info.get("role") == "assistant"
            and info.get("summary") is not True
        ):
            return info
    return None


def _extra(session: _Session, last: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the trace keeps of the session: how OpenCode wrote it, its title, model, provider."""
    extra: dict[str, Any] = {"form": session.form}
    if session.title is not None:
        extra["title"] = session.title
    if last is not None:
        model = non_empty(last.get("modelID"))
        provider = non_empty(last.get("providerID"))
        if model is not None:  # as OpenCode writes it, as every source names its model
            extra["model"] = model
        if provider is not None:
            extra["provider"] = provider
        finish = non_empty(last.get("finish"))
        if finish is not None:
            extra["finish"] = finish
    return extra


def _warnings(session: _Session, objective: str | None) -> tuple[str, ...]:
    unknown = [
        f"{counted(count, 'OpenCode ' + what)} of type {kind!r}, a type kp does not know, passed "
        "over (a newer OpenCode's?)"
        for (what, kind), count in sorted(session.unknown.items())
    ]
    return (NO_PROMPT, *unknown) if session.form == RUN and objective is None else tuple(unknown)


def describe(first: Any, count: int) -> str:
    """``read as opencode (N traces)``: which of OpenCode's files, and where success comes from."""
    if _is_store(first):
        what = STORE
    elif _is_export(first):
        what = EXPORT
    elif _is_event(first):
        what = RUN + " (no prompt: the run prints only the assistant's parts)"
    else:
        what = MESSAGES
    return (
        f"read as opencode ({counted(count, 'trace')}): {what}; success is whether the last "
        "assistant message has no error and ends in an answer"
    )


__all__ = ["CONTENT_HINT", "MAPPING", "convert_records", "describe", "is_message", "recognises"]
