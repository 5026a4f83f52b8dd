"""Cursor's CLI headless output (``cursor-agent -p --output-format stream-json``): its own records.

Cursor's stream is Claude Code's protocol (``system`` ``init``, ``user`` echoing the prompt,
``assistant`` messages of ``text`` blocks, the closing ``result``; read by :mod:`.claude_code`) plus
two record types of its own, turned here into the Claude Code records they stand for:

* ``tool_call``, ``subtype`` ``started`` then ``completed``, joined by ``call_id``: its
  ``tool_call`` object names the tool by its one key (``shellToolCall``, ``readToolCall``,
  ``editToolCall``..., the tool ``shell``, ``read``, ``edit``; ``function``, ``{name,
  arguments}``, for another tool), whose ``args`` are the call's input (less what Cursor adds
  itself: the call's id, its parse of a shell command, its run settings) and whose ``result``
  (on ``completed``) is ``{success: {...}}`` or a failure (``error``, ``rejected``...). A
  ``started`` one is an assistant ``tool_use`` block, a ``completed`` one the ``tool_result``
  that answers it: an error when the result is no ``success``, or a shell command's
  ``exitCode`` is not 0.
* ``thinking``, ``subtype`` ``delta`` (a piece of the model's reasoning) until ``completed``:
  the pieces joined are one ``thinking`` block (the caller keeps them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string

RECORDS = frozenset({"tool_call", "thinking"})
"""Cursor's record types that Claude Code's stream has not (they name the ``session_id``)."""
SUFFIX = "ToolCall"
"""How the key of a ``tool_call`` object ends: ``shellToolCall`` is the ``shell`` tool."""
FAILED = frozenset({"error", "failure", "rejected", "timeout", "permissionDenied"})
"""The keys of a result that did not succeed (``success`` did)."""
TEXTS = ("content", "stdout", "message", "output", "text")
"""The fields of a result that hold its text, the first found read (a shell's ``stdout``)."""


def partial(value: Mapping[str, Any]) -> bool:
    """Whether a record is a piece of text ``--stream-partial-output`` streams, not a message.

    Cursor then streams the text piece by piece (each piece stamped with its ``timestamp_ms``)
    and sends it again whole, in the record naming its ``model_call_id`` (without partial output,
    the only one), or, for the text after the last call, in a record with neither field.
    """
    return (
        value.get("type") == "assistant"
        and "timestamp_ms" in value
        and not value.get("model_call_id")
    )


def message(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``tool_call`` record as the Anthropic message it stands for; ``None``: no call is named.

    ``started``: an assistant message of its ``tool_use`` block; ``completed``: a user message of
    its ``tool_result``.
    """
    call = as_string(value.get("call_id"))
    named = _tool(value.get("tool_call"))
    if call is None or named is None:
        return None
    name, body = named
    if value.get("subtype") == "started":
        use = {"type": "tool_use", "id": call, "name": name, "input": _arguments(name, body)}
        return {"role": "assistant", "content": [use]}
    if value.get("subtype") != "completed":
        return None
    text, failed = _result(body.get("result"))
    block = {"type": "tool_result", "tool_use_id": call, "content": text, "is_error": failed}
    return {"role": "user", "content": [block]}


def _tool(value: Any) -> tuple[str, Mapping[str, Any]] | None:
    """The tool a ``tool_call`` object names, and what it holds (``args``, ``result``)."""
    if not isinstance(value, dict):
        return None
    for key, body in value.items():
        if not isinstance(body, dict):
            continue
        if key == "function":  # another tool: it names itself
            name = as_string(body.get("name"))
            return (name, body) if name else None
        if key.endswith(SUFFIX) and len(key) > len(SUFFIX):
            return key[: -len(SUFFIX)], body
    return None


PLUMBING = frozenset(
    {
        # the call's own id, the conversation's and the request's
        *("toolCallId", "conversationId", "requestId"),
        # what Cursor parses out of a shell command: its programs, redirects, parse tree
        *("simpleCommands", "hasInputRedirect", "hasOutputRedirect", "parsingResult"),
        # its settings of how to run it and whether to ask first
        *("fileOutputThresholdBytes", "timeoutBehavior", "hardTimeout", "closeStdin"),
        *("skipApproval", "smartModeApprovalOnly", "adminCommandDenylist"),
        *("providerIdentifier", "serverIdentifier"),
    }
)
"""The keys Cursor adds to a call's ``args`` beside what the model asked for: no argument of the
call (a shell call's is its ``command``, ``workingDirectory``, ``timeout``, ``isBackground``)."""


def _arguments(name: str, body: Mapping[str, Any]) -> Any:
    """A call's input: its ``args`` less :data:`PLUMBING`; a ``function``'s ``arguments``."""
    if "args" in body:
        args = body["args"]
        if not isinstance(args, Mapping):
            return args
        return {key: value for key, value in args.items() if key not in PLUMBING}
    arguments = body.get("arguments")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _result(result: Any) -> tuple[str, bool]:
    """A ``completed`` call's result as text, and whether it failed."""
    if not isinstance(result, dict) or not result:
        return "", False
    outcome, said = next(iter(result.items()))
    if outcome in FAILED:  # what it says, else its name
        return _text(said) or outcome, True
    if outcome != "success":  # a shape of no outcome: the result is its own text
        return _text(result), False
    failed = isinstance(said, dict) and said.get("exitCode") not in (None, 0)
    return _text(said), failed


def _text(said: Any) -> str:
    """The text of a result's body: its first text field (a shell's output), else its JSON."""
    if isinstance(said, str):
        return said
    if not said:  # nothing said: no text
        return ""
    if not isinstance(said, dict):
        return "" if said is None else json.dumps(said)
    if "exitCode" in said:  # a shell command: what it printed, however little
        printed = [said.get(key) for key in ("stdout", "stderr")]
        return "".join(text for text in printed if isinstance(text, str))
    for key in TEXTS:
        text = said.get(key)
        if isinstance(text, str) and text.strip():
            return text
    errors = [said.get(key) for key in ("errorMessage", "error", "stderr")]
    found = next((e for e in errors if isinstance(e, str) and e.strip()), None)
    return found if found is not None else json.dumps(said, ensure_ascii=False)
