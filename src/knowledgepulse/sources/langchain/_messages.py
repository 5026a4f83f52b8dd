"""LangChain messages in every shape a run holds them, read as plain data.

A run's inputs and outputs carry messages as LangChain serialises them (``dumpd``:
``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``), as pydantic
dumps them (``{"type": "ai", "content": ...}``), in the OpenAI shape LangSmith's wrappers record
(``{"role": "assistant", ...}``), as ``(role, text)`` tuples, or as a bare string (a user
message); a chat history keeps them as ``messages_to_dict`` writes them (``{"type": "ai",
"data": {...}}``). Every shape becomes one :class:`Message`; anything else is not a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, non_empty
from knowledgepulse.sources._chat._text import one_of
from knowledgepulse.sources._hosted import failure, list_tools_error, tool_name

FRAMEWORK = "langchain"
"""The ``metadata.framework`` of what LangChain ran or saved (a run's, a chat history's)."""

# LangChain class names and role spellings, to one role each.
_ROLES = {
    "human": "human",
    "user": "human",
    "humanmessage": "human",
    "humanmessagechunk": "human",
    "ai": "ai",
    "assistant": "ai",
    "aimessage": "ai",
    "aimessagechunk": "ai",
    "tool": "tool",
    "toolmessage": "tool",
    "toolmessagechunk": "tool",
    "function": "tool",
    "functionmessage": "tool",
    "system": "system",
    "developer": "system",
    "systemmessage": "system",
}
_TEXT_BLOCKS = frozenset({"text", "output_text"})
_REASONING_BLOCKS = frozenset({"reasoning", "thinking"})
_MAX_DEPTH = 8
"""How deep :func:`find_messages` looks into a run's inputs or outputs."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call an AI message asks for."""

    name: str
    arguments: Any
    call_id: str | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message, whatever shape it came in.

    Attributes:
        role: ``human``, ``ai``, ``tool``, ``system``, or the role a ``ChatMessage`` names.
        text: the text parts joined, or ``None`` when there are none.
        reasoning: the reasoning (thinking) parts, in order.
        tool_calls: the tool calls an AI message asks for.
        tool_call_id: for a tool message, the call it answers.
        status: for a tool message, ``success`` or ``error``.
        name: the message's ``name`` (a tool message's tool).
        errors: errors the reply reports that are no call's (an MCP server that could not
            list its tools), errors of the run's.
    """

    role: str
    text: str | None = None
    reasoning: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    tool_call_id: str | None = None
    status: str | None = None
    name: str | None = None
    errors: tuple[str, ...] = ()


def as_message(value: Any) -> Message | None:
    """``value`` read as a message, or ``None`` when it is not one."""
    if isinstance(value, str):
        return Message("human", value)
    if _is_pair(value):
        return _message(_ROLES[value[0].lower()], {"content": value[1]})
    if not isinstance(value, Mapping):
        return None
    if value.get("lc") == 1 and isinstance(value.get("id"), list) and value["id"]:
        kwargs = value.get("kwargs")
        if not isinstance(kwargs, Mapping) or value.get("type") != "constructor":
            return None
        role = _ROLES.get(str(value["id"][-1]).lower())
        if role is None and str(value["id"][-1]) in ("ChatMessage", "ChatMessageChunk"):
            role = str(kwargs.get("role") or "")
        return _message(role, kwargs) if role else None
    kind, data = value.get("type"), value.get("data")
    if isinstance(kind, str) and isinstance(data, Mapping) and "content" in data:
        # messages_to_dict's {"type": "ai", "data": {...}}: a ChatMessage's role is in data.
        role = _ROLES.get(kind.lower()) or (as_string(data.get("role")) if kind == "chat" else None)
        return _message(role, data) if role else None
    if isinstance(kind, str) and kind.lower() in _ROLES and "content" in value:
        return _message(_ROLES[kind.lower()], value)
    role = value.get("role")
    if isinstance(role, str) and ("content" in value or "tool_calls" in value):
        return _message(_ROLES.get(role.lower(), role.lower()), value)
    return None


def _is_pair(value: Any) -> bool:
    """A ``(role, text)`` tuple, as LangGraph and prompt templates take them."""
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and value[0].lower() in _ROLES
    )


def _message(role: str, fields: Mapping[str, Any]) -> Message:
    texts, reasoning = _content(fields.get("content"))
    extra = fields.get("additional_kwargs")
    if isinstance(extra, Mapping):
        # Providers that are not standard blocks yet (DeepSeek, vLLM, OpenRouter) put it here.
        for key in ("reasoning_content", "reasoning"):
            if isinstance(extra.get(key), str) and extra[key].strip():
                reasoning.insert(0, extra[key])
    calls = _tool_calls(fields) if role == "ai" else ()
    status = fields.get("status")
    call_id = fields.get("tool_call_id")
    name = fields.get("name")
    return Message(
        role=role,
        text="\n".join(texts) or None,
        reasoning=tuple(reasoning),
        tool_calls=calls,
        tool_call_id=non_empty(call_id),
        status=as_string(status),
        name=non_empty(name),
    )


def _content(content: Any) -> tuple[list[str], list[str]]:
    """The text and reasoning parts of a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return ([content] if content.strip() else []), []
    texts: list[str] = []
    reasoning: list[str] = []
    if not isinstance(content, list):
        return texts, reasoning
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping):
            kind = block.get("type")
            kind = as_string(kind)  # a list names no block type
            if kind in _TEXT_BLOCKS and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind in _REASONING_BLOCKS:
                reasoning.extend(_reasoning_text(block))
    return [text for text in texts if text.strip()], reasoning


