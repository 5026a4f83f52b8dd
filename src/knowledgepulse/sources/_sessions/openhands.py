"""OpenHands trajectories as traces: a file of events is one run, an ``output.jsonl`` row one.

OpenHands records a run as a list of events (``event_to_dict``: a saved trajectory, its tests'
replay files; the GUI's export wraps it as ``{"trajectory": [...]}``), and its evaluation harness
writes one ``output.jsonl`` row a task (``instance_id``, ``instruction``, ``history``: the events,
``test_result``, ``metrics``, ``error``). An event has an ``id``, a ``timestamp``, a ``source``
(``user``, ``agent``, ``environment``) and a ``message``; an action adds ``action`` (its kind) and
``args``; an observation ``observation``, ``content``, ``extras`` and the ``cause``, the id of the
action it answers. An action the model asked for keeps ``tool_call_metadata``: the tool as the model
called it (``function_name``), the call's id and the model's response. OpenHands' resolver (2024)
wrote its rows' events as their memory (``event_to_memory``: no id, source or cause, arguments and
extras beside the kind): each is read as the event it was, in order (see :func:`_unflattened`).
Its SWE-bench rows of 2024 kept ``history`` as ``[action, observation]`` pairs of events without
id, source or cause (:func:`_paired`): each pair is read as its two events, in order.

The mapping, as OpenHands means its events:

* the first user ``message`` is the objective (a row without one: its ``instruction``); a later
  one is the user's turn (:meth:`StepBuilder.user_turn`). The ``system`` action holds the system
  prompt and the tools offered (kept apart: :attr:`TraceItem.system`, :attr:`TraceItem.tools`);
* an agent action's ``thought`` (and the reasoning a model response keeps, once a response) is
  a thought; a ``think`` action (OpenHands' think tool, which only logs it) too;
* any other action (``run``, ``run_ipython``, ``read``, ``edit``, ``browse_interactive``,
  ``call_tool_mcp``, ``delegate``, ``task_tracking``...) is a call of the tool the model called
  (``function_name``), else of OpenHands' tool for that kind (``execute_bash`` for ``run``:
  :data:`TOOLS`), its arguments the ones the model wrote (the call of the response the action
  keeps, ``tool_call_metadata.model_response``, whose id is its ``tool_call_id``), else the
  action's ``args`` less OpenHands' bookkeeping (an editor's ``args`` hold neither its
  ``command`` nor a created file's text, and add defaults the model never wrote); calls of one
  model response are one turn. The observation whose ``cause`` is the action is its result;
  it failed when OpenHands says so (``success: false``: a command's non-zero exit code, -1 for
  one still running when it stopped waiting), or the file editor's output is its
  ``ERROR:`` (an invalid edit). An ``error`` observation answering an action is that call's
  failure; one answering none (a tool call OpenHands could not read) an error of its own, which
  the agent's next action recovers from;
* an agent ``message`` is what the agent said: the final answer when nothing but state changes
  follows it, else a thought (a user's turn after it makes it a ``respond`` call);
* ``finish`` ends the run: its ``final_thought`` (else its ``thought``; else its ``outputs``)
  is the final answer, said once; ``reject`` ends it with the agent's refusal, an error;
* state changes, recalls (workspace context, microagents), condensation, ``null``
  observations and the think tool's "Your thought has been logged." are no steps; an
  ``agent_state_changed`` to ``error`` ends the run with its reason.

Success. A row's ``test_result`` may hold the evaluation's verdict (``report.resolved``, or
``resolved``; in 2024's rows ``result.resolved``, 1 or 0): that is the outcome. Without one
(a saved trajectory; a row before evaluation, whose ``test_result`` holds only the patch), kp
takes how the run ended, since that is all the file says: a row's ``error`` (``Agent reached
maximum iteration``...), a ``reject``, or an agent in ``error`` state is a failure; a ``finish``
is a success unless its ``task_completed`` says ``false`` or ``partial``; a run that ends on the
agent's message (awaiting the user) is a success, as an unlabelled chat row ending on its
answer. The confidence stays the default.

The model is the one the last response an action keeps names (``model_response.model``), else
the one the row was given (:func:`configured_model`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value, non_blank
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._text import json_or_value
from knowledgepulse.sources._chat._tools import row_tools
from knowledgepulse.sources._envelope import (
    UNDATED,
    TraceOptions,
    assemble,
    finished,
    first_model,
    last_model,
)
from knowledgepulse.sources._sessions._documents import run_name
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

FORMAT = "openhands"
CONTENT_HINT = "OpenHands writes every event's message, arguments and output into its trajectory"
SOURCES = frozenset({"user", "agent", "environment"})
"""The event sources OpenHands writes (its ``EventSource``)."""
EXPECTED_EVENT = (
    '{"id", "timestamp", "source": "user"|"agent"|"environment", "action", "args": {...}} or '
    '{..., "observation", "content", "extras": {...}, "cause"}'
)
TOOLS: Mapping[str, str] = {
    "run": "execute_bash",
    "run_ipython": "execute_ipython_cell",
    "read": "str_replace_editor",
    "write": "str_replace_editor",
    "edit": "str_replace_editor",
    "browse": "browser",
    "browse_interactive": "browser",
    "task_tracking": "task_tracker",
    "delegate": "delegate",
}
"""OpenHands' tool for an action kind, where the event does not name the one the model called
(``tool_call_metadata``): its CodeAct agent's tool names (``openhands/llm/tool_names.py``)."""
LLM_EDIT = "edit_file"
"""The tool of an ``edit`` a model rewrites a range by (``impl_source`` ``llm_based_edit``)."""
NOISE_ACTIONS = frozenset(
    {
        "system",
        "recall",
        "change_agent_state",
        "null",
        "pause",
        "resume",
        "stop",
        "condensation",
        "condensation_request",
        "loop_recovery",
        "start",
        "push",
        "send_pr",
    }
)
"""Actions that are the runtime's bookkeeping, no step of the agent's (the system prompt is
kept apart)."""
NOISE_OBSERVATIONS = frozenset(
    {"agent_state_changed", "null", "recall", "condense", "think", "loop_detection", "success"}
)
"""Observations that answer no tool: state changes, recalls, the think tool's acknowledgement."""
BOOKKEEPING = frozenset(
    {
        "thought",
        "reasoning_content",
        "blocking",
        "hidden",
        "confirmation_state",
        "is_confirmed",
        "security_risk",
        "impl_source",
        "translated_ipython_code",
        "keep_prompt",
        "kernel_init_code",
        "action_risk",
        "include_extra",
    }
)
"""Arguments OpenHands adds to an action for itself, not the model's."""
EDITOR_ERROR = "ERROR:"
"""How OpenHands' file editor opens the output of a command it refused (its runtime's
``_execute_file_editor``)."""
_NOT_DONE = frozenset({"false", "partial"})
"""``task_completed`` values by which the agent says the task is not (all) done."""


