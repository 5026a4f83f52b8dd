"""What OpenAI's Responses items say of a call, read alike by every reader of them.

The Responses rows (``sources._chat.openai_responses``, which Codex rollouts are read by too)
and the Agents SDK (its spans' response output, its ``RunResult`` and ``RunState`` items) carry
the same items: a call's tool (:func:`tool_name`), a hosted or MCP call's ``error`` and
``status`` (:func:`call_failed`), a client-run call's output (``shell_call_output``,
``apply_patch_call_output``) with its ``status`` and, for the shell, the chunks of what each
command printed and how it ended. The field meanings are openai-python's types
(``types/responses``); reading them here once keeps the readers from drifting apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from knowledgepulse._util.jsonpath import as_string

_NAMED = frozenset({"function_call", "custom_tool_call", "mcp_call", "mcp_approval_request"})
"""The call items that carry their tool's ``name`` (a function, a custom tool, an MCP tool)."""
_CALL = "_call"


def tool_name(item: Mapping[str, Any]) -> str | None:
    """The tool a Responses call item calls, named as the request's ``tools`` list names it.

    A function's, a custom tool's and an MCP tool's call (and an MCP approval request) carry
    the tool's ``name``. Any other call is of a tool the API offers (hosted: ``web_search_call``,
    ``file_search_call``, ``code_interpreter_call``, ``image_generation_call``,
    ``tool_search_call``) or the client runs (``computer_call``, ``local_shell_call``,
    ``shell_call``, ``apply_patch_call``): the item's type is its tool's ``type`` in the
    request's ``tools`` (openai-python's ``types/responses/tool.py``: ``web_search``,
    ``computer``, ``local_shell``...) with ``_call`` after it, so the tool's name is the type
    less ``_call``, as the Agents SDK names these tools (``WebSearchTool.name`` is
    ``web_search``; its ``ComputerTool`` is traced as ``computer``). Only one tool of a kind is
    offered to a request, so the name stands for it whatever version the request named
    (``web_search_preview``). ``None`` when the item names no tool.
    """
    kind = item.get("type")
    if not isinstance(kind, str):  # a list or an object names no item type
        return None
    if kind in _NAMED:
        name = item.get("name")
        return name if isinstance(name, str) and name else None
    if kind.endswith(_CALL) and len(kind) > len(_CALL):
        return kind.removesuffix(_CALL)
    return None


def call_failed(item: Mapping[str, Any]) -> bool:
    """Whether a hosted or MCP call's ``status`` says it failed: ``failed``, nothing else.

    openai-python's types give the hosted calls a ``status``: ``in_progress``, ``searching`` /
    ``interpreting`` / ``generating`` / ``calling``, ``completed``, then ``failed`` (all but the
    tool search's) or ``incomplete`` (the file search's, the code interpreter's, the tool
    search's, the MCP call's; the web search and image generator have none). ``incomplete``
    says the response stopped (its token limit, a content filter: its ``incomplete_details``)
    before the call ended: no failure of the tool's and no observation of one, so no error
    unless the item says one (an ``mcp_call``'s ``error``, read by :func:`mcp_error_text`).
    """
    return item.get("status") == "failed"


def mcp_error_text(error: Any) -> Any:
    """An ``mcp_call``'s ``error``: text, or (openai-python's ``McpToolCallError``) an object.

    A protocol or HTTP error says it in its ``message``, a tool's execution error in its
    ``content`` (the MCP result's content blocks, their ``text``); another shape is told as it
    is, so no error is lost.
    """
    if not isinstance(error, Mapping):
        return error
    message = error.get("message")
    if isinstance(message, str) and message.strip():
        return message
    content = error.get("content")
    parts = content if isinstance(content, list) else []
    texts = [part["text"] for part in parts if isinstance(part, Mapping) and _text(part)]
    return "\n".join(texts) or content or error


def failure(item: Mapping[str, Any], name: str, left: Any = None) -> Any:
    """Why a hosted or MCP call failed, or ``None`` when it did not.

    Its ``error`` (an ``mcp_call``'s text, or its object's, :func:`mcp_error_text`); else, when
    its ``status`` is ``failed`` (:func:`call_failed`), often with no ``error`` to say why, what
    it ``left`` (a code interpreter's logs, :func:`hosted_result`), else ``<name> failed``.
    """
    error = mcp_error_text(item.get("error"))
    if error:
        return error
    if call_failed(item):
        return left if left not in (None, "") else f"{name} failed"
    return None


