"""The four dimensions of a trace's value and the three rule overrides, pure functions.

Each dimension is a function of numbers taken from the trace; the overrides apply after the
weighted sum. The formulas never see the embedder: novelty takes the similarity it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from knowledgepulse.trace.models import ReasoningTrace

STEP_TYPES = 4
"""How many step types there are (thought, tool_call, observation, error_recovery)."""

STEP_COUNT_CAP = 20
"""Steps beyond this add nothing to complexity (the seeds' factor table: "capped at 20")."""

EMPTY_CACHE_NOVELTY = 0.5
"""Novelty of the first trace a cache sees: nothing to compare with, so neither novel nor not."""

NO_EMBEDDER_NOVELTY = 0.5
"""Novelty when no embedder is available: the neutral middle, so other dimensions decide."""

FAILED_OUTCOME_FACTOR = 0.3
"""How much of its confidence a failed trace keeps in the outcome dimension."""

SINGLE_THOUGHT_SCORE = 0.1
RECOVERY_BONUS = 0.1
RECOVERY_BONUS_MIN_RECOVERIES = 3  # "more than 2", as the code in every seed says
LOW_DIVERSITY_PENALTY = 0.1

ValueOrigin = Literal["trace", "argument", "metadata", "default"]
"""Where a trace's domain or confidence came from: ``trace`` for a trace written as it is; a
converted trace's ``metadata.source`` says whether the user gave it (``argument``), the run's
metadata named it (``metadata``) or it is the documented ``default``.
"""
OverrideName = Literal["single_thought", "error_recovery_bonus", "low_tool_diversity"]
_ORIGINS: frozenset[str] = frozenset(("argument", "metadata", "default"))


Rounding = Callable[[float], float]
"""What the ``to_dict`` methods apply to each number they write (the reports round)."""


def unrounded(number: float) -> float:
    """The default :data:`Rounding`: none."""
    return number


@dataclass(frozen=True, slots=True)
class Dimensions:
    """The four dimension values, each in [0, 1] (or their weights: :class:`ScoringWeights`)."""

    complexity: float
    novelty: float
    tool_diversity: float
    outcome_confidence: float

    def as_tuple(self) -> tuple[float, float, float, float]:
        """``(complexity, novelty, tool_diversity, outcome_confidence)``."""
        return (self.complexity, self.novelty, self.tool_diversity, self.outcome_confidence)

    def to_dict(self, *, rounding: Rounding = unrounded) -> dict[str, float]:
        """The values by dimension name, in the formula's order (each through ``rounding``)."""
        return {name: rounding(getattr(self, name)) for name in DIMENSION_NAMES}


DIMENSION_NAMES = tuple(field.name for field in fields(Dimensions))
"""The dimensions' names, in the formula's order (``fields()`` is slow to call for each row)."""


@dataclass(frozen=True, slots=True)
class TraceFeatures:
    """The counts the formulas and overrides read, taken once from a trace.

    ``unique_tools`` counts the distinct ``tool.name`` values; ``single_thought``: the trace is
    one ``thought`` step; ``success`` and ``confidence`` are the trace's, and ``domain_source``
    and ``confidence_source`` say where its domain and confidence came from.
    """

    step_count: int
    unique_step_types: int
    error_recoveries: int
    unique_tools: int
    uses_tools: bool
    single_thought: bool
    success: bool
    confidence: float
    domain_source: ValueOrigin = "trace"
    confidence_source: ValueOrigin = "trace"

    @classmethod
    def of(cls, trace: ReasoningTrace) -> TraceFeatures:
        """Count what the formulas need from a trace."""
        steps = trace.steps
        types = [step.type for step in steps]
        tools = {step.tool.name for step in steps if step.tool is not None}
        # metadata.source is an extra: model_extra spares pydantic's attribute fallback, which
        # raises and catches an error for every trace without one.
        source = (trace.metadata.model_extra or {}).get("source")
        return cls(
            step_count=len(steps),
            unique_step_types=len(set(types)),
            error_recoveries=types.count("error_recovery"),
            unique_tools=len(tools),
            # Every tool adds its name ("" included), so any tool leaves the set non-empty.
            uses_tools=bool(tools),
            single_thought=types == ["thought"],
            success=trace.metadata.success,
            confidence=trace.outcome.confidence,
            domain_source=_origin(source, "domain_source"),
            confidence_source=_origin(source, "confidence_source"),
        )


def _origin(source: Any, key: str) -> ValueOrigin:
    """The origin a converted trace records under ``metadata.source``, else ``trace``."""
    value = source.get(key) if isinstance(source, dict) else None
    return value if value in _ORIGINS else "trace"


def without_noise(value: float) -> float:
    """``value`` to 12 decimal places: the binary noise of a sum goes, nothing else moves.

    Floats make ``0.2*0.425 + 0.25*0.5 + 0.1*1.0 + 0.45*0.92`` ``0.7240000000000001``; this gives
    0.724 (a change under 5e-13). For |value| <= 1 it is ``round(value, 12)``, twenty times faster.
    """
    return round(value * 1e12) / 1e12


def complexity(features: TraceFeatures) -> float:
    """Complexity: variety of step types, any error recovery, and length.

    ``C = min(1, uniqueTypes/4*0.5 + (errorRecovery > 0 ? 0.3 : 0) + min(steps, 20)/20*0.2)``.

    The step-count factor stops at 0.2 (20 steps), as the seeds' factor table says; the
    TypeScript reference lets it grow past that for longer traces.
    """
    type_variety = features.unique_step_types / STEP_TYPES * 0.5
    recovery = 0.3 if features.error_recoveries > 0 else 0.0
    length = min(features.step_count, STEP_COUNT_CAP) / STEP_COUNT_CAP * 0.2
    return without_noise(min(1.0, type_variety + recovery + length))


def novelty(max_similarity: float, calibration: Callable[[float], float] | None = None) -> float:
    """``N = 1 - maxCosineSimilarity``, clamped to [0, 1], then through ``calibration`` if any.

    Cosine similarity can be negative (the reference then returns N > 1) or, through float
    rounding, slightly above 1; the clamp keeps N a proportion. An embedder on another scale
    than MiniLM's (the static table) brings a monotone ``calibration`` of [0, 1] onto it, so
    the sharing threshold keeps its meaning (:mod:`knowledgepulse.novelty.calibration`).
    """
    raw = min(1.0, max(0.0, 1.0 - max_similarity))
    return raw if calibration is None else calibration(raw)


def tool_diversity(features: TraceFeatures) -> float:
    """``D = min(1, uniqueTools / max(1, steps) * 3)``."""
    return without_noise(min(1.0, features.unique_tools / max(1, features.step_count) * 3))


def outcome_confidence(features: TraceFeatures) -> float:
    """``O = confidence * (1.0 if success else 0.3)``."""
    return without_noise(features.confidence * (1.0 if features.success else FAILED_OUTCOME_FACTOR))


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
        return asdict(self)


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
        reason = "the trace is a single thought"
        applied.append(AppliedOverride("single_thought", score, SINGLE_THOUGHT_SCORE, reason))
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
