"""Kimi Code's wire journal (``~/.kimi-code/sessions/*/<session>/agents/<agent>/wire.jsonl``).

Kimi Code (MoonshotAI/kimi-code, the TypeScript agent after the Python Kimi CLI, whose context
file :mod:`..._chat.conversation` reads) writes one journal an agent (``main``, or a subagent's
``agent-0``...). Its first line is ``{"type": "metadata", "protocol_version": "1.4", "created_at":
<epoch ms>}``; each later line is one operation, ``{"type": <op>, ...payload, "time": <epoch
ms>}`` (``packages/agent-core``). The conversation is in two of them:

* ``context.append_message``: a message put into the model's context; a ``user`` one's ``text``
  parts are the user's words (the first the objective, a later one the user's next turn), unless
  its ``origin.kind`` is ``injection``: a ``<system-reminder>`` Kimi Code adds (plan mode...);
* ``context.append_loop_event``: what a model step did (``src/loop/events.ts``): ``step.begin``
  opens a step; ``content.part`` is a ``think`` part (a thought) or a ``text`` part (what the
  model said); ``tool.call`` a call (``toolCallId``, ``name``, ``args``); ``tool.result`` its
  result (``result.output``, text or content parts; ``result.isError`` when it failed).

Every other operation (``config.update``, ``llm.request``, ``usage.record``, ``turn.prompt``, the
echo of the user's words the context message repeats, ``permission.*``...) holds no step. The
model is the last ``llm.request``'s ``model``. Each step's parts are read as one Anthropic
assistant message, each result as a user message of its ``tool_result``, so the steps follow the
Anthropic messages' rules; success is whether the journal ends in the model's answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import anthropic
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Kimi Code writes every agent's wire.jsonl under ~/.kimi-code/sessions"
MESSAGE = "context.append_message"
LOOP_EVENT = "context.append_loop_event"
INJECTED = "injection"
"""The ``origin.kind`` of a user message Kimi Code adds itself (a ``<system-reminder>``)."""
EXPECTED = (
    '{"type": "metadata", "protocol_version", "created_at"} then {"type": <op>, ..., "time"} '
    "lines, as Kimi Code's agents/<agent>/wire.jsonl holds them"
)


@dataclass
class _Journal:
    """One journal as read: its header and the Anthropic messages its operations stand for."""

    header: Record
    messages: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    step_open: bool = False
    """Whether a ``step.begin`` came after the last assistant message was started."""
    unread: Counter[str] = field(default_factory=Counter)


def recognises(value: Any) -> bool:
    """Whether a file's first record is Kimi Code's journal header (Kimi CLI's has no time)."""
    return (
        isinstance(value, dict)
        and value.get("type") == "metadata"
        and isinstance(value.get("protocol_version"), str)
        and isinstance(value.get("created_at"), int | float)
        and not isinstance(value.get("created_at"), bool)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace of a journal; a line that cannot be read is a problem, the rest go on."""
    journal: _Journal | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
        elif journal is None:
            if recognises(item.value):
                journal = _Journal(item)
            else:
                yield item.problem(
                    (),
                    f"not a Kimi Code wire journal header: {describe_value(item.value)}; "
                    f"expected {EXPECTED}",
                )
        else:
            try:
                _take(journal, item.value)
            except PathError as error:
                yield item.problem(error.path, error.message)
    if journal is None:
        return
    try:
        yield _finish(journal, options)
    except PathError as error:
        yield journal.header.problem(error.path, error.message)
    except ConversionError as error:  # no step, say: about the whole journal
        yield journal.header.problem((), str(error))


def _take(journal: _Journal, value: Any) -> None:
    """Note one operation: a user message or a loop event is kept, the others passed over."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PathError(
            (), f"not a Kimi Code wire line: {describe_value(value)}; expected {EXPECTED}"
        )
    kind = value["type"]
    if kind == "llm.request":
        journal.model = as_string(value.get("model")) or journal.model
    elif kind == MESSAGE:
        _message(journal, value.get("message"))
    elif kind == LOOP_EVENT:
        event = value.get("event")
        if not isinstance(event, dict):
            raise PathError(("event",), f"expected a loop event, found {describe_value(event)}")
        _event(journal, event)


def _message(journal: _Journal, message: Any) -> None:
    """A context message: a user's text parts are a user turn; another role's is not read."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise PathError(
            ("message",), f"expected {{role, content: [parts]}}, found {describe_value(message)}"
        )
    role = as_string(message.get("role")) or "?"
    if role != "user":  # the steps are read from the loop events
        journal.unread[role] += 1
        return
    origin = message.get("origin")
    if isinstance(origin, dict) and origin.get("kind") == INJECTED:  # no words of the user
        return
    texts = [
        {"type": "text", "text": part["text"]}
        for part in message["content"]
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]
    if texts:
        journal.messages.append({"role": "user", "content": texts})


def _event(journal: _Journal, event: Mapping[str, Any]) -> None:
    """A loop event as the Anthropic block it stands for, in the message it belongs to."""
    kind = event.get("type")
    if kind == "step.begin":
        journal.step_open = True
    elif kind == "content.part" and isinstance(part := event.get("part"), dict):
        if part.get("type") == "think" and isinstance(part.get("think"), str):
            _assistant(journal).append({"type": "thinking", "thinking": part["think"]})
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            _assistant(journal).append({"type": "text", "text": part["text"]})
    elif kind == "tool.call":
        call = non_empty(event.get("toolCallId"))
        name = non_empty(event.get("name"))
        if call is None or name is None:
            raise PathError(("event",), "a tool.call needs its toolCallId and name")
        use = {"type": "tool_use", "id": call, "name": name, "input": event.get("args")}
        _assistant(journal).append(use)
    elif kind == "tool.result":
        call = non_empty(event.get("toolCallId"))
        if call is None:
            raise PathError(
                ("event", "toolCallId"), "a tool.result needs the toolCallId it answers"
            )
        result = event.get("result")
        said = result if isinstance(result, dict) else {}
        block = {
            "type": "tool_result",
            "tool_use_id": call,
            "content": said.get("output", ""),
            "is_error": said.get("isError") is True,
        }
        journal.messages.append({"role": "user", "content": [block]})


def _assistant(journal: _Journal) -> list[dict[str, Any]]:
    """The blocks of the step's assistant message: a new one after a step began or a user spoke."""
    last = journal.messages[-1] if journal.messages else None
    if last is None or last["role"] != "assistant" or journal.step_open:
        last = {"role": "assistant", "content": []}
        journal.messages.append(last)
        journal.step_open = False
    blocks: list[dict[str, Any]] = last["content"]
    return blocks


def _name(file: str) -> str:
    """The journal's name: ``<session>/<agent>`` for Kimi Code's own path, else the file's stem."""
    path = Path(file)
    if path.name == "wire.jsonl" and path.parent.parent.name == "agents":
        return f"{path.parents[2].name}/{path.parent.name}"
    return path.stem


def _finish(journal: _Journal, options: TraceOptions) -> TraceItem:
    builder = StepBuilder()
    told = anthropic.tell(journal.messages, builder)
    header = journal.header.value
    return assemble(
        builder,
        source="kimi-code",
        source_id=f"kimi-code:{_name(journal.header.location.file)}",
        success=told.answered and builder.final_answer is not None,
        options=options,
        objective=told.objective,
        created_at=header["created_at"] / 1000,
        result_summary=builder.final_answer,
        agent_id="kimi-code",
        framework="kimi-code",
        model=journal.model,
        warnings=tuple(
            f"{count} context message{'s' if count != 1 else ''} of role {role!r} passed over "
            "(kp reads the model's steps from the loop events)"
            for role, count in sorted(journal.unread.items())
        ),
        source_extra={"protocol_version": header["protocol_version"]},
        content_hint=CONTENT_HINT,
        location=Location(journal.header.location.file, journal.header.location.line),
    )


__all__ = ["CONTENT_HINT", "convert_records", "recognises"]