def event_problem(value: Any) -> str | None:
    """What makes a value no OpenHands event, or ``None`` when it is one."""
    if not isinstance(value, dict):
        return f"not an OpenHands event: {describe_value(value)}; expected {EXPECTED_EVENT}"
    if as_string(value.get("source")) not in SOURCES:
        return (
            f"an OpenHands event needs a source of user, agent or environment, not "
            f"{describe_value(value.get('source'))}; expected {EXPECTED_EVENT}"
        )
    if not isinstance(value.get("id"), int) and not isinstance(value.get("timestamp"), str):
        return f"an OpenHands event needs its id or timestamp; expected {EXPECTED_EVENT}"
    if isinstance(value.get("action"), str):
        if isinstance(value.get("args"), dict):
            return None
        return f"an OpenHands action needs its args, an object; expected {EXPECTED_EVENT}"
    if isinstance(value.get("observation"), str):
        if isinstance(value.get("extras", {}), dict):
            return None
        return f"an OpenHands observation's extras must be an object; expected {EXPECTED_EVENT}"
    return f"an OpenHands event names its action or its observation; expected {EXPECTED_EVENT}"


def empty_row_problem(value: Any) -> str | None:
    """What to say of an evaluation row whose ``history`` is empty, or ``None`` for any other.

    A harness writes such a row when the conversation recorded no event (OpenHands/benchmarks'
    OpenAgentSafety rows: a run that failed before its first step, ``history: []``): no step,
    so no trace. Said so, with the row's own ``error``, rather than as "no OpenHands event".
    """
    if not isinstance(value, dict) or not ("instance_id" in value or "instruction" in value):
        return None
    if value.get("history") != []:
        return None
    instance = as_string(value.get("instance_id"))
    error = non_blank(value.get("error"))
    return (
        "an OpenHands evaluation row whose history is empty"
        + (f" ({instance})" if instance else "")
        + ": the run recorded no event, so there is no trace to read"
        + (f"; the row's error: {error}" if error else "")
    )


