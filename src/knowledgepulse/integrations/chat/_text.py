"""Text inside messages: content parts, tool results that say they failed, Hermes tags.

Chat formats have no error flag on a tool result (Anthropic's ``is_error`` aside), so a result is
an evident error when it says so first: an object with an ``error`` key, or text that starts with
``Error``, ``Exception`` or a Python traceback (as tool runners write them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

_ERROR_START = re.compile(
    r"^\s*(?:error\b|exception\b|traceback \(most recent call last\)|\w*error:)", re.IGNORECASE
)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_TOOL_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*(?:</tool_response>|$)", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def content_text(content: Any, kinds: frozenset[str] = frozenset({"text"})) -> str | None:
    """A message's text: a string, or the text of its parts of the given ``type`` s."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") in kinds:
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) or None
    return None


def error_text(output: Any) -> str | None:
    """The text of a tool result that says it failed, else ``None``."""
    if isinstance(output, Mapping):
        return _object_error(output)
    if not isinstance(output, str):
        return None
    if _ERROR_START.match(output):
        return output
    if output.lstrip().startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            return None
        if isinstance(parsed, Mapping) and _object_error(parsed) is not None:
            return output
    return None


def _object_error(value: Mapping[str, Any]) -> str | None:
    error = value.get("error")
    if error in (None, False, "", {}, []):
        return None
    return error if isinstance(error, str) else orjson.dumps(value).decode()


@dataclass(frozen=True, slots=True)
class TaggedCall:
    """A ``<tool_call>`` in assistant text: a name and its arguments."""

    name: str
    arguments: Any


def has_tags(text: Any) -> bool:
    """Whether text holds Hermes ``<tool_call>`` or ``<tool_response>`` tags."""
    return isinstance(text, str) and ("<tool_call>" in text or "<tool_response>" in text)


def split_think(text: str) -> tuple[list[str], str]:
    """``<think>`` blocks (reasoning) and the text left outside them."""
    thoughts = [block.strip() for block in _THINK.findall(text) if block.strip()]
    return thoughts, _THINK.sub("", text)


def tool_calls(text: str) -> tuple[list[TaggedCall], str]:
    """The ``<tool_call>`` blocks of assistant text, and the text outside them."""
    calls = []
    for body in _TOOL_CALL.findall(text):
        parsed = _json_or_python(body)
        if isinstance(parsed, Mapping) and isinstance(parsed.get("name"), str):
            calls.append(TaggedCall(parsed["name"], parsed.get("arguments", parsed.get("args"))))
        elif body:
            calls.append(TaggedCall("tool", {"_raw": body}))
    return calls, _TOOL_CALL.sub("", text).strip()


def tool_responses(text: str) -> Iterator[tuple[str | None, Any]]:
    """The ``<tool_response>`` blocks of a turn: the tool's name (when said) and content."""
    for body in _TOOL_RESPONSE.findall(text):
        parsed = _json_or_python(body)
        if isinstance(parsed, Mapping) and isinstance(parsed.get("name"), str):
            yield parsed["name"], parsed.get("content", parsed)
        else:
            yield None, parsed if parsed is not None else body


def _json_or_python(body: str) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    # Hermes data often writes the call as a Python dict literal (single quotes).
    try:
        return orjson.loads(body.replace("'", '"'))
    except orjson.JSONDecodeError:
        return None
