"""The Hugging Face Hub's Session Trace Simple Format (STS-Format) as traces.

What a harness writes for the Hub's trace viewer (``docs/hub/session-traces-format.md`` in
huggingface/hub-docs): JSON Lines, a header ``{"type": "session", "harness", "id", "name"}`` (the
harness that wrote it; any other key is metadata), then one ``{"type": "message", "message":
{...}}`` line a message: ``role`` ``user``, ``assistant``, ``system`` or ``tool``, ``content``
text, and optionally ``reasoningContent`` (the model's reasoning), ``toolCalls`` (an assistant's
``[{id, function: {name, arguments}}]``, ``arguments`` JSON text), ``toolCallId`` (on a ``tool``
message: the call it answers), ``timestamp`` (Unix ms) and ``model``.

A file is one session, read as Pi's messages are (:mod:`.pi`, by the Anthropic reader): the first
user text is the objective, reasoning and text are thoughts, the last assistant text after its
last call the answer; a call joined by ``toolCallId`` with its result is a tool call and its
observation. ``system`` messages are instructions, no step. The format marks no failed call and
no outcome: success is whether the session ends in the assistant's answer. llama.cpp's web UI
(``harness: llama.app``) exports a conversation's tree: each message names its ``parent``, and the
header its ``currNode``, the message the user last saw; the session is the branch from it up to
the root, as the UI shows it (the ``root`` message anchors the tree, no turn). A message in Pi's
shape (``toolResult``, ``toolCall`` blocks), as a harness writing Pi's messages under this header
does, is read as Pi's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import epoch_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat._text import json_or_value
from knowledgepulse.sources._envelope import UNDATED, TraceOptions, assemble, last_model
from knowledgepulse.sources._sessions import pi
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "the harness writes each message's text in its content"
MAPPING = {
    "steps": "the message lines' message (on currNode's branch where the header names one)",
    "id": "the header's id",
    "success": "whether the last assistant message is its answer",
    "created_at": "the first message's timestamp",
}


def recognises(value: Any) -> bool:
    """Whether a file's first record is an STS header: a session naming its ``harness``.

    A Pi header (its ``cwd``) is Pi's, even where a harness named itself in it.
    """
    return (
        isinstance(value, dict)
        and value.get("type") == "session"
        and isinstance(value.get("harness"), str)
        and not pi.recognises(value)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The one trace of a session file; a line that is no message is a problem, the rest read."""
    session = yield from pi.gathered(records, recognises, _entry)
    if session is not None:
        yield from pi.told(session, partial(_finish, options=options))


def _entry(value: Any) -> bool | str:
    """A message line is read; a line of another type (one a later version adds) read past."""
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return bool(value["type"] == "message")
    return (
        f"not an STS line: {describe_value(value)}; expected "
        "{type: message, message: {role, content}}"
    )


def _finish(session: pi.Session, options: TraceOptions) -> TraceItem:
    header = session.header
    lines = _branch(header, session.entries)
    messages = [(line, _as_pi(line)) for line in lines]
    told, errors, origin = pi.messages_of([(line, m) for line, m in messages if m is not None])
    builder = StepBuilder()
    said = pi.tell(told, builder, errors, origin)
    model = last_model(m.get("model") for _, m in messages if isinstance(m, dict))
    extra: dict[str, Any] = {"harness": header.get("harness")} if header else {}
    times = [epoch_time(m.get("timestamp")) for _, m in messages if isinstance(m, dict)]
    started = next((t for t in times if t is not None), None)
    location = session.first.location
    harness = non_empty(header.get("harness"))
    return assemble(
        builder,
        source="sts",
        source_id=non_empty(header.get("id")) or Path(location.file).stem,
        success=said.answered and builder.final_answer is not None,
        options=options,
        objective=said.objective,
        created_at=started or UNDATED,
        result_summary=builder.final_answer,
        agent_id=harness or "sts",
        framework="sts",
        model=model,
        source_extra=extra or None,
        content_hint=CONTENT_HINT,
        location=Location(location.file, location.line),
    )


def _branch(header: Mapping[str, Any], lines: list[Record]) -> list[Record]:
    """The lines of the branch the header's ``currNode`` ends, root first; all without one."""
    leaf_id = header.get("currNode")
    by_id = {
        m["id"]: line
        for line in lines
        if isinstance(m := line.value.get("message"), dict) and isinstance(m.get("id"), str)
    }
    if not isinstance(leaf_id, str) or leaf_id not in by_id:
        return lines
    path: list[Record] = []
    leaf: Record | None = by_id[leaf_id]
    while leaf is not None and leaf not in path:
        path.append(leaf)
        parent = leaf.value["message"].get("parent")
        leaf = by_id.get(parent) if isinstance(parent, str) else None
    return path[::-1]


def _as_pi(line: Record) -> dict[str, Any] | None:
    """A message line's message as Pi writes one; ``None`` for a system or root message."""
    message = line.value.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise pi.Located(
            line,
            f"not an STS message: {describe_value(message)}; expected "
            "{role: user|assistant|system|tool, content}",
        )
    role = message["role"]
    if role == "system" or message.get("type") == "root":
        return None
    if role == "tool":
        return {**message, "role": "toolResult", "isError": message.get("isError") is True}
    if role != "assistant" or not ("toolCalls" in message or "reasoningContent" in message):
        return message
    blocks: list[dict[str, Any]] = []
    reasoning = as_string(message.get("reasoningContent"))
    if reasoning:
        blocks.append({"type": "thinking", "thinking": reasoning})
    content = message.get("content")
    blocks += content if isinstance(content, list) else [{"type": "text", "text": content}]
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            blocks.append(
                {
                    "type": "toolCall",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": json_or_value(function.get("arguments")),
                }
            )
    return {**message, "content": blocks}


def describe(first: Any, count: int) -> str:
    """``read as sts (1 trace)``, the harness, and where success comes from."""
    harness = first.get("harness") if isinstance(first, dict) else None
    return (
        f"read as sts ({counted(count, 'trace')}): a Session Trace Simple Format session of "
        f"{harness!r}; success is whether it ends in the assistant's answer"
    )
