"""TraceValueScorer: the composite, novelty against the cache, modes, batches and breakdowns."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError, VectorError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.calibration import NoveltyCalibration
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, novelty_text
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import ScoringWeights, TraceValueScorer
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD
from tests.builders import RandomEmbedder, assert_scored_alike, make_trace, step, steps

DEFAULT_DIMENSIONS = novelty_text(DEFAULT_NOVELTY_TEXT).dimensions(HashingEmbedder().dimensions)
"""The default representation's vector length with the test embedder."""


def test_worked_example_without_embedder_scores_0_57625() -> None:
    """The spec's worked example: default weights, N = 0.5, rule 3 fires: 0.57625."""
    breakdown = TraceValueScorer(embedder=None).score(make_trace())
    assert breakdown.score == pytest.approx(0.57625, abs=1e-12)
    assert breakdown.profile == "default"
    assert breakdown.dimensions.to_dict() == pytest.approx(
        {"complexity": 0.405, "novelty": 0.5, "tool_diversity": 1.0, "outcome_confidence": 1.0}
    )
    assert breakdown.weighted_sum == pytest.approx(0.67625)
    assert [o.name for o in breakdown.overrides] == ["low_tool_diversity"]
    (override,) = breakdown.overrides
    assert override.before == pytest.approx(0.67625)
    assert override.after == pytest.approx(0.57625)
    assert breakdown.novelty.source == "no_embedder"


def test_first_trace_of_an_empty_cache_has_novelty_one_half() -> None:
    """With an embedder but an empty cache, N = 0.5 and the source says so."""
    breakdown = TraceValueScorer(embedder=HashingEmbedder()).score(make_trace())
    assert breakdown.dimensions.novelty == 0.5
    assert breakdown.novelty.source == "empty_cache"


def test_scoring_the_same_trace_twice_lowers_novelty_online() -> None:
    """Online mode: the trace joins the cache, so the second time N is ~0 and names the first."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    scorer.score(make_trace(trace_id="kp:trace:first"))
    second = scorer.score(make_trace(trace_id="kp:trace:again"))
    assert second.novelty.source == "embedding"
    assert second.novelty.nearest_id == "kp:trace:first"
    assert second.novelty.similarity == pytest.approx(1.0, abs=1e-6)
    assert second.dimensions.novelty == pytest.approx(0.0, abs=1e-6)
    assert scorer.cache.size == 2


def test_a_trace_scored_again_is_never_compared_with_its_own_vector() -> None:
    """Online, the same id again meets the others only: here none, so the cache is empty to it."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    scorer.score(make_trace(trace_id="kp:trace:same"))
    again = scorer.score(make_trace(trace_id="kp:trace:same"))
    assert again.novelty.source == "empty_cache"
    assert scorer.already_cached == 1
    other = scorer.score(make_trace(trace_id="kp:trace:other"))
    assert other.novelty.nearest_id == "kp:trace:same"


