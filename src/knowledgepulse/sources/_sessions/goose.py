"""Block's goose agent: its session files, ``goose run``'s JSON output, and its session exports.

goose keeps a message as its ``Message`` (``crates/goose/src/conversation/message.rs``): ``role``
``user`` or ``assistant``, ``created`` (Unix seconds), an ``id`` (newer goose), ``metadata``
(``userVisible``, ``agentVisible``) and ``content``, a list of parts typed in camelCase:
``text``, ``image``, ``thinking`` and ``redactedThinking``, ``toolRequest`` (``id``, ``toolCall``:
``{status: success, value: {name, arguments}}`` or ``{status: error, error}`` when the model's call
could not be read), ``toolResponse`` (``id``, ``toolResult``: ``{status: success, value}``, the
value an MCP ``CallToolResult`` ``{content, isError}`` or, in older files, its list of content
alone; or ``{status: error, error}``), ``frontendToolRequest`` (a call the desktop app runs), and
the app's own ``toolConfirmationRequest``, ``actionRequired`` and ``systemNotification``.

Five files hold such messages:

- goose's session store, ``~/.local/share/goose/sessions/sessions.db`` (SQLite, in newer goose;
  ``crates/goose/src/session/session_manager.rs``): a ``sessions`` row a session (``id``,
  ``name``, ``description``, ``working_dir``...), a ``messages`` row a message (``session_id``,
  ``role``, ``content_json``: its parts, ``created_timestamp``, ``metadata_json``), read as goose
  reads them back (a session's rows ``ORDER BY timestamp``), a trace a session with a message;
- a session file (``~/.local/share/goose/sessions/<id>.jsonl``, before goose moved its sessions to
  SQLite): a first line of session metadata (``description``, ``message_count``, ``working_dir``,
  token counts; older files have none), then one message a line;
- what ``goose run --output-format json`` prints: ``{messages, metadata: {total_tokens, status}}``,
  ``status`` ``completed`` or ``failed``;
- what ``goose run --output-format stream-json`` prints, one event a line: ``{type: message,
  message}``, ``notification`` (an extension's log or progress), ``model_change`` (``model``,
  ``mode``), ``error`` (``error``) and the closing ``{type: complete, total_tokens}``. A streamed
  reply comes in pieces that share the message's ``id``: they are joined into one message. The
  prompt itself is not printed, so such a run has no objective of its own;
- what ``goose session export --format json`` writes: the session (``id``, ``name``,
  ``working_dir``, ``conversation``: its messages, ``model_config``, ``provider_name``...).

A JSON list of goose messages is read as a session file's lines. The messages are read as Anthropic
Messages (the Anthropic reader): the first user text is the objective, a later one the user's reply
to the assistant text before it; ``thinking`` is a thought, the last assistant text after its last
call the answer; a ``toolRequest`` joined by id with the ``toolResponse`` that answers it is a call
and its observation (the content meant for the model: goose's tools give the user a copy of their
own, marked for its ``audience``), an evident error when its status is ``error`` or the result
says ``isError`` (the next action is its ``error_recovery``). A request the model wrote that goose
could not read (its ``status: error``) is an evident error outside a tool, and the response that
repeats it no observation; a ``stream-json`` ``error`` event is one too.

Passed over knowingly: images, ``redactedThinking``, the app's confirmation prompts and
notifications, and a message goose keeps from the user (``userVisible: false``: the summary and the
prompt a context compaction puts in place of earlier turns, which stay in the file). A part of
another type, and a stream event of another type, are passed over with a warning. Success: the
run's ``status`` (``json``), its ``complete`` event with no ``error`` (``stream-json``), and else
whether the session ends in the assistant's answer.
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
from knowledgepulse.records._sqlite import ROW_KEY, SCHEMA_KEY, TABLE_KEY, holds, is_schema
from knowledgepulse.sources._chat._text import one_of
from knowledgepulse.sources._envelope import TraceOptions, assemble, finished
from knowledgepulse.sources._sessions import pi
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "goose writes the messages of every session it runs into its session store"
MAPPING = {
    "steps": (
        "the messages (a session file's lines after its metadata, goose run's messages, the "
        "message events of its stream-json, an export's conversation, the store's messages rows)"
    ),
    "id": "an export's or the store's session id (else the file's name)",
    "success": (
        "goose run's metadata.status, its stream's complete event with no error; else whether "
        "the last assistant message is its answer"
    ),
    "created_at": "the first message's created",
}
ROLES = frozenset({"user", "assistant"})
MESSAGE_KEYS = frozenset({"id", "role", "created", "content", "metadata"})
"""Every key goose's ``Message`` serialises: a message with another is not goose's."""
PARTS = frozenset(
    {
        "text",
        "image",
        "thinking",
        "redactedThinking",
        "toolRequest",
        "toolResponse",
        "frontendToolRequest",
        "toolConfirmationRequest",
        "actionRequired",
        "systemNotification",
        "conversationCompacted",  # before goose 1.14, dropped by goose itself when read
    }
)
"""The content parts goose writes (``MessageContent``, camelCase)."""
_CALLS = frozenset({"toolRequest", "frontendToolRequest"})
_PASSED = frozenset(
    {
        "image",
        "redactedThinking",
        "toolConfirmationRequest",
        "actionRequired",
        "systemNotification",
        "conversationCompacted",
    }
)
"""Parts passed over knowingly: a picture, hidden reasoning, the app's prompts and notes."""
EVENTS = frozenset({"message", "notification", "model_change", "error", "complete"})
"""The events ``goose run --output-format stream-json`` prints (its ``StreamEvent``)."""
STATUS_DONE = "completed"
STREAM = "goose run --output-format stream-json"
RUN = "goose run --output-format json"
EXPORT = "goose session export --format json"
STORE = "goose's session store (sessions.db)"
_STORE_TABLES = {
    "sessions": frozenset({"id", "working_dir"}),
    "messages": frozenset({"session_id", "role", "content_json", "created_timestamp"}),
}
"""The tables and columns of goose's store every schema version has (``session_manager.rs``)."""


