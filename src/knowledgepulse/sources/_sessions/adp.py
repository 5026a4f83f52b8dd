"""Agent Data Protocol (ADP) trajectories as traces: one trajectory, one trace.

neulab's Agent Data Protocol (``neulab/agent-data-protocol``) converts agent datasets
(AgentInstruct, SWE-smith, SWE-Gym, nebius' SWE-agent runs, NNetNav, Toucan...) into one
standardized form, a trajectory ``{"id", "content": [...], "details": {...}}``
(``schema/trajectory.py``): its ``content`` is the run's actions and observations in order, each
told apart by its ``class_``:

* ``text_observation`` ``{content, source: user|agent|environment, name}``;
* ``web_observation`` ``{html, axtree, url, image_observation, viewport_size}`` and
  ``image_observation`` ``{content: a path to the image, annotations, source}``;
* ``api_action`` ``{function, kwargs, description}``, ``code_action`` ``{language, content,
  description}`` and ``message_action`` ``{content, description}``.

A dataset's ``sample_std.json`` is a JSON list of trajectories; its full data JSON Lines of them.
They are read as ADP's own converter to OpenHands' training rows reads them
(``agents/openhands/std_to_sft.py``):

* an action's ``description`` is its thought, told before it, and its ``reasoning_content``
  (ADP 1.3: the converter's ``<think>`` block) a thought before that; SWE-Gym's converter
  writes a response that made several calls as one action a call, each with the response's
  text, each result right after its call: those calls are one turn, the text told once
  (:func:`_same_response`);
* an ``api_action`` is a call of its ``function`` with its ``kwargs``; a ``code_action`` a call
  of the language's executor, named as that converter names it: ``execute_bash`` (its
  ``command``), ``execute_ipython_cell`` for Python (its ``code``), ``execute_<language>`` for
  the others (its ``code``);
* two functions are ADP's own, declared by the datasets that use them (SWE-chat's ``api.py``):
  ``think(thought)``, "a private reasoning step", is a thought, no tool call (as kp's OpenHands
  readers read OpenHands' think action); ``generic_tool(tool_name, tool_input, content)``, a
  source's own tool kept under one name, is a call of ``tool_name`` with ``tool_input`` (its raw
  ``content`` when it has none), and a description that only repeats that name is no thought;
* an observation whose ``tool_call_id`` (ADP 1.3) names an action is that action's result;
  where either has none, the observation right after an action, whatever its ``source``
  (AgentInstruct's environment speaks as the user), is that action's result; a result that
  says it failed (:func:`error_text`) is an evident error, whose next action is its
  ``error_recovery``;
* a ``message_action`` is what the agent says; ``<finish>...</finish>`` marks its closing
  message, the text inside. The last action, when it is a message, is the final answer; so is
  WebArena's closing ``stop`` call, its ``answer`` (:data:`STOP`);
* a ``text_observation`` of the ``user`` that answers no action is the objective (the first), or
  the user's reply to the agent (a later one); of the ``agent``, what the agent said; of the
  ``environment``, feedback that answers no action: an evident error when it says so, else
  context (the system prompt), left out, as a web or image observation no action precedes (the
  page the task opens on) is; where that context declares the tools (Toucan's Kimi
  ``tool_declare`` message, :func:`prompt_tools`), they are the tools offered;
* AgentInstruct's trajectories open by priming the model (the environment's instructions, the
  agent's "OK", then the task): the instructions are the system prompt (:func:`primed`).

``details`` holds what a dataset kept of the run (all values text): SWE-Gym's ``resolved``
(``"True"``/``"False"``) is the success; without it, success is whether the trajectory ends in
the agent's final message. SWE-Gym's ``tools`` (OpenHands' definitions, as JSON text) are the
tools offered. The id is the trajectory's ``id``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import moment
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._text import error_text, one_of, primed
from knowledgepulse.sources._chat._tools import prompt_tools, row_tools
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble
from knowledgepulse.sources._sessions._documents import each_document
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "ADP's raw_to_standardized.py keeps each observation's and message's text"
ACTIONS = frozenset({"api_action", "code_action", "message_action"})
OBSERVATIONS = frozenset({"text_observation", "web_observation", "image_observation"})
CLASSES = ACTIONS | OBSERVATIONS
"""The ``class_`` of every action and observation ADP's schema defines."""
EXECUTORS = {"bash": ("execute_bash", "command"), "python": ("execute_ipython_cell", "code")}
"""The tool (and its argument) a ``code_action`` of a language is a call of, as ADP's OpenHands
converter names them; another language's is ``execute_<language>`` with its ``code``."""
SUCCESS_DETAIL = "resolved"
"""The ``details`` key whose ``"True"``/``"False"`` is the run's outcome (SWE-Gym's)."""
TIME_DETAILS = ("timestamp", "created_at")
"""The ``details`` keys holding when the run was recorded (OpenHands' feedback dataset's;
SWE-chat's, when its session was)."""
STOP = "stop"
"""WebArena's closing action, ``stop(answer)`` (Synatra's too): the last action, it is the run's
answer, not a tool call; an empty answer (a task that asks for none) says its description."""
THINK = "think"
"""ADP's ``think(thought)`` function, "Record a private reasoning step" (SWE-chat's ``api.py``;
its converter makes the source's thinking turns and think tools one): a thought, no tool."""
GENERIC_TOOL = "generic_tool"
"""ADP's ``generic_tool(tool_name, tool_input, content)``: "a source-specific coding-agent tool
call", the source's tool named by ``tool_name``, its parameters ``tool_input`` (its raw
``content`` when it has no structured input)."""
RENAMED = {
    "execute_bash": frozenset({"bash", "run_command", "shell", "terminal", "execute_bash"}),
    "str_replace_editor": frozenset(
        {"read", "read_file", "write", "write_file", "edit", "edit_file"}
    ),
}
"""The source's tools that SWE-chat's converter (``raw_to_standardized.py``) writes as a
``bash`` ``code_action`` (``execute_bash``) or a ``str_replace_editor`` call, keeping the tool's
name (``Bash``, ``Read``, ``edit_file``) as the action's description: no thought."""
_FINISH_OPEN, _FINISH_CLOSE = "<finish>", "</finish>"
TOOL_CALL_ID = "tool_call_id"
"""ADP 1.3's link of an ``api_action`` or ``code_action`` to its observation ("Stable identifier
for the action/tool call that produced this observation. This must match a preceding
Action.tool_call_id when populated."): where both have one, the result is the observation
naming the action's id, wherever it comes (calls made together, answered in another order);
where either has none, the observation right after the action, as before 1.3 (ADP's own
``backfill_adjacent_tool_call_links`` gives adjacent pairs one id)."""
REASONING = "reasoning_content"
"""An action's chain of thought (ADP 1.3, "e.g., <think> blocks"), apart from its brief
``description``: a thought, told before it."""


