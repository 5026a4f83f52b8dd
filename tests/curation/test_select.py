"""Score-first, diversity-aware selection: the laws it keeps and the reasons it gives."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from knowledgepulse.curation import dedupe, select
from knowledgepulse.curation.select import (
    Candidate,
    Selection,
    budget_for_top,
    is_top_percent,
    ranking,
)
from knowledgepulse.errors import ScorerParameterError, VectorError
from tests.curation.strategies import Pool, pools

budgets = st.none() | st.integers(min_value=0, max_value=12)
limits = st.none() | st.sampled_from([0.5, 0.9, 0.99, 1.0])
min_scores = st.none() | st.sampled_from([0.3, 0.4, 0.5])  # 0.4: a score at the minimum


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


per_task_limits = st.none() | st.integers(min_value=1, max_value=3)


@given(
    pools() | pools(tasks=True),
    budgets,
    limits,
    min_scores,
    per_task_limits,
    st.booleans(),
    st.randoms(),
)
def test_selection_does_not_depend_on_input_order(  # noqa: PLR0917 - hypothesis's drawn values
    pool: Pool,
    budget: int | None,
    limit: float | None,
    min_score: float | None,
    per_task: int | None,
    per_domain: bool,
    rng: random.Random,
) -> None:
    """Shuffling the candidates changes nothing: same picks, same rejections, same reasons.

    With tasks and a per-task limit too.
    """
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
            per_task=per_task,
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


@given(pools(tasks=True), budgets, limits, st.integers(min_value=1, max_value=3))
def test_per_domain_and_per_task_combine_each_law_kept(
    pool: Pool, budget: int | None, limit: float | None, per_task: int
) -> None:
    """Together the domains still share the budget evenly, and no task has more than K.

    A domain whose tasks are full (``over_per_task``) leaves its share to the others, as a
    domain short of traces does (docs/curating-datasets.md, ``kp select --per-domain --per-task``).
    """
    selection = select(
        pool.candidates,
        pool.vectors,
        budget=budget,
        max_similarity=limit,
        per_domain=True,
        per_task=per_task,
    )
    picked = [pool.candidates[i] for i in selection.selected]
    counts = Counter(candidate.domain for candidate in picked)
    assert max(Counter(candidate.task for candidate in picked).values(), default=0) <= per_task
    starved = {
        pool.candidates[r.index].domain for r in selection.rejected if r.reason == "over_budget"
    }
    for domain in starved:
        assert counts[domain] >= max(counts.values(), default=0) - 1


def _candidates(*specs: tuple[str, float, str]) -> list[Candidate]:
    return [Candidate(key, score, domain) for key, score, domain in specs]


@pytest.mark.parametrize("shape", [(3,), (2, 2), (4, 2)])
def test_vectors_not_one_row_a_candidate_are_refused(shape: tuple[int, ...]) -> None:
    """The docstring's ValueError: a row per candidate, never a silent mismatch or IndexError."""
    pool = _candidates(("kp:trace:a", 0.5, "x"), ("kp:trace:b", 0.9, "x"), ("kp:trace:c", 0.4, "x"))
    with pytest.raises(ValueError, match=r"shape \(\d+,( \d+)?\) for 3 candidates"):
        select(pool, np.ones(shape, dtype=np.float32), max_similarity=0.9)


def test_vectors_not_one_row_a_candidate_are_told_with_the_shape_wanted() -> None:
    """The error names the vectors' shape and the one to give, in select and dedupe alike.

    Before: ``(2, 2) vectors for 3 candidates``, a ValueError that said neither what the rows
    are for nor the shape that fits.
    """
    pool = _candidates(("kp:trace:a", 0.5, "x"), ("kp:trace:b", 0.9, "x"), ("kp:trace:c", 0.4, "x"))
    wrong = np.ones((2, 2), dtype=np.float32)
    for call in (
        lambda: select(pool, wrong, max_similarity=0.9),
        lambda: dedupe(pool, wrong, threshold=0.9),
    ):
        with pytest.raises(VectorError) as raised:
            call()
        assert str(raised.value) == (
            "the vectors have shape (2, 2) for 3 candidates: give one row per candidate, "
            "row i for candidates[i] (shape (3, dimensions))"
        )