def _events_key(value: Any) -> str | None:
    """The key of a document's events (``history``, ``trajectory``), else ``None``.

    An evaluation row keeps them in ``history``; the GUI's export (OpenHands' trajectory route's
    answer) is ``{"trajectory": [...]}``. The list must open with an OpenHands event.
    """
    if not isinstance(value, dict):
        return None
    if "instance_id" in value or "instruction" in value:
        key = "history"
    elif value.keys() == {"trajectory"}:
        key = "trajectory"
    else:
        return None
    events = value.get(key)
    if not isinstance(events, list) or not events:
        return None
    first = events[0][0] if _paired(events[0]) else events[0]
    return key if event_problem(first) is None or _remembered(first) or _bare(first) else None


def _paired(value: Any) -> bool:
    """Whether a history entry is an ``[action, observation]`` pair.

    OpenHands' evaluation rows of 2024 (OpenDevin's ``state.history``, as its SWE-bench example
    output keeps it) hold each step as the action and the observation that answered it, two
    events without id, source or cause.
    """
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(event, dict) for event in value)
        and isinstance(value[0].get("action"), str)
    )


def _unpaired(events: list[Any]) -> list[Any]:
    """A history's events in order, each ``[action, observation]`` pair as its two events."""
    found: list[Any] = []
    for entry in events:
        found += entry if _paired(entry) else [entry]
    return found


def _bare(value: Any) -> bool:
    """Whether a value is an event as ``event_to_dict`` wrote it, less its id and timestamp.

    The pairs' events (:func:`_paired`) keep their ``args`` (``extras``), unlike the memory
    (:func:`_remembered`), but no id, timestamp or cause: each is given its place, and an
    observation the action before it, as the memory's are.
    """
    if not isinstance(value, dict) or {"id", "timestamp"} & value.keys():
        return False
    if isinstance(value.get("action"), str):
        return isinstance(value.get("args"), dict)
    return isinstance(value.get("observation"), str) and isinstance(value.get("extras", {}), dict)


def _remembered(value: Any) -> bool:
    """Whether a value is an event as OpenHands' early rows keep it: its memory, flattened.

    OpenHands' resolver (its ``output.jsonl``, 2024) saved each event as ``event_to_memory``
    gives it: no id, timestamp, source or cause, and an action's arguments (an observation's
    extras) beside its kind, not under ``args`` (``extras``).
    """
    if not isinstance(value, dict) or {"id", "timestamp", "source"} & value.keys():
        return False
    if isinstance(value.get("action"), str):
        return "args" not in value
    return isinstance(value.get("observation"), str) and "extras" not in value


def _unflattened(events: list[Any]) -> list[Any]:
    """The events of a row, each flattened one given back the shape of an event.

    Its place is its id; an observation answers the action before it (the memory keeps no
    cause: an early agent took one action a step); a ``message`` before any other action is the
    user's (the task), a later one the agent's.
    """
    found: list[Any] = []
    cause: int | None = None
    acted = False
    for number, event in enumerate(events):
        bare = _bare(event)
        if not (bare or _remembered(event)):
            found.append(event)
        elif isinstance(event.get("action"), str):
            kind = event["action"]
            source = "agent" if acted or kind != "message" else "user"
            acted = acted or kind != "message"
            if bare:
                found.append({**event, "id": number, "source": event.get("source", source)})
            else:
                args = {name: value for name, value in event.items() if name != "action"}
                found.append({"id": number, "source": source, "action": kind, "args": args})
            cause = number
        elif bare:
            found.append({"source": "environment", **event, "id": number, "cause": cause})
        else:
            extras = {k: v for k, v in event.items() if k not in ("observation", "content")}
            found.append(
                {
                    "id": number,
                    "source": "environment",
                    "observation": event["observation"],
                    "content": event.get("content", ""),
                    "extras": extras,
                    "cause": cause,
                }
            )
    return found


