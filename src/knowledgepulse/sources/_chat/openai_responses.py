"""OpenAI Responses items (a row's ``input`` / ``output`` items) as traces.

The first user ``message`` is the objective, a later one the user's reply to the assistant text
before it (a ``respond`` call, see :meth:`StepBuilder.user_turn`); ``reasoning`` items (their
summary, else their content) and assistant messages are thoughts, the last assistant message after
the last call the answer (a message's ``<think>`` blocks, as Qwen3 served without a reasoning
parser writes them in its text (NeMo Gym's mini-SWE-agent rollouts), are thoughts before it, as
is what a text begun inside the template's block writes before its ``</think>``);
``function_call`` (and ``custom_tool_call``, ``mcp_call``, hosted
``*_call`` items) are tool calls, joined by ``call_id`` with their ``*_output`` items. A row with
both ``input`` and ``output`` lists is read as the input followed by the output. A call is named
by its ``name``, or (a hosted or client-run call, which names none) as its tool is in the
request's ``tools`` list: its type less ``_call`` (``web_search``, ``code_interpreter``,
``shell``, ``apply_patch``...), as the Agents SDK names them (see :func:`_hosted.tool_name`).

An ``image_generation_call`` is an output item: the image it made is shown to the user as part of
the response. A response that ends on one (nothing after it but reasoning and assistant messages
without text, as gpt-5 sends) answers with that image, said by its type (``<image/jpeg>``, as the
Gemini reader says an image the model made), not with nothing; no thought says it (the model
wrote no such text), so a training row ends in the image's result, which it names as the answer.

An ``mcp_list_tools`` item is the tools an MCP server offers, fetched by the API itself when the
server is configured: no call the model made, so no step (as a request's ``tools`` are none),
unless its ``error`` says the server could not list them: an evident error of the run's. A hosted
call of status ``failed`` (or an ``mcp_call`` with an ``error``) is its call's failure; one of
status ``incomplete`` (the response stopped before the call ended) is not. An MCP call keeps the
server that has its tool (``server_label``) as the tool's ``mcp_server``.
A ``reasoning`` item after a model's calls but before their outputs (a vLLM-served Nemotron's
reply lists its ``function_call`` first: NeMo Gym's rollouts) could not have seen what the calls
returned: it is the thinking that made them, told before them, as the model thought it.
A hosted MCP tool that needs approval comes as an ``mcp_approval_request`` (its ``name`` and
``arguments``, its ``server_label``): the model's call, waiting for the user. The user's
``mcp_approval_response`` that refuses it (``approve: false``) is that call's failure; the
``mcp_call`` that runs an approved one names the request (``approval_request_id``) and is its
result, not a second call. A ``tool_search_call``'s result is the ``tools`` its
``tool_search_output`` (of the same ``call_id``) lists.
An ``apply_patch_call`` says what to change in its ``operation``; an ``*_output`` of status
``failed`` (the patch did not apply) is an error, as is a ``shell_call_output`` whose command
exited non-zero or timed out; the shell's observation is what its commands printed (``stdout``,
then ``stderr``), not its chunks' JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse.sources._chat import _row, anthropic
from knowledgepulse.sources._chat._text import (
    api_error_text,
    content_text,
    users_words,
)
from knowledgepulse.sources._chat.openai_chat import TEXT_KINDS, assistant_text
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._hosted import (
    approved_request,
    call_failed,
    failure,
    hosted_result,
    list_tools_error,
    mcp_error_text,
    output_failed,
    refusal,
    shell_chunks,
    shell_text,
    tool_name,
)
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the rows hold no item text; check messages_field (kp: --messages-field) names the items column"
)
_TYPED = frozenset(
    {
        "function_call",
        "function_call_output",
        "reasoning",
        "custom_tool_call",
        "mcp_call",
        "mcp_approval_request",
    }
)
_SEARCH_OUTPUT = "tool_search_output"
"""A ``tool_search_call``'s result (the tools it found, by its ``call_id``): no ``_call`` in it."""
_APPROVAL = "mcp_approval_request"
"""An MCP call held for the user's approval: a call all the same (it has no ``_call`` suffix)."""


def _is_call(kind: str | None) -> bool:
    return kind is not None and (kind.endswith("_call") or kind == _APPROVAL)


def _kind(item: Mapping[str, Any]) -> str | None:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return as_string(kind)


def matches(items: list[Any]) -> bool:
    """Whether a list is Responses items (typed items, or messages with ``input_text`` parts)."""
    if not all(isinstance(item, dict) and _kind(item) for item in items):
        return False
    # A typed message is Responses' own unless it holds Anthropic's blocks: the Messages API's
    # reply is typed "message" too (anthropic.is_typed_message), its text in "text" blocks.
    return any(
        _kind(item) in _TYPED
        or (_kind(item) or "").endswith("_call")
        or (_kind(item) == "message" and "type" in item and not anthropic.is_typed_message(item))
        for item in items
    )


