"""Harbor's Agent Trajectory Interchange Format (ATIF, ``ATIF-v1.x``) as traces: one file, one run.

A trajectory is ``{schema_version, session_id, agent: {name, version, model_name}, steps}``;
each step has a ``source`` (``system``, ``user`` or ``agent``) and a ``message`` (text, or
content parts since v1.6); an agent step may add ``reasoning_content``, ``tool_calls``
(``tool_call_id``, ``function_name``, ``arguments``) and an ``observation`` whose ``results``
answer the calls (``source_call_id``). The mapping: the first user message is the objective,
a later one the user's turn (:meth:`StepBuilder.user_turn`, as in chat rows: the agent's text
just before it becomes a ``respond`` call, the user's words its result); system steps are not
steps of the run; an agent step's reasoning and message are thoughts, the
message of the last agent step that calls no tool the final answer; a step whose source is none
of these is left out with a warning that names it; each tool call is a
``tool_call`` joined with the result that names it (a result that names no call answers the
step's calls in order). An agent step that lists no call but writes ``<function=NAME>`` calls
in its message (OpenHands without native function calling) makes those calls, as the chat
rows' readers take them. OpenHands' ``finish`` call (:func:`openhands_finish`) is how the
run ends, not a tool call: its ``message`` is the answer. So is Terminus 2's (Harbor's)
``mark_task_complete`` once confirmed: Terminus asks the agent whether it is sure (the first
call's result), and a second call in the agent's next step confirms it and ends the run; that
step's message is the answer. A result that answers no call is
environment feedback: an evident error when it says so (``Error...``, as tool results are
read), or in a trajectory kp wrote (:func:`to_atif` writes an error met outside a tool so),
else left out; in such a trajectory the step types it recorded say which calls and thoughts
are recoveries. Without a user
step there is no objective: the envelope's placeholder stands in, as for the other sessions.

ATIF records no outcome, so success is whether the trajectory ends on the agent's turn with its
answer (and the last ``finish`` call, if any, does not say the task is not done; a confirmed
``mark_task_complete`` says it is), as for an
unlabelled dataset row, unless ``extra.success`` is a boolean (or, in a file :func:`to_atif`
wrote, ``extra.knowledgepulse.success``, or OpenAgents' qa-runner's ``final_metrics.extra``
gives a ``verdict``); the confidence stays the default.
OpenAgents' ``tbench`` writes a dialect (``schema_version: 1.4``), read as
:func:`_tell_tool_result` and :func:`_call` say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from itertools import pairwise
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value, non_blank
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._openhands import openhands_finish
from knowledgepulse.sources._chat._row import success_word
from knowledgepulse.sources._chat._text import (
    content_text,
    error_text,
    has_xml_calls,
    primed,
    users_words,
    xml_calls,
)
from knowledgepulse.sources._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    UNDATED,
    TraceOptions,
    assemble,
    last_model,
)
from knowledgepulse.sources._sessions._documents import each_document
from knowledgepulse.sources._sessions.adp import message_said, outcome, unfinished
from knowledgepulse.sources._sessions.claude_code import interrupted
from knowledgepulse.sources._sessions.codex import codex_users_words
from knowledgepulse.sources._steps import (
    RESPOND,
    StepBuilder,
    as_text,
    says_more_than_the_call,
)
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace

CONTENT_HINT = "Harbor writes every step's message into the trajectory"
SOURCES = ("agent", "system", "user")
"""The step sources ATIF defines."""
CODEX = "codex"
"""``agent.name`` of the trajectories Harbor converts from Codex's rollouts."""
ADP = "adp"
"""``agent.name`` of the trajectories ADP's ``raw_to_atif.py`` writes (its ``sample_atif.json``):
its standardized form as ATIF, ``extra.adp_details`` the standardized ``details``, a message's
``extra.description`` its thought (:func:`_described`)."""
ADP_DETAILS = "adp_details"
"""The ``extra`` key ADP keeps a run's ``details`` under (all values text): its ``resolved`` is
the outcome, as in the standardized form (:func:`adp.outcome`)."""
SCHEMA_PREFIX = "ATIF-"
"""How ``schema_version`` starts (``ATIF-v1.4``... ``ATIF-v1.7``)."""


