"""Qwen Code sessions (``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``) as traces.

Qwen Code, a fork of Gemini CLI, appends each session as JSON Lines of its own (its
``ChatRecordingService``), unlike Gemini CLI's ``session-*.json``: one ``ChatRecord`` a line,
``{uuid, parentUuid, sessionId, timestamp, type, cwd, version, message?}``, where ``type`` is
``user``, ``assistant``, ``tool_result`` or ``system`` and ``message`` the Gemini content sent to
or got from the model (``{role: user|model, parts}``: ``text`` parts, ``thought: true`` ones,
``functionCall`` and ``functionResponse`` parts). ``system`` records (``ui_telemetry``,
``attribution_snapshot``, ``chat_compression``, ``slash_command``...) are the CLI's notes, no
turn. The records form a tree through ``parentUuid`` (a rewind leaves the abandoned turns in the
file): the session is the chain that ends in the last conversation record, as the CLI's loader
(``prepareTranscriptRecords``) rebuilds it, a record written again under the same ``uuid`` a
fragment of the first whose parts follow its own. Its contents are then read as a ``/chat save``
list is (:mod:`knowledgepulse.sources._chat.gemini`): the first user text the objective, a
``functionResponse`` holding an ``error`` a failed call. A ``user`` record the CLI wrote itself
(a ``notification``, ``cron`` or goal prompt: its ``provenance`` is not ``real_user``) is no
turn of the user's. The model's API failing leaves no message, only the ``ui_telemetry``
record of its ``qwen-code.api_error`` event: an evident error met outside a tool, whose next
action recovers it (a session that ends in one failed). One file is one session, one trace, its
id the ``sessionId``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse._util.times import iso_time
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat import anthropic, gemini
from knowledgepulse.sources._chat._text import one_of
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = (
    "Qwen Code writes the messages of every session into "
    "~/.qwen/projects/<project>/chats/<sessionId>.jsonl"
)
TYPES = frozenset({"user", "assistant", "tool_result", "system"})
_NOT_CONVERSATION = frozenset(
    {
        # The CLI's loader leaves these out of the chain (transcript-records.ts): side records.
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_sources_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
_USERS = frozenset({"mid_turn_user_message"})
"""The subtypes of a ``user`` record that are the user's words when it names no provenance
(the CLI's ``legacySafeProvenance``), beside none: a message typed while tools ran."""


def recognises(value: Any) -> bool:
    """Whether a record is a Qwen Code ``ChatRecord``: Gemini parts, or a system payload.

    Claude Code's records have the same identity fields, but Anthropic ``content``, never
    ``parts``, and no ``systemPayload``.
    """
    if not _identified(value):
        return False
    message = value.get("message")
    return (isinstance(message, dict) and isinstance(message.get("parts"), list)) or isinstance(
        value.get("systemPayload"), dict
    )


def _identified(value: Any) -> bool:
    """Whether a value has the identity the CLI's loader asks of a record, else it skips it."""
    return (
        isinstance(value, dict)
        and bool(as_string(value.get("uuid")))
        and (value.get("parentUuid") is None or isinstance(value.get("parentUuid"), str))
        and bool(as_string(value.get("sessionId")))
        and one_of(value.get("type"), TYPES)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The one trace of a session file: its active chain of records, read as Gemini contents."""
    read: list[Record] = []
    for item in records:
        if isinstance(item, Problem):
            yield item  # a line that is no JSON: the CLI skips it, kp says so
        elif not _identified(item.value):
            yield item.problem(
                (),
                f"not a Qwen Code session record: {describe_value(item.value)}; expected "
                "{uuid, parentUuid, sessionId, type: user|assistant|tool_result|system, ...}",
            )
        else:
            read.append(item)
    chain = _chain(read)
    if not chain:
        return
    turns: list[tuple[Record, dict[str, Any]]] = []
    failures: list[tuple[int, str]] = []  # (the number of contents before it, what it says)
    yield from _read_turns(chain, turns, failures)
    builder = StepBuilder()
    try:
        messages, errors = _with_failures(
            gemini.as_anthropic([content for _, content in turns]), failures
        )
        told = anthropic.tell(messages, builder, errors=errors)
        models = [record.value.get("model") for record, _ in turns]
        model = next((name for name in reversed(models) if as_string(name)), None)
        yield assemble(
            builder,
            source="gemini-cli",
            source_id=chain[0].value["sessionId"],
            success=told.answered and builder.final_answer is not None,
            options=options,
            objective=told.objective,
            created_at=iso_time(chain[0].value.get("timestamp")),
            result_summary=builder.final_answer,
            agent_id="qwen-code",
            framework="qwen-code",
            source_extra={"model": model} if model else None,
            content_hint=CONTENT_HINT,
            location=chain[0].location,
        )
    except PathError as error:
        match error.path:
            case (int(index), *rest) if index < len(turns):  # at the record it was read from
                yield turns[index][0].problem(("message", *rest), error.message)
            case _:
                yield chain[0].problem(error.path, error.message)
    except ConversionError as error:
        yield chain[0].problem((), str(error))


def _read_turns(
    chain: list[Record],
    turns: list[tuple[Record, dict[str, Any]]],
    failures: list[tuple[int, str]],
) -> Iterator[Problem]:
    """Fill ``turns`` with the chain's contents and ``failures`` with its API errors, in order.

    A record whose parts are no list is a problem, and no turn.
    """
    for record in chain:
        failure = _api_error(record.value)
        if failure is not None:
            failures.append((len(turns), failure))
        content = _content(record)
        if content is not None and not isinstance(content["parts"], list):
            yield record.problem(
                ("message", "parts"),
                f"expected a list of parts, found {describe_value(content['parts'])}",
            )
        elif content is not None:
            turns.append((record, content))


def _api_error(value: Mapping[str, Any]) -> str | None:
    """What a failed model call says, as the CLI shows it (``[API Error: ...]``); else ``None``.

    Qwen Code keeps no message for it: the ``ui_telemetry`` record of its ``api_error`` event is
    the session's one trace of the model's API failing (a run that ends so has no answer).
    """
    payload = value.get("systemPayload")
    event = payload.get("uiEvent") if isinstance(payload, dict) else None
    if value["type"] != "system" or not isinstance(event, dict):
        return None
    if event.get("event.name") != "qwen-code.api_error":
        return None
    return f"[API Error: {as_string(event.get('error_message')) or 'unknown error'}]"


def _with_failures(
    messages: list[dict[str, Any]], failures: list[tuple[int, str]]
) -> tuple[list[dict[str, Any]], set[int]]:
    """The messages with each API failure where it was met, and the indexes of those failures."""
    told: list[dict[str, Any]] = []
    errors: set[int] = set()
    pending = list(failures)
    for index, message in enumerate([*messages, None]):
        while pending and pending[0][0] == index:
            errors.add(len(told))
            told.append({"role": "assistant", "content": [{"type": "text", "text": pending[0][1]}]})
            pending.pop(0)
        if message is not None:
            told.append(message)
    return told, errors


def _conversation(value: Mapping[str, Any]) -> bool:
    return not (value["type"] == "system" and one_of(value.get("subtype"), _NOT_CONVERSATION))


def _chain(records: list[Record]) -> list[Record]:
    """The session's active branch, root first: ``parentUuid`` walked back from the last record.

    As the CLI's loader does: the leaf is the last conversation record; the walk stops at a
    parent no line holds (an earlier part of the file lost) or one already met (a cycle); a
    ``uuid`` written again is a fragment of the first record of it, its parts appended.
    """
    fragments: dict[str, list[Record]] = {}
    for record in records:
        if _conversation(record.value):
            fragments.setdefault(record.value["uuid"], []).append(record)
    leaf = next((r.value["uuid"] for r in reversed(records) if _conversation(r.value)), None)
    walked: list[Record] = []
    seen: set[str] = set()
    while leaf is not None and leaf in fragments and leaf not in seen:
        seen.add(leaf)
        walked.append(_joined(fragments[leaf]))
        leaf = fragments[leaf][0].value.get("parentUuid")
    return walked[::-1]


def _joined(fragments: list[Record]) -> Record:
    """A record written in fragments (the same ``uuid``) as one: the parts of each, in order."""
    first = fragments[0]
    if len(fragments) == 1:
        return first
    value = dict(first.value)
    parts: list[Any] = []
    role = None
    for fragment in fragments:
        message = fragment.value.get("message")
        if isinstance(message, dict):
            role = role or message.get("role")
            parts.extend(message.get("parts") or [])
        if value.get("model") is None and fragment.value.get("model") is not None:
            value["model"] = fragment.value["model"]
    if role is not None:
        value["message"] = {"role": role, "parts": parts}
    return Record(first.location, value)


def _content(record: Record) -> dict[str, Any] | None:
    """A record's Gemini content, when it is a turn of the conversation; else ``None``.

    ``system`` records are the CLI's notes; a ``user`` record the CLI wrote itself (a
    ``notification``, ``cron`` or goal prompt) is no word of the user's.
    """
    value = record.value
    message = value.get("message")
    if value["type"] == "system" or not isinstance(message, dict):
        return None
    if value["type"] == "user" and not _users(value):
        return None
    role = "model" if value["type"] == "assistant" else "user"
    return {"role": message.get("role") or role, "parts": message.get("parts")}


def _users(value: Mapping[str, Any]) -> bool:
    """Whether a ``user`` record holds the user's words (``provenance: real_user``)."""
    provenance = value.get("provenance")
    if provenance is not None:
        return bool(provenance == "real_user")
    subtype = value.get("subtype")
    return subtype is None or one_of(subtype, _USERS)