def _reasoning_text(block: Mapping[str, Any]) -> list[str]:
    """A reasoning block's text: ``reasoning``, ``thinking``, or an OpenAI ``summary`` list."""
    for key in ("reasoning", "thinking", "text"):
        if isinstance(block.get(key), str) and block[key].strip():
            return [block[key]]
    summary = block.get("summary")
    if isinstance(summary, list):
        parts = [item.get("text") for item in summary if isinstance(item, Mapping)]
        joined = "\n".join(part for part in parts if isinstance(part, str))
        return [joined] if joined.strip() else []
    return []


def _tool_calls(fields: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    calls = _valid_calls(fields.get("tool_calls"))
    for call in _list(fields.get("invalid_tool_calls")):
        if isinstance(call, Mapping) and isinstance(call.get("name"), str):
            error = call.get("error") if isinstance(call.get("error"), str) else None
            calls.append(
                ToolCall(
                    call["name"],
                    call.get("args"),
                    non_empty(call.get("id")),
                    error=f"invalid tool call: {error or 'its arguments could not be read'}",
                )
            )
    extra = fields.get("additional_kwargs")
    if not calls and isinstance(extra, Mapping):
        # Messages serialised before LangChain had ``tool_calls`` keep OpenAI's shape here.
        calls = _valid_calls(extra.get("tool_calls"))
    return tuple(calls)


def _valid_calls(value: Any) -> list[ToolCall]:
    """The calls of a ``tool_calls`` list, LangChain's (``name``, ``args``) or OpenAI's."""
    calls = []
    for call in _list(value):
        function = as_object(call).get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            calls.append(
                ToolCall(function["name"], function.get("arguments"), non_empty(call.get("id")))
            )
        elif isinstance(call, Mapping) and isinstance(call.get("name"), str) and call["name"]:
            calls.append(ToolCall(call["name"], call.get("args"), non_empty(call.get("id"))))
    return calls


_RESPONSES_CALLS = frozenset({"function_call", "custom_tool_call"})
_LIST_TOOLS = "mcp_list_tools"
_RESPONSES_ITEMS = frozenset({"message", "reasoning", _LIST_TOOLS, *_RESPONSES_CALLS})


def responses_reply(value: Any) -> Message | None:
    """A list of OpenAI Responses output items read as the one AI message they amount to.

    The LangSmith SDK's Agents SDK processor records a model call's ``outputs`` (and the
    workflow's) as ``{"output": [items]}``: ``message`` items with ``output_text`` parts,
    ``reasoning`` items with a ``summary``, ``function_call`` items (a handoff is one, named
    ``transfer_to_<agent>``), and the calls of the tools the API runs itself (``web_search_call``,
    ``mcp_call``...), named as every reader of Responses items names them
    (:func:`_hosted.tool_name`: ``web_search``), no tool run running them: one that failed is
    a failed call. An ``mcp_list_tools`` item (the tools an MCP server offers, fetched by the
    API itself) is no call, as in the Responses reader; its ``error`` (the server could not
    list them) is an error of the run's. ``None`` when the list is not such items.
    """
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(item, Mapping) and _responses_item(item) for item in value):
        return None
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    errors: list[str] = []
    for item in value:
        kind = item["type"]
        if kind == _LIST_TOOLS:
            errors += _list_error(item)
        elif kind == "message" and item.get("role", "assistant") == "assistant":
            texts += _content(item.get("content"))[0]
        elif kind == "reasoning":
            reasoning += _reasoning_text(item)
        elif kind in _RESPONSES_CALLS and isinstance(item.get("name"), str) and item["name"]:
            arguments = item.get("arguments", item.get("input"))
            calls.append(ToolCall(item["name"], arguments, non_empty(item.get("call_id"))))
        elif (name := tool_name(item)) is not None and kind not in _RESPONSES_CALLS:
            calls.append(_hosted_call(item, name))
    if not (texts or reasoning or calls or errors):
        return None
    text = "\n".join(texts) or None
    return Message("ai", text, tuple(reasoning), tuple(calls), errors=tuple(errors))