def is_message(value: Any) -> bool:
    """Whether a value is goose's ``Message``: its keys, a ``created`` number, typed parts."""
    if not isinstance(value, dict) or not MESSAGE_KEYS.issuperset(value):
        return False
    created, content = value.get("created"), value.get("content")
    return (
        one_of(value.get("role"), ROLES)
        and isinstance(created, int)
        and not isinstance(created, bool)
        and isinstance(content, list)
        and all(isinstance(part, dict) and one_of(part.get("type"), PARTS) for part in content)
    )


def _is_header(value: Any) -> bool:
    """A session file's first line: the metadata goose's ``SessionMetadata`` requires."""
    return (
        isinstance(value, dict)
        and "role" not in value
        and isinstance(value.get("description"), str)
        and isinstance(value.get("message_count"), int)
    )


def _is_run(value: Any) -> bool:
    """``goose run --output-format json``'s document: ``{messages, metadata: {status}}``."""
    return (
        isinstance(value, dict)
        and set(value) == {"messages", "metadata"}
        and isinstance(value["messages"], list)
        and isinstance(value["metadata"], dict)
        and isinstance(value["metadata"].get("status"), str)
    )


def _is_export(value: Any) -> bool:
    """``goose session export --format json``'s session: an id, its folder, its conversation."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("working_dir"), str)
        and "conversation" in value
        and isinstance(value.get("conversation") or [], list)
        and "message_count" in value
    )


def _is_event(value: Any) -> bool:
    """A stream-json line that can open a run: a message, a model change, a notification."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind == "message":
        return set(value) == {"type", "message"} and is_message(value["message"])
    if kind == "model_change":
        return isinstance(value.get("model"), str) and isinstance(value.get("mode"), str)
    return kind == "notification" and isinstance(value.get("extension_id"), str)


def _is_store(value: Any) -> bool:
    """An SQLite database's schema, holding the tables of goose's session store."""
    return holds(value, _STORE_TABLES)


