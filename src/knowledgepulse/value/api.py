"""The seed's module-level API over a process-wide default scorer."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.profiles import ScoringWeights
from knowledgepulse.value.scorer import TraceInput, TraceValueScorer

_default: TraceValueScorer | None = None
_default_lock = threading.Lock()


def default_scorer() -> TraceValueScorer:
    """The process-wide scorer behind :func:`evaluate_value` (created on first use)."""
    global _default  # noqa: PLW0603 - the seed's API is stateful per process by design
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = TraceValueScorer()
    return _default


def set_default_scorer(scorer: TraceValueScorer | None) -> None:
    """Replace the process-wide scorer (``None``: a fresh default one on next use)."""
    global _default  # noqa: PLW0603 - see default_scorer
    with _default_lock:
        _default = scorer


async def evaluate_value(trace: TraceInput) -> float:
    """Score a trace 0.0-1.0 with the process-wide scorer (the seed's ``evaluateValue``).

    Stateful across calls: each trace joins the default scorer's vector cache, so scoring the
    same trace twice gives a lower novelty the second time. Embedding runs in a worker thread,
    so the event loop is never blocked; concurrent calls are safe.

    Raises:
        TraceValidationError: ``trace`` is a mapping that is not a valid trace.
    """
    return (await default_scorer().evaluate(trace)).score


def score_trace(trace: TraceInput) -> ValueBreakdown:
    """Score a trace with the process-wide scorer and return the breakdown (synchronous)."""
    return default_scorer().score(trace)


def score_traces(traces: Iterable[TraceInput]) -> list[ValueBreakdown]:
    """Score traces in order with the process-wide scorer, embedding them in batches."""
    return default_scorer().score_many(traces)


def register_profile(
    domain: str, weights: ScoringWeights | Mapping[str, Any], *, replace: bool = False
) -> ScoringWeights:
    """Add a weight profile to the process-wide scorer (weights validated)."""
    return default_scorer().register_profile(domain, weights, replace=replace)
