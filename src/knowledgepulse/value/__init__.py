"""Trace value: the four dimensions, weight profiles, overrides, and the scorer that joins them.

The formulas are in ``dimensions``, the weight profiles in ``profiles``, the breakdown's parts
in ``breakdown``, the scorer and the process-wide default in ``scorer``.
"""

from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.profiles import ScoringWeights
from knowledgepulse.value.scorer import TraceValueScorer, evaluate_value, score_trace

__all__ = [
    "ScoredItem",
    "ScoringWeights",
    "TraceValueScorer",
    "ValueBreakdown",
    "evaluate_value",
    "score_trace",
]
