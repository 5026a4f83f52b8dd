"""A smolagents run handed over live (a ``RunResult``, the agent, its memory, its steps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowledgepulse._util.jsonpath import as_string
from knowledgepulse.errors import ConversionError
from knowledgepulse.sources._envelope import PathError, TraceOptions
from knowledgepulse.sources.smolagents._run import RUN_KEYS, Run, finish, number, runs_of, tell
from knowledgepulse.trace import TraceItem


def to_trace(
    run: Any,
    *,
    domain: str | None = None,
    confidence: float | None = None,
    agent_id: str | None = None,
    trace_id: str | None = None,
) -> TraceItem:
    """A smolagents run as a ``ReasoningTrace``.

    Args:
        run: a ``RunResult`` (``agent.run(task, return_full_result=True)``), the agent itself or
            its ``agent.memory``, the step dicts of ``agent.memory.get_full_steps()``, or a list
            of memory step objects. Its last run: with ``agent.run(task, reset=False)`` the
            memory keeps the earlier runs before it, each its own trace (a file of the steps
            gives one trace per run).
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
    run_data = Run(started=started)
    first, last_run = runs_of(steps)[-1] if steps else (0, [])
    for index, step in enumerate(last_run, start=first):
        try:
            tell(run_data, step, (index,))
        except PathError as error:
            raise ConversionError(f"steps[{index}]: {error.message}") from error
    return finish(
        run_data,
        TraceOptions(domain=domain, confidence=confidence),
        state=state,
        output=output,
        agent_id=agent_id or name,
        trace_id=trace_id,
    )


STREAM_EVENTS = (
    "expected a smolagents run, not the events of agent.run(task, stream=True), which hold no "
    "TaskStep (the task): once the stream ends, pass the agent itself or agent.memory"
)
"""Why the events a streamed run yields are refused, and what to pass instead."""
_EVENTS = frozenset({"ToolCall", "ToolOutput", "ActionOutput", "ChatMessageStreamDelta"})
"""The classes of what ``agent.run(task, stream=True)`` yields besides memory steps."""


def _stream_event(item: Any) -> bool:
    kind = type(item)
    return kind.__name__ in _EVENTS and kind.__module__.startswith("smolagents")


def _unpack(run: Any) -> tuple[Sequence[Any], Any, Any, float | None, str | None]:
    """(steps, state, output, start time, agent name) of whatever the user handed over."""
    name = getattr(run, "name", None) if hasattr(run, "memory") else None
    memory = getattr(run, "memory", run)
    if hasattr(memory, "get_full_steps"):
        return memory.get_full_steps(), None, None, None, as_string(name)
    if isinstance(run, Mapping) and run.keys() >= RUN_KEYS:
        timing = run.get("timing") or {}
        started = number(timing.get("start_time")) if isinstance(timing, Mapping) else None
        return run["steps"], run.get("state"), run.get("output"), started, None
    if hasattr(run, "steps") and hasattr(run, "state"):
        timing = getattr(run, "timing", None)
        return run.steps, run.state, run.output, number(getattr(timing, "start_time", None)), None
    if isinstance(run, list | tuple):
        if any(_stream_event(item) for item in run):
            raise ConversionError(STREAM_EVENTS)
        return run, None, None, None, None
    raise ConversionError(
        f"expected a smolagents RunResult, agent, agent.memory or a list of steps, "
        f"not {type(run).__name__}"
    )
