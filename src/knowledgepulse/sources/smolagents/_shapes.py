"""The shapes of smolagents' memory step dicts, and readers of their fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources._steps import as_text

ACTION_KEYS = frozenset({"step_number", "timing"})
"""Keys every ``ActionStep`` dict has."""
PLANNING_KEYS = frozenset({"plan", "timing"})
"""Keys every ``PlanningStep`` dict has."""
TASK_KEYS = frozenset({"task", "task_images"})
"""The keys a ``TaskStep`` dict has (``task`` at least)."""
RUN_KEYS = frozenset({"steps", "state"})
"""Keys every ``RunResult`` dict has."""

Loc = tuple[str | int, ...]


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