def test_a_cache_holding_only_the_trace_itself_is_not_called_empty() -> None:
    """Scored again with only its own vector held, the words say no other trace, not empty."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    first = scorer.score(make_trace(trace_id="kp:trace:same"))
    again = scorer.score(make_trace(trace_id="kp:trace:same"))
    assert (first.novelty.only_itself, again.novelty.only_itself) == (False, True)
    assert "empty cache: nothing to compare with, so 0.5" in first.explain()
    assert "no other trace in the cache, only this trace's own vector" in again.explain()
    assert "empty cache" not in again.explain()
    assert again.dimensions.novelty == first.dimensions.novelty == 0.5
    assert again.novelty.to_dict() == first.novelty.to_dict()
    assert scorer.already_cached == 1


def test_scoring_a_batch_again_counts_and_skips_own_ids_as_one_by_one() -> None:
    """score_many over a cache holding the batch gives score() in turn; each repeat is counted."""
    traces = [
        make_trace(trace_id=f"kp:trace:{n}", objective=f"Task number {n} about {topic}")
        for n, topic in enumerate(["flights", "hotels", "flights", "sales"])
    ]
    traces.append(traces[1])  # an id repeated within the batch
    batched = TraceValueScorer(embedder=HashingEmbedder(), batch_size=3)
    single = TraceValueScorer(embedder=HashingEmbedder())
    batched.score_many(traces[:2])
    for trace in traces[:2]:
        single.score(trace)
    many = [b.to_dict() for b in batched.score_many(traces)]
    one = [single.score(trace).to_dict() for trace in traces]
    assert_scored_alike(many, one)
    assert batched.already_cached == single.already_cached == 3
    assert all(row["nearest_trace"] != row["id"] for row in many if row.get("nearest_trace"))


def test_frozen_mode_leaves_the_cache_unchanged() -> None:
    """Frozen mode scores against the cache without adding to it, so order does not matter."""
    embedder = HashingEmbedder()
    cache = VectorCache(dimensions=embedder.dimensions)
    cache.add(
        embedder.embed_batch(["Find the cheapest flight from Lisbon to Oslo step 0: thought"])[0],
        id="kp:trace:known",
    )
    scorer = TraceValueScorer(embedder=embedder, cache=cache, mode="frozen", novelty_text="windows")
    a = make_trace(trace_id="kp:trace:a")
    b = make_trace(trace_id="kp:trace:b", objective="Summarise the quarterly sales report")
    forward = [scorer.score(t).to_dict() for t in (a, b)]
    backward = [scorer.score(t).to_dict() for t in (b, a)]
    assert cache.size == 1
    assert forward == backward[::-1]
    assert forward[0]["nearest_trace"] == "kp:trace:known"


def test_similar_traces_are_less_novel_than_unrelated_ones() -> None:
    """Against the same cache, a near-duplicate objective gets lower novelty than a new topic."""
    embedder = HashingEmbedder()
    scorer = TraceValueScorer(embedder=embedder, mode="online")
    scorer.score(make_trace(objective="Book a flight from New York to Seattle on May 20"))
    frozen = TraceValueScorer(embedder=embedder, cache=scorer.cache, mode="frozen")
    near_trace = make_trace(
        trace_id="kp:trace:near", objective="Book a flight from New York to Seattle on May 21"
    )
    far_trace = make_trace(
        trace_id="kp:trace:far", objective="Diagnose the memory leak in the image resizer"
    )
    near, far = frozen.score(near_trace), frozen.score(far_trace)
    assert near.dimensions.novelty < far.dimensions.novelty


def test_profile_follows_the_domain() -> None:
    """finance traces use finance weights; an unknown domain uses default."""
    scorer = TraceValueScorer(embedder=None)
    assert scorer.score(make_trace(domain="finance")).weights == ScoringWeights(
        0.20, 0.25, 0.10, 0.45
    )
    assert scorer.score(make_trace(domain="code-review")).profile == "default"


def test_scorer_profiles_are_its_own() -> None:
    """A profile registered on one scorer does not change another."""
    legal = ScoringWeights(0.1, 0.1, 0.1, 0.7)
    one, other = TraceValueScorer(embedder=None), TraceValueScorer(embedder=None)
    one.register_profile("legal", legal)
    assert one.score(make_trace(domain="legal")).profile == "legal"
    assert other.score(make_trace(domain="legal")).profile == "default"


def test_shareable_follows_the_threshold() -> None:
    """A score of 0.57625 is below 0.75 but reaches a threshold of 0.5."""
    assert not TraceValueScorer(embedder=None).score(make_trace()).shareable
    assert TraceValueScorer(embedder=None, threshold=0.5).score(make_trace()).shareable


@given(kinds=st.lists(st.sampled_from(["thought", "tool_call", "error_recovery"]), min_size=1))
def test_a_score_exactly_at_the_threshold_reaches_it(kinds: list[str]) -> None:
    """Reaching is ``score >= threshold``: a score equal to it is shareable, one below is not."""
    trace = make_trace(step_list=steps(*kinds))
    score = TraceValueScorer(embedder=None).score(trace).score
    at = TraceValueScorer(embedder=None, threshold=score).score(trace)
    above = math.nextafter(score, math.inf)  # N = 0.5 without an embedder: scores stay < 1
    below = TraceValueScorer(embedder=None, threshold=above).score(trace)
    assert (at.shareable, below.shareable) == (True, False)
    assert f"(reaches the sharing threshold {score})" in at.explain().splitlines()[0]
    assert f"(below the sharing threshold {above})" in below.explain().splitlines()[0]


def test_a_mapping_is_validated_before_scoring() -> None:
    """Parsed JSON can be scored directly; invalid JSON raises with the path."""
    from knowledgepulse.errors import TraceValidationError
    from tests.builders import trace_json

    scorer = TraceValueScorer(embedder=None)
    assert scorer.score(trace_json()).score == pytest.approx(0.57625)
    bad = trace_json()
    bad["outcome"]["confidence"] = 2
    with pytest.raises(TraceValidationError, match=r"outcome\.confidence"):
        scorer.score(bad)


class _UnavailableEmbedder:
    dimensions = 384
    model_id = "missing"

    def __init__(self) -> None:
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls += 1
        raise EmbedderUnavailableError(
            'the embedder needs: pip install -e ".[embeddings]" in the knowledgepulse checkout'
        )


def test_unavailable_embedder_falls_back_once_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """If the model cannot load, N = 0.5 for every trace, one warning says why, no retry storm."""
    embedder = _UnavailableEmbedder()
    scorer = TraceValueScorer(embedder=embedder)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        results = scorer.score_many([make_trace(trace_id=f"kp:trace:{i}") for i in range(5)])
    assert {r.novelty.source for r in results} == {"no_embedder"}
    assert {r.dimensions.novelty for r in results} == {0.5}
    assert results[0].novelty.reason is not None
    assert "pip install" in results[0].novelty.reason
    assert embedder.calls == 1
    assert len([r for r in caplog.records if "novelty is 0.5" in r.getMessage()]) == 1


class _WrongSizeEmbedder:
    dimensions = 384
    model_id = "wrong"

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.ones((len(texts), 12), dtype=np.float32)


def test_embedder_of_the_wrong_size_is_a_clear_error() -> None:
    """Vectors that do not fit the cache raise, naming both shapes."""
    with pytest.raises(VectorError, match=r"shape \(1, 12\).*expected \(1, 384\)"):
        TraceValueScorer(embedder=_WrongSizeEmbedder(), novelty_text="windows").score(make_trace())


def test_expired_vectors_make_a_topic_novel_again() -> None:
    """With a TTL, a trace seen longer ago than the TTL no longer lowers novelty."""
    now = [0.0]
    cache = VectorCache(dimensions=DEFAULT_DIMENSIONS, ttl_ms=1000, clock=lambda: now[0])
    scorer = TraceValueScorer(embedder=HashingEmbedder(), cache=cache)
    scorer.score(make_trace(trace_id="kp:trace:old"))
    now[0] = 500.0
    assert scorer.score(make_trace(trace_id="kp:trace:soon")).novelty.source == "embedding"
    now[0] = 10_000.0
    assert scorer.score(make_trace(trace_id="kp:trace:later")).novelty.source == "empty_cache"


def test_output_is_byte_identical_for_the_same_inputs() -> None:
    """Two scorers fed the same traces in the same order give identical JSON."""
    traces = [make_trace(trace_id=f"kp:trace:{i}", objective=f"task {i % 3}") for i in range(6)]

    def run() -> str:
        scorer = TraceValueScorer(embedder=HashingEmbedder())
        return json.dumps([scorer.score(t).to_dict() for t in traces])

    assert run() == run()


def test_explanation_names_every_number() -> None:
    """The text breakdown shows each dimension, weight, contribution and override."""
    text = TraceValueScorer(embedder=None).score(make_trace()).explain()
    assert "complexity         0.4050 x 0.25 = 0.1013" in text
    assert "novelty            0.5000 x 0.35 = 0.1750" in text
    assert "override low_tool_diversity: 0.6763 -> 0.5763" in text
    assert "no embedder" in text


def test_cache_size_and_ttl_shape_the_cache_the_scorer_makes() -> None:
    """cache_size bounds the scorer's own cache (oldest out first); ttl_ms becomes its TTL."""
    scorer = TraceValueScorer(embedder=HashingEmbedder(), cache_size=2, ttl_ms=60_000)
    for i in range(3):
        scorer.score(make_trace(trace_id=f"kp:trace:{i}", objective=f"task number {i}"))
    assert (scorer.cache.max_elements, scorer.cache.size, scorer.cache.ttl_ms) == (2, 2, 60_000)
    assert [entry.id for entry in scorer.cache.entries()] == ["kp:trace:1", "kp:trace:2"]


