"""knowledgepulse: judge AI agent traces and LLM workflow output, deterministically.

Trace value scoring (:mod:`knowledgepulse.value`) and evaluation scorers
(:mod:`knowledgepulse.evals`): their most used names are re-exported here.
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

_HOMES = {
    "knowledgepulse.evals": (
        "ScoreResult",
        "Scorer",
        "load_cases",
        "load_suite",
        "preset",
        "register_scorer",
        "run_suite",
    ),
    "knowledgepulse.integrations.capture": ("capture",),
    "knowledgepulse.novelty": ("Embedder",),
    "knowledgepulse.novelty.cache": ("VectorCache",),
    "knowledgepulse.novelty.minilm": ("MiniLMEmbedder",),
    "knowledgepulse.trace": ("ReasoningTrace", "load_traces", "parse_trace"),
    "knowledgepulse.value": (
        "DEFAULT_THRESHOLD",
        "ScoringWeights",
        "TraceValueScorer",
        "ValueBreakdown",
        "evaluate_value",
        "register_profile",
        "score_trace",
        "score_traces",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


# Imported on first use (PEP 562): every `kp` command imports this package (0.05 s, not 0.5 s).
def __getattr__(name: str) -> Any:
    if name == "integrations":  # `kp.integrations.langchain` with no import line
        return importlib.import_module(f"{__name__}.integrations")
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME_OF, "integrations"})


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
    "capture",
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
    "score_trace",
    "score_traces",
]
