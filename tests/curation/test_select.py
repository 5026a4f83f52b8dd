"""Score-first, diversity-aware selection: the laws it keeps and the reasons it gives."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation import Candidate, Selection, budget_for_top, select
from tests.curation.strategies import Pool, pools

budgets = st.none() | st.integers(min_value=0, max_value=12)
limits = st.none() | st.sampled_from([0.5, 0.9, 0.99, 1.0])
min_scores = st.none() | st.sampled_from([0.3, 0.5])


def _described(pool: Pool, selection: Selection) -> tuple[object, ...]:
    """The selection in terms of the candidates themselves, not their positions."""

    def who(index: int) -> tuple[str, float, bytes]:
        c = pool.candidates[index]
        return c.key, c.score, c.tiebreak

    return (
        [who(i) for i in selection.selected],
        [
            (
                who(r.index),
                r.reason,
                None if r.duplicate_of is None else who(r.duplicate_of),
                r.similarity,
            )
            for r in selection.rejected
        ],
    )


@given(pools(), budgets, limits, min_scores, st.booleans(), st.randoms())
def test_selection_does_not_depend_on_input_order(  # noqa: PLR0917 - hypothesis's drawn values
    pool: Pool,
    budget: int | None,
    limit: float | None,
    min_score: float | None,
    per_domain: bool,
    rng: random.Random,
) -> None:
    """Shuffling the candidates changes nothing: same picks, same rejections, same reasons."""
    order = list(range(len(pool.candidates)))
    rng.shuffle(order)
    shuffled = pool.permuted(order)
    first, second = (
        select(
            p.candidates,
            p.vectors,
            budget=budget,
            max_similarity=limit,
            min_score=min_score,
            per_domain=per_domain,
        )
        for p in (pool, shuffled)
    )
    assert _described(pool, first) == _described(shuffled, second)


@given(pools(), budgets, limits, min_scores, st.booleans())
def test_selection_keeps_every_limit_and_accounts_for_every_candidate(
    pool: Pool, budget: int | None, limit: float | None, min_score: float | None, per_domain: bool
) -> None:
    """Never over budget, no selected pair at the similarity limit, each candidate once."""
    selection = select(
        pool.candidates,
        pool.vectors,
        budget=budget,
        max_similarity=limit,
        min_score=min_score,
        per_domain=per_domain,
    )
    chosen = list(selection.selected)
    if budget is not None:
        assert len(chosen) <= budget
    if limit is not None and chosen:
        rows = pool.vectors[chosen]
        similarity = rows @ rows.T
        np.fill_diagonal(similarity, -1.0)
        assert similarity.max() < limit + 1e-6
    assert sorted(chosen + [r.index for r in selection.rejected]) == list(
        range(len(pool.candidates))
    )
    for rejection in selection.rejected:
        score = pool.candidates[rejection.index].score
        if rejection.reason == "below_min_score":
            assert min_score is not None
            assert score < min_score
        elif rejection.reason == "near_duplicate":
            assert limit is not None
            assert rejection.duplicate_of in chosen
            assert rejection.similarity is not None
            assert rejection.similarity >= limit
        else:
            assert len(chosen) == budget
    if min_score is not None:
        assert all(pool.candidates[i].score >= min_score for i in chosen)


@given(pools(), budgets, min_scores)
def test_without_a_similarity_limit_the_best_scores_are_selected(
    pool: Pool, budget: int | None, min_score: float | None
) -> None:
    """Score-first: the selection is the top of the ranking (score, then id) above the minimum."""
    selection = select(pool.candidates, budget=budget, min_score=min_score)
    eligible = sorted(
        (c.score * -1, c.key, c.tiebreak)
        for c in pool.candidates
        if min_score is None or c.score >= min_score
    )
    expected = eligible if budget is None else eligible[:budget]
    got = [
        (-pool.candidates[i].score, pool.candidates[i].key, pool.candidates[i].tiebreak)
        for i in selection.selected
    ]
    assert got == expected


@given(pools(), budgets, limits)
def test_per_domain_shares_the_budget_evenly(
    pool: Pool, budget: int | None, limit: float | None
) -> None:
    """A domain left with unselected eligible traces has at most one fewer than any other."""
    selection = select(
        pool.candidates, pool.vectors, budget=budget, max_similarity=limit, per_domain=True
    )
    counts = Counter(pool.candidates[i].domain for i in selection.selected)
    starved = {
        pool.candidates[r.index].domain for r in selection.rejected if r.reason == "over_budget"
    }
    for domain in starved:
        assert counts[domain] >= max(counts.values(), default=0) - 1


def _candidates(*specs: tuple[str, float, str]) -> list[Candidate]:
    return [Candidate(key, score, domain) for key, score, domain in specs]


def test_near_duplicate_is_rejected_naming_the_better_trace_and_the_similarity() -> None:
    """Of two traces at cosine 0.96, the lower-scored is rejected as the other's duplicate."""
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)
    pool = _candidates(("kp:trace:a", 0.5, "x"), ("kp:trace:b", 0.9, "x"), ("kp:trace:c", 0.4, "x"))
    selection = select(pool, vectors, max_similarity=0.95)
    assert selection.selected == (1, 2)
    [rejection] = selection.rejected
    assert (rejection.index, rejection.reason, rejection.duplicate_of) == (0, "near_duplicate", 1)
    assert rejection.similarity is not None
    assert abs(rejection.similarity - 0.96) < 1e-6


def test_equal_scores_are_ranked_by_id() -> None:
    """With a budget of one and equal scores, the smaller id wins, wherever it stands."""
    pool = _candidates(("kp:trace:b", 0.5, "x"), ("kp:trace:a", 0.5, "x"))
    selection = select(pool, budget=1)
    assert selection.selected == (1,)
    assert selection.rejected[0].reason == "over_budget"


def test_per_domain_round_robin_leaves_a_small_domains_share_to_the_others() -> None:
    """Budget 4 over a domain with one trace and one with five: 1 + 3, not 1 + 2."""
    pool = _candidates(
        ("kp:trace:q", 0.2, "qa"), *[(f"kp:trace:c{i}", 0.9 - i / 10, "code") for i in range(5)]
    )
    selection = select(pool, budget=4, per_domain=True)
    assert Counter(pool[i].domain for i in selection.selected) == {"qa": 1, "code": 3}
    # Without it the low-scoring qa trace loses to code.
    assert all(pool[i].domain == "code" for i in select(pool, budget=4).selected)


def test_top_percent_rounds_down() -> None:
    """The top 10% of 735 traces is 73 traces, never 74."""
    assert budget_for_top(10, 735) == 73
    assert budget_for_top(100, 735) == 735
    assert budget_for_top(10, 5) == 0
