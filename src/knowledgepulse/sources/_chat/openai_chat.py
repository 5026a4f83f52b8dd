"""OpenAI Chat Completions conversations (a row's ``messages``) as traces.

``system`` / ``developer`` messages are context; the first ``user`` message is the objective;
assistant ``content`` (and ``reasoning_content``, ``<think>`` blocks) are thoughts, the last
assistant message without a tool call the answer; each ``tool_calls[]`` entry (and the legacy
``function_call``) is a tool call whose ``arguments`` string is parsed, joined by
``tool_call_id`` with the ``tool`` message that answers it (``function`` messages by name).
Hermes ``<tool_call>`` / ``<tool_response>`` tags in the text are read as calls and results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.sources._chat import _row
from knowledgepulse.sources._chat._text import (
    content_text,
    has_tags,
    one_of,
    python_calls,
    split_think,
    tool_calls,
    tool_responses,
)
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the rows hold no message text; check messages_field (kp: --messages-field) "
    "names the messages column"
)
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function", "ipython"})
TEXT_KINDS = frozenset({"text", "input_text", "output_text"})
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def matches(messages: list[Any]) -> bool:
    """Whether a list is Chat Completions messages (each a ``role``, no Anthropic blocks)."""
    if not all(isinstance(m, dict) and one_of(m.get("role"), ROLES) for m in messages):
        return False
    return not any(
        isinstance(part, dict) and one_of(part.get("type"), _ANTHROPIC_BLOCKS)
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
    )


def tell(messages: list[Any], builder: StepBuilder) -> _row.Told:
    """Tell the builder what Chat Completions messages hold."""
    objective: str | None = None
    system: str | None = None
    calls = _row.Calls(builder)
    last = max(
        (
            index
            for index, message in enumerate(messages)
            if isinstance(message, dict) and message.get("role") == "assistant"
        ),
        default=-1,
    )
    answered = False
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not one_of(message.get("role"), ROLES):
            raise PathError((index,), _not_a_message(message))
        role = message["role"]
        text = content_text(message.get("content"), TEXT_KINDS)
        if role in ("system", "developer"):
            system = system or text
        elif role == "user":
            if has_tags(text):
                tagged_results(calls, text or "")
            elif objective is None and text:
                objective = text
        elif role == "assistant":
            answered = _tell_assistant(calls, message, (index,), final=index == last)
        elif has_tags(text):
            tagged_results(calls, text or "")
        else:
            call_id = message.get("tool_call_id")
            name = message.get("name")
            calls.result(
                name if isinstance(name, str) else None,
                message.get("content") if text is None else text,
                call_id=call_id if isinstance(call_id, str) else None,
            )
    return _row.Told(objective, answered or calls.answered, system)


def assistant_text(calls: _row.Calls, text: str) -> tuple[str, bool]:
    """Tell an assistant text's ``<think>`` blocks and ``<tool_call>`` tags.

    Returns:
        The text left to tell, and whether the text called a tool.
    """
    thinks, text = split_think(text)
    for think in thinks:
        calls.builder.thought(think)
    bracketed = python_calls(text) if text.startswith("[") else None
    if bracketed:
        for call in bracketed:
            calls.request(call.name, call.arguments)
        return "", True
    if not has_tags(text):
        return text, False
    tagged, text = tool_calls(text)
    calls.builder.thought(text)
    for call in tagged:
        calls.request(call.name, call.arguments)
    return "", bool(tagged)


def tagged_results(calls: _row.Calls, text: str) -> None:
    """Tell the ``<tool_response>`` blocks of a turn."""
    for name, content in tool_responses(text):
        calls.result(name, content)


def _tell_assistant(
    calls: _row.Calls, message: Mapping[str, Any], path: tuple[str | int, ...], *, final: bool
) -> bool:
    builder = calls.builder
    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str):
            builder.thought(message[key])
    text, tagged = assistant_text(calls, content_text(message.get("content"), TEXT_KINDS) or "")
    requested = message.get("tool_calls") or []
    if not isinstance(requested, list):
        raise PathError(
            (*path, "tool_calls"), f"expected a list, found {describe_value(requested)}"
        )
    legacy = message.get("function_call")
    if final and not requested and not tagged and not legacy and text.strip():
        builder.answer(text)
        return True
    builder.thought(text)
    for number, call in enumerate(requested):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise PathError(
                (*path, "tool_calls", number, "function", "name"),
                f"expected a tool name, found {describe_value(name)}",
            )
        call_id = call.get("id")
        calls.request(
            name, function.get("arguments"), call_id if isinstance(call_id, str) else None
        )
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.request(legacy["name"], legacy.get("arguments"))
    return False


def _not_a_message(value: Any) -> str:
    return (
        f"not a chat message: {describe_value(value)}; expected "
        f"{{role: {'|'.join(sorted(ROLES))}, content: ...}}"
    )


__all__ = ["CONTENT_HINT", "matches", "tell"]