@pytest.mark.parametrize(
    ("setting", "value", "least"), [("budget", -1, 0), ("per_task", -2, 1), ("per_task", 0, 1)]
)
def test_a_count_below_its_least_is_refused_naming_the_parameter(
    setting: str, value: int, least: int
) -> None:
    """``budget=-1`` is a mistake told as the run layer tells it, not a budget of 0 (before:
    clamped, nothing selected and no word why); ``per_task=0`` too, as ``runs.select`` says
    (before: every candidate rejected here)."""
    pool = _candidates(("kp:trace:a", 0.5, "x"), ("kp:trace:b", 0.9, "x"))
    with pytest.raises(ScorerParameterError) as raised:
        select(pool, budget=value) if setting == "budget" else select(pool, per_task=value)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == f"{setting}={value}: give a whole number of {least} or more"


def test_a_cosine_exactly_at_the_limit_is_a_near_duplicate() -> None:
    """A cosine that reaches the limit is rejected: at 1.0 a copy is a duplicate, similarity 1."""
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    pool = _candidates(("kp:trace:a", 0.9, "x"), ("kp:trace:b", 0.5, "x"), ("kp:trace:c", 0.4, "x"))
    selection = select(pool, vectors, max_similarity=1.0)
    assert selection.selected == (0, 2)
    assert [(r.index, r.reason, r.similarity) for r in selection.rejected] == [
        (1, "near_duplicate", 1.0)
    ]


def test_a_near_duplicate_left_when_the_budget_is_spent_says_so() -> None:
    """Past the budget a copy of a pick is a near_duplicate (at the limit), not over_budget."""
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    pool = _candidates(("kp:trace:a", 0.9, "x"), ("kp:trace:b", 0.5, "x"), ("kp:trace:c", 0.4, "x"))
    selection = select(pool, vectors, budget=1, max_similarity=1.0)  # reached, not passed
    assert selection.selected == (0,)
    assert [(r.index, r.reason, r.duplicate_of) for r in selection.rejected] == [
        (1, "near_duplicate", 0),
        (2, "over_budget", None),
    ]


@given(pools(), budgets, st.sampled_from([0.5, 0.9, 0.99, 1.0]), st.booleans())
def test_a_near_duplicates_similarity_is_a_cosine_at_or_above_the_limit(
    pool: Pool, budget: int | None, limit: float, per_domain: bool
) -> None:
    """The similarity a rejection reports lies in [-1, 1] (a float32 product can pass 1)."""
    selection = select(
        pool.candidates, pool.vectors, budget=budget, max_similarity=limit, per_domain=per_domain
    )
    for rejection in selection.rejected:
        if rejection.similarity is not None:
            assert limit <= rejection.similarity <= 1.0


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


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=10, max_value=1000))
@example(count=375, tenths=184)  # 375 * 18.4 / 100 is 68.99999999999999 in floats: 69 it is
def test_a_top_share_in_tenths_of_a_percent_is_exact(count: int, tenths: int) -> None:
    """--top 18.4 of 375 traces is 69 (375 x 18.4% exactly), not 68 by a float's rounding."""
    assert budget_for_top(tenths / 10, count) == count * tenths // 1000


@given(st.floats(allow_nan=True))
@example(percent=1.0)
@example(percent=100.0)
@example(percent=150.0)
def test_a_top_share_is_a_percentage_from_1_to_100(percent: float) -> None:
    """docs/curating-datasets.md: --top is 1 to 100 (both ends taken); a fraction is refused."""
    assert is_top_percent(percent) == (1.0 <= percent <= 100.0)


@given(pools(tasks=True), budgets, limits, per_task_limits, st.booleans())
def test_per_task_never_keeps_more_than_k_of_a_task(
    pool: Pool, budget: int | None, limit: float | None, per_task: int | None, per_domain: bool
) -> None:
    """At most K picks a task; a trace rejected for it belongs to a task that has K."""
    selection = select(
        pool.candidates,
        pool.vectors,
        budget=budget,
        max_similarity=limit,
        per_domain=per_domain,
        per_task=per_task,
    )
    counts = Counter(pool.candidates[i].task for i in selection.selected)
    if per_task is not None:
        assert max(counts.values(), default=0) <= per_task
    for rejection in selection.rejected:
        if rejection.reason == "over_per_task":
            assert counts[pool.candidates[rejection.index].task] == per_task
    assert sorted([*selection.selected, *(r.index for r in selection.rejected)]) == list(
        range(len(pool.candidates))
    )


@given(pools(tasks=True), min_scores, per_task_limits, st.integers(min_value=0, max_value=3))
def test_every_task_above_the_minimum_is_covered_when_the_budget_allows(
    pool: Pool, min_score: float | None, per_task: int | None, spare: int
) -> None:
    """A budget of at least one pick per eligible task gives every such task a pick."""
    eligible = {c.task for c in pool.candidates if min_score is None or c.score >= min_score}
    selection = select(
        pool.candidates, budget=len(eligible) + spare, min_score=min_score, per_task=per_task
    )
    assert {pool.candidates[i].task for i in selection.selected} == eligible