def recognises(value: Any) -> bool:
    """Whether a file's first record is an OpenHands event, or a document of them (a row)."""
    return event_problem(value) is None or _events_key(value) is not None


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace per evaluation row (or exported trajectory), and one for the file's events.

    A record that is neither is a problem at its place (file, line), and the others go on.
    """
    events: list[Record] = []
    for item in records:
        if isinstance(item, Problem):
            yield item
        elif (key := _events_key(item.value)) is not None:
            yield from _document(item, key, options)
        elif (problem := empty_row_problem(item.value) or event_problem(item.value)) is not None:
            yield item.problem((), problem)
        else:
            events.append(item)
    if events:
        first = events[0]
        values = [event.value for event in events]
        yield finished(partial(_convert, values, first, options, None), first)


def _document(record: Record, key: str, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    """A row's (or an export's) trace; each entry that is no event a problem at its path."""
    events = []
    for number, event in enumerate(_unflattened(_unpaired(record.value[key]))):
        problem = event_problem(event)
        if problem is None:
            events.append(event)
        else:
            yield record.problem((key, number), f"{problem}; the rest of the run is read")
    row = record.value if key == "history" else None
    yield finished(partial(_convert, events, record, options, row), record)


@dataclass
class _Run:
    """What reading a run's events has found so far."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    objective: str | None = None
    system: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    started: datetime | None = None
    calls: dict[int | str, tuple[str, str | None]] = field(default_factory=dict)
    """Each tool action's id: its tool's name and call id, for the observation that answers it."""
    responses: set[str] = field(default_factory=set)
    """The model responses whose reasoning was told (every call of a response keeps it)."""
    turn: tuple[str | None, datetime | None] = (None, None)
    """The last tool action's model response and its time: a response's calls are one turn."""
    finish: Mapping[str, Any] | None = None
    failure: str | None = None
    """Why the run ended failed (a ``reject``, an agent in ``error`` state), if it did."""
    state: str | None = None


def _convert(
    events: list[Mapping[str, Any]],
    record: Record,
    options: TraceOptions,
    row: Mapping[str, Any] | None,
) -> TraceItem:
    run = _Run()
    last = _answer_at(events)
    for number, event in enumerate(events):
        at = iso_time(event.get("timestamp"))
        if run.started is None and at is not None:
            run.started = at
        if isinstance(event.get("action"), str):
            _action(run, event, at, answer=number == last)
        else:
            _observation(run, event, at)
    crashed = non_blank(row.get("error")) if row is not None else None
    if (crashed or run.failure) and run.finish is None:
        run.builder.no_answer()  # the agent's last message was no answer: the run failed after
    if crashed or run.failure:
        run.builder.error(crashed or run.failure, terminal=True)
    metadata = as_object(row.get("metadata")) if row is not None else {}
    instance = as_string(row.get("instance_id")) if row is not None else None
    extra = {"instance_id": instance} if instance else {}
    if run.state:
        extra["agent_state"] = run.state
    return assemble(
        run.builder,
        source=FORMAT,
        source_id=f"{FORMAT}:{instance or run_name(record)}",
        success=_success(run, row, failed=crashed is not None),
        options=options,
        objective=run.objective or (as_string(row.get("instruction")) if row else None),
        created_at=run.started or UNDATED,
        result_summary=run.builder.final_answer,
        agent_id=as_string(metadata.get("agent_class")),
        framework=FORMAT,
        model=first_model(_replied(events), configured_model(row, {})),
        source_extra=extra or None,
        content_hint=CONTENT_HINT,
        location=record.location,
        tools=run.tools,
        system=run.system,
    )


def configured_model(row: Mapping[str, Any] | None, state: Mapping[str, Any]) -> str | None:
    """The model the run was given, where the file names it.

    An evaluation row's ``metadata.llm_config.model`` (the V1 SDK's rows: ``metadata.llm.model``),
    else a conversation's ``agent.llm.model`` (V1's ``base_state.json``).
    """
    metadata = as_object(row.get("metadata")) if row is not None else {}
    config = as_object(metadata.get("llm_config") or metadata.get("llm"))
    llm = as_object(as_object(state.get("agent")).get("llm"))
    return first_model(config.get("model"), llm.get("model"))


def _replied(events: list[Mapping[str, Any]]) -> str | None:
    """The model of the last response an action keeps (``tool_call_metadata.model_response``)."""
    return last_model(
        as_object(as_object(event.get("tool_call_metadata")).get("model_response")).get("model")
        for event in events
    )


