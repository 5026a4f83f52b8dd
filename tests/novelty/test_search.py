"""Batch scans: the cache's answers one query at a time, within 1e-6; the window, TTL, ids."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from knowledgepulse.errors import VectorError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.search import BLOCK_BYTES, frozen_nearest, online_nearest
from knowledgepulse.novelty.cache.vector_cache import Nearest
from knowledgepulse.novelty.windows import unit_rows

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class TickingClock:
    """Moves on by ``step`` ms at every reading, unless ``stopped_at`` is set."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.readings = 0
        self.stopped_at: float | None = None

    def __call__(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at
        self.readings += 1
        return (self.readings - 1) * self.step


@dataclass
class Scenario:
    """A cache's settings, what it held before, and a batch to score."""

    dimensions: int
    max_elements: int
    ttl_ms: float | None
    clock_step: float
    prior: NDArray[np.float32]
    batch: NDArray[np.float32]
    batch_ids: list[str | None]
    block_bytes: int | None
    """A budget so small that the keys are scanned a few at a time (``None``: the default)."""

    @property
    def scan_bytes(self) -> int:
        """The drawn budget, or the default one."""
        return BLOCK_BYTES if self.block_bytes is None else self.block_bytes

    def cache(self, *, blocked: bool = False) -> VectorCache:
        """A cache holding the prior vectors, with a clock that moves on at every reading.

        ``blocked`` gives it the drawn scan budget; otherwise it scans everything at once.
        """
        cache = VectorCache(
            max_elements=self.max_elements,
            dimensions=self.dimensions,
            ttl_ms=self.ttl_ms,
            clock=TickingClock(self.clock_step),
            block_bytes=self.scan_bytes if blocked else BLOCK_BYTES,
        )
        for position, vector in enumerate(self.prior):
            cache.add(vector, id=f"prior-{position % 4}")
        return cache


@st.composite
def scenarios(draw: st.DrawFn, max_dimensions: int = 24) -> Scenario:
    """Vectors drawn from a small pool, rescaled and zeroed, so exact and near ties are common."""
    dimensions = draw(st.integers(1, max_dimensions))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pool = rng.normal(size=(draw(st.integers(1, 6)), dimensions)).astype(np.float32)

    def vectors(count: int) -> NDArray[np.float32]:
        rows = pool[rng.integers(0, len(pool), count)]
        rows = rows * rng.choice(np.array([1, 2, 3, 0.5, -1], dtype=np.float32), size=(count, 1))
        jitter = rng.random(count) < 0.3
        rows[jitter] += rng.normal(scale=1e-3, size=(int(jitter.sum()), dimensions))
        rows[rng.random(count) < 0.05] = 0.0
        return np.asarray(rows, dtype=np.float32)

    count = draw(st.integers(0, 70))
    return Scenario(
        dimensions=dimensions,
        max_elements=draw(st.integers(1, 30)),
        ttl_ms=draw(st.one_of(st.none(), st.floats(0.5, 40.0))),
        clock_step=draw(st.sampled_from([0.0, 0.25, 1.0, 3.0])),
        prior=vectors(draw(st.integers(0, 40))),
        batch=vectors(count),
        batch_ids=[draw(st.sampled_from([None, "a", "b", "prior-1"])) for _ in range(count)],
        block_bytes=draw(st.one_of(st.none(), st.integers(1, 64))),
    )


def clocks(cache: VectorCache) -> TickingClock:
    """The scenario clock a cache reads."""
    clock = cache._clock  # the cache keeps no public handle on its clock
    assert isinstance(clock, TickingClock)
    return clock


def one_by_one(cache: VectorCache, scenario: Scenario) -> list[Nearest | None]:
    """The sequential path: nearest (its own id left out), then add, for each vector in turn."""
    found = []
    for vector, vector_id in zip(scenario.batch, scenario.batch_ids, strict=True):
        found.append(cache.nearest(vector, exclude_id=vector_id))
        cache.add(vector, id=vector_id)
    return found


def state(cache: VectorCache, clock: TickingClock) -> list[tuple[str | None, float]]:
    """Every id and time the cache holds, oldest first (expired ones too)."""
    clock.stopped_at = -math.inf  # seen from the distant past, nothing has expired
    return [(e.id, e.added_at_ms) for e in cache.entries()]


def vectors_of(cache: VectorCache) -> NDArray[np.float32]:
    return np.array([e.vector for e in cache.entries()], dtype=np.float32)


def assert_close(found: list[Nearest | None], expected: list[Nearest | None]) -> None:
    """The same queries found something, with similarities within 1e-6."""
    assert [n is None for n in found] == [n is None for n in expected]
    got = [n.similarity for n in found if n is not None]
    want = [n.similarity for n in expected if n is not None]
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)