@given(pools(tasks=True), budgets, min_scores)
def test_tasks_take_turns_and_each_task_gives_its_best_first(
    pool: Pool, budget: int | None, min_score: float | None
) -> None:
    """No task gets a second pick while an eligible task has none; within a task, best first."""
    selection = select(pool.candidates, budget=budget, min_score=min_score)
    eligible = [
        i
        for i in ranking(pool.candidates)
        if min_score is None or pool.candidates[i].score >= min_score
    ]
    tasks = {pool.candidates[i].task for i in eligible}
    picks = [pool.candidates[i].task for i in selection.selected]
    first_round = picks[: len(tasks)]
    assert len(set(first_round)) == len(first_round)
    for task in tasks:
        runs = [i for i in eligible if pool.candidates[i].task == task]
        chosen = [i for i in selection.selected if pool.candidates[i].task == task]
        assert chosen == runs[: len(chosen)]


def test_per_task_keeps_the_best_k_runs_of_each_task() -> None:
    """Best of N: two tasks of three runs, K = 2, no budget: the two best of each."""
    pool = [
        Candidate(f"kp:trace:{task}{run}", score, task=task)
        for task, scores in (("a", (0.9, 0.5, 0.7)), ("b", (0.2, 0.4, 0.3)))
        for run, score in enumerate(scores)
    ]
    selection = select(pool, per_task=2)
    # Picked in turns: each task's best, then each task's second.
    assert [pool[i].key for i in selection.selected] == [
        "kp:trace:a0",
        "kp:trace:b1",
        "kp:trace:a2",
        "kp:trace:b2",
    ]
    assert {r.reason for r in selection.rejected} == {"over_per_task"}


def test_a_budget_goes_to_a_new_task_before_a_better_second_run() -> None:
    """Budget 2: the best run of task b, not the second-best run of task a."""
    pool = [
        Candidate("kp:trace:a1", 0.9, task="a"),
        Candidate("kp:trace:a2", 0.8, task="a"),
        Candidate("kp:trace:b1", 0.3, task="b"),
    ]
    assert select(pool, budget=2).selected == (0, 2)
    # Without tasks it is plain score-first.
    untasked = [Candidate(c.key, c.score) for c in pool]
    assert select(untasked, budget=2).selected == (0, 1)


def test_a_tasks_successful_runs_are_taken_before_its_failed_ones() -> None:
    """Per task K = 2: the better failed run waits until the successful ones are taken."""
    pool = [
        Candidate("kp:trace:a1", 0.9, task="a"),
        Candidate("kp:trace:a2", 0.8, task="a", failed=True),
        Candidate("kp:trace:a3", 0.4, task="a"),
        Candidate("kp:trace:b1", 0.7, task="b", failed=True),
    ]
    selection = select(pool, per_task=2)
    assert [pool[i].key for i in selection.selected] == [
        "kp:trace:a1",
        "kp:trace:b1",
        "kp:trace:a3",
    ]
    assert [(pool[r.index].key, r.reason) for r in selection.rejected] == [
        ("kp:trace:a2", "over_per_task")
    ]


def test_a_task_with_a_successful_run_left_gets_its_next_pick_first() -> None:
    """Budget 3: the second round starts with the task whose next run succeeded."""
    pool = [
        Candidate("kp:trace:a1", 0.9, task="a"),
        Candidate("kp:trace:a2", 0.8, task="a", failed=True),
        Candidate("kp:trace:b1", 0.5, task="b"),
        Candidate("kp:trace:b2", 0.3, task="b"),
    ]
    assert [pool[i].key for i in select(pool, budget=3).selected] == [
        "kp:trace:a1",
        "kp:trace:b1",
        "kp:trace:b2",
    ]


def test_a_task_further_ahead_still_goes_before_a_failed_run() -> None:
    """Budget 4: a's third successful run before b's failed second, though a has more picks."""
    pool = [
        Candidate("kp:trace:a1", 0.9, task="a"),
        Candidate("kp:trace:a2", 0.8, task="a"),
        Candidate("kp:trace:a3", 0.7, task="a"),
        Candidate("kp:trace:b1", 0.6, task="b"),
        Candidate("kp:trace:b2", 0.95, task="b", failed=True),
    ]
    assert [pool[i].key for i in select(pool, budget=4).selected] == [
        "kp:trace:a1",
        "kp:trace:b1",
        "kp:trace:a2",
        "kp:trace:a3",
    ]


