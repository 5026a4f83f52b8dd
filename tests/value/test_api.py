"""The seed's module-level API: evaluate_value and friends over a process-wide scorer."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer, evaluate_value, score_trace
from knowledgepulse.value.scorer import default_scorer, register_profile, set_default_scorer
from tests.builders import make_trace


@pytest.fixture(autouse=True)
def fresh_default() -> Iterator[None]:
    set_default_scorer(TraceValueScorer(embedder=HashingEmbedder()))
    yield
    set_default_scorer(None)


def test_evaluate_value_returns_the_score() -> None:
    """await evaluate_value(trace) is the breakdown's score."""
    score = asyncio.run(evaluate_value(make_trace()))
    assert score == pytest.approx(0.57625)


def test_module_state_persists_across_calls() -> None:
    """The process-wide cache remembers: the same text under another id is less novel."""
    first = score_trace(make_trace(trace_id="kp:trace:first"))
    second = score_trace(make_trace(trace_id="kp:trace:again"))
    assert (first.novelty.source, second.novelty.source) == ("empty_cache", "embedding")
    assert second.dimensions.novelty < first.dimensions.novelty


def test_register_profile_reaches_the_default_scorer() -> None:
    """register_profile adds a profile evaluate_value uses."""
    register_profile(
        "legal",
        {"complexity": 0.1, "novelty": 0.1, "tool_diversity": 0.1, "outcome_confidence": 0.7},
    )
    assert score_trace(make_trace(domain="legal")).profile == "legal"
    assert default_scorer().profiles.select("legal")[0] == "legal"


def test_concurrent_calls_each_join_the_cache_once() -> None:
    """50 concurrent evaluate_value calls give 50 scores and 50 cache entries, none lost."""

    async def run() -> list[float]:
        traces = [
            make_trace(trace_id=f"kp:trace:{i}", objective=f"objective number {i}")
            for i in range(50)
        ]
        return await asyncio.gather(*(evaluate_value(t) for t in traces))

    scores = asyncio.run(run())
    assert len(scores) == 50
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert default_scorer().cache.size == 50


class _SlowEmbedder(HashingEmbedder):
    """Blocks its thread for a while, as a real model does."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.threads.add(threading.get_ident())
        time.sleep(0.05)
        return super().embed_batch(texts)


def test_embedding_does_not_block_the_event_loop() -> None:
    """While the model works, other coroutines keep running (it runs in a worker thread)."""
    embedder = _SlowEmbedder()
    set_default_scorer(TraceValueScorer(embedder=embedder))

    async def run() -> int:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        await asyncio.gather(
            *(evaluate_value(make_trace(trace_id=f"kp:trace:{i}")) for i in range(4))
        )
        done.set()
        await task
        return ticks

    ticks = asyncio.run(run())
    assert threading.get_ident() not in embedder.threads
    assert ticks > 1
