"""A conversation saved as the model's API takes it: a JSON list of chat messages, one run.

A plain-Python agent keeps its conversation as the list it sends (``messages``) and saves it as
it is: ``json.dump(messages, file)``. Such a file is one run, not dataset rows: its records (a
JSON list's elements, or JSON Lines' lines) are its messages, in order. A record that is itself
a list of messages is a conversation of its own (JSON Lines of conversations, or a JSON list of
them).

Which format the messages are in (Chat Completions, Anthropic, Responses, ShareGPT, Hermes) is
decided by the whole conversation, as a row holding it would be: one message does not tell (an
Anthropic conversation may open with a turn of plain text). A list of Gemini contents is Gemini
CLI's ``/chat save``, read by that source.

A session file may open with a header line before its messages: nanobot's (``{"_type":
"metadata", "key": "<channel>:<chat>", "created_at": ...}``, then one message a line, as its
agent sends them) names the session and says when it began: the trace's id and time. nanobot's
own records after it (``_type: provider_state``) are no message, and no part of the run.

Kimi CLI (MoonshotAI/kimi-cli) keeps its context the same way,
``~/.kimi/sessions/<work dir hash>/<session>.jsonl`` (later ``.../<session>/context.jsonl``): one
message a line, as it sends them, with records of its own named by a role that begins with an
underscore (``src/kimi_cli/soul/context.py``, commit ``4a550effdfcb``): ``_checkpoint`` (``id``,
a point ``/undo`` can go back to) and ``_usage`` (``token_count``, the context's size) are no
message and are passed over; ``_system_prompt`` (``content``, newer versions) is the system
prompt it sends, read as the ``system`` message. An assistant message's ``think`` parts (the
model's reasoning, ``{"type": "think", "think": ...}``) are what it sends as the message's
``reasoning_content``: thoughts.

Other APIs and libraries save messages that have a ``role`` and a ``content`` too, but keep their
calls and words where no chat format kp reads looks (Bedrock Converse's ``toolUse`` parts,
Haystack's ``tool_call`` parts, Open Interpreter's ``code`` / ``console`` messages, the
Assistants API's ``{"value"}`` texts, LlamaIndex's ``blocks``). Read as chat messages they would
lose their calls silently, so each such message is an error of its own, saying where.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat import gemini
from knowledgepulse.sources._chat._row import ChatSource, convert_conversation
from knowledgepulse.sources._chat._text import one_of
from knowledgepulse.sources._envelope import PathError, TraceOptions
from knowledgepulse.sources._registry import detect
from knowledgepulse.trace import TraceItem

_COLUMN = "messages"
"""The column of the row a conversation is asked about as: every chat format reads it."""


_WORDS = ("content", "tool_calls", "function_call", "refusal", "text", "value", "parts")
"""Where the chat formats kp reads keep a message's words or calls (Gemini's contents in
``parts``); a message with a ``role`` and none of these keeps them elsewhere."""


_HEADER_TYPE = "metadata"
"""nanobot's session header: ``_type`` says so (its messages have none)."""
_PRIVATE_TYPES = frozenset({"provider_state"})
"""nanobot's records of its own beside the messages (the provider's last response id, kept
after the header): no part of the run, and no message."""


_MARKS = frozenset({"_checkpoint", "_usage"})
"""Kimi CLI's records of its own among its messages (a checkpoint, the context's size)."""
_SYSTEM_PROMPT = "_system_prompt"
"""Kimi CLI's record of the system prompt it sends (newer versions write it first)."""
_THINK = "think"
"""The type of Kimi CLI's reasoning parts in an assistant message (kosong's ``ThinkPart``:
``{"type": "think", "think": ..., "encrypted": ...}``), which it sends as ``reasoning_content``."""


def _mark(value: Any) -> bool:
    """Whether a record is one of Kimi CLI's own among its messages, no message."""
    return isinstance(value, dict) and one_of(value.get("role"), _MARKS)


