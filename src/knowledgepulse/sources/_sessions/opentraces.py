"""opentraces.ai's agent traces (``TraceRecord`` JSON Lines, ``schema_version`` ``0.x``) as traces.

opentraces (JayFarei/opentraces, MIT; its schema is the ``opentraces-schema`` package's pydantic
models) turns coding agents' sessions into one ``TraceRecord`` a line and publishes them to
Hugging Face Hub datasets: ``{schema_version, trace_id, session_id, task: {description},
agent: {name, version, model}, system_prompts, steps, outcome, metrics, ...}``. A step is one
model call or one user message: ``role`` (``system``, ``user`` or ``agent``), ``content``,
``reasoning_content``, ``tool_calls`` (``tool_call_id``, ``tool_name``, ``input``) and the
``observations`` that answer them (``source_call_id``, ``content``, ``error``); ``call_type``
says whether it is the main agent's (``main``, or none), a sub-agent's (``subagent``, its
``parent_step`` the step whose call started it) or a cache warm-up (``warmup``). The step
fields are the same in every version so far (0.1.0 to 0.9.0; later versions add top-level
fields: ``lifecycle``, ``git_links``, ``patches``...), so every version is read alike.

The mapping: the main agent's first user step's words are the objective (``task.description``
is the parser's copy of it, cut short, and stands in where no user step is left), a later one a
user's turn (:meth:`StepBuilder.user_turn`); system steps are instructions (the step's
``system_prompt_hash`` names its prompt in ``system_prompts``), warm-up steps no step of the run
(Claude Code's meta messages, its cache-priming calls), but for an agent step's reasoning: the
capture calls a model call warm-up by its few output tokens, which a line of Claude Code's holding
only the call's thinking has too. An agent step's reasoning is a thought
(not the placeholder a provider leaves where it withheld it), its content a thought, or the
final answer when it is the run's last agent step that says or calls anything and calls
nothing; each call a ``tool_call`` joined with the observation that names it, its
``duration_ms`` the step's latency. An observation's
``error`` says the call failed (``tool_error``, ``exit_code:N``, ``interrupted``): its content
is the error, the next action its recovery; ``no_result`` is a call no result came back for.
A sub-agent's steps (one ``parent_step``) are a trace of their own (``<trace_id>/subagent-N``),
its first user step (the task it was given) the objective, as kp reads Claude Code's sidechains.

Success is the record's ``outcome.success`` where it is a boolean, else its
``terminal_state`` (``goal_reached`` is success; ``interrupted``, ``error``, ``abandoned`` are
not), else whether the run ends in the agent's answer; ``outcome.reward`` is the reward.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, non_blank
from knowledgepulse._util.settings import is_number
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._text import users_words
from knowledgepulse.sources._envelope import UNDATED, TraceOptions, assemble, finished
from knowledgepulse.sources._sessions._documents import documents
from knowledgepulse.sources._sessions.claude_code import interrupted
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "opentraces keeps each step's content unless its security pass redacted it"
EXPECTED = "{schema_version: '0.x', trace_id, session_id, agent: {name}, task, steps: [...]}"
ROLES = ("system", "user", "agent")
"""The step roles the schema defines."""
NO_RESULT = "no_result"
"""An observation's ``error`` for a call no result came back for: not a failure of the tool."""
WARMUP = "warmup"
MAIN = "main"
TERMINAL_STATES = ("goal_reached", "interrupted", "error", "abandoned")
"""``outcome.terminal_state``'s values (0.2.0): only ``goal_reached`` is success."""
MAPPING = {
    "steps": "steps (role, content, reasoning_content, tool_calls, observations)",
    "id": "trace_id",
    "success": "outcome.success or terminal_state, else whether it ends in the answer",
    "created_at": "timestamp_start",
}

_VERSION = re.compile(r"0\.\d+(?:\.\d+)*")
"""``schema_version`` as opentraces writes it: ``0.1.0`` ... ``0.9.0`` (never ATIF's ``1.x``)."""
_WITHHELD = re.compile(r"\[redacted:[^\]]*\]")
"""What opentraces writes as ``reasoning_content`` where the provider withheld the reasoning."""


def recognises(value: Any) -> bool:
    """Whether a record is a ``TraceRecord``: a ``0.x`` schema version, a trace id, its steps."""
    return (
        isinstance(value, dict)
        and isinstance(version := value.get("schema_version"), str)
        and _VERSION.fullmatch(version) is not None
        and isinstance(value.get("trace_id"), str)
        and isinstance(value.get("steps"), list)
        and isinstance(value.get("agent"), dict)
    )


def evidence(value: Any) -> str:
    """What shows a record is a ``TraceRecord``: its schema version beside its trace id."""
    return (
        f"schema_version {value['schema_version']!r} beside trace_id and steps: an opentraces "
        "TraceRecord"
    )


