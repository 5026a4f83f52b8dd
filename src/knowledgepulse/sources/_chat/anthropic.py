"""Anthropic Messages conversations (``messages`` of content blocks) as traces.

The first user ``text`` is the objective, a later one the user's reply to the assistant text before
it (a ``respond`` call, see :meth:`StepBuilder.user_turn`); assistant ``text`` and ``thinking``
blocks are thoughts, the last assistant message without a ``tool_use`` the answer; a ``tool_use``
block (``server_tool_use`` too) is a tool call, joined by ``tool_use_id`` with the ``tool_result``
block that answers it (``web_search_tool_result`` and the other server results likewise); a result
with ``is_error: true`` is an evident error.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse.sources._chat import _row
from knowledgepulse.sources._chat._text import content_text, last_assistant, one_of, users_words
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the rows hold no message text; check messages_field (kp: --messages-field) "
    "names the messages column"
)
ROLES = frozenset({"user", "assistant"})
_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})


def matches(messages: list[Any]) -> bool:
    """Whether a list is Anthropic messages: user/assistant turns with Anthropic blocks."""
    if not all(isinstance(m, dict) and one_of(m.get("role"), ROLES) for m in messages):
        return False
    return any(
        isinstance(block, dict) and one_of(block.get("type"), _BLOCKS)
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def tell(
    messages: list[Any], builder: StepBuilder, *, errors: Container[int] = frozenset()
) -> _row.Told:
    """Tell the builder what Anthropic messages hold.

    ``errors``: the indexes of messages that are errors met outside a tool (a coding agent's
    record that the model's API failed): their text is an evident error, never the answer.
    """
    calls = _row.Calls(builder)
    objective: str | None = None
    last = last_assistant([m if n not in errors else None for n, m in enumerate(messages)])
    answered = False
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not one_of(message.get("role"), ROLES):
            raise PathError(
                (index,),
                f"not an Anthropic message: {describe_value(message)}; expected "
                "{role: user|assistant, content: ...}",
            )
        content = message.get("content")
        if not isinstance(content, str | list):
            raise PathError(
                (index, "content"),
                f"expected text or a list of blocks, found {describe_value(content)}",
            )
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if index in errors:
            builder.error(content_text(content))
            continue
        if message["role"] == "user":
            for number, block in enumerate(blocks):
                text = users_words(_user_block(calls, block, (index, "content", number)))
                if objective is None and text:
                    objective = text
                elif text is not None:  # the user answering the agent
                    calls.user(text)
            continue
        answered = _tell_assistant(calls, blocks, (index, "content"), last=index == last)
    return _row.Told(objective, answered or calls.answered)


def _tell_assistant(
    calls: _row.Calls, blocks: list[Any], path: tuple[str | int, ...], *, last: bool
) -> bool:
    """Tell an assistant message's blocks; whether its text is the final answer."""
    builder = calls.builder
    final = last and not any(
        isinstance(block, dict) and one_of(block.get("type"), _CALLS) for block in blocks
    )
    texts = []
    for number, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking" and isinstance(block.get("thinking"), str):
            builder.thought(block["thinking"])
        elif kind == "text" and isinstance(block.get("text"), str):
            if final:
                texts.append(block["text"])
            else:
                calls.said(block["text"])
        elif one_of(kind, _CALLS):
            _request(calls, block, (*path, number))
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            calls.result(None, block.get("content"), call_id=non_empty(block.get("tool_use_id")))
    if texts:
        builder.answer("\n".join(texts))
    return bool(texts)


def _user_block(calls: _row.Calls, block: Any, path: tuple[str | int, ...]) -> str | None:
    """Tell a user block; its text, when it is text."""
    if not isinstance(block, dict):
        return as_string(block)
    kind = block.get("type")
    if kind == "text":
        return as_string(block.get("text"))
    if kind == "tool_result":
        call_id = non_empty(block.get("tool_use_id"))
        if call_id is None:
            raise PathError(
                (*path, "tool_use_id"), "a tool_result needs the tool_use_id it answers"
            )
        content = block.get("content")
        text = content_text(content) if isinstance(content, list) else content
        calls.result(None, text, call_id=call_id, is_error=block.get("is_error") is True)
    return None


def _request(calls: _row.Calls, block: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        raise PathError((*path, "name"), f"expected a tool name, found {describe_value(name)}")
    calls.request(name, block.get("input"), non_empty(block.get("id")))


__all__ = ["CONTENT_HINT", "matches", "tell"]
