"""Batch novelty in the scorer and corpus paths: batches score as one by one, within 1e-6."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.curation import score_corpus
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, novelty_text
from knowledgepulse.records import Location, Record
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import validate_record
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
from tests.builders import assert_scored_alike, make_trace, trace_json

TOPICS = ["flight refund", "invoice margin", "python retry error", "dose seattle", "search"]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DEFAULT_DIMENSIONS = novelty_text(DEFAULT_NOVELTY_TEXT).dimensions(HashingEmbedder().dimensions)
"""The default representation's vector length with the test embedder."""


def corpus(specs: list[tuple[int, int]]) -> list[ReasoningTrace]:
    """Traces whose ids and objectives repeat, so nearest neighbours tie."""
    return [
        make_trace(trace_id=f"kp:trace:{n}", objective=f"{TOPICS[topic]} task {topic}")
        for n, topic in specs
    ]


specs = st.lists(st.tuples(st.integers(0, 9), st.integers(0, len(TOPICS) - 1)), max_size=14)


class Ticking:
    """A clock that moves on 7 ms at every reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 7.0
        return self.now


@FAST
@given(specs, st.integers(1, 5), st.sampled_from([None, 15.0, 60.0]), st.integers(1, 6))
def test_online_batches_score_as_one_by_one_with_a_window_and_a_ttl(
    items: list[tuple[int, int]], batch_size: int, ttl_ms: float | None, window: int
) -> None:
    """score_many over a small window with a TTL equals score() in turn, cache included."""
    traces = corpus(items)

    def scorer(size: int) -> TraceValueScorer:
        cache = VectorCache(
            max_elements=window, dimensions=DEFAULT_DIMENSIONS, ttl_ms=ttl_ms, clock=Ticking()
        )
        return TraceValueScorer(embedder=HashingEmbedder(), cache=cache, batch_size=size)

    sequential, batched = scorer(1), scorer(batch_size)
    expected = [sequential.score(trace).to_dict() for trace in traces]
    assert_scored_alike([b.to_dict() for b in batched.score_many(traces)], expected)
    assert [(e.id, e.added_at_ms) for e in batched.cache.entries()] == [
        (e.id, e.added_at_ms) for e in sequential.cache.entries()
    ]


@FAST
@given(specs, specs, st.integers(1, 5))
def test_frozen_batches_score_as_one_by_one(
    built_from: list[tuple[int, int]], scored: list[tuple[int, int]], batch_size: int
) -> None:
    """Against a frozen cache, score_many equals score() in turn, each trace's own id left out."""
    builder = TraceValueScorer(embedder=HashingEmbedder())
    builder.score_many(corpus(built_from))
    one, many = (
        TraceValueScorer(
            embedder=HashingEmbedder(), cache=builder.cache, mode="frozen", batch_size=size
        )
        for size in (1, batch_size)
    )
    expected = [one.score(trace).to_dict() for trace in corpus(scored)]
    assert_scored_alike([b.to_dict() for b in many.score_many(corpus(scored))], expected)


def test_batches_do_not_call_the_one_query_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """score_many computes each batch's novelty in blocks, never one nearest() per trace."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("nearest() was called from a batch")

    scorer = TraceValueScorer(embedder=HashingEmbedder(), batch_size=4)
    monkeypatch.setattr(VectorCache, "nearest", refuse)
    breakdowns = scorer.score_many(corpus([(n, n % 2) for n in range(9)]))
    assert [b.novelty.nearest_id for b in breakdowns[2:4]] == ["kp:trace:0", "kp:trace:1"]


def loaded(trace_id: str, objective: str) -> TraceItem:
    result = validate_record(
        Record(Location("t.jsonl"), trace_json(trace_id=trace_id, objective=objective))
    )
    assert isinstance(result, TraceItem)
    return result


@FAST
@given(specs)
def test_corpus_novelty_is_the_leave_one_out_maximum(items: list[tuple[int, int]]) -> None:
    """Each trace's neighbour is a plain float64 loop's within 1e-6, always another id."""
    traces = [loaded(f"kp:trace:{n}", f"{TOPICS[t]} task {t}") for n, t in items]
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    result = score_corpus(scorer, traces)
    assert result.vectors is not None
    grid = result.vectors.astype(np.float64)
    for position, breakdown in enumerate(result.breakdowns):
        others = [
            (float(grid[position] @ grid[k]), traces[k].trace.id)
            for k in range(len(traces))
            if traces[k].trace.id != traces[position].trace.id
        ]
        if not others:
            assert breakdown.novelty.source == "empty_cache"
            continue
        best = max(value for value, _ in others)
        assert breakdown.novelty.similarity == pytest.approx(min(1.0, best), abs=1e-6)
        near_best = {i for value, i in others if value >= best - 1e-6}
        assert breakdown.novelty.nearest_id in near_best
        assert np.isfinite(breakdown.dimensions.novelty)
