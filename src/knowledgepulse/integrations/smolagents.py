"""smolagents runs as ``ReasoningTrace`` documents, from the run result or the agent's memory.

One line after a run::

    trace = kp.integrations.smolagents.to_trace(agent.run(task, return_full_result=True)).trace

smolagents keeps every step of a run in ``agent.memory`` and gives them as plain dicts
(``RunResult.steps``, ``agent.memory.get_full_steps()``), so nothing here imports smolagents. The
mapping (``spec/integrations.md``): the ``TaskStep``'s task is the objective; a ``PlanningStep``'s
plan and an ``ActionStep``'s ``model_output`` are thoughts; its ``tool_calls`` are tool calls
(``final_answer`` is the answer, not a tool), ``observations`` their result, and its ``error`` an
evident error; ``state == "success"`` is success.

A tool that raises leaves the step's ``tool_calls`` empty (smolagents records them only after every
call returned), so the calls the model asked for are read from ``model_output_message`` then.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.integrations._envelope import (
    ConversionError,
    ConvertedTrace,
    PathError,
    TraceOptions,
    assemble,
)
from knowledgepulse.integrations._steps import StepBuilder, as_text
from knowledgepulse.records import Problem, Record

CONTENT_HINT = (
    "export the full steps: agent.run(task, return_full_result=True).steps or "
    "agent.memory.get_full_steps()"
)
"""How to get smolagents steps that carry the model's text."""

FINAL_ANSWER_TOOL = "final_answer"
"""The tool a smolagents agent calls to answer: its argument is the answer, not a tool call."""
MAX_STEPS_ERROR = "AgentMaxStepsError"
"""The error type smolagents records when a run ran out of steps (the run failed)."""

_ACTION_KEYS = frozenset({"step_number", "timing"})
_PLANNING_KEYS = frozenset({"plan", "timing"})
_TASK_KEYS = frozenset({"task", "task_images"})
_RUN_KEYS = frozenset({"steps", "state"})
_QUOTED_TOOL = re.compile(r"tool '([^']+)'")

Loc = tuple[str | int, ...]


@dataclass
class _Run:
    """One run as read so far: its steps told to a builder, and its envelope."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    objective: str | None = None
    started: float | None = None
    answered: bool = False
    out_of_steps: bool = False
    answer: str | None = None
    canonical: list[Any] = field(default_factory=list)


def recognises(value: Any) -> bool:
    """Whether a file's first record is a smolagents step, a list of steps, or a run result."""
    if isinstance(value, list):
        return bool(value) and _is_step(value[0])
    if isinstance(value, dict) and value.keys() >= _RUN_KEYS:
        steps = value["steps"]
        return isinstance(steps, list) and (not steps or _is_step(steps[0]))
    return _is_step(value)


