"""TraceValueScorer.score_embedded: vectors made elsewhere score as the scorer's own would."""

from __future__ import annotations

import numpy as np
import pytest

from knowledgepulse.errors import VectorError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import trace_json

OBJECTIVES = [
    "Find the cheapest flight from Lisbon to Oslo",
    "Find the cheapest flight from Lisbon to Oslo today",
    "Summarise the quarterly sales report for the board",
    "Book a table for two near the river",
]
TRACES = [
    trace_json(trace_id=f"kp:trace:{i}", objective=objective)
    for i, objective in enumerate(OBJECTIVES)
]


def test_given_vectors_score_as_score_many() -> None:
    """The scorer's own vectors, handed back, give score_many's breakdowns (online cache)."""
    embedder = HashingEmbedder()
    vectors = TraceValueScorer(embedder=embedder).embed_traces(TRACES)
    assert vectors is not None

    given = TraceValueScorer(embedder=None).score_embedded(TRACES, vectors)
    own = TraceValueScorer(embedder=embedder).score_many(TRACES)

    assert [b.to_dict() for b in given] == [b.to_dict() for b in own]
    assert [b.novelty.source for b in given] == ["empty_cache"] + ["embedding"] * 3
    assert given[1].novelty.nearest_id == "kp:trace:0"


def test_windows_are_reported_only_when_known_for_every_trace() -> None:
    """Counts for every trace reach the breakdowns; counts of another length are dropped."""
    scorer = TraceValueScorer(embedder=None, cache=VectorCache(dimensions=8))
    vectors = np.eye(len(TRACES), 8, dtype=np.float32)

    known = scorer.score_embedded(
        TRACES, vectors, windows=[1, 2, 3, 4], capped=[False, False, True, False]
    )
    partial = TraceValueScorer(embedder=None, cache=VectorCache(dimensions=8)).score_embedded(
        TRACES, vectors, windows=[1, 2], capped=[False, True]
    )

    assert [b.novelty.windows for b in known] == [1, 2, 3, 4]
    assert [b.novelty.capped for b in known] == [False, False, True, False]
    assert [b.novelty.windows for b in partial] == [None] * len(TRACES)


@pytest.mark.parametrize("shape", [(3, 8), (4, 9), (32,)])
def test_vectors_of_the_wrong_shape_are_a_vector_error(shape: tuple[int, ...]) -> None:
    """Not one row per trace, or not the cache's width: refused before the cache changes."""
    scorer = TraceValueScorer(embedder=None, cache=VectorCache(dimensions=8))
    with pytest.raises(VectorError, match="score_embedded got vectors of shape"):
        scorer.score_embedded(TRACES, np.zeros(shape, dtype=np.float32))
    assert len(scorer.cache) == 0