def list_tools_error(item: Mapping[str, Any]) -> str | None:
    """An ``mcp_list_tools`` item's ``error``, said with its server; ``None`` when it has none.

    The error says the server's tools could not be listed (``server_label`` names the server).
    """
    error = as_string(item.get("error"))
    if not error or not error.strip():
        return None
    label = as_string(item.get("server_label"))
    return f"{label}: {error}" if label else error


def refusal(item: Mapping[str, Any]) -> str | None:
    """What an ``mcp_approval_response`` that refuses its request says; ``None`` if it approves.

    A hosted MCP tool that needs approval comes as an ``mcp_approval_request`` (the model's
    call, waiting); the user's response with ``approve: false`` (and its ``reason``) is that
    call's failure, said as ``not approved[: reason]``.
    """
    if item.get("approve") is not False:
        return None
    reason = as_string(item.get("reason"))
    return f"not approved: {reason}" if reason else "not approved"


def approved_request(item: Mapping[str, Any]) -> str | None:
    """The approval request an ``mcp_call`` runs (its ``approval_request_id``), if any.

    The call that runs an approved request is that request's result, not a second call.
    """
    if item.get("type") != "mcp_call":
        return None
    request = as_string(item.get("approval_request_id"))
    return request or None


def _text(part: Mapping[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and bool(part["text"])


def output_failed(status: Any, output: Any) -> bool:
    """Whether a client-run call's output says it failed: status ``failed``, or its outcome.

    ``apply_patch_call_output`` (and the other client-run calls') ``status`` is ``completed`` or
    ``failed``; a ``shell_call_output``'s ``output`` is one chunk a command, each with its
    ``outcome``: an ``exit`` with its ``exit_code``, or a ``timeout``.
    """
    if status == "failed":
        return True
    if not isinstance(output, list):
        return False
    outcomes = [chunk.get("outcome") for chunk in output if isinstance(chunk, dict)]
    return any(
        isinstance(outcome, dict)
        and (
            outcome.get("type") == "timeout"
            or (outcome.get("type") == "exit" and outcome.get("exit_code") not in (0, None))
        )
        for outcome in outcomes
    )


def shell_chunks(output: Any) -> TypeGuard[list[dict[str, Any]]]:
    """Whether a shell output is its chunks (a list of objects), as the API sends it."""
    return isinstance(output, list) and all(isinstance(chunk, dict) for chunk in output)


def shell_text(output: list[dict[str, Any]]) -> str:
    """What the shell printed, as the agent read it: each command's ``stdout``, then ``stderr``.

    A ``shell_call_output``'s ``output`` is one chunk a command (``stdout``, ``stderr``, and the
    ``outcome`` that :func:`output_failed` reads), not text: told as its JSON it would bury the
    words in keys. The printed text is the observation, as Codex's shell results (its
    ``stdout``, its ``aggregated_output``) are.
    """
    streams = (chunk.get(key) for chunk in output for key in ("stdout", "stderr"))
    return "\n".join(text.rstrip("\n") for text in streams if isinstance(text, str) and text)


def hosted_result(item: Mapping[str, Any]) -> Any:
    """What a hosted call gave back: its ``output`` or ``results``, else the media it made.

    The code interpreter's ``outputs`` are logs and images (none: an empty result, see
    :func:`_ran`), the image generator's ``result`` an image in base64: an image is said by its
    type (``<image/png>``, as Gemini CLI says one), its bytes never kept as text.
    """
    # The first of the two that is set: a Parquet column's struct gives every item every key,
    # so a file search's ``results`` may come with an ``output`` of null (an MCP call's key).
    for key in ("output", "results"):
        if item.get(key) is not None:
            return item[key]
    outputs = item.get("outputs")
    if isinstance(outputs, list) and (outputs or _ran(item)):
        return "\n".join(filter(None, map(_interpreter_output, outputs)))
    if isinstance(item.get("result"), str) and item["result"]:
        return f"<image/{as_string(item.get('output_format')) or 'png'}>"
    return None


def _ran(item: Mapping[str, Any]) -> bool:
    """Whether a code interpreter call's empty ``outputs`` says it ran and printed nothing.

    The API sends ``outputs`` as ``null`` when they were not asked for (``include``) or are not
    there yet; a list is what the code printed and drew, so a completed call's empty one is an
    empty result (an empty observation, as an empty ``function_call_output`` is), not no result.
    """
    return item.get("type") == "code_interpreter_call" and item.get("status") in ("completed", None)


def _interpreter_output(output: Any) -> str | None:
    """A code interpreter output's text: its logs, or an image said by its type."""
    if not isinstance(output, dict):
        return as_string(output)
    if output.get("type") == "image":
        url = as_string(output.get("url")) or ""
        media = url.removeprefix("data:").split(";", 1)[0] if url.startswith("data:") else ""
        return f"<{media or 'image'}>"
    return as_string(output.get("logs"))


_MCP_RESULT_KEYS = frozenset(("content", "isError", "is_error", "structuredContent", "_meta"))
"""An MCP ``CallToolResult``'s fields: the protocol's, and ``is_error`` as an SDK whose own
names are snake case dumps them (an ADK agent's MCP tool response)."""


def mcp_call_result(value: Any) -> tuple[str, bool] | None:
    """An MCP ``CallToolResult``'s text and whether it failed; ``None`` for another value.

    ``{"content": [text blocks], "isError"}`` (or ``is_error``), parsed. One holding a block
    other than text (an image) is kept as it is (``None``): what an MCP client gives the model
    is its blocks' text, and a result whose flag is true is its tool's failure.
    """
    if (
        not isinstance(value, Mapping)
        or "content" not in value
        or not value.keys() <= _MCP_RESULT_KEYS
    ):
        return None
    blocks = value["content"]
    if not isinstance(blocks, list) or not all(
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        for block in blocks
    ):
        return None
    failed = value.get("isError") is True or value.get("is_error") is True
    return "\n".join(block["text"] for block in blocks), failed


__all__ = [
    "approved_request",
    "call_failed",
    "failure",
    "hosted_result",
    "list_tools_error",
    "mcp_call_result",
    "mcp_error_text",
    "output_failed",
    "refusal",
    "shell_chunks",
    "shell_text",
    "tool_name",
]


PYDANTIC_AI_MCP = "mcp_server:"
"""How Pydantic AI names a remote MCP server the model's provider calls (``MCPServerTool``):
``mcp_server:<id>``, whatever the provider (OpenAI's ``mcp_call``, Anthropic's ``mcp_tool_use``),
in its messages' ``builtin-tool-call`` parts and its spans' ``tool_call`` parts marked
``builtin``."""


def pydantic_ai_mcp_call(name: Any, args: Any) -> tuple[str, str | None, Any] | None:
    """A Pydantic AI MCP server call's server, tool and arguments; ``None`` when it is none.

    Its ``args`` say what was done: ``{"action": "call_tool", "tool_name", "tool_args"}`` is the
    model's call of the server's tool (read as an ``mcp_call``: the tool, its arguments, the
    server); ``{"action": "list_tools"}`` the provider fetching the server's tools, no call of
    the model's (the tool ``None``, as an ``mcp_list_tools`` item is no step).
    """
    if not isinstance(name, str) or not name.startswith(PYDANTIC_AI_MCP):
        return None
    if not isinstance(args, Mapping):
        return None
    server = name.removeprefix(PYDANTIC_AI_MCP)
    if args.get("action") == "list_tools":
        return server, None, None
    tool = as_string(args.get("tool_name"))
    return (
        (server, tool, args.get("tool_args"))
        if args.get("action") == "call_tool" and tool
        else None
    )


def pydantic_ai_mcp_result(content: Any) -> tuple[Any, Any]:
    """A Pydantic AI MCP server call's return: its output and its error (one of them ``None``).

    OpenAI's is ``{"output", "error"}`` (a listing's ``{"tools", "error"}``), Anthropic's the
    MCP ``CallToolResult`` (``{"content": [text blocks], "is_error"}``, :func:`mcp_call_result`).
    """
    parsed = mcp_call_result(content)
    if parsed is not None:
        text, failed = parsed
        return (None, text) if failed else (text, None)
    if not isinstance(content, Mapping):
        return content, None
    error = mcp_error_text(content.get("error"))
    if error:
        return None, error
    return content.get("output", content), None


def pydantic_ai_list_tools_error(name: str, content: Any) -> str | None:
    """Why a Pydantic AI MCP server (``name``: ``mcp_server:<id>``) could not list its tools.

    Its ``list_tools`` return's error, said with its server as an ``mcp_list_tools`` item's is
    (:func:`list_tools_error`): an error of the run outside any call of the model's, as the
    messages' reader and the spans' reader both tell it. ``None`` when the tools were listed.
    """
    _, error = pydantic_ai_mcp_result(content)
    server = name.removeprefix(PYDANTIC_AI_MCP)
    return list_tools_error({"error": error, "server_label": server}) if error else None