def tell(items: list[Any], builder: StepBuilder) -> _row.Told:
    """Tell the builder what Responses items hold."""
    calls = _row.Calls(builder)
    objective: str | None = None
    system: str | None = None
    kinds = [_kind(item) if isinstance(item, dict) else None for item in items]
    last_call = max((i for i, k in enumerate(kinds) if _is_call(k)), default=-1)
    held: set[str] = set()  # the ids of the approval requests told as calls
    answer_at = max(
        (
            i
            for i, item in enumerate(items)
            if kinds[i] == "message" and item.get("role") == "assistant" and i > last_call
        ),
        default=-1,
    )
    image = _image_answer(items, kinds, last_call)
    reasoned = "reasoning" in kinds  # the model's reasoning kept apart, in items of its own
    for index in _thinking_first(items, kinds):
        item, kind = items[index], kinds[index]
        if not isinstance(item, dict) or kind is None:
            raise PathError(
                (index,), f"not a Responses item: {describe_value(item)}; expected {{type: ...}}"
            )
        if kind == "message":
            text = content_text(item.get("content"), TEXT_KINDS | {"refusal"})
            role = item.get("role")
            if role in ("system", "developer"):
                system = system or text
            elif role == "user" and not objective:
                objective = users_words(text)
            elif role == "user":  # the user answering the agent
                calls.user(text)
            else:
                _assistant(calls, text, answer=index == answer_at, reasoned=reasoned)
        elif kind == "reasoning":
            summary = content_text(item.get("summary"), frozenset({"summary_text"}))
            builder.thought(
                summary or content_text(item.get("content"), frozenset({"reasoning_text"}))
            )
        else:
            _tool_item(calls, item, kind, (index,), held)
    if image is not None:  # shown to the user, never said by the model: no thought of its
        builder.answer(image, said=False)
        builder.answer_is_step = False
    return _row.Told(
        objective,
        ((answer_at >= 0 or image is not None) and builder.final_answer is not None)
        or calls.answered,
        system,
        _row.media(items),
    )


def _assistant(calls: _row.Calls, text: str | None, *, answer: bool, reasoned: bool) -> None:
    """An assistant message: its ``<think>`` blocks thoughts, the text left said or the answer.

    Where the response keeps no ``reasoning`` item (``reasoned``), the text may have begun
    inside the ``<think>`` block the chat template opened, and close it with a ``</think>``
    nothing opens (Qwen3's thinking models served without a reasoning parser: NeMo Gym's
    Spider 2.0-lite rollouts): what comes before it is reasoning. Calls the text writes in tags
    (a Qwen3-Coder ``<tool_call><function=...>``, Hermes' ``<tool_call>{...}</tool_call>``),
    served with no tool parser, are its calls (:func:`assistant_text`, as in a chat row).
    """
    if text is None:
        left: str | None = None
    else:
        left, called = assistant_text(calls, text, react=False, reasoned=reasoned)
        if called or (left != text and not left.strip()):  # calls, or reasoning alone
            return
    if answer:
        calls.builder.answer(left)
    else:
        calls.said(left)


def _thinking_first(items: list[Any], kinds: list[str | None]) -> list[int]:
    """The items' indices in the order told: reasoning moves ahead of the calls awaiting it.

    The calls awaiting it are those right before it whose outputs come after it: it could not
    have seen what they returned.
    """
    order: list[int] = []
    for index, kind in enumerate(kinds):
        awaiting = 0  # how many of the calls just told before this reasoning await an output
        while kind == "reasoning" and awaiting < len(order):
            before = order[-1 - awaiting]
            if kinds[before] != "function_call" or not _answered_after(items, before, index):
                break
            awaiting += 1
        order.insert(len(order) - awaiting, index)
    return order


def _answered_after(items: list[Any], call: int, index: int) -> bool:
    """Whether the call at ``call`` has its ``function_call_output`` after ``index``."""
    call_id = items[call].get("call_id")
    return call_id is not None and any(
        isinstance(item, dict)
        and item.get("type") == "function_call_output"
        and item.get("call_id") == call_id
        for item in items[index + 1 :]
    )


def _tool_item(
    calls: _row.Calls,
    item: Mapping[str, Any],
    kind: str,
    path: tuple[str | int, ...],
    held: set[str],
) -> None:
    """A call, a call's output, or an MCP approval's request or answer; other items say nothing."""
    if kind == _APPROVAL:
        _request(calls, item, path)
        held.add(str(item.get("id")))
    elif kind == "mcp_approval_response":
        _approval(calls, item, held)
    elif kind == "mcp_list_tools":
        _list_failed(calls, item)
    elif kind == "error":
        _failed_request(calls, item)
    elif approved_request(item) in held:
        # the approved request run: its result, the call already told
        _outcome(calls, item, str(item.get("name")), approved_request(item))
    elif kind.endswith("_call"):
        _request(calls, item, path)
    elif kind.endswith("_call_output"):
        output = item.get("output")
        failed = True if output_failed(item.get("status"), output) else None
        if kind == "shell_call_output" and shell_chunks(output):
            # the outcome says whether it failed: a stderr line of "Error" in a command that
            # exited 0 is no failure of the call's
            failed, output = bool(failed), shell_text(output)
        calls.result(None, output, call_id=as_string(item.get("call_id")), is_error=failed)
    elif kind == _SEARCH_OUTPUT:  # the tools a tool search found: its call's result
        found = item.get("tools")
        failed = call_failed(item) or None
        calls.result(
            None,
            item if found is None else found,
            call_id=as_string(item.get("call_id")),
            is_error=failed,
        )