# --- online -------------------------------------------------------------------------------


@FAST
@given(scenarios())
def test_online_batch_is_one_by_one_within_1e_6(scenario: Scenario) -> None:
    """nearest_then_add_many, keys scanned in slices or not, gives the sequential answers."""
    sequential, batched = scenario.cache(), scenario.cache(blocked=True)
    expected = one_by_one(sequential, scenario)
    assert_close(batched.nearest_then_add_many(scenario.batch, ids=scenario.batch_ids), expected)
    assert clocks(batched).readings == clocks(sequential).readings
    np.testing.assert_allclose(vectors_of(batched), vectors_of(sequential), atol=1e-7)
    assert state(batched, clocks(batched)) == state(sequential, clocks(sequential))


def reference_online(
    held: NDArray[np.float32], batch: NDArray[np.float32], window: int
) -> list[float]:
    """A plain float64 loop over a Python list: the best similarity in each query's window."""
    seen = list(held)
    values = []
    for position, query in enumerate(batch):
        start = max(0, len(held) + position - window)
        candidates = [float(np.dot(query, key)) for key in seen[start:]]
        values.append(min(1.0, max(-1.0, *candidates)) if candidates else float("nan"))
        seen.append(query)
    return values


@FAST
@given(scenarios(max_dimensions=400))
def test_online_nearest_is_a_float64_loop_within_1e_6(scenario: Scenario) -> None:
    """Each answer is the best in its window within 1e-6; another neighbour is a near tie."""
    held, batch = unit_rows(scenario.prior), unit_rows(scenario.batch)
    found = online_nearest(
        held, batch, max_elements=scenario.max_elements, block_bytes=scenario.scan_bytes
    )
    expected = np.array(reference_online(held, batch, scenario.max_elements))
    np.testing.assert_array_equal(found.index < 0, np.isnan(expected))
    np.testing.assert_allclose(found.similarity, expected, atol=1e-6, rtol=0)
    keys = np.concatenate([held, batch])
    for position in np.flatnonzero(found.index >= 0):
        key = int(found.index[position])
        assert len(held) + position - scenario.max_elements <= key < len(held) + position
        chosen = float(np.dot(batch[position], keys[key]))
        assert chosen == pytest.approx(expected[position], abs=1e-6)


def test_a_full_window_of_384_dimensions_matches_one_by_one() -> None:
    """At the real scale (W = 1,000, d = 384, blocks of 256), repeats included: within 1e-6."""
    rng = np.random.default_rng(7)
    pool = rng.normal(size=(300, 384)).astype(np.float32)
    vectors = pool[rng.integers(0, 300, 2_600)]
    ids = [f"t{i}" for i in range(len(vectors))]
    sequential, batched = VectorCache(), VectorCache()
    expected = []
    for vector, vector_id in zip(vectors, ids, strict=True):
        expected.append(sequential.nearest(vector))
        sequential.add(vector, id=vector_id)
    assert_close(batched.nearest_then_add_many(vectors, ids=ids), expected)
    assert [e.id for e in batched.entries()] == [e.id for e in sequential.entries()]


def test_exact_copies_name_one_of_the_copies() -> None:
    """Copies of one direction, held and in the batch, name a copy, at similarity 1."""
    cache = VectorCache(max_elements=10, dimensions=3)
    cache.add([1.0, 0.0, 0.0], id="old")
    cache.add([0.0, 1.0, 0.0], id="other")
    found = cache.nearest_then_add_many(
        [[2.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 3.0, 0.0]], ids=["x", "y", "z"]
    )
    assert [n.id if n else None for n in found] in (["old", "old", "other"], ["old", "x", "other"])
    assert all(n is not None and n.similarity == pytest.approx(1.0, abs=1e-6) for n in found)


def test_the_window_counts_what_was_held_before_the_batch() -> None:
    """With room for two, the third vector of a run no longer sees the first held one."""
    cache = VectorCache(max_elements=2, dimensions=2)
    cache.add([1.0, 0.0], id="first")
    found = cache.nearest_then_add_many([[0.0, 1.0], [0.0, -1.0], [1.0, 0.1]], ids=["a", "b", "c"])
    assert [n.id if n else None for n in found] == ["first", "first", "a"]
    assert [e.id for e in cache.entries()] == ["b", "c"]