def _as_sent(record: Record) -> Record:
    """A record as the message the agent sent, as Kimi CLI sends its own.

    Its system prompt is the system message; its assistant's ``think`` parts are the message's
    ``reasoning_content``, beside the other parts.
    """
    value = record.value
    if not isinstance(value, dict):
        return record
    if value.get("role") == _SYSTEM_PROMPT:
        return replace(record, value={**value, "role": "system"})
    content = value.get("content")
    if value.get("role") != "assistant" or not isinstance(content, list):
        return record
    if not any(map(_is_think, content)):
        return record
    # A part with no text (its reasoning only ``encrypted``) has no thought to give; reasoning
    # the message holds already is kept, first.
    said = [value.get("reasoning_content")]
    said += [part.get("think") for part in content if _is_think(part)]
    texts = [text for text in said if isinstance(text, str) and text]
    reasoning = "\n".join(dict.fromkeys(texts)) or None  # a text written both ways, once
    rest = [part for part in content if not _is_think(part)]
    return replace(record, value={**value, "content": rest, "reasoning_content": reasoning})


def _is_think(part: Any) -> bool:
    """Whether a content part is one of Kimi CLI's reasoning parts."""
    return isinstance(part, dict) and part.get("type") == _THINK


def is_header(value: Any) -> bool:
    """Whether a record is a session file's header, before its messages (nanobot's)."""
    # Older sessions' headers have no ``key`` (the file's name said the session).
    return isinstance(value, dict) and value.get("_type") == _HEADER_TYPE and "role" not in value


def _private(value: Any) -> bool:
    """Whether a record of a session with a header is one of the agent's own, no message."""
    return (
        isinstance(value, dict)
        and "role" not in value
        and one_of(value.get("_type"), _PRIVATE_TYPES)
    )


def _told_by(header: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's id and start a header says, as the columns of a row holding the messages."""
    if header is None:
        return {}
    key = header.get("key")
    return {"id": key if isinstance(key, str) else None, "created_at": header.get("created_at")}


def recognises(value: Any) -> bool:
    """Whether a file's first record is a chat message, or a list of them, or a header.

    One of Kimi CLI's own records (a mark, its system prompt) is too: they open its files.
    """
    if is_header(value) or _mark(value):
        return True
    if isinstance(value, dict) and value.get("role") == _SYSTEM_PROMPT:
        return isinstance(value.get("content"), str)
    if isinstance(value, dict):
        return (
            not gemini.is_content(value) and foreign(value) is None and family([value]) is not None
        )
    if not isinstance(value, list):
        return False
    kept = [turn for turn in value if foreign(turn) is None]  # each other one its own error
    return bool(kept) and family(kept) is not None


def foreign(message: Any) -> str | None:
    """Why a message is of a form no chat format kp reads, though it has a role; else None.

    Every chat format kp reads types a message's parts (``type``; a part without one is text
    alone: ``text`` or ``value``), keeps a text part's text as a string, and has no typed
    message with a role but a Responses ``message``. A message that breaks one of these is
    another API's (see the module's docstring): read as chat, its calls would be lost.
    """
    if not isinstance(message, dict) or "role" not in message:
        return None
    kind = message.get("type")
    if kind is not None and kind != "message":
        return f"a message of type {json.dumps(kind)}"
    if not any(key in message for key in _WORDS):
        keys = ", ".join(sorted(str(key) for key in message))
        return f"a message with no content (its keys: {keys})"
    content = message.get("content")
    for index, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        if "type" not in part and not any(isinstance(part.get(k), str) for k in ("text", "value")):
            keys = ", ".join(sorted(str(key) for key in part))
            return f"content[{index}] is a part of keys {keys}, with no type"
        if part.get("type") == "text" and "text" in part and not isinstance(part["text"], str):
            return f"content[{index}]'s text is {describe_value(part['text'])}, not a string"
    return None


def family(turns: list[Any]) -> ChatSource | None:
    """The one chat format a conversation is in, as detection reads a row holding it; else None."""
    found = detect({_COLUMN: turns}, ChatSource)
    return found[0] if len(found) == 1 and isinstance(found[0], ChatSource) else None


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions, framework: str | None = None
) -> Iterator[TraceItem | Problem]:
    """The file's conversations: its message records, in order, one; each list record, one.

    ``framework``: the one that wrote the messages, where the caller knows it (LangChain's
    dumps, read as Chat Completions messages); else each trace's is its chat format's.
    """
    messages: list[Record] = []
    header: Mapping[str, Any] | None = None
    opening: Record | None = None  # a Kimi CLI mark before the messages: where the run begins
    for entry in records:
        if isinstance(entry, Problem):
            yield entry
            continue
        item = _as_sent(entry)
        if is_header(item.value):  # a session's start: the messages before it were another's
            yield from _conversation(messages, options, header, opening, framework)
            messages, header, opening = [], item.value, None
        elif _mark(item.value):
            opening = opening or (None if messages else item)
        elif header is not None and _private(item.value):
            continue
        elif (reason := foreign(item.value)) is not None:
            yield _refused(item, (), reason)
        elif isinstance(item.value, list):
            yield from _conversation(messages, options, header, opening, framework)
            messages, header, opening = [], None, None
            yield from _listed(item, options, framework)
        else:
            messages.append(item)
    yield from _conversation(messages, options, header, opening, framework)