def recognises(value: Any) -> bool:
    """Whether a record is an ADP trajectory: an ``id`` and ``content`` of ADP classes."""
    if not isinstance(value, dict) or "id" not in value:
        return False
    content = value.get("content")
    if not isinstance(content, list) or not content:
        return False
    first = content[0]
    return isinstance(first, dict) and one_of(first.get("class_"), CLASSES)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace per trajectory of a file (a JSON list's elements, or JSON Lines)."""
    yield from each_document(
        records,
        recognises,
        partial(_finish, options=options),
        what="an ADP trajectory",
        expected='{"id", "content": [{"class_": "text_observation", ...}, ...], "details"}',
    )


def evidence(value: Any) -> str:
    """What shows a record is an ADP trajectory: its first content item's ``class_``."""
    return (
        f"content[0].class_ is {value['content'][0]['class_']!r}: an Agent Data Protocol "
        "trajectory (id, content of actions and observations, details)"
    )


def describe(first: Any, count: int) -> str:
    """What a file was read as: its trajectories, and where their success comes from."""
    details = first.get("details") if isinstance(first, dict) else None
    labelled = isinstance(details, dict) and outcome(details) is not None
    success = (
        f"success from details.{SUCCESS_DETAIL}"
        if labelled
        else "success: whether each ends in the agent's final message"
    )
    return (
        f"read as adp ({counted(count, 'trace')}): Agent Data Protocol trajectories, steps "
        f"from 'content', id from 'id'; {success}"
    )


def mapping(first: Any) -> dict[str, str]:
    """The fields a trajectory's parts come from (success and time where ``details`` has them)."""
    details = first.get("details") if isinstance(first, dict) else None
    found = {"steps": "content", "id": "id"}
    if isinstance(details, dict) and outcome(details) is not None:
        found["success"] = f"details.{SUCCESS_DETAIL}"
    timed = _time_detail(details) if isinstance(details, dict) else None
    if timed is not None:
        found["created_at"] = f"details.{timed}"
    return found


def _time_detail(details: Mapping[str, Any]) -> str | None:
    """The first ``details`` key of :data:`TIME_DETAILS` that holds a time."""
    return next((key for key in TIME_DETAILS if moment(details.get(key)) is not None), None)


@dataclass(frozen=True, slots=True)
class _Told:
    objective: str | None
    system: str | None
    tools: tuple[dict[str, Any], ...]


def _finish(record: Record, options: TraceOptions) -> TraceItem:
    trajectory = record.value
    content = trajectory["content"]
    details = trajectory.get("details")
    details = details if isinstance(details, dict) else {}
    builder = StepBuilder()
    told = _tell(content, builder)
    said = outcome(details)
    model = as_string(details.get("model_name"))
    timed = _time_detail(details)
    return assemble(
        builder,
        source="adp",
        source_id=as_text(trajectory["id"]),
        success=builder.final_answer is not None if said is None else said,
        options=options,
        objective=told.objective,
        created_at=None if timed is None else moment(details[timed]),
        result_summary=builder.final_answer,
        framework="adp",
        source_extra={"model": model} if model else None,
        content_hint=CONTENT_HINT,
        location=record.location,
        system=told.system,
        tools=row_tools(details) or told.tools,
    )


def outcome(details: Mapping[str, Any]) -> bool | None:
    """``details.resolved`` as a boolean (ADP keeps every detail as text); else ``None``."""
    value = details.get(SUCCESS_DETAIL)
    if isinstance(value, bool):
        return value
    word = value.strip().lower() if isinstance(value, str) else None
    return {"true": True, "false": False}.get(word or "")


def _tell(content: list[Any], builder: StepBuilder) -> _Told:
    """Tell the builder a trajectory's content; the objective and the priming instructions."""
    _check(content)
    priming = primed(_kind(item) for item in content)
    final = _final_message(content)
    objective: str | None = None
    system: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    calls = _Calls()
    for index, item in enumerate(content):
        path: tuple[str | int, ...] = ("content", index)
        kind = item["class_"]
        again = _same_response(content, index)  # one more call of the response just told
        calls.tell_held(builder, unless=again)
        if kind in ACTIONS and not again and not (priming is not None and index in priming):
            # ADP's converter writes an action's reasoning as a <think> block before its
            # description (agents/openhands/std_to_sft.py, ``_build_thought_text``).
            builder.thought(_optional(item, REASONING, path))
        answered = (
            calls.answered(_link(item, path), positional=_speaker(item) != "agent")
            if kind in OBSERVATIONS
            else None
        )
        if priming is not None and index in priming:
            system = _text(item, path) if index == priming.start else system
        elif answered is not None:  # an action's result, after all its response's calls
            calls.held.append((answered, _observed(item, path)))
        elif index == final and kind == "api_action":  # WebArena's stop(answer)
            _tell_message(builder, {**item, "content": _stop_answer(item)}, path, final=True)
        elif _thinks(item):  # a thought, not a call: nothing waits for its result
            builder.thought(_thought(item, path))
        elif kind in ("api_action", "code_action"):
            _tell_call(builder, item, index, calls, again=again)
            continue
        elif kind == "message_action" or _speaker(item) == "agent":
            _tell_message(builder, item, path, final=index == final)
        elif _speaker(item) == "user":
            text = _text(item, path)
            if objective is None:
                objective = text if text.strip() else None
            else:
                builder.user_turn(text)
        elif kind == "text_observation":  # the environment's, answering no action
            text = _text(item, path)
            tools = tools or prompt_tools(text)
            builder.error(error_text(text))
        calls.just_told = None
    calls.tell_held(builder, unless=False)
    return _Told(objective, system, tools)


def _tell_call(
    builder: StepBuilder, item: Mapping[str, Any], index: int, calls: _Calls, *, again: bool
) -> None:
    """An action's call (``content[index]``), its description the thought told before it.

    ``again``: one more call of the response just told (:func:`_same_response`), its text
    told already and its call in the same turn: no thought between them.
    """
    path = ("content", index)
    name, arguments = _call(item, path)
    if not again:
        builder.thought(_description(item, name, path))
    builder.tool_request(name, arguments, call_id=calls.told(name, _link(item, path), index))


def _same_response(content: list[Any], index: int) -> bool:
    """Whether an action is one more call of the model response the action before it made.

    ADP's SWE-Gym converter writes a response that made several calls as one action a call,
    each with the response's text as its ``description``, and each call's result right after
    it (``raw_to_standardized.py``, its ``parallel_tool_count``): an action whose description
    (and reasoning) is the one of the action before the observation before it is that
    response's, its text told once, its calls one turn (siblings: none recovers from another's
    error, which the model had not seen). An empty description tells no response apart.
    """
    if index < 2 or index >= len(content):
        return False
    item, before, first = content[index], content[index - 1], content[index - 2]
    calls = ("api_action", "code_action")
    if item["class_"] not in calls or first["class_"] not in calls or _thinks(item):
        return False
    if before["class_"] not in OBSERVATIONS or _speaker(before) in ("user", "agent"):
        return False
    said = item.get("description")
    return (
        isinstance(said, str)
        and bool(said.strip())
        and said == first.get("description")
        and item.get(REASONING) == first.get(REASONING)
    )


@dataclass
class _Calls:
    """The calls told whose results may still come: by ``tool_call_id``, and the one just told.

    Where an observation and the action have a ``tool_call_id`` (:data:`TOOL_CALL_ID`), the
    observation answers the action it names; else the one right after an action answers it.
    """

    just_told: tuple[str, str] | None = None  # the tool and call id of the action just told
    by_id: dict[str, tuple[str, str]] = field(default_factory=dict)  # the unanswered with ids
    held: list[tuple[tuple[str, str], str]] = field(default_factory=list)
    """The results (action, output) of a response's calls, told once all its calls are."""

    def tell_held(self, builder: StepBuilder, *, unless: bool) -> None:
        """Tell the results held, unless their response has more calls to tell first."""
        if unless:
            return
        for action, output in self.held:
            _tell_result(builder, action, output)
        self.held.clear()

    def told(self, name: str, link: str | None, index: int) -> str:
        """An action told: its call id (its ``tool_call_id``, else its place)."""
        self.just_told = (name, link or str(index))
        if link is not None:
            self.by_id[link] = self.just_told
        return self.just_told[1]

    def answered(self, link: str | None, *, positional: bool) -> tuple[str, str] | None:
        """The action an observation (its ``tool_call_id``) is the result of, else ``None``.

        An id that names another call than the action just told (which has one) makes the
        observation no result of that action.
        """
        if link is not None and link in self.by_id:
            return self.by_id.pop(link)
        action = self.just_told
        if action is None or not positional or (link is not None and action[1] in self.by_id):
            return None
        self.by_id.pop(action[1], None)
        return action


def _tell_result(builder: StepBuilder, action: tuple[str, str], output: str) -> None:
    """An action's result (its tool and call id): failed when its text says so."""
    failed = error_text(output)
    name, call_id = action
    builder.tool_result(name, output=None if failed else output, error=failed, call_id=call_id)


def _link(item: Mapping[str, Any], path: tuple[str | int, ...]) -> str | None:
    """An item's ``tool_call_id`` (ADP 1.3): the call an observation is the result of."""
    return _optional(item, TOOL_CALL_ID, path)


def _check(content: list[Any]) -> None:
    """Raise at the first content item that is no ADP action or observation."""
    for index, item in enumerate(content):
        if not isinstance(item, dict) or not one_of(item.get("class_"), CLASSES):
            raise PathError(
                ("content", index),
                f"not an ADP action or observation: {describe_value(item)}; expected an object "
                f"whose class_ is one of {', '.join(sorted(CLASSES))}",
            )


def _kind(item: Mapping[str, Any]) -> tuple[str, str | None]:
    """An item's kind and text, as :func:`primed` reads them."""
    kind = item["class_"]
    if kind == "message_action" or _speaker(item) == "agent":
        return "assistant", as_string(item.get("content"))
    if _speaker(item) == "user":
        return "user", as_string(item.get("content"))
    if kind == "text_observation" and item.get("name") == "system":
        return "system", as_string(item.get("content"))
    return "other", None


def _speaker(item: Mapping[str, Any]) -> str | None:
    """A text observation's ``source`` (``user``, ``agent``, ``environment``); else ``None``."""
    return as_string(item.get("source")) if item["class_"] == "text_observation" else None


def _final_message(content: list[Any]) -> int | None:
    """The index of the final answer: the last action, a message the agent says or a ``stop``."""
    said = [
        index
        for index, item in enumerate(content)
        if (item["class_"] in ACTIONS and not _thinks(item)) or _speaker(item) == "agent"
    ]
    last = said[-1] if said else None
    if last is None or _stops(content[last]):
        return last
    calls = content[last]["class_"] in ("api_action", "code_action")
    return None if calls else last


def _thinks(item: Mapping[str, Any]) -> bool:
    """Whether an action is ADP's ``think``: the agent reasoning, which calls nothing."""
    return item["class_"] == "api_action" and item.get("function") == THINK


def _thought(item: Mapping[str, Any], path: tuple[str | int, ...]) -> str | None:
    """A ``think`` action's ``thought``; its description where it has none.

    SWE-chat's converter writes the source's tool name (``think``) as the description: the
    thought itself is one step, not two.
    """
    kwargs = item.get("kwargs")
    thought = kwargs.get("thought") if isinstance(kwargs, dict) else None
    if isinstance(thought, str) and thought.strip():
        return thought
    return _optional(item, "description", path)


def _description(item: Mapping[str, Any], name: str, path: tuple[str | int, ...]) -> str | None:
    """An action's description, its thought; none where it only names the tool called.

    ADP's converters that wrap a source's tool in ``generic_tool`` keep its name as the
    description (SWE-chat's ``clean_function_name``, non-word characters made ``_``), and so
    does SWE-chat's for a tool it writes as a shell or editor call (:data:`RENAMED`): no thought.
    """
    text = _optional(item, "description", path)
    if text is not None and _word(text) in {_word(name), *RENAMED.get(name, ())}:
        return None
    return text


def _word(name: str) -> str:
    return re.sub(r"\W+", "_", name).strip("_").casefold()


def _stops(item: Mapping[str, Any]) -> bool:
    """Whether an action is WebArena's ``stop``, which ends the run (its ``answer`` optional)."""
    return item["class_"] == "api_action" and item.get("function") == STOP


def _stop_answer(item: Mapping[str, Any]) -> str:
    """The ``answer`` a ``stop`` gives in its ``kwargs``; else ``""`` (none asked for)."""
    kwargs = item.get("kwargs")
    answer = kwargs.get("answer") if isinstance(kwargs, dict) else None
    return answer if isinstance(answer, str) else ""


def _tell_message(
    builder: StepBuilder, item: Mapping[str, Any], path: tuple[str | int, ...], *, final: bool
) -> None:
    """A message the agent says: its description a thought, then its text (the answer if final).

    ``<finish>...</finish>`` is taken off; a closing message that is empty inside
    (``<finish> </finish>``, AgentInstruct's WebShop rows) says its description instead.
    """
    thought, text = message_said(_text(item, path), _optional(item, "description", path))
    builder.thought(thought)
    if final:
        builder.answer(text)
    else:
        builder.thought(text, said=True)


def message_said(text: str, description: str | None) -> tuple[str | None, str]:
    """A ``message_action``'s thought and what it says: its description, then its text.

    ``<finish>...</finish>`` is taken off the text; a message empty inside says its description
    instead (no thought then).
    """
    text = unfinished(text)
    if not text.strip() and description:
        return None, description
    return description, text


def unfinished(text: str) -> str:
    """A message less the ``<finish>`` tags ADP wraps the agent's closing message in."""
    stripped = text.strip()
    if not stripped.startswith(_FINISH_OPEN):
        return text
    return stripped.removeprefix(_FINISH_OPEN).removesuffix(_FINISH_CLOSE).strip()


def _call(item: Mapping[str, Any], path: tuple[str | int, ...]) -> tuple[str, Any]:
    """An action's tool and arguments: an API's function and kwargs, or code's executor."""
    if item["class_"] == "api_action":
        function = item.get("function")
        if not isinstance(function, str) or not function.strip():
            raise PathError(
                (*path, "function"), f"expected a function name, found {describe_value(function)}"
            )
        kwargs = item.get("kwargs")
        if function == GENERIC_TOOL and isinstance(kwargs, dict):
            return _generic_call(kwargs) or (function, kwargs)
        return function, kwargs
    language = item.get("language")
    if not isinstance(language, str) or not language.strip():
        raise PathError(
            (*path, "language"), f"expected the code's language, found {describe_value(language)}"
        )
    tool, argument = EXECUTORS.get(language, (f"execute_{language}", "code"))
    return tool, {argument: _text(item, path)}


def _generic_call(kwargs: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The source's own tool a ``generic_tool`` stands for, and its input; ``None`` unnamed."""
    name = kwargs.get("tool_name")
    if not isinstance(name, str) or not name.strip():
        return None
    given = kwargs.get("tool_input")
    return name, given if given else kwargs.get("content")


def _observed(item: Mapping[str, Any], path: tuple[str | int, ...]) -> str:
    """An observation's text: a text's content, a page's URL and tree (or HTML), an image's path.

    A page is what ADP's OpenHands converter shows the model: its URL, then its accessibility
    tree, or its HTML where it has none; an image is its path and the elements annotated on it.
    """
    kind = item["class_"]
    if kind == "text_observation":
        return _text(item, path)
    if kind == "web_observation":
        page = as_string(item.get("axtree")) or as_string(item.get("html"))
        return "\n\n".join(filter(None, (as_string(item.get("url")), page)))
    annotations = item.get("annotations")
    named = [
        f"{note.get('text')} ({note.get('element_type')})"
        for note in (annotations if isinstance(annotations, list) else [])
        if isinstance(note, dict) and note.get("text")
    ]
    shown = f"[Image: {as_string(item.get('content')) or 'unknown'}]"
    return "\n".join([shown, *(["Elements detected: " + ", ".join(named)] if named else [])])


def _text(item: Mapping[str, Any], path: tuple[str | int, ...]) -> str:
    value = item.get("content")
    if not isinstance(value, str):
        raise PathError((*path, "content"), f"expected text, found {describe_value(value)}")
    return value


def _optional(item: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise PathError((*path, key), f"expected text or null, found {describe_value(value)}")
    return value if value and value.strip() else None


__all__ = ["CONTENT_HINT", "convert_records", "describe", "evidence", "mapping", "recognises"]
