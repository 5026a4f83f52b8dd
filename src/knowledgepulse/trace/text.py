"""The texts taken from a trace for novelty: its objective, its actions, all of it."""

from __future__ import annotations

from knowledgepulse.trace.models import ReasoningTrace

ACTION_STEP_TYPES = frozenset({"tool_call", "error_recovery"})
"""The step types whose content is what the agent did (rather than read or thought)."""


def objective_text(trace: ReasoningTrace) -> str:
    """The trace's ``task.objective``."""
    return trace.task.objective


def whole_text(trace: ReasoningTrace) -> str:
    """The objective, then every step's content (the specification's text)."""
    contents = " ".join(step.content or "" for step in trace.steps)
    return f"{trace.task.objective} {contents}"


def actions_text(trace: ReasoningTrace) -> str:
    """The content of the steps that act (``tool_call``, ``error_recovery``), in order."""
    return " ".join(step.content or "" for step in trace.steps if step.type in ACTION_STEP_TYPES)
