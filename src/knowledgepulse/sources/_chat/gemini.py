"""Gemini API conversation history (``contents``: ``{role, parts}``) as traces.

What a ``generateContent`` request sends as its ``contents``, what Gemini CLI's ``/chat save``
checkpoints and ``/chat share file.json`` write (a bare list of them), and the rows datasets and
recorded cassettes keep them in (``{contents, systemInstruction, tools}``). A ``user`` content's
``text`` parts are the user's words (the first the objective, a later one a reply to the model);
its ``functionResponse`` parts the results of the model's calls, joined by ``id`` where both
sides have one, else by ``name`` in the order called. A ``model`` content's parts with
``thought: true`` are thoughts, its other ``text`` what it said (the last model content's text,
when no call of it waits, the final answer), its ``functionCall`` parts tool calls. A response
with an ``error`` (``response.error``, as Gemini CLI and Pydantic AI send a failed tool's), or a
``functionResponse`` with an ``error`` key, is an evident error, and so is the output of Gemini
CLI's shell tool (``run_shell_command``, Qwen Code's too) that says its command exited other
than 0 (``Exit Code: 1``), which the CLI hands back as no error.

Gemini's code execution tool (``tools: [{codeExecution: {}}]``) runs the model's code on
Google's side, within the model's turn: a model content's ``executableCode`` part (``{language,
code}``) is a call of ``code_execution``, and the ``codeExecutionResult`` part after it
(``{outcome, output}``) its observation, an evident error when its ``outcome`` is other than
``OUTCOME_OK`` (``OUTCOME_FAILED``, ``OUTCOME_DEADLINE_EXCEEDED``). The model's own
``inlineData`` and ``fileData`` parts (an image it made) are no text, and their bytes are not
kept; they are said as Gemini CLI's ``partToString`` shows them (``<image/png>``, ``[File
Data: uri]``), so that an answer that is an image is no empty answer. The user's are dropped, as
every chat reader drops the binary parts of a request.

Gemini CLI puts its own words in the history as user text: the ``<session_context>`` it opens
with (``<hook_context>`` likewise), the ``<state_snapshot>`` its compression leaves in place of
the turns it summed up, and ``System: Please continue.`` after an empty reply: none is the
user's (as in its session files, :mod:`~knowledgepulse.sources._sessions.gemini_cli`). Nor is
the model's turn it scripts after its context and its summary (``Got it. Thanks for the
additional context!``) the model's words: no step. Nor are
the files it inlines for a prompt's ``@path``, the parts between ``--- Content from referenced
files ---`` and ``--- End of content ---``: the user typed the ``@path`` before them.

Each part's field is read by its JSON name (``functionCall``) or its proto name
(``function_call``): the protocol buffers' JSON mapping has parsers take both, so the API takes
either, and clients send the latter (simonw/llm-gemini's requests, the Python SDK's
``model_dump()``); a part read by one name only lost its calls without a word.

The contents are told as Anthropic messages (text, thinking, tool_use, tool_result blocks), whose
reading (:func:`~knowledgepulse.sources._chat.anthropic.tell`) is the same.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse.records.json_values import json_text
from knowledgepulse.sources._chat import _row, anthropic
from knowledgepulse.sources._chat._text import one_of
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._hosted import mcp_call_result
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the contents hold no text; check messages_field (kp: --messages-field) names the "
    "contents column"
)
CODE_EXECUTION = "code_execution"
"""The name of Gemini's code execution tool (``Tool.code_execution``; ``codeExecution`` in REST)."""
SHELL = "run_shell_command"
"""Gemini CLI's shell tool (Qwen Code's too). Its output is ``Output: ...``, then ``Error: ...``,
``Exit Code: N`` (where the command exited other than 0; older versions write every field, ``Exit
Code: 0`` too), ``Signal: ...`` and ``Process Group PGID: ...`` lines; the call itself succeeds."""
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)[ \t]*$", re.MULTILINE)
_SUCCEEDED = "OUTCOME_OK"
"""The one ``codeExecutionResult.outcome`` that is no failure."""
_OUTPUT_KEYS = frozenset({"output", "result", "content", "return_value"})
"""The one key of a ``functionResponse.response`` that wraps what the tool returned: Gemini's
``output``, the google-genai SDK's ``result``, Pydantic AI's ``return_value`` (its wrapper for a
return value that is no object)."""
ROLES = frozenset({"user", "model", "function"})
"""A content's roles: ``function`` is the v1beta API's first role for function responses."""
_NOT_THE_USERS = ("<session_context>", "<hook_context>", "<state_snapshot>")
"""How a user text starts that Gemini CLI wrote itself: the context it injects (its
``isIgnoredUserContent`` names the first two), its compression's summary."""
_CLIENTS_NUDGE = "System: Please continue."
"""The whole of the user text Gemini CLI sends by itself when the model's reply came back empty
or cut off (its client's retry of an invalid stream, since late 2025): nobody typed it."""