def _image_answer(items: list[Any], kinds: list[str | None], last_call: int) -> str | None:
    """The image a response ends with (``<image/jpeg>``), when it is what the model answered.

    The image generator's result goes to the user, not back to the model: with no text after it
    (gpt-5 closes with an empty ``output_text``) and no user turn, that image is the answer.
    """
    if last_call < 0 or kinds[last_call] != "image_generation_call":
        return None
    for item, kind in zip(items[last_call + 1 :], kinds[last_call + 1 :], strict=True):
        if kind == "reasoning":
            continue
        if kind != "message" or item.get("role") != "assistant":
            return None
        if (content_text(item.get("content"), TEXT_KINDS | {"refusal"}) or "").strip():
            return None
    made = hosted_result(items[last_call])
    return made if isinstance(made, str) and made.startswith("<image/") else None


def _request(calls: _row.Calls, item: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
    # A hosted call is named as its tool is in the request's ``tools`` (``web_search`` for a
    # ``web_search_call``), by the one rule every reader of these items names it by.
    kind = str(item.get("type"))
    name = tool_name(item)
    if name is None:
        found = describe_value(item.get("name"))
        raise PathError((*path, "name"), f"expected a tool name, found {found}")
    call_id = item.get("call_id") or item.get("id")
    # Parquet gives every item every key of the column's struct: the first one set. The code
    # interpreter's input is its ``code``, file search's its ``queries``.
    arguments = next((item[key] for key in _INPUTS if item.get(key) is not None), None)
    if kind == "code_interpreter_call" and isinstance(arguments, str):
        arguments = {"code": arguments}
    calls.request(name, arguments, as_string(call_id), mcp_server=_server(item))
    # Hosted and MCP calls carry their own result; an approval request waits for its answer.
    if kind not in {"function_call", "custom_tool_call", _APPROVAL}:
        _outcome(calls, item, name, as_string(call_id))


def _server(item: Mapping[str, Any]) -> str | None:
    """The MCP server an MCP call (or its approval request) is of: its ``server_label``."""
    mcp = item.get("type") in ("mcp_call", _APPROVAL)
    return as_string(item.get("server_label")) if mcp else None


def _outcome(calls: _row.Calls, item: Mapping[str, Any], name: str, call_id: str | None) -> None:
    """A hosted or MCP call's own result (or error), told as its call's.

    An ``mcp_call``'s ``error`` says it failed; so does the ``status`` ``failed`` that the web
    search, file search, code interpreter, image generator and MCP calls may end in (their types
    in openai-python), often with no ``error`` to say why: the call's failure all the same, said
    by what it left (a code interpreter's logs) or else as ``<tool> failed``. ``incomplete`` is
    not (see :func:`_hosted.call_failed`).
    """
    result = hosted_result(item)
    # An MCP call's tool is its ``name``; the server that has it, its ``server_label``.
    server = _server(item)
    said = failure(item, name, result)
    if said is not None:
        # An ``error`` is joined to the call waiting, a failed ``status`` to the call by its id.
        errored = bool(mcp_error_text(item.get("error")))
        calls.result(
            name, said, call_id=None if errored else call_id, is_error=True, mcp_server=server
        )
    elif result is not None:
        # By its id: an earlier call of the same tool may have come back with nothing.
        calls.result(name, result, call_id=call_id, mcp_server=server)


def _list_failed(calls: _row.Calls, item: Mapping[str, Any]) -> None:
    """An ``mcp_list_tools`` whose ``error`` says the server could not list its tools.

    No call of the model's, but an evident error of the run's (the server's tools were not
    there to call), as a model call that failed is: an observation carrying it, the model's next
    action its recovery.
    """
    said = list_tools_error(item)
    if said is not None:
        calls.builder.error(said)


def _failed_request(calls: _row.Calls, item: Mapping[str, Any]) -> None:
    """An ``error`` item: the model request failed, an evident error of the run's.

    A streamed response's ``error`` event; a Codex turn's, as its rollout keeps it (``You've
    hit your usage limit...``). No call of the model's, as :func:`_list_failed`'s: said by its
    ``message`` (the API's own words where that is a JSON body).
    """
    message = item.get("message")
    if isinstance(message, str) and message.strip():
        calls.builder.error(api_error_text(message))


def _approval(calls: _row.Calls, item: Mapping[str, Any], held: set[str]) -> None:
    """The user's answer to an approval request: a refusal is the held call's failure."""
    request, said = as_string(item.get("approval_request_id")), refusal(item)
    if said and request in held:
        calls.result(None, said, call_id=request, is_error=True)


# An apply_patch_call's input is its ``operation`` (create / update / delete a file, its diff).
_INPUTS = ("arguments", "input", "action", "code", "queries", "operation")


__all__ = ["CONTENT_HINT", "matches", "tell"]
