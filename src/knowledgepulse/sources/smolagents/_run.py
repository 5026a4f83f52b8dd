"""One smolagents run as it is read: each step told to a builder, then the envelope assembled.

The shapes of smolagents' memory step dicts, and readers of their fields, come first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value
from knowledgepulse.records.json_values import Loc
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.trace import TraceItem

ACTION_KEYS = frozenset({"step_number", "timing"})
"""Keys every ``ActionStep`` dict has."""
PLANNING_KEYS = frozenset({"plan", "timing"})
"""Keys every ``PlanningStep`` dict has."""
TASK_KEYS = frozenset({"task", "task_images"})
"""The keys a ``TaskStep`` dict has (``task`` at least)."""
RUN_KEYS = frozenset({"steps", "state"})
"""Keys every ``RunResult`` dict has."""


def not_a_step(value: Any) -> str:
    """Why ``value`` is no smolagents step, and the shapes it could have had."""
    return (
        f"not a smolagents step: {describe_value(value)}; expected a TaskStep {{task}}, "
        "a PlanningStep {plan, timing}, an ActionStep {step_number, timing, ...} or a "
        "FinalAnswerStep {output}, "
        "as agent.memory.get_full_steps() gives them"
    )


def text(value: Any) -> str | None:
    """Message content as text: a string, or the text items of a content list."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
        texts = [item.get("text") for item in value if isinstance(item.get("text"), str)]
        return "\n".join(texts) or None
    return as_text(value) or None


def number(value: Any) -> float | None:
    """A JSON number as a float; ``None`` for anything else (booleans too)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def step_error(value: Any, path: Loc) -> tuple[str, str] | None:
    """An ``ActionStep``'s ``error`` as (its type, its message); ``None`` when there is none.

    Raises:
        PathError: the error is neither null, a string, ``{type, message}`` nor an exception.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return "", value
    if isinstance(value, Mapping):
        message = value.get("message")
        kind = value.get("type")
        return (kind if isinstance(kind, str) else ""), text(message) or str(kind or "error")
    if isinstance(value, BaseException):  # a live AgentError
        return type(value).__name__, str(value)
    raise PathError(path, f"expected {{type, message}} or null, found {describe_value(value)}")


def start_time(timing: Any, path: Loc) -> float | None:
    """When a step started, from its ``timing``.

    Raises:
        PathError: ``timing`` is neither null nor a mapping.
    """
    if timing is None:
        return None
    if not isinstance(timing, Mapping):
        raise PathError(
            path, f"expected {{start_time, end_time, duration}}, found {describe_value(timing)}"
        )
    return number(timing.get("start_time"))


def duration_ms(timing: Any) -> float | None:
    """How long a step took, in milliseconds, from its ``timing``; ``None`` when unknown."""
    if not isinstance(timing, Mapping):
        return None
    duration = number(timing.get("duration"))
    if duration is None:
        start, end = number(timing.get("start_time")), number(timing.get("end_time"))
        duration = end - start if start is not None and end is not None else None
    return duration * 1000 if duration is not None and duration >= 0 else None


CONTENT_HINT = (
    "export the full steps: agent.run(task, return_full_result=True).steps or "
    "agent.memory.get_full_steps()"
)
"""How to get smolagents steps that carry the model's text."""
FINAL_ANSWER_TOOL = "final_answer"
"""The tool a smolagents agent calls to answer: its argument is the answer, not a tool call."""
MAX_STEPS_ERROR = "AgentMaxStepsError"
"""The error type smolagents records when a run ran out of steps (the run failed)."""

_QUOTED_TOOL = re.compile(r"tool '([^']+)'")


@dataclass
class Run:
    """One run as read so far: its steps told to a builder, and its envelope."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    objective: str | None = None
    started: float | None = None
    answered: bool = False
    out_of_steps: bool = False
    answer: str | None = None
    canonical: list[Any] = field(default_factory=list)
    model: str | None = None
    """The model the last step's provider response names (``model_output_message.raw.model``)."""


def runs_of(steps: Sequence[Any]) -> list[tuple[int, list[Any]]]:
    """Each run in a memory's steps, with the index of its first step; a ``TaskStep`` starts one.

    ``agent.run`` appends a ``TaskStep``, then that run's steps; with ``reset=False`` the memory
    (and ``RunResult.steps``) keeps the earlier runs before it: the model's context, but each
    ``run`` call is a run of its own, with its own task, answer and state.
    """
    found: list[tuple[int, list[Any]]] = []
    for index, step in enumerate(steps):
        plain = as_step(step)
        if not found or is_task(plain):
            found.append((index, []))
        found[-1][1].append(plain)
    return found


