"""RayEmbedder: the bundled model's vectors, spread over actors, in order; the cluster's errors."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import numpy as np
import pytest
import ray

from knowledgepulse.cli.main import flag_of
from knowledgepulse.engines.ray_engine import MiniLMFactory, RayClusterError, RayEmbedder
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.trace import parse_trace
from knowledgepulse.trace.text import actions_text, objective_text, whole_text
from knowledgepulse.value import TraceValueScorer

pytestmark = [pytest.mark.embedder, pytest.mark.usefixtures("ray_cluster")]


@pytest.fixture(scope="module")
def ray_embedder(ray_cluster: None) -> Iterator[RayEmbedder]:
    """Two actors, one per CPU of the session's Ray, kept for the module (as kp keeps them)."""
    with RayEmbedder(MiniLMFactory(max_windows=2), concurrency=2) as embedder:
        yield embedder


@pytest.fixture(scope="module")
def local() -> MiniLMEmbedder:
    """The same model in this process."""
    return MiniLMEmbedder(max_windows=2)


def test_ray_embedder_says_what_the_local_embedder_says(
    ray_embedder: RayEmbedder, local: MiniLMEmbedder
) -> None:
    """Same model id, dimensions and window cap: a saved cache fits either."""
    assert ray_embedder.model_id == local.model_id
    assert ray_embedder.dimensions == local.dimensions
    assert ray_embedder.max_windows == 2
    assert ray_embedder.concurrency == 2


def test_ray_vectors_equal_the_local_ones(
    ray_embedder: RayEmbedder, local: MiniLMEmbedder, corpus_lines: list[str]
) -> None:
    """Windowed, leading and plain embeddings agree to 1e-6, windows read and caps exactly."""
    traces = [parse_trace(json.loads(line)) for line in corpus_lines]
    whole = [whole_text(trace) for trace in traces]
    remote, mine = ray_embedder.embed_windowed(whole), local.embed_windowed(whole)
    assert remote.vectors.shape == (len(traces), 384)
    assert np.abs(remote.vectors - mine.vectors).max() <= 1e-6
    assert remote.windows == mine.windows
    assert remote.capped == mine.capped
    assert any(remote.capped)  # the cap of 2 windows was reached by some trace
    actions = [actions_text(trace) for trace in traces]
    leading = ray_embedder.embed_leading(actions, 254)
    assert np.abs(leading - local.embed_leading(actions, 254)).max() <= 1e-6
    objectives = [objective_text(trace) for trace in traces[:3]]
    assert (
        np.abs(ray_embedder.embed_batch(objectives) - local.embed_batch(objectives)).max() <= 1e-6
    )
    assert ray_embedder.embed_batch([]).shape == (0, 384)


def test_a_scorer_with_a_ray_embedder_scores_as_the_local_one(
    ray_embedder: RayEmbedder, local: MiniLMEmbedder, corpus_lines: list[str]
) -> None:
    """Online novelty over the same traces: same scores, nearest ids and windows read."""
    traces = [json.loads(line) for line in corpus_lines]
    remote = TraceValueScorer(embedder=ray_embedder, novelty_text="windows", batch_size=8)
    mine = TraceValueScorer(embedder=local, novelty_text="windows", batch_size=8)
    for ours, theirs in zip(remote.score_many(traces), mine.score_many(traces), strict=True):
        assert ours.trace_id == theirs.trace_id
        assert ours.score == pytest.approx(theirs.score, abs=1e-6)
        assert ours.novelty.nearest_id == theirs.novelty.nearest_id
        assert ours.novelty.windows == theirs.novelty.windows


def test_closing_stops_the_actors_and_leaves_a_ray_it_did_not_start(
    ray_embedder: RayEmbedder,
) -> None:
    """The session's Ray outlives an embedder that joined it; its actors do not."""
    # No CPU reserved: the module's embedder holds both of the session's.
    with RayEmbedder(MiniLMFactory(), concurrency=1, num_cpus=0) as short_lived:
        actor = short_lived._actors[0]
    assert ray.is_initialized()
    # ray.kill is asynchronous: a call sent at once may still be served; the actor must die soon.
    deadline = time.monotonic() + 30
    with pytest.raises(ray.exceptions.RayActorError):  # noqa: PT012 - poll until it is gone
        while time.monotonic() < deadline:
            ray.get(actor.describe.remote(), timeout=30)
            time.sleep(0.2)


def test_an_address_with_nothing_listening_fails_at_once() -> None:
    """A closed port is one clear error, not minutes of Ray retrying."""
    with pytest.raises(
        RayClusterError, match=r"cannot connect to the Ray cluster at 127\.0\.0\.1:1"
    ):
        RayEmbedder(address="127.0.0.1:1").start()


def test_a_malformed_address_says_what_an_address_looks_like() -> None:
    """An address without a port is refused before any connection is tried."""
    with pytest.raises(RayClusterError, match="HOST:PORT") as raised:
        RayEmbedder(address="head-node").start()
    assert str(raised.value).startswith("address='head-node' is not HOST:PORT")
    assert raised.value.message_with(flag_of).startswith("--address head-node is not HOST:PORT")
