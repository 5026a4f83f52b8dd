"""Task keys: read at a dotted path of a trace, or inferred from objectives and vectors."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation import infer_tasks
from knowledgepulse.curation.select import Candidate, ranking
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.trace.item import task_at
from tests.curation.strategies import Pool, pools

DOCUMENT: dict[str, Any] = {
    "id": "kp:trace:1",
    "metadata": {"task_id": "airline-7", "trial": 3, "tags": ["refund", {"k": [1, 2]}]},
    "extra": {"benchmark": {"split": "test", "index": None}},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("metadata.task_id", "airline-7"),
        ("metadata.trial", "3"),
        ("metadata.tags.0", "refund"),
        ("metadata.tags.1", '{"k":[1,2]}'),
        ("extra.benchmark.split", "test"),
        ("extra.benchmark", '{"index":null,"split":"test"}'),
        ("extra.benchmark.index", None),
        ("metadata.missing", None),
        ("metadata.tags.9", None),
        ("metadata.task_id.deeper", None),
    ],
)
def test_task_at_reads_any_dotted_path(path: str, expected: str | None) -> None:
    """Schema keys and unknown ones alike; non-strings as compact JSON; missing or null: None."""
    assert task_at(DOCUMENT, path) == expected


def test_runs_with_the_same_objective_are_one_task_named_by_the_best_run() -> None:
    """Equal objectives group without vectors; the task is the id of its best-scored run."""
    pool = [
        Candidate("kp:trace:b", 0.4),
        Candidate("kp:trace:a", 0.9),
        Candidate("kp:trace:c", 0.7),
    ]
    tasks = infer_tasks(pool, ["What is 2+2?", "What is 2+2?", "Name a prime"])
    assert tasks == ["kp:trace:a", "kp:trace:a", "kp:trace:c"]


def test_a_run_joins_the_task_whose_best_run_is_within_the_threshold() -> None:
    """Cosine 0.8 with a task's best run joins it at 0.65, not at 0.9; 0.6 and 0 do not."""
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32)
    pool = [Candidate("kp:trace:best", 0.9), Candidate("kp:trace:close", 0.5)]
    pool.append(Candidate("kp:trace:far", 0.1))
    tasks = infer_tasks(pool, ["one", "two", "three"], vectors, threshold=0.65)
    assert tasks == ["kp:trace:best", "kp:trace:best", "kp:trace:far"]
    assert infer_tasks(pool, ["one", "two", "three"], vectors, threshold=0.9) == [
        "kp:trace:best",
        "kp:trace:close",
        "kp:trace:far",
    ]


def test_a_run_whose_vector_is_not_compared_joins_by_its_objective_only() -> None:
    """``compared`` false: no cosine joins the run, nor leads a task others join by cosine."""
    vectors = np.array([[1.0, 0.0], [0.99, 0.14], [0.98, 0.2]], dtype=np.float32)
    pool = [Candidate("kp:trace:a", 0.9), Candidate("kp:trace:b", 0.5)]
    pool.append(Candidate("kp:trace:c", 0.1))
    objectives = ["one", "two", "one"]
    assert infer_tasks(pool, objectives, vectors) == ["kp:trace:a"] * 3
    apart = infer_tasks(pool, objectives, vectors, compared=[False, True, True])
    assert apart == ["kp:trace:a", "kp:trace:b", "kp:trace:a"]


@given(pools(), st.sampled_from([0.5, 0.9, 1.0]), st.randoms())
def test_inferred_tasks_do_not_depend_on_input_order(
    pool: Pool, threshold: float, rng: random.Random
) -> None:
    """Shuffled candidates get the same tasks."""
    objectives = [f"objective {int(c.score * 10) % 3}" for c in pool.candidates]
    order = list(range(len(pool.candidates)))
    rng.shuffle(order)
    tasks = infer_tasks(pool.candidates, objectives, pool.vectors, threshold=threshold)
    shuffled = pool.permuted(order)
    again = infer_tasks(
        shuffled.candidates, [objectives[i] for i in order], shuffled.vectors, threshold=threshold
    )
    assert again == [tasks[i] for i in order]


@given(pools(), st.sampled_from([0.5, 0.9]))
def test_every_run_is_within_the_threshold_of_its_tasks_best_run_or_shares_an_objective(
    pool: Pool, threshold: float
) -> None:
    """A task is named by its best run; each other run shares an objective or is close to it."""
    # Unique ids: two runs named by one id would be one task by name.
    pool = Pool(
        [replace(c, key=f"kp:trace:{i}") for i, c in enumerate(pool.candidates)], pool.vectors
    )
    objectives = [f"objective {i % 4}" for i in range(len(pool.candidates))]
    tasks = infer_tasks(pool.candidates, objectives, pool.vectors, threshold=threshold)
    position = {index: rank for rank, index in enumerate(ranking(pool.candidates))}
    first_of: dict[str, int] = {}
    for index in sorted(position, key=position.__getitem__):
        first_of.setdefault(tasks[index], index)
    for index, task in enumerate(tasks):
        best = first_of[task]
        assert pool.candidates[best].key == task
        assert position[best] <= position[index]
        same_objective = any(
            objectives[other] == objectives[index] and tasks[other] == task
            for other in range(len(tasks))
            if position[other] < position[index]
        )
        close = float(pool.vectors[best] @ pool.vectors[index]) >= threshold - 1e-6
        assert index == best or same_objective or close


