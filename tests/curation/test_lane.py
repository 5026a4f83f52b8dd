"""The embedding lane: a large corpus embedded in a second process gives the same answer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from knowledgepulse.curation import lane as lane_module
from knowledgepulse.curation.corpus import score_apart
from knowledgepulse.curation.lane import EmbeddingLane, lane_for
from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.records import Location, Record
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import validate_record
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import trace_json

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the lane forks: Linux only")

WORDS = ["flight", "hotel", "refund", "invoice", "parser", "cache", "shard", "replica", "token"]


def items(count: int) -> list[TraceItem]:
    """Traces of several tasks, some with the same objective (a task's runs)."""
    found = []
    for number in range(count):
        words = [WORDS[(number * 7 + step) % len(WORDS)] for step in range(number % 5 + 3)]
        result = validate_record(
            Record(
                Location("t.jsonl", number + 1),
                trace_json(trace_id=f"kp:trace:{number}", objective=" ".join(words[:4])),
            )
        )
        assert isinstance(result, TraceItem)
        found.append(result)
    return found


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=StaticEmbedder(), batch_size=8)


@pytest.fixture
def lanes(monkeypatch: pytest.MonkeyPatch) -> list[EmbeddingLane]:
    """The lanes started, with a low start and room for one batch in flight."""
    started: list[EmbeddingLane] = []
    monkeypatch.setattr(lane_module, "LANE_AFTER", 16)
    monkeypatch.setattr(lane_module, "IN_FLIGHT", 1)
    lane_for = lane_module.lane_for

    def counted(*args: object) -> EmbeddingLane | None:
        found = lane_for(*args)  # type: ignore[arg-type]
        if found is not None:
            started.append(found)
        return found

    monkeypatch.setattr("knowledgepulse.curation.corpus.lane_for", counted)
    return started


def test_a_corpus_embedded_partly_in_the_worker_is_scored_as_one_embedded_here(
    lanes: list[EmbeddingLane], monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = items(120)
    with_lane = score_apart(scorer(), traces, lambda _: iter(traces))
    assert len(lanes) == 1
    monkeypatch.setattr(lane_module, "LANE_AFTER", 10**9)
    here = score_apart(scorer(), traces, lambda _: iter(traces))
    assert with_lane.vectors is not None
    assert here.vectors is not None
    assert np.array_equal(with_lane.vectors, here.vectors)
    assert with_lane.breakdowns == here.breakdowns


def test_the_vectors_of_batches_come_back_in_the_order_put() -> None:
    traces = [item.trace for item in items(64)]
    batches = [traces[start : start + 8] for start in range(0, 64, 8)]
    embedder = StaticEmbedder()
    lane = EmbeddingLane(embedder, DEFAULT_NOVELTY_TEXT)
    try:
        for batch in batches:
            lane.put(batch)
        kinds = {type(found).__name__ for found in lane._waiting}
        found = lane.ready(wait=True)
    finally:
        lane.close()
    assert "Future" in kinds
    expected = scorer().embed_traces(traces)
    assert expected is not None
    assert np.array_equal(np.concatenate(found), expected)


@pytest.mark.parametrize("before", [None, "true"])
def test_forking_the_worker_prints_nothing_and_leaves_the_environment(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, before: str | None
) -> None:
    """The variable set for the fork is taken back after it: removed, or the caller's value."""
    if before is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", before)
    embedder = StaticEmbedder()
    traces = [item.trace for item in items(40)]
    scorer().embed_traces(traces)  # the tokenizer's threads have run in this process
    lane = EmbeddingLane(embedder, DEFAULT_NOVELTY_TEXT)
    try:
        lane.put(traces)
        lane.ready(wait=True)
    finally:
        lane.close()
    assert os.environ.get("TOKENIZERS_PARALLELISM") == before
    assert capfd.readouterr().err == ""


def put_and_wait(lane: EmbeddingLane, traces: list[ReasoningTrace]) -> None:
    lane.put(traces)
    lane.ready(wait=True)


def test_a_worker_that_dies_is_a_clear_embedder_error() -> None:
    lane = EmbeddingLane(StaticEmbedder(), DEFAULT_NOVELTY_TEXT)
    try:
        for process in lane._pool._processes.values():
            assert process.pid is not None
            os.kill(process.pid, signal.SIGKILL)
            process.join()
        with pytest.raises(EmbedderUnavailableError, match="the process embedding beside"):
            put_and_wait(lane, [item.trace for item in items(8)])
    finally:
        lane.close()


ORPHAN = """
import sys
from knowledgepulse.curation.lane import EmbeddingLane, lane_for
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.static import StaticEmbedder
lane = EmbeddingLane(StaticEmbedder(), DEFAULT_NOVELTY_TEXT)
print(*lane._pool._processes, flush=True)
sys.stdin.read()
"""


def test_a_worker_whose_caller_is_killed_ends_too() -> None:
    """Killed outright, the caller closes nothing: the worker still goes (it holds the queues)."""
    caller = subprocess.Popen(
        [sys.executable, "-c", ORPHAN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert caller.stdout is not None
    worker = int(caller.stdout.readline())
    caller.kill()
    caller.wait()
    caller.stdout.close()
    assert caller.stdin is not None
    caller.stdin.close()
    for _ in range(100):
        if not os.path.exists(f"/proc/{worker}") or "Z" in _state(worker):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the worker {worker} outlived its caller")


def _state(pid: int) -> str:
    """A process's state letter (Z: ended, not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return "Z"


def test_no_lane_below_its_start_on_one_core_or_for_another_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker only pays where a second core is there to run it, and for the static table."""
    static = StaticEmbedder()
    assert lane_for(static, DEFAULT_NOVELTY_TEXT, lane_module.LANE_AFTER - 1) is None
    assert lane_for(HashingEmbedder(), DEFAULT_NOVELTY_TEXT, lane_module.LANE_AFTER) is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    lane = lane_for(static, DEFAULT_NOVELTY_TEXT, lane_module.LANE_AFTER)
    assert lane is not None
    lane.close()
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0})
    assert lane_for(static, DEFAULT_NOVELTY_TEXT, lane_module.LANE_AFTER) is None