def _is_step(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    keys = value.keys()
    if "task" in keys and keys <= _TASK_KEYS:
        return isinstance(value["task"], str)
    timed = isinstance(value.get("timing"), dict)
    return timed and (keys >= _ACTION_KEYS or keys >= _PLANNING_KEYS)


def to_trace(
    run: Any,
    *,
    domain: str | None = None,
    confidence: float | None = None,
    agent_id: str | None = None,
    trace_id: str | None = None,
) -> ConvertedTrace:
    """A smolagents run as a ``ReasoningTrace``.

    Args:
        run: a ``RunResult`` (``agent.run(task, return_full_result=True)``), the agent itself or
            its ``agent.memory``, the step dicts of ``agent.memory.get_full_steps()``, or a list
            of memory step objects.
        domain: the trace's ``task_domain`` (default ``default``).
        confidence: the outcome's confidence (default 0.8 on success, 0.2 on failure).
        agent_id: the agent's name, kept in ``metadata.agent_id`` (an agent's ``name`` when the
            agent itself is given).
        trace_id: the source id (``kp:trace:<trace_id>``); by default a digest of the steps, so
            converting the same run twice gives the same id.

    Raises:
        ConversionError: ``run`` is none of these, a step cannot be read, or there is no step.
    """
    steps, state, output, started, name = _unpack(run)
    run_data = _Run(started=started)
    for index, step in enumerate(steps):
        try:
            _tell(run_data, step, (index,))
        except PathError as error:
            raise ConversionError(f"steps[{index}]: {error.message}") from error
    return _finish(
        run_data,
        TraceOptions(domain=domain, confidence=confidence),
        state=state,
        output=output,
        agent_id=agent_id or name,
        trace_id=trace_id,
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[ConvertedTrace | Problem]:
    """Every run in one file's records.

    A record that is one step belongs to the file's run (a JSON list of steps, or JSON Lines of
    steps: one run per file); a record that is a list of steps or a run result is a run of its
    own (JSON Lines of runs: one run per line). A step that cannot be read is reported where it is
    and left out; the rest of its run still converts.
    """
    shared = _Run()
    shared_first: Record | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = item.value
        if isinstance(value, list) or (isinstance(value, dict) and value.keys() >= _RUN_KEYS):
            yield from _convert_record_run(item, options)
        elif isinstance(value, dict):
            try:
                _tell(shared, value, ())
            except PathError as error:
                yield item.problem(error.path, error.message)
            else:
                shared_first = shared_first or item
        else:
            yield item.problem((), _not_a_step(value))
    if shared_first is not None:
        try:
            yield _finish(shared, options, state=None, output=None, agent_id=None, trace_id=None)
        except ConversionError as error:
            yield shared_first.problem((), str(error))


def _convert_record_run(
    record: Record, options: TraceOptions
) -> Iterator[ConvertedTrace | Problem]:
    value = record.value
    prefix: Loc = ()
    state: Any = None
    output: Any = None
    started: float | None = None
    if isinstance(value, dict):
        steps, state, output = value["steps"], value.get("state"), value.get("output")
        started = _number((value.get("timing") or {}).get("start_time"))
        prefix = ("steps",)
        if not isinstance(steps, list):
            yield record.problem(prefix, f"expected a list of steps, found {describe_value(steps)}")
            return
    else:
        steps = value
    run = _Run(started=started)
    for index, step in enumerate(steps):
        try:
            _tell(run, step, (*prefix, index))
        except PathError as error:
            yield record.problem(error.path, error.message)
    try:
        yield _finish(run, options, state=state, output=output, agent_id=None, trace_id=None)
    except ConversionError as error:
        yield record.problem((), str(error))


def _unpack(run: Any) -> tuple[Sequence[Any], Any, Any, float | None, str | None]:
    """(steps, state, output, start time, agent name) of whatever the user handed over."""
    name = getattr(run, "name", None) if hasattr(run, "memory") else None
    memory = getattr(run, "memory", run)
    if hasattr(memory, "get_full_steps"):
        return memory.get_full_steps(), None, None, None, name if isinstance(name, str) else None
    if isinstance(run, Mapping) and run.keys() >= _RUN_KEYS:
        timing = run.get("timing") or {}
        started = _number(timing.get("start_time")) if isinstance(timing, Mapping) else None
        return run["steps"], run.get("state"), run.get("output"), started, None
    if hasattr(run, "steps") and hasattr(run, "state"):
        timing = getattr(run, "timing", None)
        return run.steps, run.state, run.output, _number(getattr(timing, "start_time", None)), None
    if isinstance(run, list | tuple):
        return run, None, None, None, None
    raise ConversionError(
        f"expected a smolagents RunResult, agent, agent.memory or a list of steps, "
        f"not {type(run).__name__}"
    )


def _tell(run: _Run, step: Any, path: Loc) -> None:
    """Tell the builder what one step did."""
    if hasattr(step, "dict") and not isinstance(step, Mapping):
        step = step.dict()  # a live memory step: its JSON shape
    if not isinstance(step, Mapping):
        raise PathError(path, _not_a_step(step))
    run.canonical.append(_canonical(step))
    if "task" in step and step.keys() <= _TASK_KEYS:
        if run.objective is None and isinstance(step["task"], str):
            run.objective = step["task"]
        return
    if step.keys() == {"output"}:  # FinalAnswerStep
        run.answer = _text(step["output"])
        run.answered = True
        return
    if "timing" not in step:
        raise PathError(path, _not_a_step(step))
    at = _start(step.get("timing"), (*path, "timing"))
    if run.started is None:
        run.started = at
    if "plan" in step:
        run.builder.thought(_text(step.get("plan")), at=at)
        return
    _tell_action(run, step, path, at)


def _tell_action(run: _Run, step: Mapping[str, Any], path: Loc, at: float | None) -> None:
    run.builder.thought(_text(step.get("model_output")), at=at)
    calls = _calls(step, path)
    tools = [call for call in calls if call[0] != FINAL_ANSWER_TOOL]
    latency = _duration(step.get("timing"))
    error = _error(step.get("error"), (*path, "error"))
    observations = step.get("observations")
    outputs = _split_observations(observations, len(tools))
    failed = _failed_call(tools, error) if error else None
    for index, (name, arguments, call_id) in enumerate(tools):
        run.builder.tool_request(name, arguments, call_id=call_id, at=at)
        run.builder.tool_result(
            name,
            arguments=arguments,
            output=outputs[index],
            error=error[1] if error and index == failed else None,
            call_id=call_id,
            at=at,
            latency_ms=latency,
        )
    if error and failed is None:
        run.builder.error(error[1], at=at, terminal=error[0] == MAX_STEPS_ERROR)
    if error and error[0] == MAX_STEPS_ERROR:
        run.out_of_steps = True
    if step.get("is_final_answer") or (error and error[0] == MAX_STEPS_ERROR):
        answer = next((_answer(args) for name, args, _ in calls if name == FINAL_ANSWER_TOOL), None)
        run.answer = answer or _text(step.get("action_output")) or _text(observations)
        run.answered = run.answered or bool(step.get("is_final_answer"))


def _calls(step: Mapping[str, Any], path: Loc) -> list[tuple[str, Any, str | None]]:
    """(name, arguments, call id) of each tool call; the model's request when none ran."""
    key = "tool_calls"
    calls = step.get(key) or []
    if not calls:
        message = step.get("model_output_message")
        if isinstance(message, Mapping):
            key, calls = "model_output_message", message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise PathError(
            (*path, key), f"expected a list of tool calls, found {describe_value(calls)}"
        )
    found = []
    for index, call in enumerate(calls):
        where = (*path, key, index) if key == "tool_calls" else (*path, key, "tool_calls", index)
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise PathError(where, "a tool call needs function.name, a string")
        name = function["name"]
        call_id = call.get("id")
        found.append(
            (name, function.get("arguments"), call_id if isinstance(call_id, str) else None)
        )
    return found


def _split_observations(observations: Any, count: int) -> list[Any]:
    """Each tool's output: smolagents joins parallel calls' outputs with newlines, in call order."""
    if count == 0:
        return []
    text = _text(observations)
    if text is None:
        return [None] * count
    lines = text.split("\n")
    if count > 1 and len(lines) == count:
        return list(lines)
    return [None] * (count - 1) + [text]  # cannot split safely: the whole text on the last call


def _failed_call(tools: list[tuple[str, Any, str | None]], error: tuple[str, str]) -> int | None:
    """Which call an error belongs to: the one its message names, else the last; none if none."""
    if not tools:
        return None
    named = _QUOTED_TOOL.search(error[1])
    if named:
        for index, (name, _, _) in enumerate(tools):
            if name == named.group(1):
                return index
    return len(tools) - 1


def _error(value: Any, path: Loc) -> tuple[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return "", value
    if isinstance(value, Mapping):
        message = value.get("message")
        kind = value.get("type")
        return (kind if isinstance(kind, str) else ""), _text(message) or str(kind or "error")
    if isinstance(value, BaseException):  # a live AgentError
        return type(value).__name__, str(value)
    raise PathError(path, f"expected {{type, message}} or null, found {describe_value(value)}")


def _start(timing: Any, path: Loc) -> float | None:
    if timing is None:
        return None
    if not isinstance(timing, Mapping):
        raise PathError(
            path, f"expected {{start_time, end_time, duration}}, found {describe_value(timing)}"
        )
    return _number(timing.get("start_time"))


def _duration(timing: Any) -> float | None:
    if not isinstance(timing, Mapping):
        return None
    duration = _number(timing.get("duration"))
    if duration is None:
        start, end = _number(timing.get("start_time")), _number(timing.get("end_time"))
        duration = end - start if start is not None and end is not None else None
    return duration * 1000 if duration is not None and duration >= 0 else None


def _finish(
    run: _Run,
    options: TraceOptions,
    *,
    state: Any,
    output: Any,
    agent_id: str | None,
    trace_id: str | None,
) -> ConvertedTrace:
    answer = _text(output) if output is not None else run.answer
    run.builder.answer(answer)
    if isinstance(state, str):
        success = state == "success"
    else:
        success = run.answered and not run.out_of_steps
    source_id = trace_id or "smolagents-" + _digest(run.canonical)
    return assemble(
        run.builder,
        source="smolagents",
        source_id=source_id,
        success=success,
        options=options,
        objective=run.objective,
        fallback_objective=agent_id,
        created_at=run.started,
        result_summary=answer,
        agent_id=agent_id,
        framework="smolagents",
    )


def _answer(arguments: Any) -> str | None:
    if isinstance(arguments, Mapping) and "answer" in arguments:
        return _text(arguments["answer"])
    return _text(arguments)


def _text(value: Any) -> str | None:
    """Message content as text: a string, or the text items of a content list."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
        texts = [item.get("text") for item in value if isinstance(item.get("text"), str)]
        return "\n".join(texts) or None
    return as_text(value) or None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _canonical(step: Mapping[str, Any]) -> Any:
    # The prompt sent to the model (model_input_messages) repeats the whole history: leave it out
    # of the digest so that full and succinct exports of one run get the same id.
    return {key: value for key, value in step.items() if key != "model_input_messages"}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _not_a_step(value: Any) -> str:
    return (
        f"not a smolagents step: {describe_value(value)}; expected a TaskStep {{task}}, "
        "a PlanningStep {plan, timing}, an ActionStep {step_number, timing, ...} or a "
        "FinalAnswerStep {output}, "
        "as agent.memory.get_full_steps() gives them"
    )


__all__ = ["CONTENT_HINT", "FINAL_ANSWER_TOOL", "convert_records", "recognises", "to_trace"]