def test_by_outcome_ranks_the_outcome_first_then_success_then_score() -> None:
    """The highest outcome first; equal outcomes by success, then score; none last."""
    pool = [
        Candidate("kp:trace:a", 0.9, outcome=0.6),
        Candidate("kp:trace:b", 0.2, outcome=1.0),
        Candidate("kp:trace:c", 0.3, outcome=1.0, failed=True),
        Candidate("kp:trace:d", 0.5, outcome=1.0),
        Candidate("kp:trace:e", 1.0),
    ]
    assert [pool[i].key[-1] for i in ranking(pool, by_outcome=True)] == list("dbcae")
    assert [pool[i].key[-1] for i in ranking(pool)] == list("eadbc")


def test_min_outcome_rejects_the_runs_below_it_and_those_without_one() -> None:
    """Below the minimum or missing: below_min_reward; the minimum itself is kept."""
    pool = [
        Candidate("kp:trace:a", 0.9, outcome=0.4),
        Candidate("kp:trace:b", 0.2, outcome=0.5),
        Candidate("kp:trace:c", 0.8),
    ]
    selection = select(pool, min_outcome=0.5)
    assert selection.selected == (1,)
    assert {(r.index, r.reason) for r in selection.rejected} == {
        (0, "below_min_reward"),
        (2, "below_min_reward"),
    }


@given(pools(tasks=True, outcomes=True))
def test_best_of_n_by_outcome_keeps_each_tasks_highest_outcome(pool: Pool) -> None:
    """Per task 1 by outcome: each task's pick has its highest outcome, then success, then score."""
    selection = select(pool.candidates, per_task=1, by_outcome=True)

    def merit(c: Candidate) -> tuple[bool, float, bool, float]:
        return (c.outcome is not None, c.outcome or 0.0, not c.failed, c.score)

    picked = {pool.candidates[i].task: pool.candidates[i] for i in selection.selected}
    assert picked.keys() == {c.task for c in pool.candidates}
    for task, pick in picked.items():
        assert merit(pick) == max(merit(c) for c in pool.candidates if c.task == task)


@given(
    pools(tasks=True, outcomes=True),
    budgets,
    per_task_limits,
    st.booleans(),
    st.none() | st.sampled_from([0.5, 1.0]),
    st.randoms(),
)
def test_selection_by_outcome_does_not_depend_on_input_order(  # noqa: PLR0917 - drawn values
    pool: Pool,
    budget: int | None,
    per_task: int | None,
    by_outcome: bool,
    min_outcome: float | None,
    rng: random.Random,
) -> None:
    """Outcomes, success and a minimum outcome keep the selection free of the input order."""
    order = list(range(len(pool.candidates)))
    rng.shuffle(order)
    shuffled = pool.permuted(order)
    first, second = (
        select(
            p.candidates,
            budget=budget,
            per_task=per_task,
            by_outcome=by_outcome,
            min_outcome=min_outcome,
        )
        for p in (pool, shuffled)
    )
    assert _described(pool, first) == _described(shuffled, second)


@given(
    pools(tasks=True, outcomes=True) | pools(),
    st.integers(min_value=0, max_value=12),
    limits,
    min_scores,
    per_task_limits,
    st.booleans(),
    st.booleans(),
)
def test_the_picks_under_a_budget_of_n_are_the_first_n_picks_without_one(  # noqa: PLR0917 - drawn
    pool: Pool,
    budget: int,
    limit: float | None,
    min_score: float | None,
    per_task: int | None,
    per_domain: bool,
    by_outcome: bool,
) -> None:
    """``selected`` is in the order picked, so its first N are a selection of N (the docs' law)."""

    def picks(cap: int | None) -> tuple[int, ...]:
        return select(
            pool.candidates,
            pool.vectors,
            budget=cap,
            max_similarity=limit,
            min_score=min_score,
            per_task=per_task,
            per_domain=per_domain,
            by_outcome=by_outcome,
        ).selected

    assert picks(budget) == picks(None)[:budget]


@given(pools(tasks=True, outcomes=True), budgets, per_task_limits, st.booleans())
def test_without_by_outcome_the_outcomes_change_no_pick(
    pool: Pool, budget: int | None, per_task: int | None, per_domain: bool
) -> None:
    """Score-first unless asked: outcomes rank only with by_outcome (its default is off)."""
    plain = [replace(c, outcome=None) for c in pool.candidates]
    first, second = (
        select(candidates, budget=budget, per_task=per_task, per_domain=per_domain)
        for candidates in (pool.candidates, plain)
    )
    assert first.selected == second.selected