def recognises(value: Any) -> bool:
    """Whether a file's first record is one of goose's (see the module's docstring)."""
    return (
        _is_store(value)
        or _is_header(value)
        or is_message(value)
        or _is_event(value)
        or _is_run(value)
        or _is_export(value)
    )


@dataclass
class _Run:
    """One run as read: its first record, its messages with the record each came from."""

    first: Record
    form: str
    messages: list[tuple[Record, Any]] = field(default_factory=list)
    errors: list[tuple[Record, str]] = field(default_factory=list)
    """Errors goose met outside a tool (a stream's ``error`` events), after the messages."""
    header: Mapping[str, Any] = field(default_factory=dict)
    status: str | None = None
    completed: bool = False
    model: str | None = None
    unknown: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Parts and stream events of a type kp does not know: (``part`` or ``event``, the type)."""


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace of a session file or a stream; one of each run, export or stored session."""
    run: _Run | None = None
    records = iter(records)
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = item.value
        if run is None and _is_store(value):
            yield from _stored(records, options)
            return
        if run is None and is_schema(value):
            tables = ", ".join(value[SCHEMA_KEY])
            yield item.problem(
                (),
                f"an SQLite database of tables {tables or 'none'}, not goose's session store "
                "(tables sessions and messages, ~/.local/share/goose/sessions/sessions.db)",
            )
            return
        if _is_run(value) or _is_export(value):  # a whole run in one document
            yield from _told(_document(item), options)
            continue
        if run is None:
            run = _Run(item, STREAM if _is_event(value) else "session")
            if _is_header(value):
                run.header = value
                continue
        said = _take(run, item)
        if said is not None:
            yield item.problem((), said)
    if run is not None:
        yield from _told(run, options)


