"""Near-duplicate groups: representatives, members, and independence from order."""

from __future__ import annotations

import dataclasses
import importlib
import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation import dedupe, select
from knowledgepulse.curation.corpus import leave_one_out_nearest
from knowledgepulse.curation.select import Candidate, dedupe_by_task
from tests.curation.strategies import Pool, pools

thresholds = st.sampled_from([0.5, 0.9, 1.0])
select_module = importlib.import_module("knowledgepulse.curation.select")  # the package's
# ``select`` is the function


@given(pools(), thresholds)
def test_members_are_close_to_their_representative_and_representatives_are_not(
    pool: Pool, threshold: float
) -> None:
    """Each member reaches the threshold with its representative, which outscores it."""
    groups = dedupe(pool.candidates, pool.vectors, threshold=threshold)
    representatives = [g.representative for g in groups]
    for group in groups:
        kept = pool.candidates[group.representative]
        for index, similarity in group.members:
            assert similarity is not None
            assert similarity >= threshold
            assert (-kept.score, kept.key) <= (
                -pool.candidates[index].score,
                pool.candidates[index].key,
            )
    if len(representatives) > 1:
        rows = pool.vectors[representatives]
        matrix = rows @ rows.T
        np.fill_diagonal(matrix, -1.0)
        assert matrix.max() < threshold + 1e-6


@given(pools(), thresholds, st.randoms())
def test_groups_do_not_depend_on_input_order(
    pool: Pool, threshold: float, rng: random.Random
) -> None:
    """Shuffled input, same groups with the same representatives."""
    order = list(range(len(pool.candidates)))
    rng.shuffle(order)
    shuffled = pool.permuted(order)

    def described(p: Pool) -> list[object]:
        def who(i: int) -> tuple[str, bytes]:
            return p.candidates[i].key, p.candidates[i].tiebreak

        return [
            (who(g.representative), [(who(i), s) for i, s in g.members])
            for g in dedupe(p.candidates, p.vectors, threshold=threshold)
        ]

    assert described(pool) == described(shuffled)


def test_the_best_scored_copy_represents_its_group() -> None:
    """Three copies of one text: the highest score is kept, the others are its members."""
    vectors = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]], dtype=np.float32)
    pool = [
        Candidate("kp:trace:a", 0.3),
        Candidate("kp:trace:b", 0.8),
        Candidate("kp:trace:c", 0.8),
        Candidate("kp:trace:d", 0.9),
    ]
    [group] = dedupe(pool, vectors, threshold=0.95)
    assert group.representative == 1  # 0.8 ties with c; b is the smaller id
    assert [index for index, _ in group.members] == [2, 0]


@given(pools(tasks=True))
def test_by_task_the_groups_are_the_tasks_of_two_or_more_runs(pool: Pool) -> None:
    """Each group is one task's runs under its best (score, then id); no task, no group."""
    groups = dedupe_by_task(pool.candidates, pool.vectors)
    by_task: dict[str, set[int]] = {}
    for index, candidate in enumerate(pool.candidates):
        if candidate.task is not None:
            by_task.setdefault(candidate.task, set()).add(index)
    found = {frozenset((group.representative, *(m for m, _ in group.members))) for group in groups}
    assert found == {frozenset(runs) for runs in by_task.values() if len(runs) > 1}
    for group in groups:
        kept = pool.candidates[group.representative]
        for index, similarity in group.members:
            member = pool.candidates[index]
            assert (-kept.score, kept.key) <= (-member.score, member.key)
            expected = float(pool.vectors[group.representative] @ pool.vectors[index])
            assert similarity == expected


def test_by_task_without_vectors_leaves_the_cosines_unknown() -> None:
    """Without vectors a task's group still forms; its members' cosines are None."""
    runs = [Candidate(f"kp:trace:{n}", 0.5, task="t") for n in range(3)]
    [group] = dedupe_by_task(runs)
    assert group.representative == 0
    assert group.members == ((1, None), (2, None))


@given(pools(), thresholds, st.sampled_from([1, 2, 3, 1024]))
def test_the_walk_in_blocks_groups_as_select_picks(
    pool: Pool, threshold: float, block: int
) -> None:
    """dedupe's blocks group as select picks, whatever the block's size.

    The same picks, and each near-duplicate under the same pick, except where two picks tie
    for it (within 1e-5): products of other shapes round apart and may break a tie either way.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(select_module, "WALK_BLOCK", block)
        groups = dedupe(pool.candidates, pool.vectors, threshold=threshold)
    blind = [dataclasses.replace(candidate, task=None) for candidate in pool.candidates]
    selection = select(blind, pool.vectors, max_similarity=threshold)
    expected: dict[int, int] = {}
    for rejection in selection.rejected:
        assert rejection.duplicate_of is not None
        expected[rejection.index] = rejection.duplicate_of
    found = {member: group.representative for group in groups for member, _ in group.members}
    assert found.keys() == expected.keys()  # so the picks are the same too
    for member, kept in found.items():
        if kept != expected[member]:
            tie = pool.vectors[member] @ pool.vectors[[kept, expected[member]]].T
            assert abs(float(tie[0]) - float(tie[1])) <= 1e-5
    rank = {index: number for number, index in enumerate(expected)}  # the ranking's order
    picks = [group.representative for group in groups]
    assert picks == [index for index in selection.selected if index in picks]
    for group in groups:
        numbers = [rank[member] for member, _ in group.members]
        assert numbers == sorted(numbers)
    # One product for a block, one a query: within float32's last digits (and a tie's 1e-5).
    similarity = {rejection.index: rejection.similarity for rejection in selection.rejected}
    for group in groups:
        for member, cosine in group.members:
            assert cosine == pytest.approx(similarity[member], abs=1e-5)


@given(pools(), thresholds)
def test_leaving_out_whoever_has_no_near_copy_groups_the_same(pool: Pool, threshold: float) -> None:
    """With each candidate's nearest other (another id's, ``inf`` for a recurring id), the same."""
    keys = [candidate.key for candidate in pool.candidates]
    _, cosines = leave_one_out_nearest(pool.vectors, keys)
    nearest = [
        math.inf if keys.count(key) > 1 or math.isnan(cosine) else float(cosine)
        for key, cosine in zip(keys, cosines, strict=True)
    ]
    walked = dedupe(pool.candidates, pool.vectors, threshold=threshold, nearest=nearest)
    assert walked == dedupe(pool.candidates, pool.vectors, threshold=threshold)


@given(pools(), thresholds)
def test_vectors_held_in_half_precision_group_as_their_float32_values(
    pool: Pool, threshold: float
) -> None:
    """float16 rows (a corpus past the exact limit) are compared as float32 products."""
    half = pool.vectors.astype(np.float16)
    widened = half.astype(np.float32)
    assert dedupe(pool.candidates, half, threshold=threshold) == dedupe(
        pool.candidates, widened, threshold=threshold
    )
    assert dedupe_by_task(pool.candidates, half) == dedupe_by_task(pool.candidates, widened)


@given(pools(), thresholds)
def test_the_groups_are_disjoint_and_of_the_input(pool: Pool, threshold: float) -> None:
    """Each candidate is in one group at most, as its representative or as a member (so the
    kept and the dropped partition the input); every group has a member."""
    groups = dedupe(pool.candidates, pool.vectors, threshold=threshold)
    placed = [i for g in groups for i in (g.representative, *(m for m, _ in g.members))]
    assert len(placed) == len(set(placed))
    assert set(placed) <= set(range(len(pool.candidates)))
    assert all(g.members for g in groups)