_BARE_VERSION = re.compile(r"1\.\d+")
"""``schema_version`` as OpenAgents' ``tbench`` writes it (``1.4``): the version alone."""
_RESULT_FOR = re.compile(r"Tool result for (\S+)")
"""A ``system`` step's message naming the call its ``tool_result`` answers (``tbench``)."""
_COMPLETE = "mark_task_complete"
"""The call Harbor writes for Terminus 2's ``"task_complete": true`` (``call_<n>_task_complete``):
the first asks the agent to confirm, the next agent step's confirms and ends the run."""
_HANDOFF = "You are picking up work from a previous AI agent on this task:"
"""How Terminus 2 (Harbor) opens the prompt it writes, in the user's name, when it hands a run
on after summarising it: the original task again, the summary, the screen. Not the user's."""
_HANDED_ON_TASK = re.compile(
    r"\*\*Original Task:\*\* (?P<task>.+?)\n\n\*\*Summary from Previous Agent:\*\*", re.DOTALL
)
"""The original task in that hand-off (Harbor's ``terminus_2.py``): the run's objective where the
hand-off opens the trajectory (the summarisation subagent that asks the questions)."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is an ATIF trajectory.

    Its ``schema_version`` is ``ATIF-...``, or a bare ``1.x`` beside its ``agent`` (``tbench``).
    """
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list):
        return False
    version = value.get("schema_version")
    if not isinstance(version, str):
        return False
    bare = _BARE_VERSION.fullmatch(version) is not None and isinstance(value.get("agent"), dict)
    return version.startswith(SCHEMA_PREFIX) or bare


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trajectory in one file's records (a JSON file is one; JSON Lines may hold many)."""
    return each_document(
        records,
        recognises,
        lambda record: _convert(record, options),
        what="an ATIF trajectory",
        expected="{schema_version: 'ATIF-v1.x', session_id, agent, steps: [...]}",
    )


def _convert(record: Record, options: TraceOptions) -> TraceItem:
    document: Mapping[str, Any] = record.value
    steps = [step for step in document["steps"] if isinstance(step, Mapping)]
    builder = StepBuilder()
    objective: str | None = None
    started: datetime | None = None
    last_agent = max(
        (n for n, step in enumerate(steps) if step.get("source") == "agent"), default=-1
    )
    warnings: list[str] = []
    extra = document.get("extra")
    kp_wrote = isinstance(extra, Mapping) and isinstance(extra.get("knowledgepulse"), Mapping)
    # What :func:`to_atif` kept where ATIF has no field: the outcome, the answer of a run whose
    # last step is no agent message (a call, or a summary the source gave apart), step types.
    kept = as_object(as_object(extra).get("knowledgepulse"))
    texts = kept.get("call_texts")
    call_texts = (
        frozenset(t for t in texts if isinstance(t, str))
        if isinstance(texts, list)
        else frozenset()
    )
    names = {
        call_id: name
        for step in steps
        if step.get("source") == "agent"
        for call_id, name, _ in _calls(step)
    }
    # A call a system step answered before the agent step that lists it (``tbench``) was made
    # by then: its result's time places it, so calls answered one after another are turns.
    answered_at = {
        call_id: iso_time(step.get("timestamp"))
        for step in steps
        if step.get("source") == "system" and (call_id := _answered(step)) is not None
    }
    completed = True  # what the last finish call said of the task (none: done)
    confirmed = _confirmed(steps)
    writer = as_object(document.get("agent")).get("name")
    codex, adp = writer == CODEX, writer == ADP  # readings of the files they write (below)
    system, opening = _priming(steps)
    for number, step in ((n, step) for n, step in enumerate(steps) if n not in opening):
        if step.get("source") not in SOURCES:
            warnings.append(_unknown_source(number, step))
            continue
        at = iso_time(step.get("timestamp"))
        started = started or at
        text = _message_text(step, adp=adp)
        if step.get("source") == "user":
            # Harbor keeps the user's messages as the agent sent them to the model: OpenHands
            # without native function calling puts a worked example of another task before
            # the task (between banners), Claude Code its system reminders; none is the
            # user's words (:func:`_users_words`).
            words = _users_words(text, codex=codex)
            if words is None:  # what the agent wrote itself: no turn of the user's
                objective = objective or _handed_on_task(text)
            elif objective is None:
                objective = words
                if kp_wrote:  # kp writes the whole request (its parts joined) as this step
                    builder.request_told()
            else:  # the user speaks again: answering the agent, or with more to do
                builder.user_turn(words, at=at)
        if step.get("source") == "system":
            _tell_tool_result(builder, step, text, names, at)
        if step.get("source") == "agent":
            warnings += _unread_calls(number, step)
            said = _tell_agent(
                builder,
                _ending(step) if number in confirmed else step,
                text,
                at,
                final=number == last_agent,
                kp_wrote=kp_wrote,
                call_texts=call_texts,
                answered_at=answered_at,
                adp=adp,
            )
            completed = True if number in confirmed else completed if said is None else said
    agent = document.get("agent")
    name = non_blank(as_object(agent).get("name"))
    ends_on_agent = bool(steps) and steps[-1].get("source") == "agent"
    recorded = kept.get("step_types")
    if isinstance(recorded, list) and all(isinstance(kind, str) for kind in recorded):
        builder.step_types = tuple(recorded)  # the recoveries ATIF has no flag for
    labelled = _label(document, kept, adp=adp)
    summary = kept.get("result_summary")
    return assemble(
        builder,
        source="atif",
        source_id=_run_id(document, record),
        success=(
            labelled
            if isinstance(labelled, bool)
            else ends_on_agent and builder.final_answer is not None and completed
        ),
        options=options,
        objective=objective,
        created_at=started or UNDATED,
        result_summary=summary if isinstance(summary, str) else builder.final_answer,
        agent_id=name,
        framework=name,
        model=_model(as_object(agent), steps),
        metadata=extra if isinstance(extra, Mapping) else None,
        warnings=tuple(warnings),
        source_extra={"schema_version": document["schema_version"]},
        content_hint=CONTENT_HINT,
        location=record.location,
        system=system,
    )


