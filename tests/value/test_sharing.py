"""A scorer shared: by threads (as sequential calls give), never by pickling (one clear error)."""

from __future__ import annotations

import copy
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
from tests.builders import make_trace

WORDS = ["flight", "Lisbon", "Oslo", "refund", "payment", "test", "logger", "import", "hotel"]


def traces_of(objectives: list[list[str]]) -> list[ReasoningTrace]:
    return [
        make_trace(trace_id=f"kp:trace:{index}", objective=" ".join(words))
        for index, words in enumerate(objectives)
    ]


OBJECTIVES = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), max_size=24)


@settings(max_examples=15, deadline=None)
@given(objectives=OBJECTIVES, seen=st.integers(0, 8))
def test_threads_sharing_a_frozen_scorer_get_the_sequential_breakdowns(
    objectives: list[list[str]], seen: int
) -> None:
    """16 threads scoring at once through one frozen scorer get what one-by-one calls get."""
    traces = traces_of(objectives)
    cache = TraceValueScorer(embedder=HashingEmbedder())
    cache.score_many(traces[:seen])  # a cache holding some of them: nearest ids, held-own ids
    one = TraceValueScorer(embedder=HashingEmbedder(), cache=cache.cache, mode="frozen")
    expected = [one.score(trace) for trace in traces]
    with ThreadPoolExecutor(16) as pool:
        assert list(pool.map(one.score, traces)) == expected


@settings(max_examples=15, deadline=None)
@given(objectives=OBJECTIVES)
def test_threads_sharing_an_online_scorer_add_each_trace_to_the_cache_once(
    objectives: list[list[str]],
) -> None:
    """Online, threads scoring at once leave the cache one-by-one calls leave (in some order)."""
    traces = traces_of(objectives) * 2  # each twice: the second meets its own id
    alone = TraceValueScorer(embedder=HashingEmbedder())
    for trace in traces:
        alone.score(trace)
    shared = TraceValueScorer(embedder=HashingEmbedder())
    with ThreadPoolExecutor(16) as pool:
        breakdowns = list(pool.map(shared.score, traces))
    ids = sorted(entry.id or "" for entry in shared.cache.entries())
    assert ids == sorted(entry.id or "" for entry in alone.cache.entries())
    assert shared.already_cached == alone.already_cached
    assert all(b.novelty.nearest_id in {None, *ids} for b in breakdowns)


@pytest.mark.parametrize("send", [pickle.dumps, copy.copy, copy.deepcopy])
def test_a_scorer_sent_to_another_process_is_refused_saying_what_to_do(send: object) -> None:
    """A pickled scorer is one TypeError naming the way to score in workers.

    Before, pickle failed on a lock: ``cannot pickle '_thread.lock' object``.
    """
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    with pytest.raises(TypeError, match=r"TraceValueScorer cannot be pickled.*initializer"):
        send(scorer)  # type: ignore[operator]


def test_a_cache_sent_to_another_process_is_refused_saying_what_to_do() -> None:
    """A pickled vector cache is one TypeError naming VectorCache.open in each worker."""
    with pytest.raises(TypeError, match=r"VectorCache cannot be pickled.*VectorCache\.open"):
        pickle.dumps(VectorCache(max_elements=4, dimensions=2))
