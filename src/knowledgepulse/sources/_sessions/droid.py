"""Factory Droid session files (``~/.factory/sessions/<workspace>/<session>.jsonl``) as traces.

A file is one session. Its first line is the ``session_start`` record (``id``, ``title``,
``sessionTitle``, ``owner``, ``version``, ``cwd``; a sub-agent's, the one Droid's ``Task`` tool
starts, names the session that called it in ``callingSessionId``); each ``message`` line holds an
Anthropic Messages ``message`` (``role`` ``user`` or ``assistant``, content blocks ``text``,
``thinking``, ``tool_use``, ``tool_result``) with its own ``id``, the ``parentId`` of the record
before it and a ``timestamp``. ``todo_state`` (the todo list the agent keeps) and
``compaction_state`` (a context compaction's summary; the turns it summarises stay in the file)
lines hold no turn; a line of another type is passed over with a warning. The ``.settings.json``
beside the file (model, token usage) is another file, not read here.

The messages are read by the Anthropic Messages reader, as a Claude Code session's are: the first
user text (less the ``<system-reminder>`` blocks Droid adds to a turn) is the objective, a later
one the user's reply to the assistant text before it; ``thinking`` blocks are thoughts, the last
assistant text that calls no tool the answer, a ``tool_use`` a call joined by id with the
``tool_result`` that answers it. A result is an evident error when it says so (``is_error``), or,
naming no flag, when its text opens with Droid's ``Error:`` (``Error: Command failed (exit code:
1)``); the agent's next action is its ``error_recovery``.

The lines form a tree (``parentId``): as Droid resumes a session from its newest message, kp reads
the branch that ends at the file's last message and leaves out a branch abandoned beside it; a
file whose messages do not all link to an earlier line (an older Droid's, a tool's test file) is
read in file order. A session file records no outcome, so success is whether the session ends in
the assistant's answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse._util.times import iso_time
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import anthropic
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble, session_of
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Factory Droid writes the messages of every session into its .jsonl"
HEADER = "session_start"
TURN = "message"
NOT_STEPS = frozenset({"todo_state", "compaction_state"})
"""Droid's own line types that hold no turn: passed over in silence."""
_TITLED = ("title", "sessionTitle", "owner")
"""The ``session_start`` keys Droid writes that tell its header from another agent's."""
_FAILED = re.compile(r"\s*Error:")
"""How Droid's tools word a failure in their result (``Error: Command failed (exit code: 1)``)."""
EXPECTED = (
    '{"type": "session_start", "id", "title", ...} then {"type": "message", "id", "parentId", '
    '"timestamp", "message": {role, content}} lines, as ~/.factory/sessions/*/*.jsonl holds them'
)


@dataclass
class _Session:
    """One file's session as read: its header and its message lines, in file order."""

    header: Record
    turns: list[Record] = field(default_factory=list)
    links: dict[str, str | None] = field(default_factory=dict)
    """Every line's ``id`` and the ``parentId`` it names (``None`` when it names none)."""
    unknown: Counter[str] = field(default_factory=Counter)