def _model(agent: Mapping[str, Any], steps: list[Mapping[str, Any]]) -> str | None:
    """The model of the run's last reply, named by its agent step or else by the agent.

    Harbor names each agent step's ``model_name`` as well as the agent's, which OpenAgents'
    ``tbench`` calls ``model``.
    """
    replied = (step.get("model_name") for step in steps if step.get("source") == "agent")
    return last_model((agent.get("model_name", agent.get("model")), *replied))


def _described(step: Mapping[str, Any], text: str | None) -> tuple[str | None, str]:
    """An ADP ``message_action``'s thought and text, as its standardized form is read.

    ADP keeps its ``description`` (the reasoning before it) in the step's ``extra``.
    """
    return message_said(text or "", as_string(as_object(step.get("extra")).get("description")))


def _priming(steps: list[Mapping[str, Any]]) -> tuple[str | None, frozenset[int]]:
    """The system prompt a run opens by priming the model with, and the steps that prime it.

    AgentInstruct's runs (as ADP writes them in ATIF) open with the instructions as a user
    step, the agent's scripted "Ok." (or a worked problem), then the task: the instructions are
    the system prompt, the task the objective (:func:`primed`); a run opening otherwise has none.
    """
    opening = primed(_turn(step) for step in steps)
    if opening is None:
        return None, frozenset()
    return content_text(steps[opening.start].get("message")), frozenset(opening)


def _message_text(step: Mapping[str, Any], *, adp: bool) -> str | None:
    """A step's message as text (content parts, ATIF v1.6, joined).

    ADP wraps the agent's closing message in ``<finish>...</finish>`` (its standardized
    form's convention, kept in the ATIF it writes): the words inside are what it said.
    """
    text = content_text(step.get("message"))
    return unfinished(text) if adp and step.get("source") == "agent" and text else text


def _label(document: Mapping[str, Any], kept: Mapping[str, Any], *, adp: bool) -> Any:
    """The run's recorded outcome, a non-boolean where none says.

    ``extra.success``, else what :func:`to_atif` kept, else the ``verdict`` (``PASS``, ``FAIL``)
    of ``final_metrics.extra`` (OpenAgents' qa-runner), else (ADP's)
    ``extra.adp_details.resolved``.
    """
    extra = document.get("extra")
    labelled = as_object(extra).get("success")
    labelled = labelled if isinstance(labelled, bool) else kept.get("success")
    if not isinstance(labelled, bool):
        final_metrics = as_object(document.get("final_metrics"))
        labelled = success_word(as_object(final_metrics.get("extra")).get("verdict"))
    if adp and not isinstance(labelled, bool):
        return outcome(as_object(as_object(extra).get(ADP_DETAILS)))
    return labelled


