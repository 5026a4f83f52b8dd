"""``MiniLMEmbedder(workers=N)``: the model in N worker processes gives exactly the one-process
embeddings, fails clearly when a worker cannot open the model or dies, and stops its workers."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
from tests.paths import CORPORA

pytestmark = pytest.mark.embedder


@pytest.fixture(scope="module")
def one() -> Iterator[MiniLMEmbedder]:
    with MiniLMEmbedder(workers=1) as embedder:
        yield embedder


@pytest.fixture(scope="module")
def two() -> Iterator[MiniLMEmbedder]:
    with MiniLMEmbedder(workers=2) as embedder:
        yield embedder


def corpus_sample(count: int) -> list[ReasoningTrace]:
    """Traces of both shared corpora, alternating (long tau-bench ones and short HotpotQA ones)."""
    per_corpus = [
        [
            ReasoningTrace.model_validate_json(line)
            for line in (CORPORA / name).read_text(encoding="utf-8").splitlines()[: count // 2]
        ]
        for name in ("taubench.jsonl", "reflexion_hotpotqa.jsonl")
    ]
    return [trace for pair in zip(*per_corpus, strict=True) for trace in pair]


def test_two_workers_embed_exactly_like_one(one: MiniLMEmbedder, two: MiniLMEmbedder) -> None:
    """Same vectors bit for bit, same windows read, on real traces of every length."""
    traces = corpus_sample(8)
    # Cut to keep the test fast: still up to 4 windows a text, several batches a call.
    texts = [" ".join(step.content or "" for step in trace.steps)[:2500] for trace in traces]
    alone, pooled = one.embed_windowed(texts), two.embed_windowed(texts)
    assert max(alone.windows) > 2
    np.testing.assert_array_equal(pooled.vectors, alone.vectors)
    assert (pooled.windows, pooled.capped) == (alone.windows, alone.capped)
    np.testing.assert_array_equal(two.embed_leading(texts, 254), one.embed_leading(texts, 254))


def test_scores_with_two_workers_equal_those_with_one(
    one: MiniLMEmbedder, two: MiniLMEmbedder
) -> None:
    """The whole scoring path (default novelty text, batch novelty) gives the same breakdowns."""
    traces = corpus_sample(16)
    alone = TraceValueScorer(embedder=one, batch_size=5).score_many(traces)
    pooled = TraceValueScorer(embedder=two, batch_size=5).score_many(traces)
    assert [b.to_dict() for b in pooled] == [b.to_dict() for b in alone]


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.text(max_size=1500), min_size=1, max_size=6))
def test_any_texts_embed_alike_with_one_or_two_workers(
    one: MiniLMEmbedder, two: MiniLMEmbedder, texts: list[str]
) -> None:
    """Whatever the texts (empty, huge, odd code points), the pool changes no bit."""
    np.testing.assert_array_equal(two.embed_batch(texts), one.embed_batch(texts))


def test_a_model_the_workers_cannot_open_fails_at_load(tmp_path: Path) -> None:
    """onnxruntime's refusal in a worker comes back as the one clear error, at load time."""
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x00" * 64)
    embedder = MiniLMEmbedder(bad, workers=2)
    with pytest.raises(EmbedderUnavailableError, match=r"cannot load the model .*broken\.onnx"):
        embedder.load()
    assert not embedder.loaded


def test_a_killed_worker_is_a_clear_error_not_a_hang() -> None:
    """A worker killed mid-run (OOM killer, kill -9) fails the call with an actionable message."""
    embedder = MiniLMEmbedder(workers=2)
    embedder.load()
    workers = multiprocessing.active_children()
    assert workers
    for worker in workers:
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)
    with pytest.raises(EmbedderUnavailableError, match="worker process died"):
        embedder.embed_batch(["a text"] * 40)
    embedder.close()


def test_close_stops_the_workers() -> None:
    """close() ends the processes; the next call starts them again."""
    embedder = MiniLMEmbedder(workers=2, max_batch_windows=1)
    before = set(multiprocessing.active_children())
    texts = ["hello there", "and another text", "a third"]
    first = embedder.embed_batch(texts)
    started = set(multiprocessing.active_children()) - before
    assert 1 <= len(started) <= 2  # started as batches need them
    embedder.close()
    assert not embedder.loaded
    assert not started & set(multiprocessing.active_children())
    np.testing.assert_array_equal(embedder.embed_batch(texts), first)
    embedder.close()


def test_the_workers_leave_ctrl_c_to_the_parent() -> None:
    """Ctrl-C reaches every process of the group: the workers ignore it (no traceback each),
    carry on, and the parent's own Ctrl-C handling is as before."""
    embedder = MiniLMEmbedder(workers=2, max_batch_windows=1)
    before = set(multiprocessing.active_children())
    texts = ["hello there", "and another text", "a third"]
    first = embedder.embed_batch(texts)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    for worker in set(multiprocessing.active_children()) - before:
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGINT)
    np.testing.assert_array_equal(embedder.embed_batch(texts), first)
    embedder.close()


def test_a_wait_for_a_batch_ends_when_a_worker_has_died() -> None:
    """A batch that never comes back while a worker is dead is a broken pool, not a hang."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool
    from types import SimpleNamespace

    from knowledgepulse.novelty.minilm import _result

    never: Future[object] = Future()
    pool = SimpleNamespace(_processes={1: SimpleNamespace(exitcode=-9)})
    with pytest.raises(BrokenProcessPool):
        _result(never, pool)  # type: ignore[arg-type]


def test_ctrl_c_while_batches_run_stops_the_workers_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An interrupt in the wait for a batch ends the workers mid-batch (SIGTERM), rather than
    waiting for the batches in flight, whose results would be thrown away."""
    from knowledgepulse.novelty import minilm

    before = set(multiprocessing.active_children())
    embedder = MiniLMEmbedder(workers=2, max_batch_windows=1)
    embedder.embed_batch(["warm the workers up"])
    workers = set(multiprocessing.active_children()) - before

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(minilm, "_result", interrupted)
    with pytest.raises(KeyboardInterrupt):
        embedder.embed_batch(["a text"] * 40)
    assert workers
    assert {worker.exitcode for worker in workers} == {-signal.SIGTERM}
    embedder.close()