def test_cache_settings_beside_a_given_cache_are_refused() -> None:
    """cache_size/ttl_ms with cache= would be silently ignored, so they are an error instead."""
    with pytest.raises(ScorerParameterError, match=r"set them on that cache"):
        TraceValueScorer(embedder=HashingEmbedder(), cache=VectorCache(), cache_size=5)
    with pytest.raises(ScorerParameterError, match=r"set them on that cache"):
        TraceValueScorer(embedder=HashingEmbedder(), cache=VectorCache(), ttl_ms=5.0)


def test_a_path_as_the_cache_is_refused_when_the_scorer_is_made(tmp_path: Path) -> None:
    """cache='seen.kpcache' names cache and VectorCache.load, not 'str' has no attribute 'claim'
    at the first trace."""
    path: object = str(tmp_path / "seen.kpcache")
    with pytest.raises(TypeError) as refused:
        TraceValueScorer(embedder=HashingEmbedder(), cache=path)  # type: ignore[arg-type]
    assert str(refused.value).startswith(f"cache={path!r}: give a VectorCache (a saved one: ")
    assert "VectorCache.load(path)" in str(refused.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size must be a positive whole number, or None for"),
        ({"batch_size": True}, "for the embedder's, got True"),
        ({"batch_size": 2.5}, "for the embedder's, got 2.5"),
        ({"cache_size": 0}, "cache_size must be a positive whole number"),
        ({"cache_size": 10**9}, "would take 4291.5 GiB; the limit is 4 GiB"),
        ({"ttl_ms": 0}, "ttl_ms must be a positive number of milliseconds"),
        ({"ttl_ms": float("nan")}, "ttl_ms must be a positive number of milliseconds"),
        ({"ttl_ms": "60"}, "ttl_ms must be a positive number of milliseconds"),
        ({"threshold": float("nan")}, "threshold must be a number in"),
        ({"threshold": 1.5}, "threshold must be a number in"),
        ({"mode": "live"}, "mode must be 'online' or 'frozen'"),
    ],
)
def test_bad_settings_are_refused_with_what_was_given(
    kwargs: dict[str, object], message: str
) -> None:
    """Each setting is checked when the scorer is made, naming it and the bad value."""
    with pytest.raises(ScorerParameterError, match=re.escape(message)):
        TraceValueScorer(embedder=HashingEmbedder(), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("threshold", [5, float("nan"), "0.8"])
def test_a_threshold_set_later_is_checked_as_one_given_at_first(threshold: object) -> None:
    """``scorer.threshold = 5`` is refused, not every trace silently left below it."""
    scorer = TraceValueScorer(embedder=None)
    with pytest.raises(ScorerParameterError, match="threshold must be a number in"):
        scorer.threshold = threshold  # type: ignore[assignment]
    assert scorer.threshold == DEFAULT_THRESHOLD
    scorer.threshold = 0.5
    assert scorer.score(make_trace()).shareable


def test_batch_size_is_the_number_of_texts_per_embedder_call() -> None:
    """iter_scores hands the embedder batch_size traces at a time (the CLI's --batch-size)."""
    sizes: list[int] = []

    class Recording(HashingEmbedder):
        def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
            sizes.append(len(texts))
            return super().embed_batch(texts)

    scorer = TraceValueScorer(embedder=Recording(), batch_size=3, novelty_text="windows")
    traces = [make_trace(trace_id=f"kp:trace:{i}") for i in range(7)]
    assert len(list(scorer.iter_scores(traces))) == 7
    assert sizes == [3, 3, 1]


def test_without_a_batch_size_the_embedder_says_its_own() -> None:
    """A GPU-like embedder declaring a batch_size gets that many traces a call; same scores."""
    sizes: list[int] = []

    class GpuLike(HashingEmbedder):
        batch_size = 4  # as the model on a GPU declares 8,192

        def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
            sizes.append(len(texts))
            return super().embed_batch(texts)

    traces = [make_trace(trace_id=f"kp:trace:{i}", objective=f"task {i}") for i in range(9)]
    scorer = TraceValueScorer(embedder=GpuLike(), novelty_text="windows")
    assert scorer.batch_size == 4
    batched = [breakdown.to_dict() for breakdown in scorer.score_many(traces)]
    assert sizes == [4, 4, 1]
    alone = TraceValueScorer(embedder=HashingEmbedder(), novelty_text="windows", batch_size=1)
    assert_scored_alike(batched, [breakdown.to_dict() for breakdown in alone.score_many(traces)])


def test_an_embedder_without_a_batch_size_gets_32_traces_a_call() -> None:
    """The Embedder protocol needs only embed_batch: one that declares nothing gets 32."""
    assert TraceValueScorer(embedder=HashingEmbedder()).batch_size == 32


def test_without_an_embedder_each_trace_is_scored_as_it_is_read() -> None:
    """No embedder, no batch: a breakdown comes before the next trace is taken (nothing held)."""
    taken: list[int] = []

    def traces() -> Iterator[ReasoningTrace]:
        for i in range(5):
            taken.append(i)
            yield make_trace(trace_id=f"kp:trace:{i}")

    scores = TraceValueScorer(embedder=None, batch_size=32).iter_scores(traces())
    for i, _ in enumerate(scores):
        assert taken == list(range(i + 1))
    assert len(taken) == 5


# --- laws over many traces --------------------------------------------------------------

KINDS = ["thought", "tool_call", "observation", "error_recovery"]
WORDS = [
    "flight",
    "refund",
    "search",
    "invoice",
    "python",
    "error",
    "dose",
    "margin",
    "retry",
    "seattle",
]


@st.composite
def traces(draw: st.DrawFn, index: int = 0) -> object:
    n = draw(st.integers(min_value=1, max_value=25))
    step_list = []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        tool = draw(st.one_of(st.none(), st.sampled_from(["search", "calc", "sql", "http"])))
        content = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        step_list.append(step(i, kind, content, tool))
    return make_trace(
        trace_id=f"kp:trace:{draw(st.integers(0, 10**6))}",
        domain=draw(
            st.sampled_from(["default", "finance", "code", "medical", "customer_service", "other"])
        ),
        success=draw(st.booleans()),
        confidence=draw(st.floats(min_value=0.0, max_value=1.0)),
        objective=" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))),
        step_list=step_list,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(traces(), min_size=1, max_size=12), st.integers(min_value=1, max_value=5))
def test_batch_scoring_equals_one_by_one(batch: list[object], batch_size: int) -> None:
    """score_many in batches of any size gives what score gives one by one, within 1e-6."""
    one_by_one = TraceValueScorer(embedder=HashingEmbedder())
    batched = TraceValueScorer(embedder=HashingEmbedder(), batch_size=batch_size)
    expected = [one_by_one.score(t).to_dict() for t in batch]  # type: ignore[arg-type]
    found = [b.to_dict() for b in batched.score_many(batch)]  # type: ignore[arg-type]
    assert_scored_alike(found, expected)


@settings(max_examples=80, deadline=None)
@given(st.lists(traces(), min_size=1, max_size=8), st.integers(0, 2**32 - 1))
def test_every_score_and_dimension_is_in_unit_range(batch: list[object], seed: int) -> None:
    """Whatever the trace and the cosines, every dimension and score lies in [0, 1]."""
    scorer = TraceValueScorer(embedder=RandomEmbedder(seed))
    for breakdown in scorer.score_many(batch):  # type: ignore[arg-type]
        assert 0.0 <= breakdown.score <= 1.0
        assert all(0.0 <= value <= 1.0 for value in breakdown.dimensions.to_dict().values())


# A team's profile: four weights in twentieths that sum to 1, a dimension may weigh nothing.
TEAM_WEIGHTS = (
    st.lists(st.integers(0, 20), min_size=3, max_size=3)
    .filter(lambda parts: sum(parts) <= 20)
    .map(lambda parts: ScoringWeights(*(k / 20 for k in [*parts, 20 - sum(parts)])))
)


@settings(max_examples=40, deadline=None)
@given(st.lists(traces(), min_size=1, max_size=8), TEAM_WEIGHTS, st.integers(0, 2**32 - 1))
def test_every_score_is_explained_by_its_breakdown_under_any_profile(
    batch: list[object], weights: ScoringWeights, seed: int
) -> None:
    """The weights are the profile's; the weighted sum, then each override, gives the score."""
    scorer = TraceValueScorer(
        embedder=RandomEmbedder(seed), profiles=dict.fromkeys(("other", "code"), weights)
    )
    for breakdown in scorer.score_many(batch):  # type: ignore[arg-type]
        row = breakdown.to_dict()
        assert row["weights"] == scorer.profiles.select(row["domain"])[1].to_dict()
        terms = [row["dimensions"][k] * row["weights"][k] for k in row["weights"]]
        assert abs(math.fsum(terms) - row["weighted_sum"]) <= 1e-9
        score = row["weighted_sum"]
        for effect in row["override_effects"]:
            assert effect["before"] == score
            assert effect["reason"]
            score = effect["after"]
        assert row["score"] == min(1.0, max(0.0, score))


def test_steps_builder_makes_numbered_steps() -> None:
    """The test builder numbers steps from 0 (guards the other tests' assumptions)."""
    assert [s["step_id"] for s in steps("thought", "thought")] == [0, 1]


def test_frozen_scoring_never_matches_a_trace_with_itself() -> None:
    """A corpus scored frozen against its own cache gets novelty from the *other* traces."""
    traces = [make_trace(trace_id=f"kp:trace:{n}", objective=f"task number {n}") for n in range(3)]
    embedder = HashingEmbedder()
    builder = TraceValueScorer(embedder=embedder)
    builder.score_many(traces)
    frozen = TraceValueScorer(embedder=embedder, cache=builder.cache, mode="frozen")
    for breakdown in frozen.score_many(traces):
        assert breakdown.novelty.source == "embedding"
        assert breakdown.novelty.nearest_id != breakdown.trace_id
        assert breakdown.dimensions.novelty > 0.0


def test_embed_traces_gives_one_unit_vector_per_trace_and_leaves_the_cache() -> None:
    """embed_traces is for comparing traces among themselves: the cache is not touched."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    vectors = scorer.embed_traces([make_trace(trace_id=f"kp:trace:{n}") for n in range(3)])
    assert vectors is not None
    assert vectors.shape == (3, scorer.cache.dimensions)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert scorer.cache.size == 0
    assert TraceValueScorer(embedder=None).embed_traces([make_trace()]) is None


LOWERING = NoveltyCalibration(((0.0, 0.0), (0.5, 0.2), (1.0, 1.0)), onto="reference")
"""A calibration that lowers mid novelties, as the static table's does."""


class Calibrated(HashingEmbedder):
    """The test embedder with a novelty calibration (as the static table brings one)."""

    def novelty_calibration(self, novelty_text: str) -> NoveltyCalibration | None:
        return LOWERING


def test_an_embedders_calibration_maps_the_novelty_and_the_explanation_says_onto_what() -> None:
    """N = calibration(1 - cosine): the breakdown keeps the cosine and names the scale."""
    scorer = TraceValueScorer(embedder=Calibrated())
    scorer.score(make_trace(trace_id="kp:trace:a", objective="book a flight to Oslo"))
    second = scorer.score(make_trace(trace_id="kp:trace:b", objective="book a flight to Rome"))
    assert second.novelty.similarity is not None
    assert second.dimensions.novelty == pytest.approx(LOWERING(1 - second.novelty.similarity))
    assert second.dimensions.novelty < 1 - second.novelty.similarity
    assert second.novelty.calibrated_onto == "reference"
    assert "mapped onto reference's novelty scale" in second.explain()
    assert TraceValueScorer(embedder=HashingEmbedder()).novelty_of(0.5) == pytest.approx(0.5)
    assert scorer.novelty_of(0.5) == pytest.approx(0.2)


def test_the_explanation_of_a_mapped_novelty_shows_the_number_before_and_after_the_map() -> None:
    """``--explain`` gives 1 - cosine and the mapped value, so a user can check N by hand."""
    scorer = TraceValueScorer(embedder=Calibrated())
    scorer.score(make_trace(trace_id="kp:trace:a", objective="book a flight to Oslo"))
    second = scorer.score(make_trace(trace_id="kp:trace:b", objective="book a flight to Rome"))
    assert second.novelty.similarity is not None
    raw = 1 - second.novelty.similarity
    assert (
        f"cosine {second.novelty.similarity:.4f}; novelty = 1 - cosine, clamped to [0, 1] = "
        f"{raw:.4f}, mapped onto reference's novelty scale: {second.dimensions.novelty:.4f}"
    ) in second.explain()


class _OtherModel(HashingEmbedder):
    """As wide as HashingEmbedder, but another model: its vectors mean other things."""

    def __init__(self) -> None:
        super().__init__()
        self.model_id = "other-model"


def test_a_cache_saved_from_python_reloads_under_its_scorers_model(tmp_path: Path) -> None:
    """cache.save(path) records the scorer's model, so loading it for that model is allowed."""
    cache = VectorCache()
    scorer = TraceValueScorer(embedder=HashingEmbedder(), cache=cache)
    scorer.score(make_trace())
    cache.save(tmp_path / "seen.kpcache")
    loaded = VectorCache.load(tmp_path / "seen.kpcache", expected_model_id=scorer.cache_model_id)
    assert loaded.model_id == scorer.cache_model_id == cache.model_id
    assert len(loaded) == 1


def test_two_embedders_of_one_width_cannot_share_a_cache() -> None:
    """A second model's vectors are refused by a cache that holds the first's."""
    cache = VectorCache()
    TraceValueScorer(embedder=HashingEmbedder(), cache=cache).score(make_trace())
    with pytest.raises(ScorerParameterError, match="other-model"):
        TraceValueScorer(embedder=_OtherModel(), cache=cache).score(make_trace())
    assert len(cache) == 1