def test_expired_vectors_do_not_count_at_each_vectors_own_time() -> None:
    """With a TTL, each query sees only what is younger than the TTL at its own clock reading."""
    readings = iter([0.0, 10.0, 11.0, 50.0, 51.0])  # add, query+add, query+add
    cache = VectorCache(max_elements=5, dimensions=2, ttl_ms=20.0, clock=lambda: next(readings))
    cache.add([1.0, 0.0], id="early")
    found = cache.nearest_then_add_many([[1.0, 0.0], [1.0, 0.0]], ids=["mid", "late"])
    assert [n.id if n else None for n in found] == ["early", None]


def test_an_empty_batch_changes_nothing() -> None:
    """No vectors: no answers, and the cache is as it was."""
    cache = VectorCache(max_elements=3, dimensions=2)
    cache.add([1.0, 0.0], id="kept")
    assert cache.nearest_then_add_many(np.zeros((0, 2), dtype=np.float32)) == []
    assert [e.id for e in cache.entries()] == ["kept"]


# --- frozen -------------------------------------------------------------------------------


@FAST
@given(scenarios())
def test_frozen_batch_is_one_by_one_within_1e_6(scenario: Scenario) -> None:
    """nearest_many, keys sliced or not, gives what nearest(q, exclude_id=e) gives in turn."""
    sequential, batched = scenario.cache(), scenario.cache(blocked=True)
    expected = [
        sequential.nearest(query, exclude_id=query_id)
        for query, query_id in zip(scenario.batch, scenario.batch_ids, strict=True)
    ]
    found = batched.nearest_many(scenario.batch, exclude_ids=scenario.batch_ids)
    assert_close(found, expected)
    for answer, query_id in zip(found, scenario.batch_ids, strict=True):
        assert answer is None or query_id is None or answer.id != query_id
    assert clocks(batched).readings == clocks(sequential).readings
    assert state(batched, clocks(batched)) == state(sequential, clocks(sequential))


@FAST
@given(scenarios(), st.integers(1, 4096))
def test_frozen_slices_of_any_size_agree(scenario: Scenario, block_bytes: int) -> None:
    """However the keys are sliced, leave-one-out answers agree within 1e-6, own key left out."""
    held = unit_rows(scenario.prior)
    keys = np.arange(len(held)) % 3
    whole = frozen_nearest(held, held, held_keys=keys, query_keys=keys)
    sliced = frozen_nearest(held, held, held_keys=keys, query_keys=keys, block_bytes=block_bytes)
    np.testing.assert_array_equal(sliced.index < 0, whole.index < 0)
    np.testing.assert_allclose(sliced.similarity, whole.similarity, atol=1e-6, rtol=0)
    assert all(i < 0 or keys[i] != keys[q] for q, i in enumerate(sliced.index))


@FAST
@given(st.integers(1, 600), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_a_row_is_normalised_alike_alone_or_in_a_batch(
    dimensions: int, rows: int, seed: int
) -> None:
    """unit_rows treats each row on its own: unit length (or zero), alone or in a batch."""
    rng = np.random.default_rng(seed)
    matrix = (rng.normal(size=(rows, dimensions)) * rng.lognormal(0, 8, (rows, 1))).astype(
        np.float32
    )
    whole = unit_rows(matrix)
    np.testing.assert_allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-6)
    for row in range(rows):
        np.testing.assert_allclose(whole[row], unit_rows(matrix[row : row + 1])[0], atol=1e-7)


# --- errors -------------------------------------------------------------------------------


def test_a_bad_batch_names_the_row_and_adds_nothing() -> None:
    """NaN in row 1, a wrong width or a wrong number of ids: a VectorError, cache untouched."""
    cache = VectorCache(max_elements=3, dimensions=2)
    with pytest.raises(VectorError, match=r"row 1"):
        cache.nearest_then_add_many([[1.0, 0.0], [np.nan, 0.0]])
    with pytest.raises(VectorError, match=r"shape \(1, 3\).*shape \(n, 2\)"):
        cache.nearest_many([[1.0, 0.0, 0.0]])
    with pytest.raises(VectorError, match="2 ids were given for 1 vectors"):
        cache.nearest_then_add_many([[1.0, 0.0]], ids=["a", "b"])
    assert cache.size == 0


def test_a_ttl_without_times_is_refused() -> None:
    """online_nearest with a TTL needs every time array: a ValueError saying so."""
    held = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match="with ttl_ms"):
        online_nearest(held, held, max_elements=2, ttl_ms=5.0)