def _told(run: _Run, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    try:
        yield finished(_Finish(run, options), run.first)
    except pi.Located as error:
        yield error.record.problem((), error.message)


def _stored(
    rows: Iterator[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace of each session of goose's store that holds a message, as goose lists them.

    A session's messages are in the order goose reads them back (``ORDER BY timestamp``, the
    rows written together in the order written); a message goose could not read back (its
    content no JSON, a role of another kind) is a problem at its row, and the session is read
    without it.
    """
    sessions: dict[str, tuple[Record, Mapping[str, Any]]] = {}
    messages: dict[str, list[tuple[tuple[str, int], Record, dict[str, Any]]]] = {}
    for item in rows:
        if isinstance(item, Problem):
            yield item
            continue
        table, row = item.value.get(TABLE_KEY), item.value.get(ROW_KEY)
        if table == "sessions" and isinstance(row.get("id"), str):
            sessions[row["id"]] = (item, row)
        elif table == "messages":
            message = _stored_message(row)
            if isinstance(message, str):
                yield item.problem((), message)
                continue
            order = (str(row.get("timestamp") or ""), item.location.line or 0)
            messages.setdefault(str(row.get("session_id")), []).append((order, item, message))
    for ident, told in messages.items():
        told.sort(key=lambda found: found[0])
        record, header = sessions.get(ident, (told[0][1], {"id": ident}))
        run = _Run(record, STORE, header=header, model=_stored_model(header))
        run.messages = [(item, message) for _, item, message in told]
        yield from _told(run, options)


def _stored_model(session: Mapping[str, Any]) -> str | None:
    """The model a stored session names (``model_config_json``, schema version 6 and later)."""
    try:
        config = json.loads(session.get("model_config_json") or "null")
    except ValueError:
        return None
    return _exported_model({"model_config": config})


def _stored_message(row: Mapping[str, Any]) -> dict[str, Any] | str:
    """A ``messages`` row as goose's ``Message``; else why goose could not read it back."""
    if not one_of(row.get("role"), ROLES):
        return f"role: {describe_value(row.get('role'))}; goose reads back only user and assistant"
    try:
        content = json.loads(row.get("content_json") or "")
        metadata = json.loads(row["metadata_json"]) if row.get("metadata_json") else {}
    except (TypeError, ValueError) as error:
        return f"content_json or metadata_json: not JSON ({error}); goose cannot read it back"
    message = {"role": row["role"], "created": row.get("created_timestamp"), "content": content}
    return {**message, "metadata": metadata} if isinstance(metadata, dict) else message


def _document(record: Record) -> _Run:
    """A ``goose run`` document's or an export's run: the messages it holds."""
    value = record.value
    if _is_run(value):
        run = _Run(record, RUN, status=as_string(value["metadata"].get("status")))
        messages = value["messages"]
    else:
        run = _Run(record, EXPORT, header=value, model=_exported_model(value))
        messages = value.get("conversation") or []
    run.messages = [(record, message) for message in messages]
    return run


def _exported_model(session: Mapping[str, Any]) -> str | None:
    config = session.get("model_config")
    return non_empty(config.get("model_name")) if isinstance(config, dict) else None


def _take(run: _Run, record: Record) -> str | None:
    """Note one line after the first; returns why it is no line of goose's, if it is not."""
    value = record.value
    if run.form != STREAM:
        if isinstance(value, dict) and "role" in value:
            run.messages.append((record, value))
            return None
        return f"not a goose message: {describe_value(value)}; expected {{role, created, content}}"
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):
        return f"not a goose stream event: {describe_value(value)}; expected {{type, ...}}"
    if kind == "message":
        run.messages.append((record, value.get("message")))
    elif kind == "model_change":
        run.model = non_empty(value.get("model")) or run.model
    elif kind == "error":
        run.errors.append((record, as_string(value.get("error")) or "goose's run failed"))
    elif kind == "complete":
        run.completed = True
    elif kind != "notification":
        run.unknown["event", kind] += 1
    return None


@dataclass
class _Finish:
    """Makes the trace of a run (a callable for :func:`finished`)."""

    run: _Run
    options: TraceOptions

    def __call__(self) -> TraceItem:
        run = self.run
        messages = _joined(run.messages) if run.form == STREAM else run.messages
        told, errors, origin = anthropic_messages(messages, run.unknown)
        for record, error in run.errors:
            errors.add(len(told))
            told.append({"role": "assistant", "content": [{"type": "text", "text": error}]})
            origin.append(record)
        builder = StepBuilder()
        said = pi.tell(told, builder, errors, origin)
        answered = said.answered and builder.final_answer is not None
        if run.form == RUN:
            success = answered and run.status == STATUS_DONE
        elif run.form == STREAM:
            success = answered and run.completed and not run.errors
        else:
            success = answered
        location = run.first.location
        return assemble(
            builder,
            source="goose",
            source_id=as_string(run.header.get("id")) or Path(location.file).stem,
            success=success,
            options=self.options,
            objective=said.objective,
            created_at=_started(messages),
            result_summary=builder.final_answer,
            agent_id="goose",
            framework="goose",
            warnings=_warnings(run),
            source_extra=_extra(run, _inferred_model(messages)),
            content_hint=CONTENT_HINT,
            location=Location(location.file, location.line),
        )


def _joined(messages: list[tuple[Record, Any]]) -> list[tuple[Record, Any]]:
    """A stream's messages, the pieces of one (the same ``id``, one after another) joined.

    goose streams a reply's text and thinking in pieces, each printed as a message of its own
    with the reply's id; the pieces' parts are put together, a text after a text one text.
    """
    joined: list[tuple[Record, Any]] = []
    for record, message in messages:
        last = joined[-1][1] if joined else None
        own = as_string(message.get("id")) if isinstance(message, dict) else None
        if (
            own is not None
            and isinstance(last, dict)
            and as_string(last.get("id")) == own
            and last.get("role") == message.get("role")
            and isinstance(message.get("content"), list)
        ):
            joined[-1] = (joined[-1][0], {**last, "content": _merged(last, message["content"])})
        else:
            joined.append((record, message))
    return joined


_PIECES = frozenset({"text", "thinking"})
"""The parts goose streams in pieces: each holds its piece under the key its type names."""


def _merged(message: Mapping[str, Any], parts: list[Any]) -> list[Any]:
    content = list(message["content"]) if isinstance(message.get("content"), list) else []
    for part in parts:
        before = content[-1] if content else None
        kind = part.get("type") if isinstance(part, dict) else None
        if (
            one_of(kind, _PIECES)
            and isinstance(before, dict)
            and before.get("type") == kind
            and isinstance(part.get(kind), str)
            and isinstance(before.get(kind), str)
        ):
            content[-1] = {**before, kind: before[kind] + part[kind]}
        else:
            content.append(part)
    return content


def anthropic_messages(
    messages: list[tuple[Record, Any]], unknown: Counter[tuple[str, str]]
) -> tuple[list[dict[str, Any]], set[int], list[Record]]:
    """The goose messages as Anthropic ones, the indexes of errors outside a tool, their records.

    ``unknown`` counts the parts of a type kp does not know (warned about, not read).
    """
    told: list[dict[str, Any]] = []
    errors: set[int] = set()
    origin: list[Record] = []
    unread = _unreadable_calls(m for _, m in messages)
    for record, message in messages:
        if not isinstance(message, dict) or not one_of(message.get("role"), ROLES):
            raise pi.Located(
                record,
                f"not a goose message: {describe_value(message)}; expected "
                "{role: user|assistant, created, content: [...]}",
            )
        if _hidden(message):
            continue
        role = message["role"]
        blocks: list[dict[str, Any]] = []
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            block = _block(role, part, unread, unknown)
            if isinstance(block, str):  # the words before it, then the error on its own
                _said(told, origin, {"role": role, "content": blocks}, record)
                blocks = []
                errors.add(len(told))
                failure = {"role": "assistant", "content": [{"type": "text", "text": block}]}
                _said(told, origin, failure, record)
            elif block is not None:
                blocks.append(block)
        _said(told, origin, {"role": role, "content": blocks}, record)
    return told, errors, origin


def _said(
    told: list[dict[str, Any]], origin: list[Record], message: dict[str, Any], record: Record
) -> None:
    """Add a message that holds a block, with the record it was read from."""
    if message["content"]:
        told.append(message)
        origin.append(record)


def _block(
    role: str, part: Any, unread: set[str | None], unknown: Counter[tuple[str, str]]
) -> dict[str, Any] | str | None:
    """One part as an Anthropic block; an unreadable call as its error's text; else ``None``."""
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(kind, str) or kind in _PASSED:
        return None
    if kind not in PARTS:
        unknown["part", kind] += 1
        return None
    if kind == "toolResponse":
        return None if as_string(part.get("id")) in unread else _result(part)
    if kind in _CALLS:
        call = part.get("toolCall")
        if role == "assistant" and isinstance(call, dict) and call.get("status") == "error":
            return as_string(call.get("error")) or "the model's tool call was unreadable"
        return _call(part) if role == "assistant" else None
    return _words(kind, part) if kind in _PIECES else None


def _hidden(message: Mapping[str, Any]) -> bool:
    """Whether goose keeps a message from the user: a compaction's summary or prompt."""
    metadata = message.get("metadata")
    return isinstance(metadata, dict) and metadata.get("userVisible") is False


def _unreadable_calls(messages: Iterable[Any]) -> set[str | None]:
    """The ids of the calls goose could not read: their responses only repeat the error."""
    return {
        as_string(part.get("id"))
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict)
        and one_of(part.get("type"), _CALLS)
        and isinstance(part.get("toolCall"), dict)
        and part["toolCall"].get("status") == "error"
    }