def _confirmed(steps: list[Mapping[str, Any]]) -> frozenset[int]:
    """The agent steps that confirm Terminus 2's ``mark_task_complete``.

    Each calls it, and so did the agent step before it (Terminus then asked whether the agent
    was sure).
    """
    agents = [n for n, step in enumerate(steps) if step.get("source") == "agent"]
    completes = {n for n in agents if any(name == _COMPLETE for _, name, _ in _calls(steps[n]))}
    return frozenset(
        after for before, after in pairwise(agents) if before in completes and after in completes
    )


def _ending(step: Mapping[str, Any]) -> Mapping[str, Any]:
    """A step that confirms Terminus 2's ``mark_task_complete``, less that call.

    The run ends there, its message the answer, as a ``finish`` call's is.
    """
    calls = step.get("tool_calls")
    if not isinstance(calls, list):
        return step
    kept = [call for call in calls if not _names(call, _COMPLETE)]
    return {**step, "tool_calls": kept or None}


def _names(call: Any, tool: str) -> bool:
    """Whether a call is of ``tool``, named as :func:`_call` reads a name (either dialect's)."""
    read = _call(call)
    return not isinstance(read, str) and read[1] == tool


def _turn(step: Mapping[str, Any]) -> tuple[str, str | None]:
    """A step's kind and text, as :func:`primed` reads them.

    An agent step that calls no tool and gets no result is the assistant's turn.
    """
    source = step.get("source")
    acted = step.get("tool_calls") or step.get("observation")
    if source == "agent" and acted:
        return "other", None
    kind = {"agent": "assistant", "user": "user", "system": "system"}.get(str(source), "other")
    return kind, content_text(step.get("message"))


def _tell_agent(
    builder: StepBuilder,
    step: Mapping[str, Any],
    text: str | None,
    at: datetime | None,
    *,
    final: bool,
    kp_wrote: bool,
    call_texts: frozenset[str],
    answered_at: Mapping[str, datetime | None],
    adp: bool = False,
) -> bool | None:
    """Tell an agent step: its thoughts, calls and results.

    ``kp_wrote``: :func:`to_atif` wrote the trajectory, so a result that answers no call is the
    error the run reported. ``call_texts``: the calls whose step's message is their own text
    (what the agent said with them), as :func:`to_atif` recorded them. ``adp``: ADP wrote
    the trajectory, so a result that says it failed (:func:`error_text`) is its call's error.

    Returns:
        What the step's ``finish`` call says of the task (done unless its ``task_completed``
        says not), or ``None`` when it makes none.
    """
    reasoning = step.get("reasoning_content")
    builder.thought(as_string(reasoning), at=at)
    calls: list[tuple[str | None, str, Any]] = list(_calls(step))
    described, text = _described(step, text) if adp and not calls else (None, text)
    builder.thought(described, at=at)
    if not calls and has_xml_calls(text):
        # OpenHands without native function calling writes its calls into the message
        # (``<function=NAME><parameter=KEY>``...), and Harbor keeps them there: no call id, so
        # the step's results answer them in order.
        written, text = xml_calls(text or "")
        calls = [(None, call.name, call.arguments) for call in written]
    # Calls answered before their step (``tbench``) ran before its message: the last such
    # step's message is said after them, the answer as from a step that calls no tool.
    after_calls = bool(calls) and all(call_id in answered_at for call_id, _, _ in calls)
    # The message kp wrote as the first call's own text is told with that call.
    own = text if calls and calls[0][0] in call_texts else None
    if own is None and final and (after_calls or not calls):
        builder.answer(text, at=at)
    elif own is None:
        builder.thought(text, at=at, said=True)  # its output, which a user step may answer
    finishes = [(call_id, openhands_finish(name, arguments)) for call_id, name, arguments in calls]
    closing = [(call_id, finish) for call_id, finish in finishes if finish is not None]
    closed = {call_id for call_id, _ in closing}
    calls = [call for call, (_, finish) in zip(calls, finishes, strict=True) if finish is None]
    names = {call_id: name for call_id, name, _ in calls}
    pending = list(calls)
    for number, (call_id, name, arguments) in enumerate(calls):
        ran_at = answered_at.get(call_id) if call_id is not None else None
        said = own if number == 0 else None
        builder.tool_request(name, arguments, call_id=call_id, at=ran_at or at, text=said)
    observation = step.get("observation")
    results = as_object(observation).get("results")
    for result in results if isinstance(results, list) else ():
        if not isinstance(result, Mapping):
            continue
        content = result.get("content")
        output = content_text(content) if isinstance(content, list) else content
        # ATIF's id is a string: any other value names no call.
        source_call = named if isinstance(named := result.get("source_call_id"), str) else None
        if source_call is not None and source_call in closed:  # a finish's: the run ended
            continue
        # A failed call's output is its error (the next action its recovery).
        error = (as_text(output) or "the tool reported a failure") if _failed(result) else None
        if adp and error is None and output is not None:
            # ADP keeps no failure flag: a result that says it failed is an error, as its
            # standardized form's observations are read.
            error = error_text(as_text(output))
        # A result without content still answered its call: the tool gave back nothing.
        said = None if error else ("" if output is None else output)
        if isinstance(source_call, str) and source_call in names:
            pending = [call for call in pending if call[0] != source_call]
            builder.tool_result(
                names[source_call], output=said, error=error, call_id=source_call, at=at
            )
        elif pending:
            call_id, name, _ = pending.pop(0)
            builder.tool_result(name, output=said, error=error, call_id=call_id, at=at)
        else:  # feedback that answers no call: an error when it says so, or kp wrote it one
            told = as_text(output) if output is not None else None
            builder.error(told if kp_wrote else error_text(told), at=at)
    for _, finish in closing[-1:]:  # the run ends there: its message is the answer
        builder.answer(finish.message, at=at)
        return finish.completed
    return None


