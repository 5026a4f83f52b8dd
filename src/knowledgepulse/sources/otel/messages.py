"""Chat messages in the GenAI shape, from every way instrumentations write them.

The GenAI conventions write ``[{"role", "parts": [{"type": "text"|"reasoning"|"tool_call"|
"tool_call_response"|"server_tool_call"|..., ...}]}]``, as a JSON string (Python) or a structured
value. OpenLLMetry and LangSmith write OpenAI-style ``{"role", "content", "tool_calls"}`` JSON,
older OpenLLMetry flattened names (``gen_ai.prompt.0.content``), OpenInference its own flattened
names (``llm.input_messages.0.message.content``). All become the GenAI shape here: a list of
``{"role": str, "parts": [dict]}``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import non_empty
from knowledgepulse.sources._chat import gemini
from knowledgepulse.sources._hosted import (
    PYDANTIC_AI_MCP,
    mcp_call_result,
    pydantic_ai_list_tools_error,
    pydantic_ai_mcp_call,
    pydantic_ai_mcp_result,
)
from knowledgepulse.sources._steps import TOOL_FAILED, newest_request, printed_fields
from knowledgepulse.sources.otel._haystack import chat_message, printed_part

Message = dict[str, Any]
ASSISTANT_ROLES = ("assistant", "ai", "model")
"""The roles a model's own messages have (GenAI, LangChain, Gemini)."""
LISTING_FAILED = "list_tools_error"
"""A part of kp's own: an MCP server whose tools could not be listed, its ``content`` saying
why (Pydantic AI's failed ``list_tools``): an error of the run outside any call."""


def loads(value: Any) -> Any:
    """A JSON string parsed (anything else as it is); text that is not JSON stays text.

    JSON text of JSON text is decoded all the way: Langfuse keeps an OTel span's input and
    output (already JSON text) as JSON text again, a JSON string whose value is the JSON.
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{", '"'):
            try:
                loaded = json.loads(stripped)
            except ValueError:
                return value
            return loads(loaded) if stripped[:1] == '"' else loaded
    return value


def messages(value: Any) -> list[Message]:
    """Messages in the GenAI shape from a GenAI or OpenAI-style list (or its JSON text)."""
    loaded = loads(value)
    if isinstance(loaded, dict):
        loaded = loaded.get("messages", [loaded])
    if not isinstance(loaded, list):
        return []
    # A Haystack ``ChatMessage`` is dumped as its repr (OpenInference's Haystack instrumentor).
    return [
        message
        for item in loaded
        if (message := _message(item) if isinstance(item, dict) else _repr_message(item))
    ]


def _repr_message(item: Any) -> Message | None:
    return chat_message(item) if isinstance(item, str) else None


def _message(item: Mapping[str, Any]) -> Message:
    if item.get("type") == "constructor" and isinstance(item.get("kwargs"), dict):
        item = _langchain_message(item)
    elif _is_message_dict(item):
        item = {**item["data"], "role": item["type"]}
    elif _is_agentchat_message(item):
        item = {**item, "role": "user" if item["source"] == "user" else "assistant"}
    role = str(item.get("role") or item.get("type") or "")
    parts: list[dict[str, Any]] = []
    raw_parts = item.get("parts")
    if isinstance(raw_parts, list):
        parts.extend(part for part in (_part(raw) for raw in raw_parts) if part)
        parts = _mcp_server_parts([_unprinted(part) for part in parts])
    content = item.get("content")
    if isinstance(content, str) and content:
        if role == "tool":
            parts.append(
                {"type": "tool_call_response", "id": item.get("tool_call_id"), "response": content}
            )
        else:
            parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        parts.extend(part for part in (_block(raw) for raw in content) if part)
    parts.extend(_llama_index_texts(item))
    calls = item.get("tool_calls")
    if parts and _written_calls(content):  # the calls written out as the content's text (Koog)
        parts, calls = [], loads(content)
    if not calls and isinstance(item.get("additional_kwargs"), dict):
        calls = item["additional_kwargs"].get("tool_calls")  # a LangChain message's dump
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            inner = call.get("function")
            function: Mapping[str, Any] = inner if isinstance(inner, dict) else call
            arguments = function.get("arguments", function.get("args"))
            parts.append(tool_call(call.get("id"), function.get("name"), arguments))
    return {"role": role, "parts": _thinking_apart(role, parts)}


_THINKING_LEAD = re.compile(r"\A\s*<thinking>(.*?)</thinking>\s*", re.DOTALL)


def _unprinted(part: dict[str, Any]) -> dict[str, Any]:
    """A text part that is a printed Responses item (see :func:`printed_part`) as that item."""
    text = part.get("content") if part.get("type") == "text" else None
    return (printed_part(text) if isinstance(text, str) else None) or part


def _thinking_apart(role: str, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A model's parts, each text that begins with a ``<thinking>`` block told as reasoning.

    Amazon Nova writes its chain of thought so before it calls a tool or answers (Bedrock's
    Converse text blocks: ``<thinking> ... </thinking> The capital of France is Paris.``); kept
    in the text, it was the run's final answer. The block becomes a reasoning part, the text
    after it a text part.
    """
    if role not in ASSISTANT_ROLES:
        return parts
    told: list[dict[str, Any]] = []
    for part in parts:
        text = part.get("content")
        if part.get("type") != "text" or not isinstance(text, str) or "<thinking>" not in text:
            told.append(part)
            continue
        found = _THINKING_LEAD.match(text)
        if found is None:
            told.append(part)
            continue
        reasoning, said = found[1].strip(), text[found.end() :]
        told += [{"type": "reasoning", "content": reasoning}] if reasoning else []
        told += [{**part, "content": said}] if said else []
    return told