def _conversation(
    messages: list[Record],
    options: TraceOptions,
    header: Mapping[str, Any] | None = None,
    opening: Record | None = None,
    framework: str | None = None,
) -> Iterator[TraceItem | Problem]:
    """The messages read one a record as one conversation; a bad one's problem at its record.

    ``opening``: the record the run begins at when it is no message (Kimi CLI's first
    checkpoint): the trace is named after it, as after its first message otherwise.
    """
    chat = family([record.value for record in messages])
    if chat is None:
        # Some record is no message (a note saved among them): each such its own error, the
        # rest read. Asked only then: a turn may be known only among the others (ShareGPT's).
        kept = []
        for record in messages:
            if recognises(record.value):
                kept.append(record)
            else:
                found = describe_value(record.value)
                yield record.problem((), f"expected a chat message, found {found}")
        messages = kept
    if not messages:
        return
    turns = [record.value for record in messages]
    try:
        chat = chat or _family_of(turns)
        at = opening or messages[0]
        yield convert_conversation(turns, at, options, chat, _told_by(header), framework=framework)
    except PathError as error:
        match error.path:
            case (int(index), *rest) if index < len(messages):
                yield messages[index].problem(tuple(rest), error.message)
            case _:
                yield messages[0].problem(error.path, error.message)
    except ConversionError as error:
        yield messages[0].problem((), str(error))


def _refused(record: Record, path: tuple[int, ...], reason: str) -> Problem:
    return record.problem(
        path,
        f"{reason}: no chat format kp reads (Chat Completions, Anthropic, Responses, ShareGPT) "
        "keeps a message so; convert the messages to one of them, or name the source that "
        "wrote them (source=; kp: --from)",
    )


def _listed(
    record: Record, options: TraceOptions, framework: str | None = None
) -> Iterator[TraceItem | Problem]:
    """A record that is a list of messages, as one conversation.

    A message of another API's form is its own error, the others read.
    """
    kept: list[int] = []  # the indexes of the messages read, to say where a problem is
    for index, turn in enumerate(record.value):
        reason = foreign(turn)
        if reason is None:
            kept.append(index)
        else:
            yield _refused(record, (index,), reason)
    if not kept:
        return
    turns = [record.value[index] for index in kept]
    try:
        yield convert_conversation(turns, record, options, _family_of(turns), framework=framework)
    except PathError as error:
        match error.path:
            case (int(index), *rest) if index < len(kept):
                yield record.problem((kept[index], *rest), error.message)
            case _:
                yield record.problem(error.path, error.message)
    except ConversionError as error:
        yield record.problem((), str(error))


def _family_of(turns: list[Any]) -> ChatSource:
    found = family(turns)
    if found is not None:
        return found
    candidates = [source.name for source in detect({_COLUMN: turns}, ChatSource)]
    if len(candidates) > 1:
        raise ConversionError(
            f"the messages read as {' and as '.join(candidates)} alike: put them in a row's "
            "messages column and name the format (source=; kp: --from)"
        )
    raise ConversionError(
        "the messages, read together, are in no chat format kp reads (Chat Completions, "
        "Anthropic, Responses, ShareGPT): check each has a role and content"
    )
