"""Haystack's ``ChatMessage`` as its repr, the way OpenInference's Haystack instrumentor dumps it.

``openinference-instrumentation-haystack`` writes a component's inputs and outputs as JSON whose
messages are ``repr(ChatMessage)``:
``ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='...',
origin=ToolCall(tool_name='search', arguments={...}, id='call_...', extra=None), error=False)],
_name=None, _meta={})``. Its flattened ``llm.input_messages`` give a tool message its role
alone (no result, no call id), so the reprs are where the tool's result is written; an agent's
output (``{"messages": [...], "last_message": ...}``) holds its answer only there.

The repr is read as Python syntax (``ast``, never run): a dataclass's constructor call with
keyword arguments, each a literal, another such call, or a list or dict of them; the enum
``<ChatRole.TOOL: 'tool'>`` is its value. The OpenAI SDK's Responses items, which another
instrumentation writes as text, are read the same way (:func:`printed_part`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

Message = dict[str, Any]

_ROLE = re.compile(r"<ChatRole\.\w+: ('\w+')>")
"""``repr(ChatRole.TOOL)``: the enum, no Python syntax; its value is what the role is."""
_NOT_READ = object()
"""A value of the repr that is neither a literal nor a dataclass's call (an object's repr)."""


def is_chat_message(value: Any) -> bool:
    """Whether ``value`` is the repr of a Haystack ``ChatMessage``."""
    return isinstance(value, str) and value.startswith("ChatMessage(_role=<ChatRole.")


def chat_message(text: str) -> Message | None:
    """A Haystack ``ChatMessage`` repr in the GenAI shape (``{"role", "parts"}``), else ``None``."""
    if not is_chat_message(text):
        return None
    try:
        tree = ast.parse(_ROLE.sub(r"\1", text), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fields = _value(tree.body)
    if not isinstance(fields, dict) or not isinstance(fields.get("_role"), str):
        return None
    content = fields.get("_content")
    parts = [
        part
        for item in (content if isinstance(content, list) else [])
        if (part := _part(item)) is not None
    ]
    return {"role": fields["_role"], "parts": parts}


def printed_part(text: str) -> dict[str, Any] | None:
    """An OpenAI SDK Responses output item printed as its repr, as a GenAI part, else ``None``.

    opentelemetry-python-contrib's OpenAI Agents instrumentation (``openai-agents-v2`` 0.1.0)
    writes a reply's items other than messages as text parts holding the SDK objects' reprs:
    ``ResponseFunctionToolCall(arguments='{"city":"London"}', call_id='call_...',
    name='get_weather', type='function_call', ...)``, the model's call, not its words; and
    ``ResponseReasoningItem(id='rs_...', summary=[Summary(text='...', type='summary_text')],
    ...)``, its reasoning's summaries.
    """
    if not text.startswith(("ResponseFunctionToolCall(", "ResponseReasoningItem(")):
        return None
    if "\n" in text:
        return None  # a repr is one line: its text's line breaks are escaped
    try:
        fields = _value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(fields, dict):
        return None
    if fields["_class"] == "ResponseReasoningItem":
        said = fields.get("summary") or fields.get("content")
        texts = [
            item["text"]
            for item in (said if isinstance(said, list) else [])
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        ]
        return {"type": "reasoning", "content": "\n\n".join(texts)} if texts else None
    if not isinstance(fields.get("name"), str):
        return None
    return {
        "type": "tool_call",
        "id": fields.get("call_id") if isinstance(fields.get("call_id"), str) else None,
        "name": fields["name"],
        "arguments": fields.get("arguments") if isinstance(fields.get("arguments"), str) else None,
    }


def _part(item: Any) -> dict[str, Any] | None:
    """One of a message's contents as a GenAI part: text, reasoning, a call or its result."""
    if not isinstance(item, dict):
        return None
    kind = item.get("_class")
    if kind == "TextContent" and isinstance(item.get("text"), str):
        return {"type": "text", "content": item["text"]}
    if kind == "ReasoningContent" and isinstance(item.get("reasoning_text"), str):
        return {"type": "reasoning", "content": item["reasoning_text"]}
    if kind == "ToolCall":
        return {
            "type": "tool_call",
            "id": item.get("id"),
            "name": item.get("tool_name"),
            "arguments": item.get("arguments"),
        }
    if kind == "ToolCallResult":
        origin = item.get("origin")
        call = origin if isinstance(origin, dict) else {}
        part = {
            "type": "tool_call_response",
            "id": call.get("id"),
            "name": call.get("tool_name"),
            "response": item.get("result"),
        }
        if item.get("error") is True:  # the tool raised: Haystack hands the model its message
            part["is_error"] = True
        return part
    return None


def _value(node: ast.AST) -> Any:
    """A node of the repr as data: a dataclass call as its fields (``_class`` its name)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        fields: dict[str, Any] = {"_class": node.func.id}
        for keyword in node.keywords:
            if keyword.arg is not None:
                fields[keyword.arg] = _value(keyword.value)
        return fields
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _value(key): _value(value)
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _NOT_READ