def _llama_index_texts(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The text blocks of a LlamaIndex ``ChatMessage``, which has no ``content``.

    Its ``blocks`` are ``{"block_type": "text", "text"}``, the type left out where it is the
    default, as its workflows' events dump them.
    """
    blocks = item.get("blocks") if item.get("content") is None else None
    return [
        {"type": "text", "content": block["text"]}
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict)
        and block.get("block_type", "text") == "text"
        and isinstance(block.get("text"), str)
    ]


def _written_calls(content: Any) -> bool:
    """Whether a message's text is its OpenAI tool calls as JSON (``[{"function": {"name"...``)."""
    if not isinstance(content, str) or not content.startswith("[{"):
        return False
    calls = loads(content)
    return isinstance(calls, list) and all(
        isinstance(call, dict)
        and isinstance(call.get("function"), dict)
        and "name" in call["function"]
        for call in calls
    )


def _is_message_dict(item: Mapping[str, Any]) -> bool:
    """A LangChain message as ``messages_to_dict`` writes it: ``{"type": "ai", "data": {...}}``.

    Its fields are in ``data``: how OpenInference's LangChain instrumentation dumps a graph's
    ``messages``.
    """
    return (
        isinstance(item.get("type"), str)
        and isinstance(item.get("data"), dict)
        and "role" not in item
        and "content" not in item
    )


def _is_agentchat_message(item: Mapping[str, Any]) -> bool:
    """An AutoGen AgentChat message, as a ``TaskResult`` holds it.

    ``{"source", "content", "type": "TextMessage"}``: its sender's name where a role would be
    (``user``: the person).
    """
    kind = item.get("type")
    return (
        "role" not in item
        and isinstance(item.get("source"), str)
        and isinstance(kind, str)
        and kind.endswith("Message")
    )


def _tool_message(value: Any) -> dict[str, Any] | None:
    """The fields of a LangChain ``ToolMessage`` a tool's span gives as its result, else ``None``.

    Any of LangChain's dumps is read: ``messages_to_dict``'s ``{"type": "tool", "data"}``, its
    class with ``kwargs`` (``dumpd``), or the message's own fields (pydantic's ``model_dump``,
    as ``mlflow.langchain.autolog()`` keeps a tool's output: ``{"content", "type": "tool",
    "tool_call_id", "status"}``).
    """
    loaded = loads(value)
    if isinstance(loaded, str):
        return _printed_tool_message(loaded)
    if not isinstance(loaded, dict):
        return None
    if loaded.get("type") == "constructor" and isinstance(loaded.get("kwargs"), dict):
        loaded = loaded["kwargs"] if _langchain_message(loaded).get("role") == "tool" else {}
    elif _is_message_dict(loaded):
        loaded = loaded["data"] if loaded.get("type") == "tool" else {}
    elif loaded.get("type") != "tool" or "tool_call_id" not in loaded:
        return None
    return loaded if "content" in loaded else None


def _printed_tool_message(text: str) -> dict[str, Any] | None:
    """A LangChain ``ToolMessage`` as ``str(message)`` prints it, else ``None``.

    Pydantic prints a model's fields that are not their defaults as ``name=repr(value)``, a
    space between: ``content='...' name='search_flights' tool_call_id='toolu_...'``, and
    ``status='error'`` for a tool that raised. AWS's ADOT LangChain instrumentation records a
    tool's result so (``gen_ai.tool.call.result``), as OpenInference's LangChain instrumentor
    did in 0.1.x (``output.value``). Each field is read as a Python literal (``ast``, never run);
    one that is none (an object's repr) is left out.
    """
    if not text.startswith("content=") or "tool_call_id=" not in text or "\n" in text:
        return None  # a repr is one line: its text's line breaks are escaped
    fields = _printed_fields(text)
    if not isinstance(fields.get("tool_call_id"), str):
        return None
    return {**fields, "type": "tool"} if "content" in fields else None


def _printed_fields(text: str) -> dict[str, Any]:
    """The fields of a pydantic model's ``str()`` (``a=1 b='x'``) that are Python literals."""
    fields: dict[str, Any] = {}
    for name, _, value in printed_fields(text) or []:
        try:
            fields[name] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return fields


def tool_result(value: Any) -> tuple[Any, str | None]:
    """A tool span's result as the model was given it, and its failure's text (else ``None``).

    A LangChain ``ToolMessage``'s content (its dump, or its ``str()``, is how LangChain's
    instrumentations record what a tool returned: the message's ids and metadata are no
    output), an MCP ``CallToolResult``'s text (what an MCP client gives the model), else the
    value as it is. A
    failed one gives no output: its text is the error, told once. A ``ToolMessage`` whose
    ``status`` is ``error`` failed (LangGraph's ``ToolNode`` reporting a tool that raised), and a
    ``CallToolResult`` whose ``isError`` is true (an MCP server's tool that failed): the span
    ends OK either way.
    """
    called = mcp_call_result(loads(value))
    if called is not None:
        text, failed = called
        return (None, text or TOOL_FAILED) if failed else (text, None)
    message = _tool_message(value)
    if message is None:
        return value, None
    if message.get("status") == "error":
        return None, non_empty(message.get("content")) or TOOL_FAILED
    return message.get("content"), None


def tool_failure(value: Any) -> str | None:
    """The text of a failed tool's result, else ``None`` (see :func:`tool_result`)."""
    return tool_result(value)[1]


def tool_output(value: Any) -> Any:
    """A tool span's result as the model was given it (see :func:`tool_result`)."""
    return tool_result(value)[0]


def _langchain_message(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """A LangChain message serialised with its class, as LangChain.js writes it.

    ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``: its fields,
    its role from the class name (``human``, ``ai``, ``tool``, ``system``).
    """
    path = item.get("id")
    name = str(path[-1]) if isinstance(path, list) and path else ""
    role = name.removesuffix("Chunk").removesuffix("Message").lower()
    return {**item["kwargs"], "role": role or None}


def _part(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    if not isinstance(raw.get("type"), str):
        return _converse_part(raw) or _gemini_part(raw)
    if raw["type"] == "thinking":  # Pydantic AI's name (its ThinkingPart) for "reasoning"
        return {**raw, "type": "reasoning"}
    return _server_tool_part(dict(raw))


def _mcp_server_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pydantic AI's remote MCP server parts read as its messages' reader reads them.

    A ``tool_call`` marked ``builtin`` of ``mcp_server:<id>`` whose ``arguments`` call a tool
    (``call_tool``) is a call of that tool (its ``tool_args``, the server as ``mcp_server``),
    its ``tool_call_response`` that tool's result (failed when it says an ``error``); one that
    lists the server's tools (``list_tools``) is no call of the model's: it is left out
    (:func:`~knowledgepulse.sources._hosted.pydantic_ai_mcp_call`), and so is its response,
    but one that failed: a :data:`LISTING_FAILED` part, the error the messages' reader tells.
    """
    listings: set[Any] = set()
    tools: dict[Any, tuple[Any, str | None]] = {}
    read = (_mcp_server_part(part, listings, tools) for part in parts)
    return [part for part in read if part is not None]


def _mcp_server_part(
    part: dict[str, Any], listings: set[Any], tools: dict[Any, tuple[Any, str | None]]
) -> dict[str, Any] | None:
    """One part as :func:`_mcp_server_parts` reads it; ``None`` for a listing's, but a failure."""
    builtin, kind = part.get("builtin") is True, part.get("type")
    call = pydantic_ai_mcp_call(part.get("name"), part.get("arguments"))
    if builtin and kind == "tool_call" and call is not None:
        server, tool, arguments = call
        if tool is None:
            listings.add(part.get("id"))
            return None
        tools[part.get("id")] = (tool, server)
        return {**part, "name": tool, "arguments": arguments, "mcp_server": server}
    named = str(part.get("name")).startswith(PYDANTIC_AI_MCP)
    if not (builtin and kind == "tool_call_response" and named):
        return part
    if part.get("id") in listings:
        said = pydantic_ai_list_tools_error(str(part.get("name")), part.get("result"))
        return None if said is None else {"type": LISTING_FAILED, "content": said}
    output, error = pydantic_ai_mcp_result(part.get("result"))
    tool, server = tools.get(part.get("id"), (part.get("name"), None))
    result = error if error else output
    return {**part, "name": tool, "result": result, "is_error": bool(error), "mcp_server": server}


def _server_tool_part(part: dict[str, Any]) -> dict[str, Any]:
    """A server tool's call or response with its details where the other parts keep them.

    The conventions' ``ServerToolCallPart`` keeps the call's details (``{"type": "web_search",
    "query": ...}``) in ``server_tool_call``, its response part the outcome in
    ``server_tool_call_response``, whose ``type`` names the tool (no ``id`` is required):
    read as a call's ``arguments`` and a result's ``response`` (and ``name``), so the call has
    its input and its result is its observation (both were dropped).
    """
    kind = part["type"]
    detail = part.get(kind)
    if kind == "server_tool_call" and isinstance(detail, dict):
        part.setdefault("arguments", detail)
    elif kind == "server_tool_call_response" and isinstance(detail, dict):
        part.setdefault("response", detail)
        if not part.get("name") and isinstance(detail.get("type"), str):
            part["name"] = detail["type"]
    return part


def _converse_part(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """A content block of Amazon Bedrock's Converse API, which names its kind by its one key.

    ``toolUse`` (``{"toolUseId", "name", "input"}``) a call the model asked for; ``toolResult``
    (``{"toolUseId", "content": [{"text"} | {"json"}...], "status"}``) its result, ``status``
    ``error`` when the tool failed (the model is told so; the tool span, if any, may end OK);
    ``reasoningContent`` (``{"reasoningText": {"text", "signature"}}``) the model's reasoning.
    A ``text`` block is read as any text part. Strands Agents keeps its messages in this shape
    and records them so in its default telemetry (``gen_ai.user.message`` / ``gen_ai.choice``
    span events).
    """
    call = raw.get("toolUse")
    if isinstance(call, dict):
        return tool_call(call.get("toolUseId"), call.get("name"), call.get("input"))
    result = raw.get("toolResult")
    if isinstance(result, dict):
        return {
            "type": "tool_call_response",
            "id": result.get("toolUseId"),
            "response": converse_result(result.get("content")),
            "is_error": result.get("status") == "error",
        }
    reasoning = raw.get("reasoningContent")
    if isinstance(reasoning, dict):
        said = reasoning.get("reasoningText")
        text = said.get("text") if isinstance(said, dict) else None
        return {"type": "reasoning", "content": text} if isinstance(text, str) else None
    return None


def converse_result(content: Any) -> Any:
    """A Converse tool result's content: its text blocks' text, else its one JSON value.

    Strands Agents, which keeps Converse's shape, returns a tool's result so too.
    """
    if not isinstance(content, list):
        return content
    blocks = [block for block in content if isinstance(block, dict)]
    texts = [block["text"] for block in blocks if isinstance(block.get("text"), str)]
    if texts and len(texts) == len(blocks):
        return "\n".join(texts)
    if len(blocks) == 1 and "json" in blocks[0]:
        return blocks[0]["json"]
    return content


def _gemini_part(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Gemini / Google ADK part: ``text`` (a ``thought``), ``function_call`` or its response.

    Code the model ran with Gemini's code execution tool (``executable_code``) and its result
    (``code_execution_result``) are a call the provider ran in the model's turn and its result,
    read as the Gemini chat reader reads them (:func:`gemini.code_outcome`). A result without an
    id answers the code before it, by the tool's name.
    """
    call = raw.get("function_call", raw.get("functionCall"))
    if isinstance(call, dict):
        return tool_call(call.get("id"), call.get("name"), call.get("args"))
    code = raw.get("executable_code", raw.get("executableCode"))
    if isinstance(code, dict):
        return {
            "type": "server_tool_call",
            "id": non_empty(code.get("id")),
            "name": gemini.CODE_EXECUTION,
            "arguments": gemini.code_input(code),
        }
    ran = raw.get("code_execution_result", raw.get("codeExecutionResult"))
    if isinstance(ran, dict):
        text, failed = gemini.code_outcome(ran)
        return {
            "type": "server_tool_call_response",
            "id": non_empty(ran.get("id")),
            "name": gemini.CODE_EXECUTION,
            "response": text,
            "is_error": failed,
        }
    response = raw.get("function_response", raw.get("functionResponse"))
    if isinstance(response, dict):
        return {
            "type": "tool_call_response",
            "id": response.get("id"),
            "name": response.get("name"),
            "response": response.get("response"),
        }
    if isinstance(raw.get("text"), str):
        return {"type": "reasoning" if raw.get("thought") else "text", "content": raw["text"]}
    return None


def _block(raw: Any) -> dict[str, Any] | None:
    """An OpenAI / Anthropic content block as a GenAI part."""
    if isinstance(raw, str):
        return {"type": "text", "content": raw}
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind == "text":
        return {"type": "text", "content": raw.get("text", raw.get("content"))}
    if kind in ("reasoning", "thinking"):
        text = raw.get("thinking", raw.get("text", raw.get("content", raw.get("reasoning"))))
        return {"type": "reasoning", "content": text}
    if kind == "tool_use":
        return tool_call(raw.get("id"), raw.get("name"), raw.get("input"))
    if kind == "function" and isinstance(raw.get("function"), dict):
        # an OpenAI tool call where a block would be: Koog's calls as content, already parsed
        function = raw["function"]
        return tool_call(raw.get("id"), function.get("name"), function.get("arguments"))
    if kind == "tool_result":
        # Anthropic marks a failed tool's result ``is_error`` (the text need not say so).
        return {
            "type": "tool_call_response",
            "id": raw.get("tool_use_id"),
            "response": raw.get("content"),
            "is_error": raw.get("is_error") is True,
        }
    if kind == "tool-call":  # the Vercel AI SDK (``args`` before v5, ``input`` since)
        arguments = raw.get("input", raw.get("args"))
        return tool_call(raw.get("toolCallId"), raw.get("toolName"), arguments)
    if kind == "tool-result":
        output = raw.get("output", raw.get("result"))
        if isinstance(output, dict) and "value" in output and "type" in output:
            output = output["value"]  # v5 wraps it: {"type": "json" | "text" | ..., "value"}
        return {
            "type": "tool_call_response",
            "id": raw.get("toolCallId"),
            "name": raw.get("toolName"),
            "response": output,
        }
    return _part(raw)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as dotted keys (``a.0.b``), the way span attributes are flattened."""
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, item in value.items():
            found.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return found
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        found = {}
        for index, item in enumerate(value):
            found.update(flatten(item, f"{prefix}.{index}" if prefix else str(index)))
        return found
    return {prefix: value} if prefix else {}


def indexed(flat: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The entries ``prefix.{i}.rest`` of flattened attributes, as ``[{rest: value}]`` by ``i``.

    A structured value under ``prefix`` itself (a list of objects) is read the same way.
    """
    groups: dict[int, dict[str, Any]] = {}
    nested = flat.get(prefix)
    if isinstance(nested, list):
        for index, item in enumerate(nested):
            if isinstance(item, dict):
                groups.setdefault(index, {}).update(flatten(item))
    # An index is a list position: nine digits at most (int() of thousands of them raises).
    pattern = re.compile(rf"{re.escape(prefix)}\.(\d{{1,9}})\.(.+)")
    for key, item in flat.items():
        match = pattern.fullmatch(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = item
    return [groups[index] for index in sorted(groups)]


_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def event_messages(value: Any) -> tuple[list[Message], list[Message]]:
    """The input and output messages of GenAI *events* kept in one attribute (``events``).

    The GenAI conventions before ``gen_ai.input.messages`` recorded messages as events
    (``gen_ai.user.message``, ``gen_ai.choice``...); Pydantic AI's first instrumentation version
    keeps them, bodies inlined, as a JSON list in the span's ``events`` attribute.
    """
    loaded = loads(value)
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in loaded if isinstance(loaded, list) else []:
        if not isinstance(event, dict):
            continue
        name = event.get("event.name")
        # Strands Agents' span events carry the content as JSON text of its content blocks
        # (``[{"text": ...}]``), a choice's ``message`` so too, or as the answer's text.
        reply = _blocks_or_text(event.get("message"))
        if name == "gen_ai.choice" and isinstance(reply, dict):
            outputs.append(_message({"role": "assistant", **reply}))
        elif name == "gen_ai.choice" and isinstance(reply, list | str):
            outputs.append(_message({"role": "assistant", "content": reply}))
        elif isinstance(name, str) and name in _EVENT_ROLES:
            item = {**event, "role": event.get("role") or _EVENT_ROLES[name]}
            content = _blocks_or_text(event.get("content"))
            if isinstance(content, list):
                item["content"] = content
            if item["role"] == "tool":
                item.setdefault("tool_call_id", event.get("id"))
            inputs.append(_message(item))
    return inputs, outputs


def _blocks_or_text(value: Any) -> Any:
    """A message's content: JSON text of its blocks (or of a message) parsed.

    Other text, a JSON string's included, is kept as it was written: it is the message's text.
    """
    loaded = loads(value)
    return loaded if isinstance(loaded, list | dict) else value


def legacy_messages(flat: Mapping[str, Any], prefix: str) -> list[Message]:
    """OpenLLMetry's flattened ``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*``."""
    found: list[Message] = []
    for entry in indexed(flat, prefix):
        item: dict[str, Any] = {
            "role": entry.get("role") or ("assistant" if "completion" in prefix else "user"),
            "content": entry.get("content"),
            "tool_call_id": entry.get("tool_call_id"),
        }
        item["tool_calls"] = [
            {"id": call.get("id"), "name": call.get("name"), "arguments": call.get("arguments")}
            for call in indexed(entry, "tool_calls")
        ]
        found.append(_message(item))
    return found


def openinference_messages(flat: Mapping[str, Any], prefix: str) -> list[Message]:
    """OpenInference's ``llm.{input,output}_messages.{i}.message.*``."""
    found: list[Message] = []
    for entry in indexed(flat, prefix):
        role = str(entry.get("message.role") or "")
        parts: list[dict[str, Any]] = []
        for content in indexed(entry, "message.contents"):
            kind = content.get("message_content.type")
            if "tool_call.function.name" in content:
                parts.append(_oi_call(content))
            elif kind in ("text", "reasoning"):
                parts.append({"type": kind, "content": content.get("message_content.text")})
            elif kind is None and isinstance(content.get("message_content.text"), str):
                # A text part whose type is not written: OpenInference's Vertex AI instrumentor
                # writes only ``message_content.text`` for a Gemini part's text.
                parts.append({"type": "text", "content": content["message_content.text"]})
        text = entry.get("message.content")
        if any(part["type"] == "text" for part in parts):
            # OpenAI Agents' instrumentor writes a Responses API message both ways: its text
            # parts (``message.contents``) and their text again (``message.content``).
            text = None
        if isinstance(text, str) and text:
            if role == "tool":
                call_id = entry.get("message.tool_call_id")
                # ``message.name``: the tool's name, which LangChain's ToolMessage keeps.
                name = entry.get("message.name")
                parts.append(
                    {"type": "tool_call_response", "id": call_id, "name": name, "response": text}
                )
            else:
                parts.append({"type": "text", "content": text})
        parts.extend(_oi_call(call) for call in indexed(entry, "message.tool_calls"))
        parts.extend(_function_results(entry))
        found.append({"role": role, "parts": _thinking_apart(role, _calls_once(parts))})
    return found


def _calls_once(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts with each call told once.

    OpenInference's Anthropic instrumentor writes a ``tool_use`` block both as a content
    (``message.contents.N.tool_call.*``) and among the message's ``tool_calls``, with one id.
    """
    seen: set[str] = set()
    kept = []
    for part in parts:
        call_id = part.get("id") if part["type"] == "tool_call" else None
        if call_id and str(call_id) in seen:
            continue
        if call_id:
            seen.add(str(call_id))
        kept.append(part)
    return kept


def prompt_messages(flat: Mapping[str, Any], prefix: str) -> list[Message]:
    """OpenInference's ``llm.prompts``: the prompts a completions API was sent, as user messages.

    A list of texts (LlamaIndex's ``OpenAI.complete``, ``["What is Langfuse?"]``; Langfuse keeps
    it as JSON text), or ``llm.prompts.{i}.prompt.text``. A prompt that is a flattened chat is
    its turns (:func:`transcript`).
    """
    listed = loads(flat.get(prefix))
    texts = [text for text in listed if isinstance(text, str)] if isinstance(listed, list) else []
    texts += [
        entry["prompt.text"]
        for entry in indexed(flat, prefix)
        if isinstance(entry.get("prompt.text"), str)
    ]
    found: list[Message] = []
    for text in texts:
        if text.strip():
            found.extend(transcript(text) or [_message({"role": "user", "content": text})])
    return found


_FUNCTION_RESULT = re.compile(r"function\.(\d{1,9})")


def _function_results(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """AutoGen's tool results as OpenInference writes them: ``function.{i}``.

    Each is the JSON of a ``FunctionExecutionResult`` (``name``, ``content``, ``call_id``,
    ``is_error``): AutoGen hands a tool's exception to the model this way, and its tool span
    ends OK.
    """
    found: list[tuple[int, dict[str, Any]]] = []
    for key, value in entry.items():
        match = _FUNCTION_RESULT.fullmatch(key)
        result = loads(value) if match else None
        if match and isinstance(result, dict):
            part = {
                "type": "tool_call_response",
                "id": result.get("call_id"),
                "name": result.get("name"),
                "response": result.get("content"),
            }
            if result.get("is_error") is True:
                part["is_error"] = True
            found.append((int(match.group(1)), part))
    return [part for _, part in sorted(found, key=lambda item: item[0])]


def _oi_call(entry: Mapping[str, Any]) -> dict[str, Any]:
    name, arguments = (
        entry.get("tool_call.function.name"),
        entry.get("tool_call.function.arguments"),
    )
    return tool_call(entry.get("tool_call.id"), name, arguments)


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A ``tool_call`` part: the model asked for a tool, by name, with these arguments."""
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def first_user_text(found: list[Message]) -> str | None:
    """The text of the first user message that has any."""
    texts = (message_text(message) for message in found if _is_user(message))
    return next((text for text in texts if text), None)


def last_user_text(found: list[Message]) -> str | None:
    """The text of the last user message that has any (the earlier ones, its history)."""
    texts = (message_text(message) for message in reversed(found) if _is_user(message))
    return next((text for text in texts if text), None)


def new_user_text(found: list[Message]) -> str | None:
    """The text of the user's newest turn in a request.

    That is the first user text after the last assistant message before the last user text: a
    later turn of a conversation is sent with the turns before it (Google ADK sends a session's
    history with each new message); a request with no assistant message before its user text is
    one turn.
    """
    return newest_request(
        [message_text(message) if _is_user(message) else None for message in found],
        [message["role"] in ASSISTANT_ROLES for message in found],
    )


def _is_user(message: Message) -> bool:
    return message["role"] in ("user", "human")


def message_text(message: Message) -> str:
    """A message's text parts, joined."""
    texts = [
        part.get("content")
        for part in message["parts"]
        if part.get("type") == "text" and isinstance(part.get("content"), str)
    ]
    return "\n".join(text for text in texts if text and text.strip())


def last_assistant_text(found: list[Message]) -> str | None:
    """The text of the last assistant message that has any."""
    texts = (
        message_text(message) for message in reversed(found) if message["role"] in ASSISTANT_ROLES
    )
    return next((text for text in texts if text), None)


def input_text(value: Any) -> str | None:
    """A user's input from a free-form ``input.value``: text, or the question inside JSON.

    Text that is a chat flattened into ``role: text`` turns (:func:`transcript`) gives its first
    user turn: the rest is the system prompt and the replies, no part of the request.
    """
    loaded = loads(value)
    if isinstance(loaded, str):
        return _said(loaded).strip() or None
    if isinstance(loaded, dict):
        return _input_among(loaded)
    if isinstance(loaded, list):
        return first_user_text(messages(loaded))
    return None


def _input_among(loaded: Mapping[str, Any]) -> str | None:
    """The user's input in a JSON object: a message, messages, a named field, else any text."""
    if "role" in loaded and ("parts" in loaded or "content" in loaded):  # one message
        text = first_user_text(messages(loaded))
        if text:
            return text
    if "messages" in loaded:
        text = first_user_text(messages(loaded["messages"])) or _last_text(loaded["messages"])
        if text:
            return text
    # The user's words by name: ``message`` (Agno's run), ``contents`` (Gemini's call).
    for key in ("input", "query", "question", "task", "prompt", "user_prompt", "message"):
        if isinstance(loaded.get(key), str) and loaded[key].strip():
            return _said(loaded[key]) or None
    contents = loaded.get("contents")
    text = contents if isinstance(contents, str) else first_user_text(messages(contents))
    if text and text.strip():
        return text
    text = _message_among(loaded)
    if text:
        return text
    return next(
        (
            item
            for item in loaded.values()
            if isinstance(item, str)
            and item.strip()
            and not _PYTHON_OBJECT.fullmatch(item)
            and not _PYTHON_REPR.fullmatch(item)
        ),
        None,
    )


def _said(text: str) -> str:
    """The user's words of a text: its first user turn when it is a flattened chat, else itself."""
    turns = transcript(text)
    return text if turns is None else first_user_text(turns) or ""


_PYTHON_OBJECT = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")
"""A Python object's default repr: an instrumentation's dump of an argument (AutoGen's
``cancellation_token``), no one's words."""


_PYTHON_REPR = re.compile(r"[A-Z]\w*\((?:[a-z_]\w*=.*)?\)", re.DOTALL)
"""A Python object's constructor repr (``AgentWorkflowStartEvent()``, ``StopEvent()``,
``ToolCall(tool_name='x', ...)``): OpenInference's dump of a LlamaIndex workflow step's event
argument, no one's words."""


def _message_among(arguments: Mapping[str, Any]) -> str | None:
    """The user's text of a message among a run's arguments (ADK's ``new_message``)."""
    for item in arguments.values():
        if isinstance(item, dict) and "role" in item and ("parts" in item or "content" in item):
            text = first_user_text(messages(item))
            if text:
                return text
    return None


def _last_text(value: Any) -> str | None:
    # LangChain serialises messages as [["human", "text"]] or {"content": ...} objects.
    if isinstance(value, list):
        for item in value:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str):
                return item[1]
            if isinstance(item, dict) and isinstance(item.get("content"), str):
                return str(item["content"])
    return None


_TURN = re.compile(
    r"^(system|developer|user|human|assistant|ai|model|tool|function)[ \t]*:[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
"""A turn of a flattened chat: its role, a colon, at the start of a line."""
_LABELS = frozenset({"system", "developer", "user", "assistant", "tool"})
"""The roles as chat APIs write them (lower case): one such label alone opens a transcript."""
_ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "function": "tool"}


def transcript(text: str) -> list[Message] | None:
    r"""The messages of a chat flattened into text, ``role: text`` turn after turn; else ``None``.

    OpenLIT records a model call's messages so (``gen_ai.prompt``: ``system: You are...\nuser:
    Say 'Hello World!'``, as AutoGen's calls traced by it read in Langfuse), and a completion
    prompt may hold a chat (``\n\nHuman: ...\n\nAssistant:``). The text must open with a turn,
    and hold two, or one labelled in lower case as chat APIs write roles: a person's request
    rarely opens with ``user:``, and the two-turn rule keeps ``Human: a question`` a request.
    """
    stripped = text.strip()
    if not _TURN.match(stripped):  # most text opens with no turn: no search of all of it
        return None
    turns = list(_TURN.finditer(stripped))
    if len(turns) < 2 and turns[0].group(1) not in _LABELS:
        return None
    found: list[Message] = []
    for turn, after in zip(turns, [*turns[1:], None], strict=True):
        content = stripped[turn.end() : after.start() if after else None].strip()
        role = turn.group(1).lower()
        parts = [{"type": "text", "content": content}] if content else []
        found.append({"role": _ROLES.get(role, role), "parts": parts})
    return found