def _users_words(text: str | None, *, codex: bool) -> str | None:
    """A user step's words, ``None`` where the agent wrote the whole message itself.

    Harbor converts Codex's rollouts keeping the messages Codex writes in the user's name (its
    ``<environment_context>``, the AGENTS.md instructions) as ``user`` steps (and the IDE
    extension's context around a request), read so where the agent is Harbor's ``codex`` (a
    user's own request may be one tagged block), and Claude Code's sessions keeping its
    ``[Request interrupted by user]`` notes, and Terminus 2 its handoff after a summary; the
    user's request is another step.
    """
    words = users_words(text)
    if words is None or interrupted(words) or words.startswith(_HANDOFF):
        return None
    return codex_users_words(words) if codex else words


def _handed_on_task(text: str | None) -> str | None:
    """The task a Terminus 2 hand-off names, ``None`` where the text is no hand-off.

    Not the user's turn, but the task the user gave the run it hands on: the objective of a
    trajectory the hand-off opens, where no earlier prompt gives it.
    """
    if text is None or not text.startswith(_HANDOFF):
        return None
    named = _HANDED_ON_TASK.search(text)
    return named.group("task").strip() if named else None


def _failed(result: Mapping[str, Any]) -> bool:
    """Whether a result says its call failed.

    Harbor's conversion of Claude Code's sessions keeps a ``tool_result``'s ``is_error`` as
    ``extra.tool_result_is_error`` (ATIF has no field for it), and its
    ``tool_result_metadata.is_error``.
    """
    extra = as_object(result.get("extra"))
    metadata = as_object(extra.get("tool_result_metadata"))
    return extra.get("tool_result_is_error") is True or metadata.get("is_error") is True


def _answered(step: Mapping[str, Any]) -> str | None:
    """The call id a ``system`` step's message says its tool result answers, if any."""
    observation = step.get("observation")
    if not isinstance(observation, Mapping) or observation.get("type") != "tool_result":
        return None
    message = step.get("message")
    named = _RESULT_FOR.fullmatch(message.strip()) if isinstance(message, str) else None
    return named.group(1) if named else None


def _unknown_source(number: int, step: Mapping[str, Any]) -> str:
    step_id = step.get("step_id")
    named = f" (step_id {step_id})" if isinstance(step_id, int | str) else ""
    value = json.dumps(step.get("source"), ensure_ascii=False, default=str)[:60]
    return (
        f"steps[{number}]{named} has source {value}, not one of ATIF's "
        f"({', '.join(SOURCES)}): the step is left out"
    )


