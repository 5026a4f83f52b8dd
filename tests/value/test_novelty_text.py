"""The scorer's novelty_text: recorded in the breakdown and the cache identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import CacheFileError, ScorerParameterError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.representation import NOVELTY_TEXTS
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import assert_scored_alike, make_trace


def test_the_default_is_objective_actions_terms_and_is_recorded() -> None:
    """The breakdown's novelty inputs end with the representation's name."""
    breakdown = TraceValueScorer(embedder=HashingEmbedder()).score(make_trace())
    inputs = breakdown.to_dict()["inputs"]["novelty"]
    assert list(inputs)[-1] == "novelty_text"
    assert inputs["novelty_text"] == "objective-actions-terms"


def test_the_default_cache_holds_three_parts() -> None:
    """Two embedded parts and 384 hashed buckets of terms; the cache is sized so."""
    scorer = TraceValueScorer(embedder=HashingEmbedder(dimensions=16))
    assert scorer.cache_dimensions == 16 + 16 + 384
    assert scorer.cache.dimensions == 16 + 16 + 384


def test_unknown_novelty_text_is_refused_when_the_scorer_is_made() -> None:
    """A misspelt name fails at once, listing the names."""
    with pytest.raises(ScorerParameterError, match=r"unknown novelty text 'truncat'"):
        TraceValueScorer(embedder=HashingEmbedder(), novelty_text="truncat")


def test_a_cache_saved_under_one_representation_is_refused_under_another(tmp_path: Path) -> None:
    """cache_model_id differs by representation, so loading with it refuses a foreign cache."""
    path = tmp_path / "cache.npz"
    windows = TraceValueScorer(embedder=HashingEmbedder(), novelty_text="windows")
    windows.score(make_trace())
    assert windows.cache_model_id is not None
    windows.cache.save(path, model_id=windows.cache_model_id)
    truncate = TraceValueScorer(embedder=HashingEmbedder(), novelty_text="truncate")
    with pytest.raises(CacheFileError, match=r"novelty-text:truncate"):
        VectorCache.load(path, expected_model_id=truncate.cache_model_id)
    assert VectorCache.load(path, expected_model_id=windows.cache_model_id).size == 1


def test_a_cache_claimed_under_another_representation_names_the_one_that_fits() -> None:
    """A scorer given a cache another representation of its embedder filled is refused with the
    novelty_text that fits; before, the error named two model ids, one the bare embedder's."""
    windows = TraceValueScorer(embedder=HashingEmbedder(), novelty_text="windows")
    windows.score(make_trace())
    with pytest.raises(ScorerParameterError, match=r"choose that text \(novelty_text='windows'\)"):
        TraceValueScorer(embedder=HashingEmbedder(), cache=windows.cache).score(make_trace())


def test_no_embedder_has_no_cache_model_id() -> None:
    """Without an embedder there is no model to name."""
    assert TraceValueScorer(embedder=None).cache_model_id is None


@pytest.mark.parametrize("name", sorted(NOVELTY_TEXTS))
def test_batches_equal_one_by_one_for_every_representation(name: str) -> None:
    """score_many gives what score gives trace by trace, in order (within 1e-6)."""
    traces = [make_trace(trace_id=f"kp:trace:{i}", objective=f"task {i % 3}") for i in range(7)]
    one = TraceValueScorer(embedder=HashingEmbedder(), novelty_text=name)
    many = TraceValueScorer(embedder=HashingEmbedder(), novelty_text=name, batch_size=3)
    assert_scored_alike(
        [b.to_dict() for b in many.score_many(traces)], [one.score(t).to_dict() for t in traces]
    )
