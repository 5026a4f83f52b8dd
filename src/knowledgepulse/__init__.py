"""knowledgepulse: judge AI agent traces and LLM workflow output, deterministically.

Trace value scoring (:mod:`knowledgepulse.value`), evaluation scorers
(:mod:`knowledgepulse.evals`) and runs on Python data (:mod:`knowledgepulse.runs`): their most
used names are re-exported here. (``redact`` is the redaction package's name: the one-call
redaction is :func:`knowledgepulse.runs.redact`.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from knowledgepulse._version import __version__
from knowledgepulse.errors import KnowledgePulseError

if TYPE_CHECKING:
    from knowledgepulse import integrations
    from knowledgepulse.evals import (
        Scorer,
        ScoreResult,
        load_cases,
        load_suite,
        preset,
        register_scorer,
        run_suite,
    )
    from knowledgepulse.integrations.capture import capture
    from knowledgepulse.novelty import Embedder
    from knowledgepulse.novelty.cache import VectorCache
    from knowledgepulse.novelty.minilm import MiniLMEmbedder
    from knowledgepulse.novelty.static import StaticEmbedder
    from knowledgepulse.runs import annotate, dedupe, score, select
    from knowledgepulse.trace import ReasoningTrace, load_traces, parse_trace
    from knowledgepulse.value import (
        ScoringWeights,
        TraceValueScorer,
        ValueBreakdown,
        evaluate_value,
        score_trace,
    )
    from knowledgepulse.value.scorer import DEFAULT_THRESHOLD, register_profile, score_traces

# Where each lazily imported name lives, under this package.
_HOME_OF = {
    "DEFAULT_THRESHOLD": "value.scorer",
    "Embedder": "novelty",
    "MiniLMEmbedder": "novelty.minilm",
    "ReasoningTrace": "trace",
    "ScoreResult": "evals",
    "Scorer": "evals",
    "ScoringWeights": "value",
    "StaticEmbedder": "novelty.static",
    "TraceValueScorer": "value",
    "ValueBreakdown": "value",
    "VectorCache": "novelty.cache",
    "annotate": "runs",
    "capture": "integrations.capture",
    "dedupe": "runs",
    "evaluate_value": "value",
    "load_cases": "evals",
    "load_suite": "evals",
    "load_traces": "trace",
    "parse_trace": "trace",
    "preset": "evals",
    "register_profile": "value.scorer",
    "register_scorer": "evals",
    "run_suite": "evals",
    "score": "runs",
    "score_trace": "value",
    "score_traces": "value.scorer",
    "select": "runs",
}


# Imported on first use (PEP 562): every `kp` command imports this package (0.05 s, not 0.5 s).
def __getattr__(name: str) -> Any:
    if name == "integrations":  # `kp.integrations.langchain` with no import line
        return importlib.import_module(f"{__name__}.integrations")
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


# The public names, not this module's own imports (`importlib`, `Any`): what a completer offers.
def __dir__() -> list[str]:
    return sorted({*__all__, "integrations", *(name for name in globals() if name[:2] == "__")})


__all__ = [
    "DEFAULT_THRESHOLD",
    "Embedder",
    "KnowledgePulseError",
    "MiniLMEmbedder",
    "ReasoningTrace",
    "ScoreResult",
    "Scorer",
    "ScoringWeights",
    "StaticEmbedder",
    "TraceValueScorer",
    "ValueBreakdown",
    "VectorCache",
    "__version__",
    "annotate",
    "capture",
    "dedupe",
    "evaluate_value",
    "integrations",
    "load_cases",
    "load_suite",
    "load_traces",
    "parse_trace",
    "preset",
    "register_profile",
    "register_scorer",
    "run_suite",
    "score",
    "score_trace",
    "score_traces",
    "select",
]
