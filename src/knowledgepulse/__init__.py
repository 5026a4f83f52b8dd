"""knowledgepulse: judge AI agent traces and LLM workflow output, deterministically.

Two halves share one package: trace value scoring (:mod:`knowledgepulse.value`, how valuable a
``ReasoningTrace`` is to share) and evaluation scorers (:mod:`knowledgepulse.evals`, how an LLM
workflow's output compares with the expected one). The most used names are re-exported here.
"""

from knowledgepulse._version import __version__
from knowledgepulse.errors import KnowledgePulseError
from knowledgepulse.evals import (
    Scorer,
    ScoreResult,
    load_cases,
    load_suite,
    preset,
    register_scorer,
    run_suite,
)
from knowledgepulse.novelty import Embedder, MiniLMEmbedder, VectorCache
from knowledgepulse.trace import ReasoningTrace, load_traces, parse_trace
from knowledgepulse.value import (
    DEFAULT_THRESHOLD,
    ScoringWeights,
    TraceValueScorer,
    ValueBreakdown,
    evaluate_value,
    register_profile,
    score_trace,
    score_traces,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "Embedder",
    "KnowledgePulseError",
    "MiniLMEmbedder",
    "ReasoningTrace",
    "ScoreResult",
    "Scorer",
    "ScoringWeights",
    "TraceValueScorer",
    "ValueBreakdown",
    "VectorCache",
    "__version__",
    "evaluate_value",
    "load_cases",
    "load_suite",
    "load_traces",
    "parse_trace",
    "preset",
    "register_profile",
    "register_scorer",
    "run_suite",
    "score_trace",
    "score_traces",
]