def clis_own(text: str) -> bool:
    """Whether a user text is Gemini CLI's own, not the user's: its context, its nudge."""
    said = text.strip()
    return said.startswith(_NOT_THE_USERS) or said == _CLIENTS_NUDGE


def is_content(value: Any) -> bool:
    """Whether a value is one Gemini ``Content``: a role of its own and a list of ``parts``."""
    return (
        isinstance(value, dict)
        and one_of(value.get("role"), ROLES)
        and isinstance(value.get("parts"), list)
    )


def matches(contents: list[Any]) -> bool:
    """Whether a list is Gemini contents: every item a ``{role, parts}``, one at least."""
    return bool(contents) and all(is_content(content) for content in contents)


def tell(contents: list[Any], builder: StepBuilder) -> _row.Told:
    """Tell the builder what Gemini contents hold (as the Anthropic messages they amount to)."""
    return anthropic.tell(as_anthropic(contents), builder)


def as_anthropic(contents: list[Any]) -> list[dict[str, Any]]:
    """Gemini contents as Anthropic messages, their calls and results joined by id."""
    ids = _Ids()
    told: list[dict[str, Any]] = []
    clis_context = False  # the content before is Gemini CLI's own context, not the user's
    for index, content in enumerate(contents):
        if not is_content(content):
            raise PathError(
                (index,),
                f"not a Gemini content: {describe_value(content)}; expected "
                "{role: user|model, parts: [...]}",
            )
        parts = content["parts"]
        if content["role"] == "model":
            if clis_context and _acknowledges(parts):
                clis_context = False
                continue  # the CLI's scripted reply to its own context: no word of the model's
            blocks = [_model_part(ids, part, (index, "parts", n)) for n, part in enumerate(parts)]
            told.append({"role": "assistant", "content": [b for b in blocks if b is not None]})
        else:
            inlined = _inlined(parts)
            blocks = [
                _user_part(ids, part, (index, "parts", n))
                for n, part in enumerate(parts)
                if n not in inlined
            ]
            told.append({"role": "user", "content": [b for b in blocks if b is not None]})
        clis_context = content["role"] != "model" and _clis_context(parts)
    return told


_ACKNOWLEDGEMENTS = frozenset(
    {"Got it. Thanks for the context!", "Got it. Thanks for the additional context!"}
)
"""The model turns Gemini CLI (and Qwen Code) write after their own context in the history: after
the session's environment context, after the ``<state_snapshot>`` of a compression."""


def _clis_context(parts: list[Any]) -> bool:
    """Whether a user content's parts are all Gemini CLI's own text (:func:`clis_own`)."""
    texts = [part.get("text") if isinstance(part, dict) else None for part in parts]
    return bool(texts) and all(isinstance(text, str) and clis_own(text) for text in texts)


def _acknowledges(parts: list[Any]) -> bool:
    """Whether a model content is only one of Gemini CLI's :data:`_ACKNOWLEDGEMENTS`."""
    texts = [part.get("text") if isinstance(part, dict) else None for part in parts]
    said = "".join(text for text in texts if isinstance(text, str))
    return None not in texts and said.strip() in _ACKNOWLEDGEMENTS