def _list_error(item: Mapping[str, Any]) -> list[str]:
    """An ``mcp_list_tools`` item's ``error``, said with its server (``server_label``)."""
    said = list_tools_error(item)
    return [] if said is None else [said]


def _responses_item(item: Mapping[str, Any]) -> bool:
    """Whether an item is one :func:`responses_reply` reads: a message, reasoning, a call."""
    return one_of(item.get("type"), _RESPONSES_ITEMS) or tool_name(item) is not None


def _hosted_call(item: Mapping[str, Any], name: str) -> ToolCall:
    """A call the API ran itself (or holds for approval): its input, and its failure, if any.

    Its failure is the Responses reader's: an ``mcp_call``'s ``error``, or the ``status``
    ``failed`` (``incomplete``, the response stopped before the call ended, is none).
    """
    arguments = next(
        (item[key] for key in ("arguments", "input", "action", "code", "queries") if key in item),
        None,
    )
    failed = failure(item, name)
    if failed is not None and not isinstance(failed, str):  # an error object with no text
        failed = json.dumps(failed, ensure_ascii=False, default=str)
    call_id = non_empty(item.get("call_id")) or non_empty(item.get("id"))
    return ToolCall(name, arguments, call_id, error=failed)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def message_list(value: Any) -> list[Message]:
    """The messages of a ``messages`` input: a list, or a batch of lists (chat model runs)."""
    batches = isinstance(value, list) and value and all(isinstance(item, list) for item in value)
    if batches and not all(_is_pair(item) for item in value):
        value = [message for batch in value for message in batch]
    if not isinstance(value, list):
        single = as_message(value)
        return [single] if single is not None else []
    found = (as_message(item) for item in value)
    return [message for message in found if message is not None]


def find_messages(value: Any, depth: int = 0) -> Iterator[Message]:
    """Every message inside a run's inputs or outputs (dicts and lists, not too deep).

    Bare strings are not counted as messages here: inside arbitrary outputs they are just text.
    """
    if depth > _MAX_DEPTH or isinstance(value, str):
        return
    message = as_message(value)
    if message is not None:
        yield message
        return
    if isinstance(value, Mapping):
        for item in value.values():
            yield from find_messages(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from find_messages(item, depth + 1)


def content_text(value: Any) -> str | None:
    """A tool output as text: a message's text, a string, else JSON."""
    message = as_message(value) if not isinstance(value, str) else None
    if message is not None:
        return message.text
    if isinstance(value, str):
        return value
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, default=str)


__all__ = [
    "FRAMEWORK",
    "Message",
    "ToolCall",
    "as_message",
    "content_text",
    "find_messages",
    "message_list",
    "responses_reply",
]
