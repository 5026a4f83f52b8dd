"""ShareGPT conversations (``conversations`` of ``from`` / ``value`` turns) as traces.

``system`` is context; the first ``human`` (``user``) turn is the objective, a later one the
user's reply to the assistant text before it (a ``respond`` call, see
:meth:`StepBuilder.user_turn`); ``gpt``
(``assistant``, ``model``) text is a thought, the last one without a call the answer; a
``function_call`` turn (JSON with ``name`` and ``arguments``, or a list of them) is a tool call
and the ``observation`` / ``tool`` / ``function_response`` turn after it its result (also
spelt ``function-call`` / ``function-response``, or ``tool_call`` / ``tool_response`` as
ms-swift's agent rows have them; a call may be a Python literal); so is an
assistant turn that is all such JSON with a result turn after it (GLM-4's rows). A
``function_call`` turn of text with OpenHands' ``<function=NAME>`` calls (ADP's SFT rows) is the
assistant's turn that wrote them: its text a thought, its calls tool calls (``finish`` the
answer), and the turn after it, ``observation`` or ``human``, their result. Hermes
``<tool_call>`` / ``<tool_response>`` tags inside turns are read as calls and results (Nemotron's
``<TOOLCALL>`` / ``<TOOL_RESPONSE>`` lists too).

Agent variants: turns keyed ``role`` / ``content`` or ``role`` / ``text`` (SWE-agent
trajectories, with ``ai`` turns), under ``conversations``, ``conversation`` or ``trajectory``.
In such a trajectory an ``ai`` turn that ends in a fenced command block runs that command: it is
a tool call named by the command's first word, and the ``user`` turn after it its observation.
LLaVA-Plus rows give a ``gpt`` turn its reasoning in ``thoughts`` and the tools it calls in
``actions`` (``API_name``, ``API_params``): the ``human`` turn after it is their output.

ms-swift's own "sharegpt" rows pair the turns: a ``conversation`` of ``{"human": ...,
"assistant": ...}`` exchanges (``user`` / ``gpt`` / ``bot`` also), read as the two turns each is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse.records.json_values import python_literal
from knowledgepulse.sources._chat import _row, openai_chat
from knowledgepulse.sources._chat._text import (
    OBSERVED_ACTION,
    TaggedCall,
    acted,
    declared_action,
    ended,
    has_result_tags,
    has_xml_calls,
    instructions,
    invented_observations,
    json_or_python,
    observes,
    one_of,
    primed,
    python_calls,
    tool_docs,
    users_words,
)
from knowledgepulse.sources._chat.openai_chat import assistant_text, tagged_results
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the rows hold no turn text; check messages_field (kp: --messages-field) names "
    "the conversations column"
)
_SPEAKER_KEYS = ("from", "role")
_TEXT_KEYS = ("value", "content", "text")
SYSTEM = frozenset({"system"})
HUMAN = frozenset({"human", "user"})
ASSISTANT = frozenset({"gpt", "assistant", "model", "chatgpt", "bing", "ai"})
CALL = frozenset({"function_call", "tool_call"})
RESULT = frozenset(
    {"observation", "tool", "tool_response", "function_response", "function", "ipython"}
)
SPEAKERS = SYSTEM | HUMAN | ASSISTANT | CALL | RESULT
_HYPHENATED = {"function-call": "function_call", "function-response": "function_response"}
_PAIR_KEYS = {"human": "human", "user": "human", "assistant": "gpt", "gpt": "gpt", "bot": "gpt"}
"""ms-swift's exchange keys (``MessagesPreprocessor``'s user and assistant roles) as speakers."""
_COMMAND = re.compile(r"```([^\n`]*)\n(.+?)\n?```\s*$", re.DOTALL)
_FENCED = re.compile(r"```[^\n`]*\n(.*?)\n?```", re.DOTALL)
_SHELLS = frozenset({"bash", "sh", "shell", "mswea_bash_command"})
"""A fenced block's language that says its command runs in a shell (mini-SWE-agent's ``bash``):
the call is of the shell, ``bash``, not of the command's first word (SWE-agent's tools)."""


def _turn(value: Any) -> tuple[str, Any] | None:
    if not isinstance(value, dict):
        return None
    speaker = next((value[k] for k in _SPEAKER_KEYS if isinstance(value.get(k), str)), None)
    if speaker is None:
        return None
    speaker = speaker.lower()
    # Conversions of Glaive's data (function-calling-chatml) write these two with a hyphen; not
    # every hyphen: smolagents' ``tool-call`` / ``tool-response`` messages are its own format.
    speaker = _HYPHENATED.get(speaker, speaker)
    # Parquet gives every turn every key of the column's struct: the first one set.
    text = next((value[k] for k in _TEXT_KEYS if value.get(k) is not None), None)
    return speaker, text


def _unpaired(turns: list[Any]) -> list[Any]:
    """ms-swift's exchanges (``{"human": q, "assistant": r}``) as turns; other turns as they are.

    The human's words come first in each exchange, as ms-swift reads them; an exchange
    without a reply (the last, awaiting one) gives its question alone.
    """
    if not turns or not all(
        isinstance(turn, dict) and turn and set(turn) <= _PAIR_KEYS.keys() for turn in turns
    ):
        return turns
    return [
        {"from": speaker, "value": turn[key]}
        for turn in turns
        for speaker in ("human", "gpt")
        for key in turn
        if _PAIR_KEYS[key] == speaker and turn[key] is not None
    ]


def matches(turns: list[Any]) -> bool:
    """Whether a list is ShareGPT turns (``from`` / ``value``; or an agent variant's)."""
    turns = _unpaired(turns)
    parsed = [_turn(turn) for turn in turns]
    if not all(found is not None and found[0] in SPEAKERS for found in parsed):
        return False
    # Chat Completions messages (role/content, the legacy ``function`` role too) are read by
    # openai-chat, unless a ShareGPT name (gpt, human, observation...) or the text key says
    # otherwise.
    return any(
        "from" in turn or "text" in turn or not one_of(turn.get("role"), openai_chat.ROLES)
        for turn in turns
    )


def tell(turns: list[Any], builder: StepBuilder) -> _row.Told:
    """Tell the builder what ShareGPT turns hold."""
    turns = _unpaired(turns)
    parsed: list[tuple[str, Any]] = []
    for index, turn in enumerate(turns):
        found = _turn(turn)
        if found is None or found[0] not in SPEAKERS:
            raise PathError((index,), _not_a_turn(turn))
        parsed.append(_agents_turn(*found))
    # before the priming turns become the system's: they may declare the action line
    marker = declared_action(_instructions(parsed)) or (
        OBSERVED_ACTION
        if any(speaker in HUMAN and observes(as_string(value)) for speaker, value in parsed)
        else None
    )
    instructions = _unprimed(parsed)
    speakers = [speaker for speaker, _ in parsed]
    invented = invented_observations(
        ((speaker in ASSISTANT, as_string(value)) for speaker, value in parsed), marker
    )
    last = max(
        (i for i, s in enumerate(speakers) if s in ASSISTANT and i not in invented), default=-1
    )
    agent = "ai" in speakers
    calls = _row.Calls(builder)
    objective: str | None = None
    system = instructions
    answered = False
    ran_command = False
    ended_run = False  # the last agent turn ended the run on its action line (``finish[X]``)
    for index, (speaker, value) in enumerate(parsed):
        text = as_string(value)
        if speaker in SYSTEM:
            system = system or text
        elif speaker in HUMAN:
            before = _ENDED if ended_run else _COMMAND_RAN if ran_command else None
            objective = _tell_human(calls, value, objective, ran=before)
            ran_command = False
        elif speaker in ASSISTANT and (
            _told_invented(calls, text, invented=index in invented)
            or _told_turn_calls(calls, turns[index], parsed, index)
        ):
            continue  # an observation it wrote itself, or the whole turn was its calls (GLM-4's)
        elif speaker in ASSISTANT:
            turn = turns[index]  # a turn object: _turn read it
            actions = _actions(turn)
            if isinstance(turn.get("actions"), list):  # LLaVA-Plus: its reasoning first
                calls.builder.thought(as_string(turn.get("thoughts")))
            following = parsed[index + 1][0] if index + 1 < len(parsed) else None
            final = index == last and following not in CALL and not actions
            # An agent's command is answered by the user turn (SWE-agent's ``ai`` turns) or by an
            # observation (mini-SWE-agent's replies in ADP's SFT rows).
            ran = agent or following in RESULT
            said = _tell_assistant(calls, text or "", final=final, agent=ran, marker=marker)
            for name, arguments in actions:
                calls.request(name, arguments)
            # A call written in the text (OpenHands' `<function=...>`, as ADP's SFT rows hold it):
            # the human turn after it is its result ("EXECUTION RESULT of [...]"), as in chat rows.
            ran_command = (
                said == "command"
                or (said == _CALLED and following not in RESULT)  # else that turn answers them
                or bool(actions)
                or has_xml_calls(text)
                or acted(text, marker)
            )
            answered = answered or said == "answer"
            ended_run = not ran_command and ended(text, marker)
        elif speaker in CALL:
            _tell_calls(calls, value, (index,))
        elif has_result_tags(text):
            tagged_results(calls, text or "")
        else:
            calls.result(None, value)
    # The environment's "Episode finished, reward = 0": the answer it ended with was wrong.
    answered = (answered or calls.answered) and calls.verdict is not False
    first = next((as_string(value) for speaker, value in parsed if speaker in HUMAN), None)
    # The tools' documentation before the task (ADP's SFT rows) is no word of the user's, so
    # no part of the objective, but the model was told it: a training row still has it.
    docs = tool_docs(first)
    return _row.Told(objective, answered, system, preamble=docs.strip() if docs else None)


def _told_invented(calls: _row.Calls, text: str | None, *, invented: bool) -> bool:
    """Tell an invented observation as the agent's own text, no answer; whether it was one.

    It is an agent's turn that wrote the environment's closing reply itself
    (:func:`invented_observations`).
    """
    if invented:
        calls.builder.thought(text)
    return invented


def _instructions(parsed: list[tuple[str, Any]]) -> str | None:
    """The instructions the model was given: the system turn, else the first human turn."""
    for speakers in (SYSTEM, HUMAN):
        for speaker, value in parsed:
            if speaker in speakers:
                return as_string(value)
    return None


_CALLED = "called"
"""The agent's turn was calls written as objects (:func:`_fenced_calls`)."""
_COMMAND_RAN = "command"
"""The agent's turn before ran a command: the human turn is its output."""
_ENDED = "ended"
"""The agent's turn before ended the run on its action line (ReAct's ``finish[X]``): an
``Observation: ...`` after it is the environment closing the episode, no user's words."""


def _tell_human(
    calls: _row.Calls, value: Any, objective: str | None, *, ran: str | None
) -> str | None:
    """Tell a human turn; the objective, when it is the first.

    A turn is tool responses in tags, the objective, the output of an agent's command, the
    environment closing the episode the agent's action ended, or else the user's reply to the
    agent.
    """
    text = as_string(value)
    if has_result_tags(text):
        tagged_results(calls, text or "")
    elif objective is None:
        return users_words(text)
    elif ran == _COMMAND_RAN:
        calls.result(None, value)
    elif ran == _ENDED and observes(text):
        calls.closed(text)
    else:
        calls.user(text)
    return objective


def _unprimed(parsed: list[tuple[str, Any]]) -> str | None:
    """The system prompt, when the turns open by priming the model (see :func:`primed`).

    Its instructions and its "OK" (or a worked problem) become system turns that say nothing more.
    """
    priming = primed((_kind(speaker), as_string(value)) for speaker, value in parsed)
    if priming is None:
        return None
    given = next((as_string(value) for speaker, value in parsed if speaker in SYSTEM), None)
    said = instructions(as_string(parsed[priming.start][1]))
    for index in priming:
        parsed[index] = ("system", None)
    return "\n\n".join(filter(None, (given, said)))


def _kind(speaker: str) -> str:
    """A turn's kind, as :func:`primed` reads them."""
    for kind, speakers in (("system", SYSTEM), ("user", HUMAN), ("assistant", ASSISTANT)):
        if speaker in speakers:
            return kind
    return "other"


def _tell_assistant(
    calls: _row.Calls, text: str, *, final: bool, agent: bool, marker: str | None = None
) -> str:
    """Tell an assistant turn; what it was.

    ``answer``, ``command`` (an agent's), ``called`` (fenced call objects), or ``thought``.
    """
    # A ShareGPT turn keeps no reasoning apart: its text may have begun inside a ``<think>`` block
    # the chat template opened, as a chat message's may.
    rest, called = assistant_text(calls, text, marker=marker, reasoned=False)
    fenced = _fenced_calls(rest) if agent else None
    if fenced is not None:
        start, named = fenced
        calls.builder.thought(rest[:start])
        for name, arguments, call_id in named:
            calls.request(name, arguments, call_id)
        return _CALLED
    command = _COMMAND.search(rest) if agent else None
    if command is not None and final and "\n" in command.group(2).strip():
        command = None  # a closing answer that ends in a block of code, not a command
    if command is not None:
        calls.builder.thought(rest[: command.start()])
        line = command.group(2).strip()
        name = line.split(maxsplit=1)[0] if line else "command"
        calls.request("bash" if command.group(1).strip() in _SHELLS else name, {"command": line})
        return "command"
    if final and not called and rest.strip():
        calls.builder.answer(rest)
        return "answer"
    calls.said(rest)
    return "thought"


def _fenced_calls(text: str) -> tuple[int, list[tuple[str, Any, str | None]]] | None:
    r"""Calls written as objects in the fenced blocks that end a turn, and where the first opens.

    Some function-calling rows fence each call, ```` ```tool_call\n{'name': ..., 'arguments':
    ...}``` ```` (MarketDataGenie's hermes-function-calling ShareGPT format), the result turn
    after them: each block is a call of the tool it names, not a command whose first word
    (``{'arguments':``) names it. ``None`` unless every block is such an object.
    """
    blocks = list(_FENCED.finditer(text))
    if not blocks or _FENCED.sub("", text[blocks[0].start() :]).strip():
        return None  # text between or after the blocks: not a turn of calls
    named = [_named_call(json_or_python(block.group(1).strip())) for block in blocks]
    if not all(named):
        return None
    return blocks[0].start(), [call for call in named if call is not None]


def _actions(turn: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The tools a LLaVA-Plus ``gpt`` turn calls: its ``actions`` (``API_name``, ``API_params``).

    Its output comes back as the next ``human`` turn (``sam model outputs: ...``), as an agent's
    command output does, so the turn is told as a command's.
    """
    actions = turn.get("actions")
    return [
        (action["API_name"], action.get("API_params"))
        for action in (actions if isinstance(actions, list) else [])
        if isinstance(action, dict)
        and isinstance(action.get("API_name"), str)
        and action["API_name"]
    ]


def _agents_turn(speaker: str, value: Any) -> tuple[str, Any]:
    """A turn, an agent's text labelled ``function_call`` read as the agent's (``gpt``) turn.

    ADP's SFT rows (their older files) label every turn of the agent ``function_call``: its
    thought with an OpenHands ``<function=NAME>`` call, and its text alone too (AgentInstruct's
    scripted "OK.", a closing reply). A call's own value is JSON (or a Python literal: ``{...}``,
    ``[...]``); text that is neither is what the agent wrote, its calls read from it as from any
    assistant turn and the turn after them their result.
    """
    if speaker in CALL and isinstance(value, str) and not value.lstrip().startswith(("{", "[")):
        return "gpt", value
    return speaker, value


def _tell_calls(calls: _row.Calls, value: Any, path: tuple[str | int, ...]) -> None:
    parsed = value
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            parsed = _python_call(value, path)
    for call in parsed if isinstance(parsed, list) else [parsed]:
        named = _named_call(call)
        if named is None:
            raise PathError(
                (*path, "value"),
                f"expected a function call with a name, found {describe_value(call)}",
            )
        calls.request(*named)


def _named_call(call: Any) -> tuple[str, Any, str | None] | None:
    """A call object's name, arguments and id; ``None`` when it names no function.

    ``{"name", "arguments"}`` (or ``parameters``), as GLM-4's and LLaMA-Factory's rows write it,
    or a Chat Completions tool call, ``{"id", "function": {"name", "arguments"}}``, as rows that
    keep the API's ``tool_calls`` list as the turn's text have it (NousResearch's
    hermes-function-calling examples in ShareGPT form).
    """
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    named = function if isinstance(function, dict) and "name" in function else call
    name = named.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = call.get("id") if named is function else None
    arguments = named.get("arguments", named.get("parameters"))
    return name, arguments, call_id if isinstance(call_id, str) and call_id else None


def _told_turn_calls(
    calls: _row.Calls, turn: Any, parsed: list[tuple[str, Any]], index: int
) -> bool:
    """Tell an assistant turn that is its calls as a whole; whether it was.

    GLM-4's rows write the call as the assistant's whole turn, the JSON a ``function_call`` turn
    holds, and its result as the ``observation`` turn after it; ChatGLM3's name the tool in the
    turn's ``metadata`` (:func:`_glm3_call`).
    """
    value = parsed[index][1]
    if _json_calls(value, parsed[index + 1 :]):
        _tell_calls(calls, value, (index,))
        return True
    called = _glm3_call(turn, as_string(value))
    if called is None:
        return False
    calls.request(called.name, called.arguments)
    return True


_GLM3_CODE = re.compile(r"\A\s*```python\s*\n\s*(tool_call\(.*\))\s*\n\s*```\s*\Z", re.DOTALL)


def _glm3_call(turn: Any, text: str | None) -> TaggedCall | None:
    r"""The call a ChatGLM3 assistant turn makes, else ``None``.

    ChatGLM3's tool format (its fine-tuning data and its API's agent messages) names the tool in
    the turn's ``metadata`` and writes the call as Python, ```` ```python\ntool_call(k=v)\n``` ````;
    the ``observation`` turn after it is the result. Without that name the block stays text.
    """
    name = turn.get("metadata") if isinstance(turn, Mapping) else None
    found = _GLM3_CODE.match(text or "") if isinstance(name, str) and name.strip() else None
    written = python_calls(f"[{found[1]}]") if found is not None else None
    if not isinstance(name, str) or written is None or len(written) != 1:
        return None
    return TaggedCall(name.strip(), written[0].arguments)


def _json_calls(value: Any, after: list[tuple[str, Any]]) -> bool:
    """Whether an assistant turn is a call, as GLM-4's fine-tuning rows write one.

    All of it a JSON object with a ``name`` and its ``arguments`` (or a list of them; or Chat
    Completions tool calls, :func:`_named_call`), and a result turn after it; text that only
    looks so, with no result after it, stays the assistant's words.
    """
    if not after or after[0][0] not in RESULT or not isinstance(value, str):
        return False
    if not value.lstrip().startswith(("{", "[")):
        return False
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return bool(parsed) and all(
        _named_call(call) is not None
        and any(
            "arguments" in named or "parameters" in named
            for named in (call, call.get("function"))
            if isinstance(named, dict)
        )
        for call in (parsed if isinstance(parsed, list) else [parsed])
    )


def _python_call(value: str, path: tuple[str | int, ...]) -> Any:
    """A call written as a Python literal, which JSON refuses.

    Glaive's conversions quote the arguments' JSON text with single quotes:
    ``{"name": "f", "arguments": '{"a": 1}'}``.
    """
    try:
        return python_literal(value)
    except ValueError:
        raise PathError(
            (*path, "value"), "expected a function call as JSON with a name and arguments"
        ) from None


def _not_a_turn(value: Any) -> str:
    return (
        f"not a ShareGPT turn: {describe_value(value)}; expected {{from: "
        "system|human|gpt|function_call|observation, value: ...}"
    )


__all__ = ["CONTENT_HINT", "matches", "tell"]
