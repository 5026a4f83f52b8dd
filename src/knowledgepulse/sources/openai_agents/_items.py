"""The Agents SDK's model output, read as entries: reasoning, messages, tool calls, tool outputs.

A model turn's output comes in two shapes: Responses API output items (``message``,
``reasoning``, ``function_call``, hosted ``web_search_call``/``mcp_call``...; what a response
span and a ``RunResult`` hold) and Chat Completions messages (what a generation span holds). Both
become the same :class:`Entry` list, as plain data, so the span reader and the ``RunResult``
reader tell the step builder the same way. Everything here takes JSON-like dicts, never a live
SDK object: the callers dump those first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from knowledgepulse._util.jsonpath import as_object, non_empty
from knowledgepulse.sources._hosted import (
    call_failed,
    failure,
    hosted_result,
    list_tools_error,
    tool_name,
)
from knowledgepulse.sources._steps import StepBuilder, Timestamp, as_text, newest_request

EntryKind = Literal["thought", "message", "request", "hosted", "output", "error"]

# Each call is named by the one rule of every reader of Responses items (``_hosted.tool_name``):
# its ``name``, else its type less ``_call`` (``web_search``), as the SDK's tool classes are.
_HOSTED = frozenset(
    # Server-side tools: the call and its result are in the model's own output.
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "tool_search_call",
    }
)
_LOCAL = frozenset(
    # Tools the SDK runs itself: a function span (named after the tool) records the execution.
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
    }
)
SDK_TOOL_ERROR_PREFIXES = (
    "An error occurred while running the tool",
    "An error occurred while parsing tool arguments",
)
"""How the SDK's default ``failure_error_function`` words a failed tool's output."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing a model turn or a run item says.

    ``thought``: reasoning text; ``message``: assistant text (a thought, or the final answer);
    ``request``: a tool call the SDK will run; ``hosted``: a server-side tool call with its result;
    ``output``: a tool's result, joined to its request by ``call_id``; ``error``: an evident
    error no call of the model's met (an MCP server whose tools could not be listed).
    """

    kind: EntryKind
    text: str | None = None
    name: str = ""
    arguments: Any = None
    output: Any = None
    error: str | None = None
    call_id: str | None = None
    mcp_server: str | None = None


def transfer_tool(agent: str | None) -> str:
    """The SDK's default handoff tool name for an agent (``Handoff.default_tool_name``)."""
    if not agent:
        return "transfer"
    return re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", f"transfer_to_{agent}")).lower()


def _text_parts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence):
        return ""
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type", kinds[0]) in kinds:
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(text for text in texts if text)


def output_item_entries(item: Any) -> list[Entry]:
    """The entries of one Responses API output item (a dict); unknown items give none."""
    if not isinstance(item, Mapping):
        return []
    kind = item.get("type")
    if not isinstance(kind, str | None):  # a list or an object names no item type
        return []
    if kind == "message" or (kind is None and item.get("role") == "assistant"):
        if item.get("role", "assistant") != "assistant":
            return []
        text = _text_parts(item.get("content"), ("output_text", "refusal", "text"))
        return [Entry("message", text=text)] if text else []
    if kind == "reasoning":
        text = "\n".join(
            part
            for part in (
                _text_parts(item.get("summary"), ("summary_text",)),
                _text_parts(item.get("content"), ("reasoning_text",)),
            )
            if part
        )
        return [Entry("thought", text=text)] if text else []
    if kind == "mcp_call":
        return [_mcp_call(item)]
    if kind == "mcp_list_tools":
        # The API's listing of an MCP server's tools: no call of the model's, no step, unless
        # its ``error`` says the server could not list them, an evident error of the run's.
        said = list_tools_error(item)
        return [Entry("error", text=said)] if said else []
    if kind in _HOSTED:
        return [_hosted(item, tool_name(item) or "tool")]
    if kind in _LOCAL:
        name = tool_name(item) or "tool"
        arguments = item.get("arguments", item.get("input", item.get("action")))
        call_id = non_empty(item.get("call_id")) or non_empty(item.get("id"))
        return [Entry("request", name=name, arguments=arguments, call_id=call_id)]
    return []


def _mcp_call(item: Mapping[str, Any]) -> Entry:
    """A hosted MCP call with its result, or its failure.

    The failure is its ``error`` (text, or openai-python's ``McpToolCallError`` object, said by
    its message), or, with none to say why, its ``status`` ``failed`` (``incomplete`` is none,
    see :func:`_hosted.call_failed`).
    """
    name = tool_name(item) or "mcp_call"
    error = failure(item, name)
    return Entry(
        "hosted",
        name=name,
        arguments=item.get("arguments"),
        output=item.get("output"),
        error=as_text(error) if error else None,
        call_id=non_empty(item.get("id")),
        mcp_server=non_empty(item.get("server_label")),
    )