def recognises(value: Any) -> bool:
    """Whether a file's first record is Droid's ``session_start`` header."""
    return (
        isinstance(value, dict)
        and value.get("type") == HEADER
        and isinstance(value.get("id"), str)
        and any(isinstance(value.get(key), str) for key in _TITLED)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace of a session file; a line that cannot be read is a problem, the rest go on."""
    session = yield from session_of(
        records, recognises, _Session, _take, "Factory Droid session header", expected=EXPECTED
    )
    if session is None:
        return
    try:
        yield _finish(session, options)
    except _LocatedError as error:  # a message's problem, at the line it was read from
        yield error.record.problem(error.path, error.message)
    except PathError as error:
        yield session.header.problem(error.path, error.message)
    except ConversionError as error:  # no step, say: about the whole session
        yield session.header.problem((), str(error))


def _take(session: _Session, record: Record) -> None:
    """Note one line after the header: a message is kept, Droid's other lines passed over."""
    value = record.value
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PathError(
            (), f"not a Factory Droid session line: {describe_value(value)}; expected {EXPECTED}"
        )
    own = non_empty(value.get("id"))
    if own is not None:
        session.links[own] = as_string(value.get("parentId"))
    kind = value["type"]
    if kind != TURN:
        if kind != HEADER and kind not in NOT_STEPS:
            session.unknown[kind] += 1
        return
    anthropic.message_of(value)  # checked: read when the session is told
    session.turns.append(record)


def _branch(session: _Session) -> list[Record]:
    """The messages on the branch that ends at the file's last message, in file order.

    Every message but the first must name a parent among the file's lines (or the header):
    else the file is no tree kp can follow, and every message is read, in file order.
    """
    turns = session.turns
    root = as_string(session.header.value.get("id"))
    known = set(session.links) | {root}
    parents = [as_string(t.value.get("parentId")) for t in turns]
    if len(turns) < 2 or not all(p is not None and p in known for p in parents[1:]):
        return turns
    on_branch: set[str] = set()
    at: str | None = as_string(turns[-1].value.get("id"))
    while at is not None and at not in on_branch:
        on_branch.add(at)
        at = session.links.get(at)
    return [t for t in turns if as_string(t.value.get("id")) in on_branch]


def _finish(session: _Session, options: TraceOptions) -> TraceItem:
    turns = _branch(session)
    messages = [_flagged(t.value["message"]) for t in turns]
    builder = StepBuilder()
    try:
        told = anthropic.tell(messages, builder)
    except PathError as error:
        match error.path:
            case (int(index), *rest) if index < len(turns):  # at the line it was read from
                raise _LocatedError(turns[index], ("message", *rest), error.message) from None
            case _:
                raise
    header = session.header.value
    return assemble(
        builder,
        source="droid",
        source_id=header["id"],
        success=told.answered and builder.final_answer is not None,
        options=options,
        objective=told.objective,
        created_at=_started(turns),
        result_summary=builder.final_answer,
        agent_id="droid",
        framework="droid",
        warnings=tuple(_unknown_types(session.unknown)),
        source_extra=_extra(header, messages) or None,
        content_hint=CONTENT_HINT,
        location=Location(session.header.location.file, session.header.location.line),
    )


class _LocatedError(PathError):
    """A message's problem, told at the line it was read from (not the header's)."""

    def __init__(self, record: Record, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(path, message)
        self.record = record


def _flagged(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """The message with each ``tool_result`` that words a failure but names no flag flagged.

    Droid's tools say they failed in their result's text (``Error: ...``); a result that sets
    ``is_error`` (either way) is read as it says.
    """
    content = message["content"]
    if message["role"] != "user" or not isinstance(content, list):
        return message
    blocks = [
        {**block, "is_error": True}
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and "is_error" not in block
        and _FAILED.match(_result_text(block.get("content")) or "")
        else block
        for block in content
    ]
    return {**message, "content": blocks}


def _result_text(content: Any) -> str | None:
    """A result's text: a string, or its first text block's."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return as_string(block.get("text"))
    return None


def _started(turns: list[Record]) -> datetime | None:
    """When the session started: its first message's ``timestamp`` (the header holds none)."""
    for turn in turns:
        started = iso_time(turn.value.get("timestamp"))
        if started is not None:
            return started
    return None


def _extra(header: Mapping[str, Any], messages: list[Mapping[str, Any]]) -> dict[str, Any]:
    """What the trace keeps of the session: its title, format version, model, calling session."""
    extra: dict[str, Any] = {}
    title = non_empty(header.get("sessionTitle")) or non_empty(header.get("title"))
    if title is not None:
        extra["title"] = title
    version = header.get("version")
    if isinstance(version, str) or (  # the format's number (2), or Droid's own ("0.81.0")
        isinstance(version, int) and not isinstance(version, bool) and abs(version) < 2**53
    ):
        extra["version"] = version
    models = [as_string(m.get("model")) for m in messages if m.get("role") == "assistant"]
    model = next((m for m in reversed(models) if m), None) or as_string(header.get("model"))
    if model:
        extra["model"] = model
    calling = non_empty(header.get("callingSessionId"))
    if calling is not None:  # a sub-agent's run: the session whose Task call started it
        extra["calling_session"] = calling
    return extra


def _unknown_types(counts: Counter[str]) -> list[str]:
    """One warning a line type kp does not know, with how many lines of it were passed over."""
    return [
        f"{count} line{'s' if count != 1 else ''} of type {kind!r}, a type kp does not know, "
        "passed over (a newer Droid's? kp reads message lines)"
        for kind, count in sorted(counts.items())
    ]


__all__ = ["CONTENT_HINT", "convert_records", "recognises"]
