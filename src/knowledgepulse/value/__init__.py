"""Trace value: the four dimensions, weight profiles, overrides, and the scorer that joins them."""

from knowledgepulse.value.breakdown import NoveltyOrigin, NoveltySource, ValueBreakdown
from knowledgepulse.value.dimensions import (
    AppliedOverride,
    Dimensions,
    OverrideName,
    TraceFeatures,
    apply_overrides,
    complexity,
    embedding_text,
    novelty,
    outcome_confidence,
    tool_diversity,
)
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.profiles import BUILTIN_PROFILES, ProfileRegistry, ScoringWeights
from knowledgepulse.value.scorer import (
    DEFAULT_THRESHOLD,
    CacheMode,
    TraceValueScorer,
    default_scorer,
    evaluate_value,
    register_profile,
    score_trace,
    score_traces,
    set_default_scorer,
)

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_THRESHOLD",
    "AppliedOverride",
    "CacheMode",
    "Dimensions",
    "NoveltyOrigin",
    "NoveltySource",
    "OverrideName",
    "ProfileRegistry",
    "ScoredItem",
    "ScoringWeights",
    "TraceFeatures",
    "TraceValueScorer",
    "ValueBreakdown",
    "apply_overrides",
    "complexity",
    "default_scorer",
    "embedding_text",
    "evaluate_value",
    "novelty",
    "outcome_confidence",
    "register_profile",
    "score_trace",
    "score_traces",
    "set_default_scorer",
    "tool_diversity",
]