def _hosted(item: Mapping[str, Any], name: str) -> Entry:
    """A server-side tool's call with its result; failed only when its ``status`` says so.

    ``incomplete`` (the response stopped before the call ended) is no failure, as the Responses
    reader reads it: :func:`_hosted.call_failed` is the one rule. The result is read as every
    reader of Responses items reads it (:func:`_hosted.hosted_result`): a file search's
    ``results``, the text of what the code interpreter printed (its ``outputs``' logs, not their
    JSON), the image the image generator made said by its type (``<image/png>``), never its
    base64 bytes as text.
    """
    arguments: Any = item.get("action")
    if arguments is None and "queries" in item:
        arguments = {"queries": item.get("queries")}
    if arguments is None and "code" in item:
        arguments = {"code": item.get("code")}
    if arguments is None:  # a tool search's query (``tool_search_call``) is its arguments
        arguments = item.get("arguments")
    return Entry(
        "hosted",
        name=name,
        arguments=arguments,
        output=hosted_result(item),
        error=f"{name} failed" if call_failed(item) else None,
        call_id=non_empty(item.get("id")),
    )


def chat_message_entries(message: Any) -> list[Entry]:
    """The entries of one Chat Completions assistant message (a generation span's output)."""
    if not isinstance(message, Mapping):
        return []
    if isinstance(message.get("output"), list):
        # A streamed or adapted generation records the whole Responses-shaped response.
        return [entry for item in message["output"] for entry in output_item_entries(item)]
    if message.get("role", "assistant") != "assistant":
        return []
    entries: list[Entry] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        entries.append(Entry("thought", text=reasoning))
    text = _text_parts(message.get("content"), ("text", "output_text"))
    if text:
        entries.append(Entry("message", text=text))
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = as_object(call.get("function"))
        entries.append(
            Entry(
                "request",
                name=non_empty(function.get("name")) or "tool",
                arguments=function.get("arguments"),
                call_id=non_empty(call.get("id")),
            )
        )
    return entries


def user_text(model_input: Any) -> str | None:
    """The user's request in a model input (a string, or a list of items/messages).

    Its newest turn (:func:`~knowledgepulse.sources._steps.newest_request`): a run that
    continues a conversation is given its earlier turns (``result.to_input_list()``) and the
    next question, which is what this run was asked.
    """
    if isinstance(model_input, str):
        return model_input if model_input.strip() else None
    if not isinstance(model_input, Sequence):
        return None
    return newest_request(
        [_said_by_user(item) for item in model_input],
        [_from_the_run(item) for item in model_input],
    )


def system_text(model_input: Any) -> str | None:
    """The system prompt in a model input: its first ``system`` (or ``developer``) message's text.

    The Chat Completions model sends the agent's instructions so.
    """
    if isinstance(model_input, str) or not isinstance(model_input, Sequence):
        return None
    for item in model_input:
        if isinstance(item, Mapping) and item.get("role") in ("system", "developer"):
            text = _text_parts(item.get("content"), ("input_text", "text"))
            if text.strip():
                return text
    return None


def _said_by_user(item: Any) -> str | None:
    """A user message's (or a bare string's) text, else ``None``."""
    if isinstance(item, str):
        return item if item.strip() else None
    if isinstance(item, Mapping) and item.get("role") == "user":
        text = _text_parts(item.get("content"), ("input_text", "text"))
        return text if text.strip() else None
    return None


def _from_the_run(item: Any) -> bool:
    """Whether an input item is a turn's work: the model's message, a call, a tool's output."""
    return isinstance(item, Mapping) and item.get("role") not in ("user", "system", "developer")


def is_sdk_tool_error(output: Any) -> bool:
    """Whether a tool output is the SDK's default wording of a failure."""
    return isinstance(output, str) and output.startswith(SDK_TOOL_ERROR_PREFIXES)


def final_answer_index(entries: Sequence[Entry]) -> int | None:
    """The index of the final answer: the last message after which no tool was called."""
    for index in range(len(entries) - 1, -1, -1):
        kind = entries[index].kind
        if kind == "message":
            return index
        if kind in ("request", "hosted", "output", "error"):
            return None
    return None


def tell(
    builder: StepBuilder,
    entries: Iterable[Entry],
    *,
    at: Timestamp = None,
    answer: Entry | None = None,
) -> None:
    """Tell the builder a list of entries, all at ``at``; ``answer`` is the final answer."""
    for entry in entries:
        if entry is answer:
            builder.answer(entry.text, at=at)
        elif entry.kind in ("thought", "message"):
            builder.thought(entry.text, at=at)
        elif entry.kind == "request":
            builder.tool_request(
                entry.name,
                entry.arguments,
                call_id=entry.call_id,
                at=at,
                mcp_server=entry.mcp_server,
            )
        elif entry.kind == "error":
            builder.error(entry.text, at=at)
        else:
            builder.tool_result(
                entry.name,
                arguments=entry.arguments,
                output=entry.output,
                error=entry.error,
                call_id=entry.call_id,
                at=at,
                mcp_server=entry.mcp_server,
            )


def output_text(value: Any) -> str:
    """A tool output as text (a ``function_call_output``'s ``output`` may be a list of parts)."""
    if isinstance(value, list):
        text = _text_parts(value, ("input_text", "output_text", "text"))
        if text:
            return text
    return as_text(value)