_INLINED_FROM = "--- Content from referenced files ---"
_INLINED_TO = "--- End of content ---"
"""The text parts between which Gemini CLI (and its fork Qwen Code) inlines the files a prompt
names with ``@path`` (its ``atCommandProcessor``): the user typed the ``@path``, not the files."""


def _inlined(parts: list[Any]) -> set[int]:
    """The indexes of a user content's parts that are files the CLI inlined for ``@path``.

    From a part that is :data:`_INLINED_FROM` alone through the next that is :data:`_INLINED_TO`
    (or the content's end): the session file's ``displayContent`` (Gemini CLI) or its
    ``at_command`` record (Qwen Code) keeps what was typed, the part before them.
    """
    said = [
        (as_string(part.get("text")) or "").strip() if isinstance(part, dict) else ""
        for part in parts
    ]
    if _INLINED_FROM not in said:
        return set()
    start = said.index(_INLINED_FROM)
    end = next((n for n in range(start + 1, len(said)) if said[n] == _INLINED_TO), len(said) - 1)
    return set(range(start, end + 1))


class _Ids:
    """The calls' ids: a call's own, else one made; a result finds its call's by id or name."""

    def __init__(self) -> None:
        self.made = 0
        self.waiting: defaultdict[str, deque[str]] = defaultdict(deque)  # name -> ids, oldest first

    def call(self, name: str, own: str | None) -> str:
        if own is None:
            self.made += 1
            own = f"gemini-call-{self.made}"
        self.waiting[name].append(own)
        return own

    def result(self, name: str | None, own: str | None) -> str:
        waiting = self.waiting[name or ""]
        if own is not None and own in waiting:
            waiting.remove(own)
            return own
        if waiting:  # no id, or one its call did not keep: the oldest call of that name
            return waiting.popleft()
        return own or f"gemini-result-of-{name}"


def field(part: Mapping[str, Any], name: str) -> Any:
    """A part's field by its JSON name, else its proto name (``functionCall``, ``function_call``).

    Proto3's JSON mapping accepts both names, so a request may hold either; a null under one (an
    SDK's dump of every field) leaves the other to be read. Google ADK's models are the same:
    snake case in the files it saves, camel case (their alias) in what its API server sends.
    """
    value = part.get(name)
    return part.get(_proto_name(name)) if value is None else value


@functools.cache
def _proto_name(name: str) -> str:
    """A field's proto name (``function_call``) from its JSON name: once, not for each part."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _model_part(ids: _Ids, part: Any, path: tuple[str | int, ...]) -> dict[str, Any] | None:
    """A model part as a block: a thought, text or a call; ``None`` for what says nothing."""
    if not isinstance(part, dict):
        return None
    call = field(part, "functionCall")
    if isinstance(call, dict):
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise PathError(
                (*path, "functionCall", "name"),
                f"expected a function name, found {describe_value(name)}",
            )
        own = ids.call(name, non_empty(call.get("id")))
        return {"type": "tool_use", "id": own, "name": name, "input": call.get("args")}
    code = field(part, "executableCode")
    if isinstance(code, dict):  # run by Google within this turn: a server tool's call
        own = ids.call(CODE_EXECUTION, non_empty(code.get("id")))
        return {
            "type": "server_tool_use",
            "id": own,
            "name": CODE_EXECUTION,
            "input": code_input(code),
        }
    ran = field(part, "codeExecutionResult")
    if isinstance(ran, dict):
        return _code_result(ids, ran, "code_execution_tool_result")
    text = as_string(part.get("text"))
    if text is None:
        return _media(part)
    if part.get("thought") is True:
        return {"type": "thinking", "thinking": text}
    return {"type": "text", "text": text}


def _user_part(ids: _Ids, part: Any, path: tuple[str | int, ...]) -> dict[str, Any] | None:
    """A user part as a block: the user's text, or a call's result; ``None`` for the CLI's own."""
    if not isinstance(part, dict):
        return None
    response = field(part, "functionResponse")
    if isinstance(response, dict):
        return _result(ids, response, path)
    ran = field(part, "codeExecutionResult")
    if isinstance(ran, dict):  # sent back as the user's
        return _code_result(ids, ran, "tool_result")
    text = as_string(part.get("text"))
    if text is None or clis_own(text):
        return None
    return {"type": "text", "text": text}


