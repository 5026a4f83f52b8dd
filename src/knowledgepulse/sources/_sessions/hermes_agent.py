"""Hermes Agent (NousResearch/hermes-agent) sessions as traces.

Hermes Agent keeps every session in its SQLite store (``~/.hermes/state.db``), and writes two files
of it that kp reads, one session a record:

* the session log, ``~/.hermes/sessions/session_<id>.json``: ``session_id``, ``model``,
  ``platform`` (``cli``, ``telegram``, ``weixin``...), ``session_start`` and ``last_updated``
  (ISO times, no zone: UTC here), ``system_prompt``, ``tools`` (the schemas offered) and
  ``messages``;
* what ``hermes sessions export`` writes (JSON Lines, one session a line, as
  ``SessionDB.export_session`` builds it): the store's session row (``id``, ``source``,
  ``model``, ``started_at`` and ``ended_at`` in Unix seconds, ``end_reason``, ``parent_session_id``
  when a context compression continued an earlier session) and its ``messages`` rows (their
  ``tool_calls`` a list, or the JSON text the store keeps).

The messages are Chat Completions messages (``role`` ``user``, ``assistant``, ``tool``;
``tool_calls`` with ``function.name`` and ``arguments``; the model's ``reasoning`` beside its
``content``), read by the OpenAI chat reader: the first user text is the objective, a later one
the user's reply to the assistant text before it, the reasoning a thought, the last assistant text
that calls no tool the answer; a tool's result that says it failed (Hermes' tools return JSON with
an ``error``: ``{"success": false, "error": "Skill ... not found."}``) is an evident error, and the
agent's next action its ``error_recovery``. So is a terminal result whose command exited non-zero
(``{"output": "fatal: ...", "exit_code": 128, "error": null}``, a timeout's 124), as the Codex and
OpenHands readers count it, unless Hermes says the code is no error: its ``exit_code_meaning`` for
the codes its terminal tool knows to be informational (``grep``'s 1, ``No matches found (not an
error)``; ``diff``'s 1, ``Files differ (expected, not an error)``; ``test``'s 1).

What Hermes writes into the conversation itself is no turn: its context compression's summary
(an assistant message ``[CONTEXT COMPACTION — REFERENCE ONLY] ...``, standing for the turns it
replaced, which the file no longer holds; an export's row of it is flagged
``_compressed_summary``), its ``[System note: ...]`` to the model at the head of a user turn (the
user's words after it are the turn), and its background review: a user message ``Review the
conversation above and update the skill library`` (or ``... consider saving to memory``) that
starts a forked curator's pass, whose turns older builds wrote into the session. Hermes' own loader
leaves out the prompt and the reply after it on resume; kp leaves out every turn of the pass, up
to the user's next message. A session records no outcome, so success is whether it ends in the
assistant's answer.

The ShareGPT rows Hermes Agent's batch runner saves (``save_trajectories``, ``<tool_call>`` tags in
the text) are the ``hermes`` source's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_string, non_empty
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import openai_chat
from knowledgepulse.sources._chat._text import error_text, one_of
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble
from knowledgepulse.sources._sessions._documents import each_document
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = (
    "Hermes Agent writes the messages of every session into "
    "~/.hermes/sessions/session_<id>.json (and hermes sessions export)"
)
COMPACTION = "[CONTEXT COMPACTION"
"""How the assistant message Hermes puts in place of the turns its context compression replaced
opens (``[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted...``)."""
_REVIEW = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)
"""How Hermes' background review prompts open (``agent/background_review.py``)."""
_NOTE = re.compile(r"\A\s*\[System note:[^\]]*\]\s*")
"""Hermes' note to the model at the head of a user turn (``[System note: Your previous turn was
interrupted before you could process the last tool result(s)...]``)."""
_ROLES = frozenset({"user", "assistant", "tool", "system"})
EXPECTED = (
    "{session_id, platform, session_start, messages: [...]}, as ~/.hermes/sessions/session_*.json "
    "holds it, or a line of hermes sessions export ({id, source, started_at, messages: [...]})"
)


def recognises(value: Any) -> bool:
    """Whether a record is a Hermes Agent session: its log, or a line of its export."""
    return _log(value) or _exported(value)


def _log(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("session_id"), str)
        and "session_start" in value
        and "platform" in value
        and isinstance(value.get("messages"), list)
    )


