"""A LangChain chat history saved as JSON, read as the conversation it is.

LangChain saves a conversation's messages in two shapes: ``messages_to_dict`` (what
``FileChatMessageHistory`` and the database-backed histories store: ``{"type": "ai", "data":
{content, tool_calls...}}``) and ``dumpd`` (the serialised class: ``{"lc": 1, "type":
"constructor", "id": [..., "AIMessage"], "kwargs": {...}}``). Neither has a ``role``, so no chat
format reads them: each such message is read by the run reader's one definition of a LangChain
message (:func:`~knowledgepulse.sources.langchain._messages.as_message`) and given to the
conversation reader as the Chat Completions message it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from itertools import chain
from typing import Any

from knowledgepulse._util.jsonpath import as_object, non_empty
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat import conversation
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.langchain._messages import FRAMEWORK, Message, as_message
from knowledgepulse.trace import TraceItem

_CHAT_ROLES = {"human": "user", "ai": "assistant"}
"""LangChain's roles where Chat Completions names them otherwise (``tool``, ``system`` agree)."""


def is_dump(value: Any) -> bool:
    """Whether ``value`` is a LangChain message as ``messages_to_dict`` or ``dumpd`` writes it."""
    if not isinstance(value, Mapping) or "role" in value:
        return False
    if value.get("lc") == 1 and value.get("type") == "constructor":
        path = value.get("id")
        return isinstance(path, list) and bool(path) and "Message" in str(path[-1])
    return isinstance(value.get("type"), str) and isinstance(value.get("data"), Mapping)


def chat_message(message: Message) -> dict[str, Any]:
    """A LangChain message as the Chat Completions message it stands for.

    A tool message that failed (``status: "error"``, LangGraph's ``ToolNode`` catching a tool's
    exception) keeps its ``status``, which the chat reader reads as the call's failure.
    """
    chat: dict[str, Any] = {
        "role": _CHAT_ROLES.get(message.role, message.role),
        "content": message.text,
    }
    if message.reasoning:
        chat["reasoning_content"] = "\n".join(message.reasoning)
    if message.tool_calls:
        chat["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        chat["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role == "tool":
        chat["name"] = message.name
    if message.status is not None and message.role == "tool":
        chat["status"] = message.status
    return chat


def as_chat(value: Any) -> Any:
    """A record with each LangChain dump in it (it, or a list's items) as a chat message."""
    if isinstance(value, list):
        return [_as_chat_one(item) for item in value]
    return _as_chat_one(value)


def _as_chat_one(value: Any) -> Any:
    message = as_message(value) if is_dump(value) else None
    if message is None:
        return value
    chat = chat_message(message)
    model = _model_of(value) if message.role == "ai" else None
    return chat if model is None else {**chat, "model": model}


def _model_of(dump: Mapping[str, Any]) -> str | None:
    """The model an ``AIMessage``'s dump names, in its ``response_metadata``.

    The chat models write it as ``model_name`` (OpenAI's) or ``model`` (Ollama's, Anthropic's).
    """
    fields = as_object(dump.get("data") or dump.get("kwargs"))
    metadata = as_object(fields.get("response_metadata"))
    return non_empty(metadata.get("model_name")) or non_empty(metadata.get("model"))


def recognises(value: Any) -> bool:
    """Whether a file's first record is a chat message (LangChain's dumps too), a list of them."""
    return conversation.recognises(as_chat(value))


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The file's conversations, LangChain's dumps read as the chat messages they stand for.

    The conversation reader's (:func:`~knowledgepulse.sources._chat.conversation.convert_records`),
    told the traces' framework is ``langchain`` when the file opens with LangChain's dumps (the
    first record the source was recognised by): the chat format they are read as is not the
    one that wrote them.
    """
    entries = iter(records)
    opening: list[Record | Problem] = []
    for entry in entries:
        opening.append(entry)
        if not isinstance(entry, Problem):
            break
    first = opening[-1] if opening else None
    framework = FRAMEWORK if isinstance(first, Record) and _dumped(first.value) else None
    read = (
        entry if isinstance(entry, Problem) else replace(entry, value=as_chat(entry.value))
        for entry in chain(opening, entries)
    )
    yield from conversation.convert_records(read, options, framework)


def _dumped(value: Any) -> bool:
    """Whether a record is a LangChain dump, or a list holding one."""
    return any(map(is_dump, value)) if isinstance(value, list) else is_dump(value)


__all__ = ["as_chat", "chat_message", "convert_records", "is_dump", "recognises"]