def _answer_at(events: list[Mapping[str, Any]]) -> int | None:
    """The index of the agent message that ends the run (nothing but bookkeeping after it)."""
    for number in range(len(events) - 1, -1, -1):
        event = events[number]
        kind = as_string(event.get("action"))
        if kind in NOISE_ACTIONS or as_string(event.get("observation")) in NOISE_OBSERVATIONS:
            continue
        return number if kind == "message" and event.get("source") == "agent" else None
    return None


def _action(run: _Run, event: Mapping[str, Any], at: datetime | None, *, answer: bool) -> None:
    kind = event["action"]
    args: Mapping[str, Any] = event["args"]
    if kind == "system":
        run.system = as_string(args.get("content")) or run.system
        run.tools = row_tools({"tools": args.get("tools")}) or run.tools
    elif kind == "message":
        _message(run, event, at, answer=answer)
    elif kind in ("finish", "reject"):
        _reasoning(run, event, at)
        _ending(run, event, at)
    elif kind == "think":
        _reasoning(run, event, at)
        run.builder.thought(non_blank(args.get("thought")), at=at)
    elif kind not in NOISE_ACTIONS:
        _tool_action(run, event, at)


def _message(run: _Run, event: Mapping[str, Any], at: datetime | None, *, answer: bool) -> None:
    """A user's message (the task, then a turn) or the agent's (said to the user, or the answer)."""
    text = non_blank(event["args"].get("content")) or non_blank(event.get("message"))
    if event["source"] == "user":
        if run.objective is None:
            run.objective = text
        else:
            run.builder.user_turn(text, at=at)
    elif event["source"] != "agent":
        return  # the runtime's own message, no one's words
    elif answer:
        run.builder.answer(text, at=at)
    else:
        run.builder.thought(text, at=at, said=True)


def _ending(run: _Run, event: Mapping[str, Any], at: datetime | None) -> None:
    """``finish``: the final answer; ``reject``: the agent's refusal, which fails the run."""
    args: Mapping[str, Any] = event["args"]
    thought = non_blank(args.get("thought"))
    if event["action"] == "reject":
        reason = non_blank(as_object(args.get("outputs")).get("reason"))
        why = reason or thought or non_blank(event.get("message"))
        run.failure = "the agent rejected the task" + (f": {why}" if why else "")
        return
    run.finish = args
    final = non_blank(args.get("final_thought"))
    if final:  # the model's text beside the call, then the finish tool's message
        run.builder.thought(thought, at=at)
    outputs = args.get("outputs")
    run.builder.answer(final or thought or (json.dumps(outputs) if outputs else None), at=at)


def _tool_action(run: _Run, event: Mapping[str, Any], at: datetime | None) -> None:
    """An action that runs a tool: its thought, then the call the model asked for."""
    kind, args = event["action"], event["args"]
    metadata = as_object(event.get("tool_call_metadata"))
    _reasoning(run, event, at)
    run.builder.thought(non_blank(args.get("thought")), at=at)
    response = as_string(as_object(metadata.get("model_response")).get("id"))
    if response is None or response != run.turn[0]:
        run.turn = (response, at)  # a new model response: a new turn, at its first call's time
    name = as_string(metadata.get("function_name")) or _tool_name(kind, args)
    call_id = as_string(metadata.get("tool_call_id"))
    arguments = _written_arguments(metadata, call_id)
    if arguments is None:
        arguments = tool_arguments(kind, args)
    run.builder.tool_request(name, arguments, call_id=call_id, at=run.turn[1])
    if (key := _event_id(event.get("id"))) is not None:
        run.calls[key] = (name, call_id)


def _written_arguments(metadata: Mapping[str, Any], call_id: str | None) -> dict[str, Any] | None:
    """The arguments the model wrote for the call ``call_id``, where its response keeps them."""
    choices = as_object(metadata.get("model_response")).get("choices")
    for choice in choices if isinstance(choices, list) and call_id else ():
        calls = as_object(as_object(choice).get("message")).get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if as_object(call).get("id") == call_id:
                written = json_or_value(as_object(as_object(call).get("function")).get("arguments"))
                return dict(written) if isinstance(written, dict) else None
    return None