def at(*degrees: float) -> np.ndarray:
    """Unit vectors in the plane at the given angles."""
    radians = np.radians(degrees)
    return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


def test_a_task_of_failed_runs_joins_the_successful_task_it_was_split_from() -> None:
    """A failed run below 0.65 of the best run, 0.70 on average with its runs, joins them."""
    vectors = at(0, 20, 55, 180)  # the failed run: cosines 0.57 and 0.82 with the two
    pool = [Candidate("kp:trace:a", 0.9), Candidate("kp:trace:b", 0.8)]
    pool += [Candidate("kp:trace:fragment", 0.5), Candidate("kp:trace:other", 0.4)]
    objectives = ["one", "two", "three", "four"]
    failed = [False, False, True, True]
    walked = infer_tasks(pool, objectives, vectors, threshold=0.65)
    assert walked == ["kp:trace:a", "kp:trace:a", "kp:trace:fragment", "kp:trace:other"]
    joined = infer_tasks(pool, objectives, vectors, threshold=0.65, failed=failed, joined=0.55)
    assert joined == ["kp:trace:a", "kp:trace:a", "kp:trace:a", "kp:trace:other"]
    # Nothing joins at a higher bar, nor where every run failed or none did.
    for bar, outcomes in ((0.75, failed), (0.55, [True] * 4), (0.55, [False] * 4)):
        assert (
            infer_tasks(pool, objectives, vectors, threshold=0.65, failed=outcomes, joined=bar)
            == walked
        )


def test_a_failed_task_joins_only_a_successful_task_whose_nearest_it_is() -> None:
    """The successful task nearest to the failed one is nearer to another: none join."""
    vectors = at(0, 52, -55)  # the second successful run 0.62 from the first, the failed 0.57
    pool = [Candidate("kp:trace:w", 0.9), Candidate("kp:trace:w2", 0.85)]
    pool.append(Candidate("kp:trace:lost", 0.3))
    objectives = ["one", "two", "three"]
    tasks = infer_tasks(
        pool, objectives, vectors, threshold=0.65, failed=[False, False, True], joined=0.55
    )
    assert tasks == ["kp:trace:w", "kp:trace:w2", "kp:trace:lost"]
    alone = infer_tasks(
        pool[::2], objectives[::2], vectors[::2], threshold=0.65, failed=[False, True], joined=0.55
    )
    assert alone == ["kp:trace:w", "kp:trace:w"]


@given(pools(), st.sampled_from([0.5, 0.9]), st.data())
def test_joining_only_puts_failed_tasks_into_successful_ones(
    pool: Pool, threshold: float, data: st.DataObject
) -> None:
    """Each task joined is the walk's tasks of one successful task and failed ones, whole."""
    objectives = [f"objective {i % 4}" for i in range(len(pool.candidates))]
    failed = data.draw(st.lists(st.booleans(), min_size=len(objectives), max_size=len(objectives)))
    walked = infer_tasks(pool.candidates, objectives, pool.vectors, threshold=threshold)
    joined = infer_tasks(
        pool.candidates, objectives, pool.vectors, threshold=threshold, failed=failed, joined=0.3
    )
    parts: dict[str, set[str]] = {}
    won = {walk for walk, lost in zip(walked, failed, strict=True) if not lost}
    for walk, task in zip(walked, joined, strict=True):
        parts.setdefault(task, set()).add(walk)
    for task, walks in parts.items():
        successful = walks & won
        assert len(successful) <= 1
        assert len(walks) == 1 or len(successful) == 1
        assert task in walks  # named by a best run of its own


@given(pools(), st.sampled_from([0.5, 0.9]), st.randoms(), st.data())
def test_joined_tasks_do_not_depend_on_input_order(
    pool: Pool, threshold: float, rng: random.Random, data: st.DataObject
) -> None:
    """Shuffled candidates with their outcomes get the same tasks."""
    objectives = [f"objective {int(c.score * 10) % 3}" for c in pool.candidates]
    failed = data.draw(st.lists(st.booleans(), min_size=len(objectives), max_size=len(objectives)))
    order = list(range(len(pool.candidates)))
    rng.shuffle(order)
    settings: dict[str, Any] = {"threshold": threshold, "joined": 0.3}
    tasks = infer_tasks(pool.candidates, objectives, pool.vectors, failed=failed, **settings)
    shuffled = pool.permuted(order)
    again = infer_tasks(
        shuffled.candidates,
        [objectives[i] for i in order],
        shuffled.vectors,
        failed=[failed[i] for i in order],
        **settings,
    )
    assert again == [tasks[i] for i in order]


def test_lists_not_one_per_candidate_are_named_with_their_lengths() -> None:
    """Each list of the wrong length is named with its length, on one line.

    Before: ``2 candidates, 1 objectives, vectors None``, which named no wrong list (and
    printed the whole vectors array over several lines when they were the ones given).
    """
    pool = [Candidate("kp:trace:a", 0.5), Candidate("kp:trace:b", 0.9)]
    with pytest.raises(ScorerParameterError) as raised:
        infer_tasks(pool, ["x"], failed=[True, False, True])
    assert str(raised.value) == (
        "objectives has 1, failed has 3 for 2 candidates: give one per candidate, in their order"
    )
