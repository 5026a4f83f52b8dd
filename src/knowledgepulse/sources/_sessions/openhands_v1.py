"""OpenHands V1 (its software agent SDK) conversations as traces: one a conversation.

The SDK (``openhands-sdk``, OpenHands/software-agent-sdk) records a conversation as events,
each a JSON object naming its ``kind`` (``openhands/sdk/event``), with an ``id``, a
``timestamp`` and a ``source`` (``user``, ``agent``, ``environment``, ``hook``). It persists
one as a folder, ``<conversation id>/events/event-00000-<event id>.json``... beside
``base_state.json`` (kp reads such a folder as one input: ``records._parted``); its
evaluation harness (OpenHands/benchmarks) writes an ``output.jsonl`` row a task whose
``history`` is the events; a JSON list or JSON Lines file of events is a run too.

The mapping, as the SDK means its events (the V0 reader's, :mod:`.openhands`, where they agree):

* ``SystemPromptEvent``: the system prompt and the tools offered, kept apart;
* ``MessageEvent``: the ``llm_message``'s text. The user's first is the objective (a row
  without one: its ``instruction``), a later one the user's turn; the agent's is the final
  answer when nothing but bookkeeping follows it, else what it said (a thought). Its
  ``reasoning_content`` is a thought before it;
* ``ActionEvent``: the model's reasoning (``reasoning_content``, else its ``<think>`` blocks,
  once a response: ``llm_response_id``) and ``thought``, then a call of ``tool_name`` (id
  ``tool_call_id``) with the ``action``'s fields less OpenHands' bookkeeping (``kind``,
  ``security_risk``...); calls of one response are one turn. ``finish``'s ``message`` is the
  final answer (:func:`openhands_finish`); ``think``'s ``thought`` a thought. An action
  the SDK could not build (``action`` null) keeps the arguments the model wrote;
* ``ObservationEvent``: the result of the call it answers (``tool_call_id``), failed when the
  observation says ``is_error`` (``error`` in the SDK's first releases: ``true``, or the file
  editor's and browser's message, what the model was shown) or a command's exit code is not
  0. ``AgentErrorEvent`` (a call the SDK refused: an unknown tool, bad arguments) and
  ``UserRejectObservation`` are that call's failure; one answering no call read is an
  error of its own, which the agent's next action recovers from. The observation of
  ``finish`` or ``think`` only echoes the call: no step;
* ``ConversationErrorEvent``: the run stopped on an error (its ``code`` and ``detail``);
* state updates (``ConversationStateUpdateEvent``), pauses, interrupts, condensations,
  hooks, token and streaming events are no steps; the last ``execution_status`` is kept.

Success. A row's ``test_result`` verdict (``report.resolved``, ``resolved``) where it has one.
Else how the run ended, as the file says: a row's ``error`` (but its grader's, the same error
its ``test_result`` holds), a ``ConversationErrorEvent`` or a
final ``execution_status`` of ``error`` or ``stuck`` (``base_state.json``'s, else the last state
update's) is a failure; a ``finish`` is a success unless its ``task_completed`` says ``false``
or ``partial``; else a run that ends on the agent's message is a success (a conversation
``finished``, awaiting the user), and one that ends on anything else (out of iterations,
paused) is not. The confidence stays the default. The model is the one the row or the
conversation's agent was given (:func:`~.openhands.configured_model`), else the one the last
``stats`` state update names (``usage_to_metrics``: each LLM's ``model_name``, the agent's
first), as in a stream of events without ``base_state.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from itertools import chain
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value, non_blank
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._openhands import FINISH, openhands_finish
from knowledgepulse.sources._chat._text import content_text, json_or_value, split_think
from knowledgepulse.sources._chat._tools import row_tools
from knowledgepulse.sources._envelope import UNDATED, TraceOptions, assemble, finished, first_model
from knowledgepulse.sources._sessions import openhands
from knowledgepulse.sources._sessions._documents import run_name
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

KINDS = frozenset(
    {
        "ActionEvent",
        "ObservationEvent",
        "MessageEvent",
        "SystemPromptEvent",
        "SystemPromptUpdateEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "ConversationErrorEvent",
        "ConversationStateUpdateEvent",
        "Condensation",
        "CondensationRequest",
        "CondensationSummaryEvent",
        "PauseEvent",
        "InterruptEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "TokenEvent",
        "StreamingDeltaEvent",
        "ACPToolCallEvent",
    }
)
"""The SDK's event kinds (``openhands/sdk/event``): a file whose first record is one is V1's."""
SOURCES = frozenset({*openhands.SOURCES, "hook"})
"""The event sources the SDK writes (its ``SourceType``)."""
EXPECTED_EVENT = (
    '{"kind": "MessageEvent"|"ActionEvent"|"ObservationEvent"|..., "id", "timestamp", '
    '"source": "user"|"agent"|"environment"|"hook", ...}'
)
STEPS = frozenset(
    {
        "ActionEvent",
        "ObservationEvent",
        "MessageEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "ConversationErrorEvent",
    }
)
"""The kinds that are steps of the run (the rest is the SDK's bookkeeping)."""
THINK = "think"
"""The SDK's think tool: it only logs the model's ``thought``."""
FAILED_STATUSES = frozenset({"error", "stuck"})
"""The ``execution_status`` values of a conversation that ended failed."""
_STATE_KEYS = frozenset({"agent", "execution_status"})
"""What a ``base_state.json`` holds (besides its ``id``): the conversation's agent and status."""


def event_problem(value: Any, *, known: bool = False) -> str | None:
    """What makes a value no V1 event (``known``: of a kind the SDK writes), or ``None``.

    After the first event, a kind kp does not know (a newer SDK's) is bookkeeping, skipped.
    """
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
        return f"not an OpenHands V1 event: {describe_value(value)}; expected {EXPECTED_EVENT}"
    if known and value["kind"] not in KINDS:
        return f"not an OpenHands V1 event kind: {value['kind']!r}; expected {EXPECTED_EVENT}"
    if as_string(value.get("source")) not in SOURCES:
        return (
            f"an OpenHands V1 event needs a source of user, agent, environment or hook, not "
            f"{describe_value(value.get('source'))}; expected {EXPECTED_EVENT}"
        )
    if not isinstance(value.get("id"), str) or not isinstance(value.get("timestamp"), str):
        return f"an OpenHands V1 event needs its id and timestamp; expected {EXPECTED_EVENT}"
    return None


def _is_state(value: Any) -> bool:
    """Whether a record is a conversation's ``base_state.json`` (read after its events)."""
    return isinstance(value, dict) and value.keys() >= _STATE_KEYS and "kind" not in value


def _is_row(value: Any) -> bool:
    """Whether a record is an evaluation row (``instance_id``...) whose history is V1 events."""
    if not isinstance(value, dict) or not ("instance_id" in value or "instruction" in value):
        return False
    history = value.get("history")
    return isinstance(history, list) and bool(history) and _opens(history[0])


def _opens(value: Any) -> bool:
    return event_problem(value, known=True) is None


def recognises(value: Any) -> bool:
    """Whether a file's first record is OpenHands': a V0 event or row, or a V1 one."""
    return openhands.recognises(value) or _opens(value) or _is_row(value)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """OpenHands' records as traces: V0's by :mod:`.openhands`, V1's here.

    The first record says which: a file (or conversation) is written by one OpenHands.
    """
    items = iter(records)
    head: list[Record | Problem] = []
    for item in items:
        head.append(item)
        if isinstance(item, Record):
            break
    if head and isinstance(head[-1], Record) and openhands.recognises(head[-1].value):
        yield from openhands.convert_records(chain(head, items), options)
    else:
        yield from _convert_v1(chain(head, items), options)


def _convert_v1(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace per evaluation row, and one for the file's (or conversation's) events.

    A record that is neither (nor the conversation's state) is a problem at its place, and the
    others go on.
    """
    events: list[Record] = []
    state: Mapping[str, Any] = {}
    for item in records:
        if isinstance(item, Problem):
            yield item
        elif _is_row(item.value):
            yield from _row(item, options)
        elif _is_state(item.value):
            state = item.value
        elif (
            problem := openhands.empty_row_problem(item.value) or event_problem(item.value)
        ) is not None:
            yield item.problem((), problem)
        else:
            events.append(item)
    if events:
        first = events[0]
        values = [event.value for event in events]
        yield finished(partial(_convert, values, first, options, None, state), first)


def _row(record: Record, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    """A row's trace; each entry of its history that is no event a problem at its path."""
    events = []
    for number, event in enumerate(record.value["history"]):
        problem = event_problem(event)
        if problem is None:
            events.append(event)
        else:
            yield record.problem(("history", number), f"{problem}; the rest of the run is read")
    yield finished(partial(_convert, events, record, options, record.value, {}), record)


@dataclass
class _Run:
    """What reading a conversation's events has found so far."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    objective: str | None = None
    system: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    started: datetime | None = None
    calls: dict[str, str] = field(default_factory=dict)
    """Each tool call's id: its tool's name, for the observation that answers it."""
    responses: set[str] = field(default_factory=set)
    """The model responses whose reasoning was told (each of a response's actions keeps it)."""
    turn: tuple[str | None, datetime | None] = (None, None)
    """The last call's model response and its time: a response's calls are one turn."""
    completed: bool | None = None
    """Whether the ``finish`` call says the task is done; ``None`` before one."""
    closed: bool = False
    """Whether the agent's last word was a ``finish`` (not a message or a call after it)."""
    failure: str | None = None
    """Why the conversation stopped on an error (a ``ConversationErrorEvent``), if it did."""
    status: str | None = None
    """The conversation's last ``execution_status``."""
    model: str | None = None
    """The model the last ``stats`` state update names, if any."""


def _convert(
    events: list[Mapping[str, Any]],
    record: Record,
    options: TraceOptions,
    row: Mapping[str, Any] | None,
    state: Mapping[str, Any],
) -> TraceItem:
    run = _Run()
    last = _answer_at(events)
    for number, event in enumerate(events):
        at = iso_time(event.get("timestamp"))
        if run.started is None and at is not None:
            run.started = at
        _event(run, event, at, answer=number == last)
    run.status = as_string(state.get("execution_status")) or run.status
    crashed = _run_error(row) if row is not None else None
    stopped = crashed or run.failure
    if stopped is None and run.status in FAILED_STATUSES:
        stopped = f"the conversation ended in execution status {run.status}"
    if stopped and not run.closed:
        run.builder.no_answer()  # the agent's last message was no answer: the run failed after
    if stopped:
        run.builder.error(stopped, terminal=True)
    instance = as_string(row.get("instance_id")) if row is not None else None
    extra = {"instance_id": instance} if instance else {}
    if run.status:
        extra["execution_status"] = run.status
    name = instance or as_string(state.get("id")) or run_name(record)
    return assemble(
        run.builder,
        source=openhands.FORMAT,
        source_id=f"{openhands.FORMAT}:{name}",
        success=_success(run, row, stopped=stopped is not None),
        options=options,
        objective=run.objective or (as_string(row.get("instruction")) if row else None),
        created_at=run.started or UNDATED,
        result_summary=run.builder.final_answer,
        agent_id=as_string(as_object(state.get("agent")).get("kind")),
        framework=openhands.FORMAT,
        model=openhands.configured_model(row, state) or run.model,
        source_extra=extra or None,
        content_hint=openhands.CONTENT_HINT,
        location=record.location,
        tools=run.tools,
        system=run.system,
    )


def _run_error(row: Mapping[str, Any]) -> str | None:
    """The row's ``error`` where it is the run's, else ``None``.

    OpenHands/benchmarks copies its grader's failure into the row's ``error`` as well as its
    ``test_result`` (OpenAgentSafety: ``{"error": "module 'evaluator_temp' has no attribute
    ..."}``, "Empty output from evaluator"): the grading failed after the run, which says
    nothing of how the run ended. A run that failed itself has no events to read
    (``history: []``, :func:`.openhands.empty_row_problem`).
    """
    error = non_blank(row.get("error"))
    if error is not None and non_blank(as_object(row.get("test_result")).get("error")) == error:
        return None
    return error


def _answer_at(events: list[Mapping[str, Any]]) -> int | None:
    """The index of the agent message that ends the run (nothing but bookkeeping after it)."""
    for number in range(len(events) - 1, -1, -1):
        event = events[number]
        if event["kind"] in STEPS:
            is_message = event["kind"] == "MessageEvent" and event["source"] == "agent"
            return number if is_message else None
    return None


def _event(run: _Run, event: Mapping[str, Any], at: datetime | None, *, answer: bool) -> None:
    kind = event["kind"]
    if kind == "SystemPromptEvent":
        run.system = non_blank(as_object(event.get("system_prompt")).get("text")) or run.system
        run.tools = _tools(event.get("tools")) or run.tools
    elif kind == "MessageEvent":
        _message(run, event, at, answer=answer)
    elif kind == "ActionEvent":
        _action(run, event, at)
    elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        _observation(run, event)
    elif kind == "ConversationErrorEvent":
        said = ": ".join(
            filter(None, (non_blank(event.get("code")), non_blank(event.get("detail"))))
        )
        run.failure = f"the conversation stopped on an error: {said or 'no detail'}"
    elif kind == "ConversationStateUpdateEvent":
        value = event.get("value")
        if event.get("key") == "execution_status":
            run.status = as_string(value) or run.status
        elif event.get("key") == "stats":
            run.model = _stats_model(value) or run.model
        elif event.get("key") == "full_state":  # the whole state, sent when a client connects
            run.status = as_string(as_object(value).get("execution_status")) or run.status


def _stats_model(stats: Any) -> str | None:
    """The model a ``stats`` update names: its first LLM's (the agent's) ``model_name``."""
    usages = as_object(as_object(stats).get("usage_to_metrics")).values()
    return first_model(*(as_object(usage).get("model_name") for usage in usages))


def _tools(listed: Any) -> tuple[dict[str, Any], ...]:
    """The tools a system prompt offers, as OpenAI's definitions (the SDK's are named ``title``)."""
    if not isinstance(listed, list):
        return ()
    named = [
        {"name": tool.get("title") or tool.get("name"), "description": tool.get("description")}
        if isinstance(tool, dict)
        else tool
        for tool in listed
    ]
    return row_tools({"tools": named})


def _message(run: _Run, event: Mapping[str, Any], at: datetime | None, *, answer: bool) -> None:
    """A user's message (the task, then a turn) or the agent's (said to the user, or the answer)."""
    message = as_object(event.get("llm_message"))
    text = non_blank(content_text(message.get("content")))
    if event["source"] == "user":
        if run.objective is None:
            run.objective = text
        else:
            run.builder.user_turn(text, at=at)
        return
    if event["source"] != "agent":
        return  # a hook's, no one's words
    _reasoning(run, message.get("reasoning_content"), event.get("llm_response_id"), at)
    run.closed = False
    if answer:
        run.builder.answer(text, at=at)
    else:
        run.builder.thought(text, at=at, said=True)


def _action(run: _Run, event: Mapping[str, Any], at: datetime | None) -> None:
    """The model's reasoning and thought, then its call (``finish``: the answer)."""
    response = as_string(event.get("llm_response_id"))
    thoughts, said = split_think(content_text(event.get("thought")) or "")
    reasoning = event.get("reasoning_content") or "\n\n".join(thoughts)
    _reasoning(run, reasoning, response, at)
    run.builder.thought(non_blank(said.strip()), at=at)
    name = as_string(event.get("tool_name")) or ""
    arguments = _arguments(event)
    run.closed = False
    if (closing := openhands_finish(name, arguments)) is not None:
        run.completed, run.closed = closing.completed, True
        run.builder.answer(non_blank(closing.message), at=at)
        return
    if name == THINK:  # its thought is no argument of a call (the V0 bookkeeping's name)
        run.builder.thought(non_blank(as_object(event.get("action")).get("thought")), at=at)
        return
    if response is None or response != run.turn[0]:
        run.turn = (response, at)  # a new model response: a new turn, at its first call's time
    call_id = as_string(event.get("tool_call_id"))
    run.builder.tool_request(name, arguments, call_id=call_id, at=run.turn[1])
    if call_id is not None:
        run.calls[call_id] = name


def _arguments(event: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments: the action's fields, else (no action built) what the model wrote."""
    action = event.get("action")
    if not isinstance(action, dict):
        action = as_object(json_or_value(as_object(event.get("tool_call")).get("arguments")))
    return openhands.tool_arguments("", {k: v for k, v in action.items() if k != "kind"})


def _reasoning(run: _Run, reasoning: Any, response: Any, at: datetime | None) -> None:
    """The reasoning a model response keeps (a reasoning model's), told once a response."""
    text = non_blank(reasoning)
    key = as_string(response) or ""
    if text and key not in run.responses:
        if key:
            run.responses.add(key)
        run.builder.thought(text, at=at)


def _observation(run: _Run, event: Mapping[str, Any]) -> None:
    """A call's result (or failure); a failure answering no call read is an error of its own."""
    call_id = as_string(event.get("tool_call_id"))
    name = run.calls.get(call_id) if call_id is not None else None
    output, failure = _outcome(event)
    if name is None:
        if failure and as_string(event.get("tool_name")) not in (FINISH, THINK):
            run.builder.error(failure)
        return  # the echo of finish or think, or a result of a call not read (a trimmed file)
    run.builder.tool_result(
        name, output=None if failure else output, error=failure, call_id=call_id
    )


def _outcome(event: Mapping[str, Any]) -> tuple[str, str | None]:
    """An observation's text, and why it is a failure (``None`` when it is none)."""
    kind = event["kind"]
    if kind == "AgentErrorEvent":
        return "", non_blank(event.get("error")) or "OpenHands' agent refused the call"
    if kind == "UserRejectObservation":
        reason = non_blank(event.get("rejection_reason")) or "User rejected the action"
        return "", f"Action rejected: {reason}"
    observation = as_object(event.get("observation"))
    text = (
        non_blank(content_text(observation.get("content")))
        or non_blank(observation.get("output"))  # the SDK's first releases
        or non_blank(observation.get("message"))
        or ""
    )
    code = observation.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        code = as_object(observation.get("metadata")).get("exit_code")
    if observation.get("is_error") is True or observation.get("error") is True:
        return text, text or "the tool failed"
    # The SDK's first releases: the file editor's and the browser's ``error`` is the message the
    # model was shown instead of the (then empty) ``output`` (their ``agent_observation``).
    if (message := non_blank(observation.get("error"))) is not None:
        return message, message
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return text, text or f"the command exited with code {code}"
    return text, None


def _success(run: _Run, row: Mapping[str, Any] | None, *, stopped: bool) -> bool:
    """The evaluation's verdict, where the row has one; else how the run ended (module doc)."""
    verdict = openhands.resolved(row.get("test_result")) if row is not None else None
    if verdict is not None:
        return verdict
    if stopped:
        return False
    if run.completed is not None:
        return run.completed
    return run.builder.final_answer is not None
