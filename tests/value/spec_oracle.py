"""The specification's arithmetic (trace-value.md), written apart from kp's code.

One oracle for the tests and ``bench/recompute_scores.py``: counts are taken from the raw trace
JSON as the specification words them, weights from its table, the overrides in its order.
"""

from __future__ import annotations

from typing import Any

# The specification's table ("Weight profiles"), in the formula's order: C, N, D, O.
SPEC_PROFILES = {
    "default": (0.25, 0.35, 0.15, 0.25),
    "finance": (0.20, 0.25, 0.10, 0.45),
    "code": (0.20, 0.30, 0.30, 0.20),
    "medical": (0.15, 0.20, 0.10, 0.55),
    "customer_service": (0.20, 0.30, 0.20, 0.30),
}
DIMENSION_NAMES = ("complexity", "novelty", "tool_diversity", "outcome_confidence")


def by_hand(trace: dict[str, Any], novelty: float) -> dict[str, Any]:
    """The specification's arithmetic for one raw trace, given its novelty N.

    Returns the profile, weights, dimensions, weighted sum, each override as ``(name, before,
    after)`` and the score.
    """
    steps = trace["steps"]
    types = [step["type"] for step in steps]
    tools = {step["tool"]["name"] for step in steps if step.get("tool") is not None}
    recoveries = types.count("error_recovery")
    c = min(
        1,
        len(set(types)) / 4 * 0.5 + (0.3 if recoveries > 0 else 0) + min(len(steps), 20) / 20 * 0.2,
    )
    d = min(1, len(tools) / max(1, len(steps)) * 3)
    meta = trace["metadata"]
    o = trace["outcome"]["confidence"] * (1.0 if meta["success"] else 0.3)
    domain = meta["task_domain"]
    weights = SPEC_PROFILES.get(domain, SPEC_PROFILES["default"])
    dimensions = (c, novelty, d, o)
    total = sum(value * weight for value, weight in zip(dimensions, weights, strict=True))
    overrides = []
    score = total
    if len(steps) == 1 and types[0] == "thought":
        overrides.append(("single_thought", score, 0.1))
        score = 0.1
    if recoveries > 2 and meta["success"]:
        overrides.append(("error_recovery_bonus", score, min(1, score + 0.1)))
        score = min(1, score + 0.1)
    if len(tools) <= 1 and tools:
        overrides.append(("low_tool_diversity", score, max(0, score - 0.1)))
        score = max(0, score - 0.1)
    return {
        "profile": domain if domain in SPEC_PROFILES else "default",
        "weights": weights,
        "dimensions": dimensions,
        "weighted_sum": total,
        "overrides": overrides,
        "score": min(1, max(0, score)),
    }
