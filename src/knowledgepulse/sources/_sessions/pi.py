"""Pi's session files (``~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``) as traces.

Pi (badlogic/pi-mono's coding agent, ``@mariozechner/pi-coding-agent``) appends a session as
JSON Lines: a header ``{"type": "session", "version", "id", "timestamp", "cwd"}`` (no
``version`` in version 1), then entries. A ``message`` entry holds one of the agent's messages:
``user`` (``content`` text, or ``text`` and ``image`` blocks), ``assistant`` (``text``,
``thinking`` and ``toolCall`` blocks ``{id, name, arguments}``, its ``stopReason``: ``stop``,
``toolUse``, ``length``, ``error`` or ``aborted``, with an ``errorMessage``), ``toolResult``
(``toolCallId``, ``toolName``, ``content`` blocks, ``isError``). Other entries are the session's
settings and notes: ``model_change``, ``thinking_level_change``, ``compaction`` (the summary put
in place of the turns before it), ``branch_summary`` (the summary of a branch the user left),
``custom`` and ``custom_message`` (an extension's), ``label``, ``session_info``.

Since version 2 the entries form a tree (``id``, ``parentId``): the user may go back to an earlier
entry and go on from there in the same file. The session is the branch the agent resumes, as
Pi's ``SessionManager`` rebuilds it: from the file's last entry up its ``parentId`` links to the
root; the other branches are left out. Version 1 wrote the entries one after another: all of them,
in order (Pi's migration links them so). The turns before a compaction on that branch ran, and are
read; the compaction's summary is Pi's, no step.

The messages are read as Anthropic Messages (the Anthropic reader): the first user text is the
objective, a later one the user's reply to the assistant text before it; ``thinking`` and text are
thoughts, the last assistant text after its last call the answer; a ``toolCall`` joined by id with
its ``toolResult`` is a tool call and its observation, an evident error when ``isError`` (the next
action is its ``error_recovery``). An assistant message that ended in ``error`` (the provider's
API failed: ``errorMessage``) is an evident error met outside a tool, never the answer; one the
user stopped (``aborted``) is no error of the agent's, as Claude Code's interrupted turn: what it
streamed before is thoughts, never the answer. The calls either wrote but never ran (no result
answers them) are left out. Not read: ``bashExecution`` messages (a command the user ran with
``!``), ``custom`` (``hookMessage`` before version 3) messages, the summaries, images. A session
records no outcome, so success is whether it ends in the assistant's answer.

What ``pi --print --mode json`` prints (saved as ``.jsonl``) is read too: the session's header
(since Pi 0.45; none before), then the agent's events, ``agent_start``, ``turn_start`` /
``turn_end``, ``message_start`` / ``message_update`` / ``message_end``,
``tool_execution_start`` / ``_update`` / ``_end``, ``agent_end``, and Pi's own
``auto_compaction_*`` and ``auto_retry_*``. Every message the session appends is printed once
complete, at its ``message_end``: those are the session's messages, in order, read as above (the
``message_update`` deltas, ``turn_end`` and ``agent_end`` repeat them). A tool run whose result no
``toolResult`` message carries (a stream cut or filtered) is read from its
``tool_execution_end``, and its call from its ``tool_execution_start`` when no assistant message
holds it.

The Hub's Session Trace Simple Format (:mod:`.sts`) writes messages of its own shape, turned into
these by :func:`messages_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import epoch_time, iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import _row, anthropic
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble, finished, last_model
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Pi writes the messages of every session into ~/.pi/agent/sessions/*/*.jsonl"
MAPPING = {
    "steps": (
        "the message entries of the branch from the last entry to the root (pi --mode json: "
        "the messages of its message_end events, tool_execution_* for a run no message holds)"
    ),
    "id": "the header's id (a stream that printed none: the file's name)",
    "success": "whether the last assistant message is its answer (stopReason stop)",
    "created_at": "the header's timestamp, or the first message's where earlier (a branch)",
}
TREE_VERSION = 2
"""The session version since which entries link to their parent (``id``, ``parentId``)."""
UNRUN = frozenset({"error", "aborted"})
"""The ``stopReason`` of an assistant message whose calls did not run: the stream ended first."""
EVENTS = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "auto_compaction_start",
        "auto_compaction_end",
        "auto_retry_start",
        "auto_retry_end",
    }
)
"""The events ``pi --mode json`` prints (Pi's ``AgentSessionEvent``): no session entry's type."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a Pi session's header, or the start of Pi's events.

    Pi's header names the working folder (``cwd``) in every version; the Hub's Session Trace
    Simple Format's names a ``harness`` and no ``cwd`` (a Pi header may name a harness too, as the
    Hub asks a harness that writes Pi's format to). ``pi --mode json`` before 0.45 printed no
    header: its first line is ``{"type": "agent_start"}``, with nothing else in it.
    """
    return isinstance(value, dict) and (
        (
            value.get("type") == "session"
            and isinstance(value.get("id"), str)
            and isinstance(value.get("cwd"), str)
        )
        or value == {"type": "agent_start"}
    )


@dataclass
class Session:
    """A session file's first record, header (empty when the file opens with none) and entries."""

    first: Record
    header: Mapping[str, Any] = field(default_factory=dict)
    entries: list[Record] = field(default_factory=list)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The one trace of a session file; a line that is no JSON is a problem, the rest read."""
    session = yield from gathered(records, _is_header, _entry)  # Pi skips a line it cannot parse
    if session is not None:
        yield from told(session, partial(_finish, options=options))


def gathered(
    records: Iterable[Record | Problem],
    is_header: Callable[[Any], bool],
    entry: Callable[[Any], bool | str],
) -> Generator[Problem, None, Session | None]:
    """A session file's records as a :class:`Session`; the problems met on the way, yielded.

    ``entry`` says of each record after the header whether it is an entry (``True``), one to
    pass over (``False``), or why it is no line of the format (a problem at its line).
    """
    session: Session | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        if session is None:
            session = Session(item)
            if is_header(item.value):
                session.header = item.value
                continue
        said = entry(item.value)
        if said is True:
            session.entries.append(item)
        elif isinstance(said, str):
            yield item.problem((), said)
    return session


def told(session: Session, finish: Callable[[Session], TraceItem]) -> Iterator[TraceItem | Problem]:
    """The session's trace, or its problem: at the entry a message that cannot be read is in."""
    try:
        yield finished(partial(finish, session), session.first)
    except Located as error:
        yield error.record.problem(("message",), error.message)


def _is_header(value: Any) -> bool:
    return recognises(value) and value.get("type") == "session"


def _entry(value: Any) -> bool | str:
    if isinstance(value, dict):
        return True
    return f"not a Pi session entry: {describe_value(value)}; expected {{type, ...}}"


def branch(header: Mapping[str, Any], entries: list[Record]) -> list[Record]:
    """The entries of the session's current branch, root first (see the module's docstring).

    A version 2 or later session: from the last entry with an ``id`` up its ``parentId`` links
    (an entry whose parent is not in the file is the root, as Pi takes it); version 1: all.
    """
    if not _tree(header.get("version")):
        return entries
    by_id = {e.value["id"]: e for e in entries if isinstance(e.value.get("id"), str)}
    leaf = next((e for e in reversed(entries) if isinstance(e.value.get("id"), str)), None)
    path: list[Record] = []
    seen: set[str] = set()
    while leaf is not None and leaf.value["id"] not in seen:
        seen.add(leaf.value["id"])
        path.append(leaf)
        parent = leaf.value.get("parentId")
        leaf = by_id.get(parent) if isinstance(parent, str) else None
    return path[::-1]


def streamed(events: list[Record]) -> list[tuple[Record, Any]]:
    """The messages of what ``pi --mode json`` printed, each with its event, in order.

    A message is complete at its ``message_end``. A tool run that no ``toolResult`` message
    answers gives its result from its ``tool_execution_end``, and its call from its
    ``tool_execution_start`` when no assistant message holds that call: as Pi's message would.
    """
    ended = [e.value.get("message") for e in events if e.value.get("type") == "message_end"]
    answered = {as_string(m.get("toolCallId")) for m in ended if _role(m) == "toolResult"}
    called = {
        as_string(block.get("id"))
        for m in ended
        if _role(m) == "assistant" and isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }
    held = called | answered
    messages: list[tuple[Record, Any]] = []
    for event in events:
        kind, call = event.value.get("type"), as_string(event.value.get("toolCallId"))
        if kind == "message_end":
            messages.append((event, event.value.get("message")))
        elif call is None:
            continue  # a run kp cannot join to its call: Pi always names it
        elif kind == "tool_execution_start" and call not in held:
            messages.append((event, _ran(event.value)))
        elif kind == "tool_execution_end" and call not in answered:
            messages.append((event, _ran_result(event.value)))
    return messages


def _ran(event: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_execution_start`` as the assistant message that holds its call."""
    call = {
        "type": "toolCall",
        "id": event.get("toolCallId"),
        "name": event.get("toolName"),
        "arguments": event.get("args"),
    }
    return {"role": "assistant", "content": [call], "stopReason": "toolUse"}


def _ran_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_execution_end`` as the ``toolResult`` message Pi appends for it."""
    result = event.get("result")
    return {
        "role": "toolResult",
        "toolCallId": event.get("toolCallId"),
        "toolName": event.get("toolName"),
        "content": result.get("content") if isinstance(result, dict) else result,
        "isError": event.get("isError") is True,
    }


def _first_time(messages: list[tuple[Record, Any]]) -> datetime | None:
    """When the first message was written.

    Its entry's time (ISO 8601), else its own (Unix ms), as a stream that printed no header has it.
    """
    for entry, message in messages:
        stamp = (
            iso_time(entry.value.get("timestamp")) if entry.value.get("type") == "message" else None
        )
        if stamp is None and isinstance(message, dict):
            stamp = epoch_time(message.get("timestamp"))
        if stamp is not None:
            return stamp
    return None


def _started(header: Mapping[str, Any], messages: list[tuple[Record, Any]]) -> datetime | None:
    """When the run began: the header's time, or the first message's where that is earlier.

    A session branched from another (``/branch``: ``branchedFrom`` in its header) is written when
    the branch is made, its messages copied from the other with their own times: its header can
    be hours after the turns it holds, which began at the first message.
    """
    times = [t for t in (iso_time(header.get("timestamp")), _first_time(messages)) if t]
    return min(times, default=None)


def _tree(version: Any) -> bool:
    """Whether a header's ``version`` is one whose entries form a tree."""
    return isinstance(version, int) and not isinstance(version, bool) and version >= TREE_VERSION


def _finish(session: Session, options: TraceOptions) -> TraceItem:
    header = session.header
    printed = any(as_string(e.value.get("type")) in EVENTS for e in session.entries)
    messages = (
        streamed(session.entries)
        if printed
        else [
            (e, e.value.get("message")) for e in branch(header, session.entries) if _is_message(e)
        ]
    )
    told, errors, origin = messages_of(messages)
    builder = StepBuilder()
    said = tell(told, builder, errors, origin)
    model = last_model(m.get("model") for _, m in messages if m.get("role") == "assistant")
    extra: dict[str, Any] = {"version": header.get("version", 1)} if header else {}
    if printed:
        extra["printed"] = "pi --mode json"
    location = session.first.location
    return assemble(
        builder,
        source="pi",
        source_id=non_empty(header.get("id")) or Path(location.file).stem,
        success=said.answered and builder.final_answer is not None,
        options=options,
        objective=said.objective,
        created_at=_started(header, messages),
        result_summary=builder.final_answer,
        agent_id="pi",
        framework="pi",
        model=model,
        source_extra=extra,
        content_hint=CONTENT_HINT,
        location=Location(location.file, location.line),
    )


def tell(
    told: list[dict[str, Any]], builder: StepBuilder, errors: set[int], origin: list[Record]
) -> _row.Told:
    """Tell the builder what :func:`messages_of` made; a message it cannot read, at its entry."""
    try:
        return anthropic.tell(told, builder, errors=errors)
    except PathError as error:
        match error.path:
            case (int(index), *_) if index < len(origin):
                raise Located(origin[index], error.message) from error
            case _:
                raise


class Located(Exception):  # noqa: N818 - no error of the caller's: a problem's place
    """A message that cannot be read, at the entry it was read from, not the file's first line."""

    def __init__(self, record: Record, message: str) -> None:
        super().__init__(message)
        self.record = record
        self.message = message


def _is_message(entry: Record) -> bool:
    return bool(entry.value.get("type") == "message")


def messages_of(
    messages: list[tuple[Record, Any]],
) -> tuple[list[dict[str, Any]], set[int], list[Record]]:
    """Pi messages as Anthropic messages, the indexes of its API errors, and each one's entry.

    A message that is no object, or names no ``role``, is an error at its entry.
    """
    told: list[dict[str, Any]] = []
    errors: set[int] = set()
    origin: list[Record] = []
    answered = {
        as_string(m.get("toolCallId"))
        for _, m in messages
        if isinstance(m, dict) and m.get("role") == "toolResult"
    }

    withdrawn = _withdrawn([m for _, m in messages])
    for at, (entry, message) in enumerate(messages):
        if at in withdrawn:
            continue
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise Located(
                entry,
                f"not a Pi message: {describe_value(message)}; expected "
                "{role: user|assistant|toolResult, content, ...}",
            )
        role = message["role"]
        if role == "user":
            text = _text(message.get("content"))
            if text is not None and text.strip():
                told.append({"role": "user", "content": [{"type": "text", "text": text}]})
                origin.append(entry)
        elif role == "assistant":
            said, failure = _assistant(message, answered)
            if said is not None:
                told.append(said)
                origin.append(entry)
            if failure is not None:  # the provider's API failed: an error outside a tool
                errors.add(len(told))
                told.append({"role": "assistant", "content": [{"type": "text", "text": failure}]})
                origin.append(entry)
        elif role == "toolResult" and told and _results(told[-1]):
            told[-1]["content"].append(_result(message))  # one turn's results: one message
        elif role == "toolResult":
            told.append({"role": "user", "content": [_result(message)]})
            origin.append(entry)
        # bashExecution (the user's own command), custom / hookMessage (an extension's), the
        # summaries, and roles a later version adds: no turn of the user's or the model's
    return told, errors, origin


def _withdrawn(messages: list[Any]) -> set[int]:
    """The user turns the user took back, and the replies they stopped: no turn of either.

    A user message whose reply the user stopped (``aborted``) before it said or did anything,
    and another user message next: the user sent the request again, or another, in its place.
    """
    found: set[int] = set()
    for at in range(len(messages) - 2):
        turn, reply, then = messages[at : at + 3]
        if (
            _role(turn) == "user"
            and _role(reply) == "assistant"
            and reply.get("stopReason") == "aborted"
            and not reply.get("content")
            and _role(then) == "user"
        ):
            found |= {at, at + 1}
    return found


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _assistant(
    message: Mapping[str, Any], answered: set[Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """An assistant message as an Anthropic one (``None``: it said nothing), and its failure.

    The calls of one that ended before they ran (``error``, ``aborted``) are left out but those a
    result answers; its text is a thought (it was cut off), never the answer.
    """
    stopped = as_string(message.get("stopReason"))
    cut = stopped in UNRUN
    blocks: list[dict[str, Any]] = []
    content = message.get("content")
    for part in content if isinstance(content, list) else [content]:
        block = {"type": "text", "text": part} if isinstance(part, str) else part
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        text = block.get("text") if kind == "text" else block.get("thinking")
        if kind in ("text", "thinking") and isinstance(text, str) and text.strip():
            thought = kind == "thinking" or cut
            blocks.append(
                {"type": "thinking", "thinking": text}
                if thought
                else {"type": "text", "text": text}
            )
        elif kind == "toolCall" and (not cut or as_string(block.get("id")) in answered):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": as_string(block.get("id")),
                    "name": block.get("name"),
                    "input": block.get("arguments"),
                }
            )
    told = {"role": "assistant", "content": blocks} if blocks else None
    if stopped != "error":
        return told, None
    return told, as_string(message.get("errorMessage")) or "the model's request failed"


def _results(message: Mapping[str, Any]) -> bool:
    """Whether an Anthropic message is a turn's tool results."""
    return bool(message["role"] == "user" and message["content"][0]["type"] == "tool_result")


def _result(message: Mapping[str, Any]) -> dict[str, Any]:
    """A ``toolResult`` as the ``tool_result`` block that answers its call."""
    return {
        "type": "tool_result",
        "tool_use_id": as_string(message.get("toolCallId")),
        "content": _text(message.get("content")) or "",
        "is_error": message.get("isError") is True,
    }


def _text(content: Any) -> str | None:
    """A message's text: a string, or its ``text`` blocks joined (images have none)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    found = [text for text in texts if isinstance(text, str)]
    return "\n".join(found) if found else None


def describe(first: Any, count: int) -> str:
    """``read as pi (1 trace)``, the header's version, the entries read, where success is from.

    A header opens a session file and, since Pi 0.45, what ``pi --mode json`` prints.
    """
    ends = "success is whether it ends in the assistant's answer"
    if isinstance(first, dict) and first.get("type") != "session":
        return (
            f"read as pi ({counted(count, 'trace')}): the events pi --mode json prints, "
            f"its messages at their message_end; {ends}"
        )
    version = first.get("version", 1) if isinstance(first, dict) else 1
    read = "the branch from its last entry" if _tree(version) else "its entries in order"
    return (
        f"read as pi ({counted(count, 'trace')}): a Pi session, version {version}, {read} "
        f"(what pi --mode json prints: its messages at their message_end); {ends}"
    )