def _calls(step: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """A step's well-formed tool calls; a ``tool_calls`` that is no list holds none."""
    listed = step.get("tool_calls")
    calls = listed if isinstance(listed, list) else []
    return [found for found in map(_call, calls) if not isinstance(found, str)]


def _unread_calls(number: int, step: Mapping[str, Any]) -> list[str]:
    """A warning for each tool call of ``steps[number]`` that :func:`_call` cannot read."""
    listed = step.get("tool_calls")
    if listed is None:
        return []
    if not isinstance(listed, list):
        return [f"steps[{number}].tool_calls is {describe_value(listed)}, not a list: no call read"]
    return [
        f"steps[{number}].tool_calls[{index}] {why}: the call and its result are left out"
        for index, call in enumerate(listed)
        if isinstance(why := _call(call), str)
    ]


def _call(call: Any) -> tuple[str, str, Any] | str:
    """(call id, tool name, arguments) of a tool call, or why it is none.

    ATIF's ``tool_call_id`` and ``function_name``, or the ``id`` and ``name`` OpenAgents'
    ``tbench`` writes. An empty ``function_name`` is a call whose tool went unnamed where the run
    was recorded (kp writes one so, of a source that lost the name, and warns of it, as it does
    reading this one): its id still joins it to its result.
    """
    if not isinstance(call, Mapping):
        return f"is {describe_value(call)}, not a call"
    call_id = call.get("tool_call_id", call.get("id"))
    name = call.get("function_name", call.get("name"))
    if not isinstance(name, str):
        return f"has function_name {describe_value(name)}, not a tool's name"
    if not isinstance(call_id, str):
        return f"has tool_call_id {describe_value(call_id)}, not text"
    return call_id, name, call.get("arguments")


def _tell_tool_result(
    builder: StepBuilder,
    step: Mapping[str, Any],
    text: str | None,
    names: Mapping[str, str],
    at: datetime | None,
) -> None:
    """A ``system`` step that is a tool's result (OpenAgents' ``tbench``); any other is no step.

    Its ``observation`` is ``{type: tool_result, content, result: {success, output | error}}``,
    the call it answers named only in its message (``Tool result for <call id>``), which may be
    listed by a later agent step (the calls of a turn are written after their results).
    """
    observation = step.get("observation")
    if not isinstance(observation, Mapping) or observation.get("type") != "tool_result":
        return
    call_id = _answered(step)
    content = observation.get("content")
    output = content_text(content) if isinstance(content, list) else content
    result = observation.get("result")
    failed = isinstance(result, Mapping) and result.get("success") is False
    error = (
        (result.get("error") or as_text(output)) if isinstance(result, Mapping) and failed else None
    )
    builder.tool_result(
        names.get(call_id, "") if call_id else "",
        output=None if failed else output,
        error=as_text(error) if error else None,
        call_id=call_id,
        at=at,
    )


def _run_id(document: Mapping[str, Any], record: Record) -> str:
    for key in ("session_id", "trajectory_id"):
        value = document.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return f"atif:{record.location}"


WRITTEN_VERSION = "ATIF-v1.6"
"""The ATIF version :func:`to_atif` writes (the latest whose ``session_id`` is required)."""
_ACTIONS = frozenset({"tool_call", "error_recovery"})


def to_atif(trace: ReasoningTrace) -> dict[str, Any]:
    """A ``ReasoningTrace`` as an ATIF trajectory (``kp convert --to atif``).

    The objective is the first ``user`` step; the steps follow as ``agent`` steps: a thought opens
    one (its ``message``), the tool calls after it are its ``tool_calls``, and the observations
    after them its ``observation`` results, joined by call id (``call_<step_id>``). An observation
    that follows no call (an error the run reported) is a result without a call (in a step of its
    own after a message, which read back would follow it), but a ``respond`` observation that
    answers no call (the user speaking after a tool's result) is a ``user`` step, and the thoughts
    just before it, which the user did not see, are their agent steps' ``reasoning_content``
    (:func:`_unsaid`). What the agent said with a call (:func:`says_more_than_the_call`: a
    ``respond`` call's message to the user) is the ``message`` of the agent step the call opens. The
    domain and confidence go in the root's ``extra`` under ``kp.task_domain`` and ``kp.confidence``
    (which the reader takes back); what else ATIF has no field for (success, the result summary,
    each step's type, the calls whose step's message is their own text) under
    ``extra.knowledgepulse``. The model that wrote the run (``metadata.source.model``) is the
    agent's ``model_name``. Read back, the objective, the tool calls and what was said with them,
    the final answer, success, the domain and the confidence are the trace's, and so are its steps'
    types while the list fits the steps read (one a step, differing only in which calls and thoughts
    are recoveries).
    """
    later: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    unanswered: list[dict[str, Any]] = []
    call_texts: list[str] = []
    for step in trace.steps:
        is_call = step.type in _ACTIONS and step.tool is not None
        if step.type == "observation":
            text = step.content or step.output_summary or ""
            name = step.tool.name if step.tool is not None else None
            # A result names its tool's first waiting call; an unnamed one answers the latest
            # (the result read in order would answer the step's first call, often another's).
            named = (call for call in unanswered if call["function_name"] == name)
            answered = next(named if name is not None else reversed(unanswered), None)
            if answered is None and name == RESPOND:  # the user's turn, answering no call
                _unsaid(later)
                later.append({"source": "user", "message": text})
                current, unanswered = None, []
                continue
            # An error no call met, after the agent spoke, is a step of its own: a thought's
            # step, read back, tells its message (a last one as the answer) after its results.
            if current is None or (answered is None and "tool_calls" not in current):
                current = {"source": "agent", "message": ""}
                later.append(current)
            result: dict[str, Any] = {"content": text}
            if answered is not None:
                unanswered.remove(answered)
                result = {"source_call_id": answered["tool_call_id"], **result}
            current.setdefault("observation", {"results": []})["results"].append(result)
        elif is_call and step.tool is not None:
            own = step.content if says_more_than_the_call(step) else None
            # What the agent said with the call is the message of a step of its own, first.
            if current is None or "observation" in current or (own and not _is_fresh(current)):
                if current is not None and "observation" in current:
                    # A step's results answer its own calls: the calls of a step whose results
                    # are written wait no more (one that came back with nothing, say).
                    unanswered = []
                current = {"source": "agent", "message": ""}
                later.append(current)
            call_id = f"call_{step.step_id}"
            call: dict[str, Any] = {
                "tool_call_id": call_id,
                "function_name": step.tool.name,
                "arguments": step.input or {},
            }
            if own:
                current["message"] = own
                call_texts.append(call_id)
            current.setdefault("tool_calls", []).append(call)
            unanswered.append(call)
        else:  # a thought, or a recovery that calls no tool: the agent speaks
            current = {"source": "agent", "message": step.content or ""}
            later.append(current)
            unanswered = []
    metadata = trace.metadata
    user = {
        "source": "user",
        "timestamp": metadata.created_at.isoformat().replace("+00:00", "Z"),
        "message": trace.task.objective,
    }
    steps = [{"step_id": number, **step} for number, step in enumerate([user, *later], 1)]
    agent = {"name": metadata.agent_id or metadata.framework or "agent", "version": "unknown"}
    model = as_object(as_object(metadata.model_extra).get("source")).get("model")
    return {
        "schema_version": WRITTEN_VERSION,
        "session_id": trace.id.removeprefix("kp:trace:"),
        "agent": {**agent, "model_name": model} if isinstance(model, str) else agent,
        "steps": steps,
        "extra": {
            DOMAIN_KEY: metadata.task_domain,
            CONFIDENCE_KEY: trace.outcome.confidence,
            "knowledgepulse": {
                "success": metadata.success,
                "result_summary": trace.outcome.result_summary,
                "step_types": [step.type for step in trace.steps],
                "call_texts": call_texts,
            },
        },
    }


def _unsaid(written: list[dict[str, Any]]) -> None:
    """The thoughts just before a user's turn that answers no call, as their steps' reasoning.

    A reply the user saw is a ``respond`` call (what kp reads of a message a user step
    answers); thoughts the user's turn follows with no such call were the agent's own (a
    reasoning model's thinking, a reply stopped before it said a word). Written as messages,
    they would read back as that call.
    """
    for step in reversed(written):
        spoke_only = not {"tool_calls", "observation", "reasoning_content"} & step.keys()
        if step["source"] != "agent" or not step["message"] or not spoke_only:
            return
        step["reasoning_content"], step["message"] = step["message"], ""


def _is_fresh(step: Mapping[str, Any]) -> bool:
    """Whether an agent step being written holds nothing yet: no message, calls or results."""
    return not step["message"] and "tool_calls" not in step and "observation" not in step
