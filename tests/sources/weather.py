"""What every weather-agent test expects: the call fails once, is retried, and is answered."""

from __future__ import annotations

from knowledgepulse.trace.models import ReasoningTrace

RETRY_SHAPE = [
    ("thought", None),
    ("tool_call", "get_weather"),
    ("observation", "get_weather"),
    ("thought", None),
    ("error_recovery", "get_weather"),
    ("observation", "get_weather"),
    ("thought", None),
]
"""(step type, tool name) of the weather agent's run, whatever framework recorded it."""


def step_shape(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    """(step type, tool name) of each step."""
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]
