"""How ``kp score`` pairs each trace with its breakdown: as a stream, or the whole input first."""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

from knowledgepulse.trace.load import LoadedTrace
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.curation import MinScore
    from knowledgepulse.trace.models import ReasoningTrace
    from knowledgepulse.value.breakdown import ValueBreakdown


def scored_stream(
    scorer: TraceValueScorer, traces: Iterator[LoadedTrace]
) -> Iterator[tuple[LoadedTrace, ValueBreakdown]]:
    """Each trace with its breakdown, in order; at most one batch is held at a time."""
    pending: deque[LoadedTrace] = deque()

    def feed() -> Iterator[ReasoningTrace]:
        for loaded in traces:
            pending.append(loaded)
            yield loaded.trace

    for breakdown in scorer.iter_scores(feed()):
        yield pending.popleft(), breakdown


def scored_whole(
    scorer: TraceValueScorer,
    traces: list[LoadedTrace],
    *,
    order: str,
    corpus: bool,
    min_score: MinScore | None,
) -> list[tuple[LoadedTrace, ValueBreakdown]]:
    """Every trace with its breakdown, for the modes that need the whole input first."""
    from knowledgepulse.curation import score_corpus, time_order  # noqa: PLC0415 - numpy

    if corpus:
        breakdowns = score_corpus(scorer, traces).breakdowns
    else:
        if order == "time":
            traces = [traces[i] for i in time_order(traces)]
        breakdowns = scorer.score_many(loaded.trace for loaded in traces)
    if min_score is not None and min_score.percentile is not None:
        # The threshold is known only now: the verdicts are recomputed against it.
        threshold = min_score.resolve([b.score for b in breakdowns])
        breakdowns = [dataclasses.replace(b, threshold=threshold) for b in breakdowns]
    return list(zip(traces, breakdowns, strict=True))