def _exported(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("source"), str)
        and "started_at" in value
        and "end_reason" in value
        and isinstance(value.get("messages"), list)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace per session record; a record that is none is a problem, the rest go on."""
    yield from each_document(
        records,
        recognises,
        partial(_finish, options=options),
        what="a Hermes Agent session",
        expected=EXPECTED,
    )


def _finish(record: Record, options: TraceOptions) -> TraceItem:
    session = record.value
    kept, origins = _conversation(session["messages"])
    builder = StepBuilder(failed_calls=_failed_calls(kept))
    try:
        told = openai_chat.tell(kept, builder)
    except PathError as error:
        match error.path:
            case (int(index), *rest) if index < len(origins):  # at the message in the file
                raise PathError(("messages", origins[index], *rest), error.message) from None
            case _:
                raise
    log = _log(session)
    return assemble(
        builder,
        source="hermes-agent",
        source_id=session["session_id"] if log else session["id"],
        success=told.answered and builder.final_answer is not None,
        options=options,
        objective=told.objective,
        created_at=iso_time(session.get("session_start")) if log else _seconds(session),
        result_summary=builder.final_answer,
        agent_id="hermes-agent",
        framework="hermes-agent",
        source_extra=_extra(session, log) or None,
        content_hint=CONTENT_HINT,
        location=Location(record.location.file, record.location.line),
    )


def _conversation(messages: list[Any]) -> tuple[list[Any], list[int]]:
    """The messages of the conversation, and the index in the file of each.

    Left out: Hermes' compaction summaries, its background review from its prompt to
    the user's next message, and messages of a role no chat message has; its system note is cut
    from the head of a user turn.
    """
    kept: list[Any] = []
    origins: list[int] = []
    reviewing = False
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role == "user" and isinstance(content, str) and content.lstrip().startswith(_REVIEW):
            reviewing = True  # the curator's pass, up to the user's next message
            continue
        if reviewing and role != "user":
            continue
        reviewing = False
        if _summary(message):
            continue
        if isinstance(message, dict) and not one_of(role, _ROLES):
            continue
        kept.append(_without_note(message) if role == "user" else message)
        origins.append(index)
    return kept, origins


def _failed_calls(messages: list[Any]) -> frozenset[str]:
    """The ids of the calls whose ``tool`` message says they failed (module doc)."""
    return frozenset(
        call_id
        for message in messages
        if isinstance(message, dict)
        and message.get("role") == "tool"
        and isinstance(call_id := message.get("tool_call_id"), str)
        and _failed(message.get("content"))
    )


def _failed(content: Any) -> bool:
    """Whether a tool's result says it failed (its ``error``, its command's exit code)."""
    return error_text(content) is not None


def _summary(message: Any) -> bool:
    """Whether a message is Hermes' compaction summary: so worded, or so flagged in the store."""
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    worded = isinstance(content, str) and content.startswith(COMPACTION)
    return message.get("_compressed_summary") in (True, 1) or (
        message.get("role") == "assistant" and worded
    )


def _without_note(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """A user turn less the ``[System note: ...]`` Hermes put at its head, if it did."""
    content = message.get("content")
    if isinstance(content, str) and _NOTE.match(content):
        return {**message, "content": _NOTE.sub("", content)}
    return message


def _seconds(session: Mapping[str, Any]) -> float | None:
    """An export's ``started_at``: Unix seconds."""
    started = session.get("started_at")
    return (
        float(started)
        if isinstance(started, int | float) and not isinstance(started, bool)
        else None
    )


def _extra(session: Mapping[str, Any], log: bool) -> dict[str, Any]:
    """What the trace keeps of the session: its model, platform, and how it ended or began."""
    extra: dict[str, Any] = {}
    model = as_string(session.get("model"))
    if model:
        extra["model"] = model
    platform = as_string(session.get("platform" if log else "source"))
    if platform:
        extra["platform"] = platform
    for key in ("end_reason", "parent_session_id", "title"):
        value = non_empty(session.get(key))
        if value is not None:
            extra[key] = value
    return extra


__all__ = ["CONTENT_HINT", "convert_records", "recognises"]
