"""A similarity reported beside a threshold is on the threshold's scale (MiniLM's).

The static table's cosines run higher than MiniLM's; kp's thresholds are set on MiniLM's and
mapped onto the table's (``TraceValueScorer.cosine_of``). What a result reports (a group
member's cosine, a near-duplicate's, the histogram's) is mapped back, so a member of a group
made at 0.9 never shows 0.89.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.runs import dedupe, select
from knowledgepulse.value import TraceValueScorer
from tests.paths import CORPORA


@cache
def corpus() -> Corpus:
    """The tau-bench corpus scored once with the default (static, calibrated) embedder."""
    scorer = TraceValueScorer()
    if scorer.calibrated_onto is None:
        pytest.skip("the static table (embeddings extra) is not installed")
    return select(str(CORPORA / "taubench.jsonl"), scorer=scorer).corpus


COSINES = st.floats(min_value=0.6, max_value=0.99)


@settings(max_examples=15, deadline=None)
@given(COSINES)
def test_every_group_member_reaches_the_threshold_it_was_grouped_at(threshold: float) -> None:
    """dedupe(threshold=t): each member's reported cosine with its representative is >= t."""
    groups = dedupe(corpus(), threshold=threshold)
    members = [cosine for group in groups.groups for _, cosine in group.members]
    assert all(cosine is not None and cosine >= threshold - 1e-9 for cosine in members)


@settings(max_examples=15, deadline=None)
@given(COSINES)
def test_a_near_duplicate_reaches_max_similarity_and_the_histogram_counts_it(
    limit: float,
) -> None:
    """select(max_similarity=S): a near-duplicate's cosine is >= S; no item whose nearest
    cosine (the histogram's) is below S is rejected as one."""
    result = select(corpus(), max_similarity=limit)
    near = [r for r in result.rejected if r.reason == "near_duplicate"]
    assert all(r.similarity is not None and r.similarity >= limit - 1e-9 for r in near)
    reaching = sum(cosine >= limit - 1e-9 for cosine in corpus().nearest_similarities())
    assert len(near) <= reaching
