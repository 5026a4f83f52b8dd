"""The three rule overrides, applied in order after the weighted sum."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from knowledgepulse.value.dimensions import TraceFeatures, without_noise

OverrideName = Literal["single_thought", "error_recovery_bonus", "low_tool_diversity"]

SINGLE_THOUGHT_SCORE = 0.1
RECOVERY_BONUS = 0.1
RECOVERY_BONUS_MIN_RECOVERIES = 3  # "more than 2", as the code in every seed says
LOW_DIVERSITY_PENALTY = 0.1


@dataclass(frozen=True, slots=True)
class AppliedOverride:
    """An override whose condition held, and the score before and after it.

    Attributes:
        name: ``single_thought``, ``error_recovery_bonus`` or ``low_tool_diversity``.
        before: the score it was given.
        after: the score it gave (equal to ``before`` when a cap left nothing to change).
        reason: the condition that held, in words.
    """

    name: OverrideName
    before: float
    after: float
    reason: str

    def to_dict(self) -> dict[str, object]:
        """Plain data for reports."""
        return {
            "name": self.name,
            "before": self.before,
            "after": self.after,
            "reason": self.reason,
        }


def apply_overrides(
    score: float, features: TraceFeatures
) -> tuple[float, tuple[AppliedOverride, ...]]:
    """Apply the overrides in order and return the score and every override that fired.

    1. one step, a ``thought``: the score becomes 0.1;
    2. more than 2 error recoveries and success: +0.1, at most 1;
    3. tools used but at most one distinct tool: -0.1, at least 0.

    Rule 1 goes first; rules 2 and 3 still apply on top of it when their conditions hold.
    """
    applied: list[AppliedOverride] = []
    if features.single_thought:
        applied.append(
            AppliedOverride(
                "single_thought", score, SINGLE_THOUGHT_SCORE, "the trace is a single thought"
            )
        )
        score = SINGLE_THOUGHT_SCORE
    if features.error_recoveries >= RECOVERY_BONUS_MIN_RECOVERIES and features.success:
        after = without_noise(min(1.0, score + RECOVERY_BONUS))
        reason = f"{features.error_recoveries} error recoveries (> 2) and the task succeeded"
        applied.append(AppliedOverride("error_recovery_bonus", score, after, reason))
        score = after
    if features.uses_tools and features.unique_tools <= 1:
        after = without_noise(max(0.0, score - LOW_DIVERSITY_PENALTY))
        reason = "tools are used, but only one distinct tool"
        applied.append(AppliedOverride("low_tool_diversity", score, after, reason))
        score = after
    return score, tuple(applied)