def describe(first: Any, count: int) -> str:
    """``read as opentraces (N traces)``, the schema version, and where success comes from."""
    version = first.get("schema_version") if isinstance(first, dict) else None
    return (
        f"read as opentraces ({counted(count, 'trace')}): TraceRecords of schema {version}; "
        "success from outcome.success or terminal_state, else whether it ends in the answer"
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every record's traces: its main agent's run, then each sub-agent's run."""
    for item in documents(records, recognises, what="an opentraces TraceRecord", expected=EXPECTED):
        if isinstance(item, Problem):
            yield item
            continue
        for key, steps in _runs(item.value["steps"]).items():
            yield finished(partial(_finish, item, key, steps, options), item)


Numbered = list[tuple[int, Mapping[str, Any]]]
"""A run's steps with their index in the record's ``steps`` (for the paths warnings name)."""


def _runs(steps: list[Any]) -> dict[int | None, Numbered]:
    """The main run's steps (key ``None``), then each sub-agent's, by the step that started it.

    A step with a ``parent_step`` that is not the main agent's (``call_type`` ``subagent``, or a
    sub-agent's warm-up) is its sub-agent's; a sub-agent with warm-ups alone ran no turn. The
    main run is there even with no step (a record whose steps are all sub-agents' gives its
    problem, no step, rather than nothing).
    """
    runs: dict[int | None, Numbered] = {None: []}
    for number, step in enumerate(steps):
        if not isinstance(step, Mapping):
            continue
        parent = step.get("parent_step")
        subagent = isinstance(parent, int) and step.get("call_type") != MAIN
        runs.setdefault(parent if subagent else None, []).append((number, step))
    return {
        key: run
        for key, run in runs.items()
        if key is None or any(step.get("call_type") != WARMUP for _, step in run)
    }


def _finish(record: Record, key: int | None, steps: Numbered, options: TraceOptions) -> TraceItem:
    document: Mapping[str, Any] = record.value
    builder = StepBuilder()
    warnings: list[str] = []
    objective: str | None = None
    started: datetime | None = None
    names = {call_id: name for _, step in steps for call_id, name, _ in _calls(step, warnings=None)}
    last = max(
        (
            n
            for n, step in steps
            if step.get("role") == "agent" and step.get("call_type") != WARMUP and _acts(step)
        ),
        default=None,
    )
    for number, step in steps:
        role = step.get("role")
        at = iso_time(step.get("timestamp"))
        started = started or at
        warmup = step.get("call_type") == WARMUP
        if warmup and role == "agent":
            _tell_reasoning(builder, step, at)
        elif warmup:
            continue
        elif role == "user":
            words = _words(step.get("content"))
            if words is not None and objective is None:
                objective = words
            elif words is not None:
                builder.user_turn(words, at=at)
        elif role == "agent":
            _tell_agent(
                builder, number, step, at=at, names=names, warnings=warnings, final=number == last
            )
        elif role != "system":
            warnings.append(
                f"steps[{number}] has role {as_text(role)[:40]!r}, not one of the schema's "
                f"({', '.join(ROLES)}): the step is left out"
            )
    agent = as_object(document.get("agent"))
    outcome = as_object(document.get("outcome"))
    labelled = _labelled(outcome) if key is None else None
    ends_on_agent = bool(steps) and steps[-1][1].get("role") == "agent"
    trace_id = document["trace_id"]
    name = non_blank(agent.get("name"))
    reward = outcome.get("reward")
    task = as_object(document.get("task"))
    fallback = as_string(task.get("description")) if key is None else None
    return assemble(
        builder,
        source="opentraces",
        source_id=trace_id if key is None else f"{trace_id}/subagent-{key}",
        success=(
            labelled if labelled is not None else ends_on_agent and builder.final_answer is not None
        ),
        options=options,
        objective=objective or fallback,
        fallback_objective=name,
        created_at=(iso_time(document.get("timestamp_start")) if key is None else None)
        or started
        or UNDATED,
        agent_id=name,
        framework=name,
        metadata=as_object(document.get("metadata")) or None,
        warnings=tuple(warnings),
        source_extra=_extra(document, key),
        content_hint=CONTENT_HINT,
        location=record.location,
        reward=float(reward)
        if key is None and isinstance(reward, int | float) and not isinstance(reward, bool)
        else None,
        system=_system(document, steps),
    )


def _extra(document: Mapping[str, Any], key: int | None) -> dict[str, Any]:
    extra: dict[str, Any] = {"schema_version": document["schema_version"]}
    for field in ("session_id", "execution_context"):
        if isinstance(value := document.get(field), str):
            extra[field] = value
    model = as_object(document.get("agent")).get("model")
    if isinstance(model, str):
        extra["model"] = model
    if key is not None:
        extra["parent_step"] = key
    return extra


def _labelled(outcome: Mapping[str, Any]) -> bool | None:
    """The record's own outcome: ``success``, else what its ``terminal_state`` says, else none."""
    success = outcome.get("success")
    if isinstance(success, bool):
        return success
    state = outcome.get("terminal_state")
    return state == "goal_reached" if state in TERMINAL_STATES else None


def _system(document: Mapping[str, Any], steps: Numbered) -> str | None:
    """The system prompt the run's first agent step names (``system_prompts`` by its hash)."""
    prompts = as_object(document.get("system_prompts"))
    for _, step in steps:
        named = step.get("system_prompt_hash")
        if isinstance(named, str) and isinstance(prompts.get(named), str):
            return str(prompts[named])
    return None


def _words(content: Any) -> str | None:
    """A user step's words: less Claude Code's reminders; its interruption note is none."""
    words = users_words(content if isinstance(content, str) else None)
    words = words.strip() if words else None
    return None if not words or interrupted(words) else words


def _acts(step: Mapping[str, Any]) -> bool:
    """Whether an agent step says or calls anything (the last that does holds the answer)."""
    return bool(non_blank(step.get("content"))) or bool(_calls(step, warnings=None))


def _calls(step: Mapping[str, Any], *, warnings: list[str] | None) -> list[tuple[str, str, Any]]:
    """A step's readable calls: ``(tool_call_id, tool_name, input)``; others warned of."""
    listed = step.get("tool_calls")
    found: list[tuple[str, str, Any]] = []
    for number, raw in enumerate(listed if isinstance(listed, list) else []):
        call = as_object(raw)
        name, call_id = non_blank(call.get("tool_name")), call.get("tool_call_id")
        if name is not None and isinstance(call_id, str):
            found.append((call_id, name, call.get("input")))
        elif warnings is not None:
            warnings.append(
                f"tool_calls[{number}] has no tool_name and tool_call_id: the call is left out"
            )
    return found


def _durations(step: Mapping[str, Any]) -> dict[str, float]:
    """How long each of a step's calls ran, by call id: its ``duration_ms``, where recorded."""
    listed = step.get("tool_calls")
    found: dict[str, float] = {}
    for raw in listed if isinstance(listed, list) else []:
        call = as_object(raw)
        call_id, duration = call.get("tool_call_id"), call.get("duration_ms")
        if isinstance(call_id, str) and isinstance(duration, int | float) and is_number(duration):
            found[call_id] = float(duration)
    return found


def _tell_reasoning(builder: StepBuilder, step: Mapping[str, Any], at: datetime | None) -> None:
    """An agent step's reasoning, a thought: not the placeholder left where it was withheld."""
    reasoning = as_string(step.get("reasoning_content"))
    if reasoning and not _WITHHELD.fullmatch(reasoning.strip()):
        builder.thought(reasoning, at=at)


def _tell_agent(
    builder: StepBuilder,
    number: int,
    step: Mapping[str, Any],
    *,
    at: datetime | None,
    names: Mapping[str, str],
    warnings: list[str],
    final: bool,
) -> None:
    """An agent step: its reasoning and content, its calls, the observations answering them."""
    _tell_reasoning(builder, step, at)
    found: list[str] = []
    calls = _calls(step, warnings=found)
    warnings += [f"steps[{number}].{warning}" for warning in found]
    text = as_string(step.get("content"))
    if final and not calls:
        builder.answer(text, at=at)
    else:
        builder.thought(text, at=at, said=True)  # what it said to the user, who may answer
    for call_id, name, arguments in calls:
        builder.tool_request(name, arguments, call_id=call_id, at=at)
    durations = _durations(step)
    observations = step.get("observations")
    for index, raw in enumerate(observations if isinstance(observations, list) else []):
        observation = as_object(raw)
        source_call = observation.get("source_call_id")
        error = observation.get("error")
        if error == NO_RESULT:  # the call got no result: it stays a call, unanswered
            continue
        answered = source_call if isinstance(source_call, str) else None
        called = names.get(answered) if answered is not None else None
        if answered is None or called is None:
            warnings.append(
                f"steps[{number}].observations[{index}] answers no call of the record "
                f"(source_call_id {as_text(source_call)[:60]!r}): it is left out"
            )
            continue
        content = observation.get("content")
        output = as_text(content) if content is not None else None
        failure = (output or f"the tool failed ({as_text(error)})") if error else None
        builder.tool_result(
            called,
            output=None if failure else output,
            error=failure,
            call_id=answered,
            at=at,
            latency_ms=durations.get(answered),
        )