def _result(ids: _Ids, response: Mapping[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    """A ``functionResponse`` as a ``tool_result``: its output, or its error, failed."""
    name = non_empty(response.get("name"))
    answer = response.get("response")
    inside = answer.get("error") if isinstance(answer, Mapping) else None
    error = response.get("error") if response.get("error") is not None else inside
    called = mcp_call_result(answer)
    if error is not None:
        text = _said(error)
    elif called is not None:  # an MCP tool's result (ADK's MCP tools): its text, its flag
        text, failed = called
        error = (text or f"{name or 'tool'} failed") if failed else None
    elif isinstance(answer, Mapping) and set(answer) <= _OUTPUT_KEYS:
        # one key holding the output (Gemini CLI's output, the SDKs' result, Pydantic AI's
        # return_value for a tool that returned no object)
        text = _said(next(iter(answer.values()), ""))
    else:
        text = _said(answer)
    if name is None and response.get("id") is None:
        raise PathError(
            (*path, "functionResponse", "name"), "a functionResponse needs the name it answers"
        )
    return {
        "type": "tool_result",
        "tool_use_id": ids.result(name, non_empty(response.get("id"))),
        "content": text,
        "is_error": error is not None or shell_failed(name, text),
    }


def shell_failed(name: str | None, output: str) -> bool:
    """Whether a result of Gemini CLI's shell tool says its command failed.

    The ``Exit Code`` line the CLI writes after the command's output (its last, as the output
    may quote one) is not 0; the CLI gives the model that result as it gives a success's.
    """
    if name != SHELL:
        return False
    codes = _EXIT_CODE.findall(output)
    return bool(codes) and int(codes[-1]) != 0


def _code_result(ids: _Ids, result: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """A ``codeExecutionResult`` as the result of the code run before it."""
    text, failed = code_outcome(result)
    return {
        "type": kind,
        "tool_use_id": ids.result(CODE_EXECUTION, non_empty(result.get("id"))),
        "content": text,
        "is_error": failed,
    }


def code_input(code: Mapping[str, Any]) -> dict[str, Any]:
    """What the model wrote in an ``executableCode`` part: its ``language`` and ``code``.

    The part's ``id`` pairs it with its ``codeExecutionResult`` (as a ``functionCall``'s ``id``
    does its response, kept apart from its ``args``): no argument the model gave.
    """
    return {key: value for key, value in code.items() if key != "id"}


def code_outcome(result: Mapping[str, Any]) -> tuple[str, bool]:
    """A ``codeExecutionResult``'s observation, and whether the code failed.

    Its ``output`` is the observation; an ``outcome`` other than ``OUTCOME_OK`` is a failure,
    its text the outcome and what the code printed (a traceback). The one reading of it: the
    span reader (:mod:`~knowledgepulse.sources.otel.messages`) reads Google ADK's the same way.
    """
    output = _said(result.get("output"))
    outcome = as_string(result.get("outcome"))
    failed = outcome is not None and outcome != _SUCCEEDED
    if not failed:
        return output, False
    return (f"{outcome}: {output}" if output else str(outcome)), True


def _media(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """The model's inline data or file, said as Gemini CLI says it; ``None`` for anything else.

    The bytes are dropped (a trace keeps no binary part); the note keeps that the model gave one.
    """
    inline = field(part, "inlineData")
    if isinstance(inline, dict):
        return {"type": "text", "text": f"<{as_string(field(inline, 'mimeType')) or 'unknown'}>"}
    file = field(part, "fileData")
    if isinstance(file, dict):
        uri = as_string(field(file, "fileUri"))
        return {"type": "text", "text": f"[File Data: {uri}]" if uri else "[File Data]"}
    return None


def _said(value: Any) -> str:
    """A response's value as text: text as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    return json_text(value) if value is not None else ""


__all__ = [
    "CODE_EXECUTION",
    "CONTENT_HINT",
    "as_anthropic",
    "clis_own",
    "code_input",
    "code_outcome",
    "field",
    "is_content",
    "matches",
    "tell",
]