def as_step(step: Any) -> Any:
    """A step as its dict: a live memory step becomes its JSON shape; anything else is kept."""
    if hasattr(step, "dict") and not isinstance(step, Mapping):
        return step.dict()
    return step


def is_task(step: Any) -> bool:
    """Whether a step (as its dict) is a ``TaskStep``."""
    return isinstance(step, Mapping) and "task" in step and step.keys() <= TASK_KEYS


def tell(run: Run, step: Any, path: Loc) -> None:
    """Tell the builder what one step did.

    Raises:
        PathError: the step, or a part of it, cannot be read (its path is in the error).
    """
    step = as_step(step)
    if not isinstance(step, Mapping):
        raise PathError(path, not_a_step(step))
    run.canonical.append(_canonical(step))
    if is_task(step):
        if run.objective is None and isinstance(step["task"], str):
            run.objective = step["task"]
        return
    if step.keys() == {"output"}:  # FinalAnswerStep
        run.answer = text(step["output"])
        run.answered = True
        return
    if "timing" not in step:
        raise PathError(path, not_a_step(step))
    at = start_time(step.get("timing"), (*path, "timing"))
    if run.started is None:
        run.started = at
    run.model = _model(step) or run.model
    if "plan" in step:
        run.builder.thought(text(step.get("plan")), at=at)
        return
    _tell_action(run, step, path, at)


def _tell_action(run: Run, step: Mapping[str, Any], path: Loc, at: float | None) -> None:
    calls = _calls(step, path)
    run.builder.thought(_model_said(text(step.get("model_output")), calls), at=at)
    tools = [call for call in calls if call[0] != FINAL_ANSWER_TOOL]
    latency = duration_ms(step.get("timing"))
    error = step_error(step.get("error"), (*path, "error"))
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
        run.answer = answer or text(step.get("action_output")) or text(observations)
        run.answered = run.answered or bool(step.get("is_final_answer"))


def _model_said(output: str | None, calls: list[tuple[str, Any, str | None]]) -> str | None:
    """What the model said in a step: its output without what ToolCallingAgent appends to it.

    Since 1.20 the agent adds a line a call it ran, ``Tool call <id>: calling '<name>' with
    arguments: ...``, after the model's own text: a restatement of the call, no words of the
    model's (read as a thought, each call had a thought of its own before it).
    """
    if not output:
        return output
    cuts = [
        found
        for name, _, call_id in calls
        if call_id is not None
        and (found := output.find(f"Tool call {call_id}: calling '{name}' with arguments: ")) >= 0
        and (found == 0 or output[found - 1] == "\n")
    ]
    return output[: min(cuts)].rstrip() if cuts else output


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
        function = as_object(call).get("function")
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise PathError(where, "a tool call needs function.name, a string")
        name = function["name"]
        call_id = call.get("id")
        found.append((name, function.get("arguments"), as_string(call_id)))
    return found


def _split_observations(observations: Any, count: int) -> list[Any]:
    """Each tool's output: smolagents joins parallel calls' outputs with newlines, in call order."""
    if count == 0:
        return []
    whole = text(observations)
    if whole is None:
        return [None] * count
    lines = whole.split("\n")
    if count > 1 and len(lines) == count:
        return list(lines)
    return [None] * (count - 1) + [whole]  # cannot split safely: the whole text on the last call


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


def _model(step: Mapping[str, Any]) -> str | None:
    """The model a step's provider response names, if any.

    That is the ``model`` of its ``ChatMessage.raw`` (the ChatCompletion, or LiteLLM's response,
    as smolagents keeps it).
    """
    message = step.get("model_output_message")
    raw = message.get("raw") if isinstance(message, Mapping) else None
    model = raw.get("model") if isinstance(raw, Mapping) else None
    return model if isinstance(model, str) and model.strip() else None


def _answer(arguments: Any) -> str | None:
    if isinstance(arguments, Mapping) and "answer" in arguments:
        return text(arguments["answer"])
    return text(arguments)


def finish(
    run: Run,
    options: TraceOptions,
    *,
    state: Any,
    output: Any,
    agent_id: str | None,
    trace_id: str | None,
) -> TraceItem:
    """The run as a trace: its answer, success and envelope.

    Raises:
        ConversionError: the run has no step to make a trace of.
    """
    answer = text(output) if output is not None else run.answer
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
        model=run.model,
        content_hint=CONTENT_HINT,
    )


def _canonical(step: Mapping[str, Any]) -> Any:
    # The prompt sent to the model (model_input_messages) repeats the whole history: leave it out
    # of the digest so that full and succinct exports of one run get the same id.
    return {key: value for key, value in step.items() if key != "model_input_messages"}


def _digest(value: Any) -> str:
    serialised = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(serialised.encode("utf-8", "surrogatepass")).hexdigest()[:32]