def _words(kind: str, part: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``text`` or ``thinking`` part as the Anthropic block of that type (keyed alike)."""
    text = part.get(kind)
    return {"type": kind, kind: text} if isinstance(text, str) and text.strip() else None


def _call(part: Mapping[str, Any]) -> dict[str, Any]:
    """A ``toolRequest`` as the ``tool_use`` block it is."""
    call = part.get("toolCall")
    value = call.get("value") if isinstance(call, dict) else None
    value = value if isinstance(value, dict) else {}
    return {
        "type": "tool_use",
        "id": as_string(part.get("id")),
        "name": value.get("name"),
        "input": value.get("arguments"),
    }


def _result(part: Mapping[str, Any]) -> dict[str, Any]:
    """A ``toolResponse`` as the ``tool_result`` block that answers its call."""
    result = part.get("toolResult")
    result = result if isinstance(result, dict) else {}
    value = result.get("value")
    failed = result.get("status") == "error"
    if failed:
        text = as_string(result.get("error")) or ""
    else:
        items = value.get("content") if isinstance(value, dict) else value
        text = _result_text(items) or _structured(value)
        failed = isinstance(value, dict) and value.get("isError") is True
    return {
        "type": "tool_result",
        "tool_use_id": as_string(part.get("id")),
        "content": text,
        "is_error": failed,
    }


def _structured(value: Any) -> str:
    """A result that says nothing in its content but in its ``structuredContent``, as JSON."""
    found = value.get("structuredContent") if isinstance(value, dict) else None
    return json.dumps(found, ensure_ascii=False) if found is not None else ""


def _result_text(items: Any) -> str:
    """What a result's content says to the model: its text and text resources, joined.

    goose's tools give the model and the user each a copy (``annotations.audience``): the
    model's is read, or every item when none is marked for it.
    """
    found = [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    for_model = [item for item in found if "assistant" in (_audience(item) or ["assistant"])]
    texts = [_item_text(item) for item in (for_model or found)]
    return "\n".join(text for text in texts if text)


def _audience(item: Mapping[str, Any]) -> list[Any] | None:
    annotations = item.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return audience if isinstance(audience, list) else None


def _item_text(item: Mapping[str, Any]) -> str | None:
    if item.get("type") == "text":
        return as_string(item.get("text"))
    resource = item.get("resource")
    if item.get("type") == "resource" and isinstance(resource, dict):
        return as_string(resource.get("text"))
    return None


def _started(messages: list[tuple[Record, Any]]) -> Any:
    """When the first message was made (``created``, Unix seconds)."""
    for _, message in messages:
        if isinstance(message, dict):
            started = epoch_time(message.get("created"))
            if started is not None:
                return started
    return None


def _inferred_model(messages: list[tuple[Record, Any]]) -> str | None:
    """The model the last assistant message asked for (its ``metadata.inference``, newer goose)."""
    for _, message in reversed(messages):
        metadata = message.get("metadata") if isinstance(message, dict) else None
        inference = metadata.get("inference") if isinstance(metadata, dict) else None
        if isinstance(inference, dict) and message.get("role") == "assistant":
            model = non_empty(inference.get("requestedModel"))
            if model is not None:
                return model
    return None


def _extra(run: _Run, inferred: str | None) -> dict[str, Any]:
    """What the trace keeps of the run: how goose wrote it, its title, model and status."""
    extra: dict[str, Any] = {"form": run.form}
    title = non_empty(run.header.get("name")) or non_empty(run.header.get("description"))
    if title is not None:
        extra["title"] = title
    model = inferred or run.model
    if model is not None:
        extra["model"] = model
    if run.status is not None:
        extra["status"] = run.status
    return extra


def _warnings(run: _Run) -> tuple[str, ...]:
    said = [
        f"{counted(count, 'goose ' + what)} of type {kind!r}, a type kp does not know, passed "
        "over (a newer goose's?)"
        for (what, kind), count in sorted(run.unknown.items())
    ]
    if run.form == STREAM and not run.completed:
        said.append(
            "the stream has no complete event: goose's run was cut short (or the output was)"
        )
    return tuple(said)


def describe(first: Any, count: int) -> str:
    """``read as goose (N traces)``: which of goose's files, and where success comes from."""
    if _is_store(first):
        what, ends = STORE, "success is whether a session ends in the assistant's answer"
    elif _is_run(first):
        what, ends = RUN, "success is its metadata.status completed"
    elif _is_export(first):
        what, ends = EXPORT, "success is whether it ends in the assistant's answer"
    elif _is_event(first):
        what, ends = STREAM, "success is its complete event, no error, and an answer"
    else:
        what, ends = "a goose session file", "success is whether it ends in the assistant's answer"
    return f"read as goose ({counted(count, 'trace')}): {what}; {ends}"


__all__ = ["CONTENT_HINT", "MAPPING", "convert_records", "describe", "is_message", "recognises"]
