"""Builders for traces in tests: a valid trace by default, every part overridable."""

from __future__ import annotations

import copy
from typing import Any

from knowledgepulse.trace.models import ReasoningTrace


def step(
    step_id: int, kind: str, content: str | None = None, tool: str | None = None
) -> dict[str, Any]:
    """One step as JSON."""
    data: dict[str, Any] = {"step_id": step_id, "type": kind}
    if content is not None:
        data["content"] = content
    if tool is not None:
        data["tool"] = {"name": tool}
    return data


def steps(*kinds_and_tools: str | tuple[str, str]) -> list[dict[str, Any]]:
    """Steps from kinds, or (kind, tool) pairs, numbered from 0."""
    built = []
    for number, spec in enumerate(kinds_and_tools):
        kind, tool = spec if isinstance(spec, tuple) else (spec, None)
        built.append(step(number, kind, f"step {number}: {kind}", tool))
    return built


def trace_json(
    *,
    trace_id: str = "kp:trace:test-1",
    domain: str = "testing",
    success: bool = True,
    confidence: float = 1.0,
    objective: str = "Find the cheapest flight from Lisbon to Oslo",
    step_list: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid trace as parsed JSON: the spec's worked example unless told otherwise."""
    data: dict[str, Any] = {
        "@context": "https://openknowledgepulse.org/schema/v1",
        "@type": "ReasoningTrace",
        "id": trace_id,
        "metadata": {
            "created_at": "2026-01-31T12:00:00Z",
            "task_domain": domain,
            "success": success,
            "quality_score": 0.0,
            "visibility": "network",
            "privacy_level": "aggregated",
        },
        "task": {"objective": objective},
        "steps": copy.deepcopy(step_list)
        if step_list is not None
        else steps("thought", ("tool_call", "search"), "observation"),
        "outcome": {"result_summary": "done", "confidence": confidence},
    }
    data.update(extra)
    return data


def make_trace(**kwargs: Any) -> ReasoningTrace:
    """A validated trace (see :func:`trace_json` for the arguments)."""
    return ReasoningTrace.model_validate(trace_json(**kwargs))