def _event_id(value: Any) -> int | str | None:
    """An event's ``id`` (or an observation's ``cause``) as a key, when it is one."""
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _tool_name(kind: str, args: Mapping[str, Any]) -> str:
    """OpenHands' tool for an action that does not say which one the model called."""
    if kind == "call_tool_mcp":
        return as_string(args.get("name")) or kind
    if kind == "edit" and args.get("impl_source") == "llm_based_edit":
        return LLM_EDIT
    return TOOLS.get(kind, kind)


def tool_arguments(kind: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments: an MCP call's own, else the action's less OpenHands' bookkeeping."""
    if kind == "call_tool_mcp" and isinstance(args.get("arguments"), dict):
        return dict(args["arguments"])
    return {
        key: value
        for key, value in args.items()
        if key not in BOOKKEEPING and value is not None and value is not False
    }


def _reasoning(run: _Run, event: Mapping[str, Any], at: datetime | None) -> None:
    """The reasoning a model response keeps (a reasoning model's), told once a response."""
    response = as_object(as_object(event.get("tool_call_metadata")).get("model_response"))
    choices = response.get("choices")
    first = as_object(choices[0]) if isinstance(choices, list) and choices else {}
    reasoning = non_blank(as_object(first.get("message")).get("reasoning_content"))
    key = as_string(response.get("id"))
    if reasoning and key not in run.responses:
        run.responses.add(key or "")
        run.builder.thought(reasoning, at=at)


def _observation(run: _Run, event: Mapping[str, Any], at: datetime | None) -> None:
    kind = event["observation"]
    extras = as_object(event.get("extras"))
    if kind == "agent_state_changed":
        run.state = as_string(extras.get("agent_state")) or run.state
        if run.state == "error":
            reason = non_blank(extras.get("reason"))
            run.failure = f"the agent stopped on an error: {reason}" if reason else run.failure
        return
    if kind in NOISE_OBSERVATIONS:
        return
    content = non_blank(event.get("content")) or ""
    metadata = as_object(event.get("tool_call_metadata"))
    cause = _event_id(event.get("cause"))
    call = run.calls.get(cause) if cause is not None else None
    if call is None and (call_id := as_string(metadata.get("tool_call_id"))) is not None:
        call = (as_string(metadata.get("function_name")) or "", call_id)
    if kind == "error" and call is None:
        run.builder.error(content or non_blank(event.get("message")), at=at)  # it answers no call
        return
    if call is None:
        return  # it answers an action not read (a bad event, reported where it is)
    failure = _failure(kind, event, content)
    run.builder.tool_result(
        call[0],
        output=None if failure else content,
        error=failure,
        call_id=call[1],
    )


def _failure(kind: str, event: Mapping[str, Any], content: str) -> str | None:
    """Why a tool's observation is a failure, as OpenHands says, or ``None``."""
    said = non_blank(event.get("message")) or ""
    if kind in ("error", "user_rejected"):
        return content or said or f"OpenHands' {kind} observation"
    if event.get("success") is False:
        return content if content.strip() else said or "the command failed"
    extras = as_object(event.get("extras"))
    # A command's exit code: in its metadata since late 2024; before, an extra of its own.
    code = as_object(extras.get("metadata")).get("exit_code", extras.get("exit_code"))
    if "success" not in event and isinstance(code, int) and code != 0:
        return content if content.strip() else said or f"the command exited with code {code}"
    if content.startswith(EDITOR_ERROR):
        return content
    return None


def _success(run: _Run, row: Mapping[str, Any] | None, *, failed: bool) -> bool:
    """The evaluation's verdict, where the row has one; else how the run ended (module doc)."""
    verdict = resolved(row.get("test_result")) if row is not None else None
    if verdict is not None:
        return verdict
    if failed or run.failure is not None:
        return False
    if run.finish is not None:
        said = run.finish.get("task_completed")
        return not (said is False or (isinstance(said, str) and said.lower() in _NOT_DONE))
    return run.builder.final_answer is not None


def resolved(test_result: Any) -> bool | None:
    """Whether the evaluation says the task is resolved (``report.resolved``, ``resolved``)."""
    result = as_object(test_result)
    verdicts = (
        as_object(result.get("report")).get("resolved"),
        result.get("resolved"),
        # OpenHands' SWE-bench rows of 2024: `test_result.result.resolved`, 1 or 0.
        as_object(result.get("result")).get("resolved"),
    )
    for found in verdicts:
        if isinstance(found, bool):
            return found
        if isinstance(found, int) and found in (0, 1):
            return found == 1
    return None
