"""VectorCache: cosine search, ids, oldest-first eviction, TTL, and saving to a file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from knowledgepulse.errors import CacheFileError, ScorerParameterError, VectorError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.search import BLOCK_BYTES
from knowledgepulse.novelty.windows import unit_rows
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import make_trace

scan_budgets = st.one_of(st.none(), st.integers(1, 64))
"""Scan budgets small enough that the keys are read a few at a time (``None``: the default)."""


def unit(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


class FakeClock:
    """A clock the test moves by hand, in milliseconds."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_empty_cache_has_similarity_zero_and_no_nearest() -> None:
    """Nothing held: max_cosine_similarity is 0.0 and nearest is None."""
    cache = VectorCache(dimensions=3)
    assert cache.max_cosine_similarity(unit(1, 0, 0)) == 0.0
    assert cache.nearest(unit(1, 0, 0)) is None
    assert cache.size == 0


def test_similarity_is_the_cosine_whatever_the_lengths() -> None:
    """Vectors are compared by angle: scaling either side changes nothing."""
    cache = VectorCache(dimensions=2)
    cache.add(unit(3, 4), id="a")
    assert cache.max_cosine_similarity(unit(6, 8)) == pytest.approx(1.0, abs=1e-6)
    assert cache.max_cosine_similarity(unit(4, -3)) == pytest.approx(0.0, abs=1e-6)
    assert cache.max_cosine_similarity(unit(-3, -4)) == pytest.approx(-1.0, abs=1e-6)


def test_nearest_names_the_most_similar_id() -> None:
    """The breakdown's nearest trace is the held vector with the largest cosine."""
    cache = VectorCache(dimensions=2)
    cache.add(unit(1, 0), id="east")
    cache.add(unit(0, 1), id="north")
    found = cache.nearest(unit(0.1, 1))
    assert found is not None
    assert found.id == "north"
    assert found.similarity == pytest.approx(1 / np.sqrt(1.01), abs=1e-6)


@pytest.mark.parametrize("block_bytes", [BLOCK_BYTES, 1, 8])
def test_exact_copies_name_either_copy(block_bytes: int) -> None:
    """Two identical vectors: one of them is named, wherever the ring holds it."""
    cache = VectorCache(max_elements=2, dimensions=2, block_bytes=block_bytes)
    cache.add(unit(0, 1), id="old-other")
    cache.add(unit(1, 0), id="first")
    cache.add(unit(1, 0), id="second")  # evicts old-other: the ring now holds second before first
    found = cache.nearest(unit(1, 0))
    assert found is not None
    assert found.id in {"first", "second"}
    assert found.similarity == pytest.approx(1.0, abs=1e-6)


def test_zero_vectors_have_similarity_zero() -> None:
    """A zero query, or a zero vector held, is similar to nothing (similarity 0)."""
    cache = VectorCache(dimensions=2)
    cache.add(unit(0, 0), id="zero")
    assert cache.max_cosine_similarity(unit(1, 0)) == 0.0
    cache.add(unit(1, 0), id="x")
    assert cache.max_cosine_similarity(unit(0, 0)) == 0.0


def test_wrong_length_is_rejected_with_both_shapes() -> None:
    """Adding or querying a vector of the wrong length says what it got and what fits."""
    cache = VectorCache(dimensions=3)
    with pytest.raises(VectorError, match=r"shape \(2,\).*3 dimensions"):
        cache.add(unit(1, 0))
    with pytest.raises(VectorError, match=r"query has shape \(4,\)"):
        cache.nearest(unit(1, 0, 0, 0))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_rejected(bad: float) -> None:
    """NaN and infinity would poison every similarity, so they are refused."""
    cache = VectorCache(dimensions=2)
    with pytest.raises(VectorError, match="NaN or infinite"):
        cache.add(unit(1, bad))
    assert cache.size == 0


def scaled_cosine(a: list[float], b: list[float]) -> float:
    """The cosine of two nonzero vectors, each divided by its largest number first (float64)."""
    x, y = np.array(a) / np.abs(a).max(), np.array(b) / np.abs(b).max()
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


FINITE = st.floats(allow_nan=False, allow_infinity=False)


@given(
    held=st.lists(FINITE, min_size=3, max_size=3).filter(any),
    query=st.lists(FINITE, min_size=3, max_size=3).filter(any),
)
def test_any_finite_vector_counts_by_its_direction(held: list[float], query: list[float]) -> None:
    """A finite vector is held and compared by its direction, whatever the size of its numbers:
    1e300 or 1e-320, which float32 cannot hold, were refused as "NaN or infinite" or taken as
    the zero vector."""
    cache = VectorCache(dimensions=3)
    cache.add(held)
    assert abs(cache.max_cosine_similarity(held) - 1.0) <= 1e-6
    expected = scaled_cosine(held, query)
    assert abs(cache.max_cosine_similarity(query) - expected) <= 1e-6


def test_a_number_past_any_float_is_a_vector_error() -> None:
    """An int too large for a float is refused as VectorError, not Python's OverflowError."""
    cache = VectorCache(dimensions=2)
    with pytest.raises(VectorError, match="int too large to convert to float"):
        cache.add([10**400, 1])
    assert cache.size == 0


@pytest.mark.parametrize("bad", ["abc", [1.0, "x"], {"a": 1.0}, object()])
def test_a_vector_that_is_not_numbers_is_a_vector_error(bad: object) -> None:
    """Text, a mapping or an object given as a vector is refused as VectorError, saying what
    was given, never numpy's bare ValueError or TypeError; nothing is added."""
    cache = VectorCache(dimensions=2)
    with pytest.raises(VectorError, match=r"the vector must be a list or array of numbers, got"):
        cache.add(bad)  # type: ignore[arg-type]
    with pytest.raises(VectorError, match=r"the query must be a list or array of numbers"):
        cache.max_cosine_similarity(bad)  # type: ignore[arg-type]
    with pytest.raises(VectorError, match=r"the vectors must be rows of numbers, all of one"):
        cache.nearest_then_add_many([[1.0, 0.0], [1.0]], ids=["a", "b"])
    assert cache.size == 0


def test_the_oldest_vector_goes_first_when_full() -> None:
    """Past max_elements, each new vector evicts the oldest one."""
    cache = VectorCache(max_elements=3, dimensions=4)
    for i in range(5):
        vector = np.zeros(4, dtype=np.float32)
        vector[i % 4] = 1.0
        cache.add(vector, id=f"v{i}")
    assert cache.size == 3
    assert [entry.id for entry in cache.entries()] == ["v2", "v3", "v4"]
    assert cache.max_cosine_similarity(unit(0, 1, 0, 0)) == pytest.approx(0.0)  # v1 is gone
    assert cache.max_cosine_similarity(unit(1, 0, 0, 0)) == pytest.approx(1.0)  # v4 is e0


def test_expired_vectors_no_longer_count() -> None:
    """With ttl_ms, a vector older than the TTL leaves size, search and entries."""
    clock = FakeClock()
    cache = VectorCache(dimensions=2, ttl_ms=1000, clock=clock)
    cache.add(unit(1, 0), id="old")
    clock.now = 600
    cache.add(unit(0, 1), id="new")
    assert cache.size == 2
    clock.now = 1200  # "old" is 1200 ms old, "new" 600 ms
    assert cache.size == 1
    assert cache.max_cosine_similarity(unit(1, 0)) == pytest.approx(0.0, abs=1e-6)
    assert [entry.id for entry in cache.entries()] == ["new"]
    clock.now = 5000
    assert cache.nearest(unit(0, 1)) is None
    assert cache.max_cosine_similarity(unit(0, 1)) == 0.0


def test_a_vector_counts_until_its_age_reaches_the_ttl() -> None:
    """The TTL's edge, as docs/vector-cache.md says it: counted just before ttl_ms, not at it,
    alike in size, search and holds."""
    clock = FakeClock()
    cache = VectorCache(dimensions=2, ttl_ms=1000, clock=clock)
    cache.add(unit(1, 0), id="a")
    clock.now = 999.9
    assert (cache.size, cache.holds(["a"])) == (1, [True])
    assert cache.max_cosine_similarity(unit(1, 0)) == pytest.approx(1.0)
    clock.now = 1000
    assert (cache.size, cache.holds(["a"]), cache.nearest(unit(1, 0))) == (0, [False], None)


def test_a_vector_held_under_its_id_is_not_held_again() -> None:
    """Scoring a trace again adds nothing; a changed vector, an expired one or no id is added."""
    clock = FakeClock()
    cache = VectorCache(dimensions=2, ttl_ms=1000, clock=clock)
    cache.add(unit(1, 0), id="a")
    cache.add(unit(2, 0), id="a")  # the same direction: the same unit vector
    cache.nearest_then_add_many([unit(1, 0), unit(1, 0)], ids=["a", "a"])
    assert [e.id for e in cache.entries()] == ["a"]
    cache.add(unit(1, 1), id="a")  # the trace changed: its new vector is held too
    cache.add(unit(1, 0), id=None)
    cache.add(unit(1, 0), id=None)
    assert [e.id for e in cache.entries()] == ["a", "a", None, None]
    clock.now = 1000  # all have expired: "a" met again is new again
    cache.add(unit(1, 0), id="a")
    assert [(e.id, e.added_at_ms) for e in cache.entries()] == [("a", 1000.0)]


def test_rescoring_a_batch_does_not_evict_what_was_held_before_it() -> None:
    """A batch scored again keeps its place: the vectors before it stay, the answers too."""
    cache = VectorCache(max_elements=4, dimensions=3)
    cache.add(unit(1, 0, 0), id="monday")
    batch, ids = [unit(0, 1, 0), unit(2, 1, 0)], ["tue-1", "tue-2"]
    first = cache.nearest_then_add_many(batch, ids=ids)
    again = [cache.nearest_then_add_many(batch, ids=ids) for _ in range(3)]
    assert [e.id for e in cache.entries()] == ["monday", "tue-1", "tue-2"]
    assert [n.id if n else None for n in first] == ["monday", "monday"]
    assert all(a == again[0] for a in again)
    assert [n.id if n else None for n in again[0]] == ["tue-2", "monday"]


def test_counts_say_what_counts_what_expired_and_what_was_added() -> None:
    """counts(): live and expired vectors (all still held until evicted), and the additions."""
    clock = FakeClock()
    cache = VectorCache(max_elements=3, dimensions=2, ttl_ms=100, clock=clock)
    cache.add(unit(1, 0), id="a")
    clock.now = 50
    cache.nearest_then_add_many([unit(0, 1), unit(1, 1), unit(1, 0)], ids=["b", "c", "a"])
    clock.now = 120  # "a" (0 ms) has expired; "b" and "c" (50 ms) count; the repeat added none
    counts = cache.counts()
    assert (counts.live, counts.expired, counts.added, counts.held) == (2, 1, 3, 3)
    assert counts.live == cache.size


def test_clear_empties_the_cache() -> None:
    """clear() forgets every vector."""
    cache = VectorCache(dimensions=2)
    cache.add(unit(1, 0))
    cache.clear()
    assert cache.size == 0
    assert cache.nearest(unit(1, 0)) is None
    cache.add(unit(0, 1), id="again")
    assert [entry.id for entry in cache.entries()] == ["again"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_elements": 0}, "max_elements"),
        ({"dimensions": 0}, "dimensions"),
        ({"max_elements": True}, "max_elements"),
        ({"ttl_ms": -5}, "ttl_ms"),
        ({"ttl_ms": float("nan")}, "ttl_ms"),
        ({"max_elements": 10**12, "dimensions": 384}, r"would take 1430511\.5 GiB; the limit is 4"),
        ({"max_elements": 10**13}, r"would take 37252\.9 GiB; the limit is 4 GiB"),
    ],
)
def test_bad_settings_are_rejected(kwargs: dict[str, float], message: str) -> None:
    """A cache that could hold nothing or not fit in memory, or a bad TTL, is an error."""
    with pytest.raises(ScorerParameterError, match=message):
        VectorCache(**kwargs)  # type: ignore[arg-type]


vectors_3d = arrays(
    np.float32,
    3,
    elements=st.floats(-10, 10, allow_nan=False, width=32),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(vectors_3d, min_size=1, max_size=20), vectors_3d, scan_budgets)
def test_search_equals_a_plain_cosine_loop(
    held: list[np.ndarray], query: np.ndarray, block_bytes: int | None
) -> None:
    """The numpy scan, in slices or not, finds the textbook cosine's maximum over every vector."""
    cache = VectorCache(max_elements=50, dimensions=3, block_bytes=block_bytes or BLOCK_BYTES)
    for vector in held:
        cache.add(vector)

    def cosine(a: np.ndarray, b: np.ndarray) -> float:
        na, nb = np.linalg.norm(a.astype(np.float64)), np.linalg.norm(b.astype(np.float64))
        return 0.0 if na == 0 or nb == 0 else float(a.astype(np.float64) @ b / (na * nb))

    expected = max(cosine(vector, query) for vector in held)
    found = cache.max_cosine_similarity(query)
    assert found == pytest.approx(expected, abs=1e-5)
    assert -1.0 <= found <= 1.0


def test_save_and_load_keep_vectors_ids_and_times(tmp_path: Path) -> None:
    """A saved cache loads with the same vectors, ids, ages and settings."""
    clock = FakeClock()
    cache = VectorCache(max_elements=4, dimensions=2, ttl_ms=10_000, clock=clock)
    cache.add(unit(1, 0), id="a")
    clock.now = 5
    cache.add(unit(0, 2), id="b")
    path = tmp_path / "traces.kpcache.npz"
    cache.save(path, model_id="model-x")

    loaded = VectorCache.load(path, expected_model_id="model-x", expected_dimensions=2, clock=clock)
    assert (loaded.max_elements, loaded.dimensions, loaded.ttl_ms) == (4, 2, 10_000)
    assert [(e.id, e.added_at_ms) for e in loaded.entries()] == [("a", 0.0), ("b", 5.0)]
    assert loaded.nearest(unit(0, 1)) == cache.nearest(unit(0, 1))
    clock.now = 10_002  # "a" expires in the loaded cache too: its age was kept
    assert [e.id for e in loaded.entries()] == ["b"]


def test_saving_replaces_the_file_without_leaving_temporaries(tmp_path: Path) -> None:
    """Saving twice leaves exactly one file: written beside the target, then renamed over it."""
    path = tmp_path / "c.kpcache.npz"
    cache = VectorCache(dimensions=2)
    cache.save(path)
    cache.add(unit(1, 1), id="x")
    cache.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["c.kpcache.npz"]
    assert VectorCache.load(path).size == 1


def test_loading_a_cache_of_another_model_is_refused(tmp_path: Path) -> None:
    """Vectors of different models are not comparable: the error names both models."""
    path = tmp_path / "c.npz"
    VectorCache(dimensions=2).save(path, model_id="model-a")
    with pytest.raises(CacheFileError, match=r"model 'model-a'.*'model-b'"):
        VectorCache.load(path, expected_model_id="model-b")
    with pytest.raises(CacheFileError, match=r"2-dimensional.*384-dimensional"):
        VectorCache.load(path, expected_dimensions=384)


def test_loading_something_else_says_it_is_not_a_cache(tmp_path: Path) -> None:
    """A missing file or a file of another kind is a clear CacheFileError."""
    with pytest.raises(CacheFileError, match="no such cache file"):
        VectorCache.load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_text("not numpy")
    with pytest.raises(CacheFileError, match="not a knowledgepulse vector cache"):
        VectorCache.load(junk)
    other = tmp_path / "other.npz"
    np.savez(other, header=np.array('{"format": "something-else"}'))
    with pytest.raises(CacheFileError, match="not a knowledgepulse vector cache"):
        VectorCache.load(other)


def test_loading_into_a_smaller_cache_keeps_the_newest(tmp_path: Path) -> None:
    """max_elements on load bounds the cache; the oldest saved vectors are the ones dropped."""
    cache = VectorCache(dimensions=2)
    for i in range(5):
        cache.add(unit(1, i), id=f"v{i}")
    path = tmp_path / "c.npz"
    cache.save(path)
    assert [e.id for e in VectorCache.load(path, max_elements=2).entries()] == ["v3", "v4"]


def test_nearest_can_leave_out_an_id() -> None:
    """exclude_id skips every vector held under that id; nothing left means no neighbour."""
    cache = VectorCache(max_elements=4, dimensions=3)
    cache.add([1.0, 0.0, 0.0], id="self")
    cache.add([0.8, 0.6, 0.0], id="other")
    assert cache.nearest([1.0, 0.0, 0.0]).id == "self"  # type: ignore[union-attr]
    found = cache.nearest([1.0, 0.0, 0.0], exclude_id="self")
    assert found is not None
    assert found.id == "other"
    assert found.similarity == pytest.approx(0.8)
    alone = VectorCache(max_elements=4, dimensions=3)
    alone.add([1.0, 0.0, 0.0], id="self")
    assert alone.nearest([1.0, 0.0, 0.0], exclude_id="self") is None


@pytest.mark.parametrize("name", ["c.kpcache", "c.npz"])
def test_holds_says_which_ids_have_a_vector_evicted_ones_not(tmp_path: Path, name: str) -> None:
    """holds() answers per id, in memory and from a saved cache; an evicted id is not held."""
    cache = VectorCache(max_elements=2, dimensions=3)
    for number in range(3):
        cache.add([1.0, float(number), 0.0], id=f"v{number}")
    assert cache.holds(["v0", "v1", "v2", None, "v9"]) == [False, True, True, False, False]
    cache.save(tmp_path / name)
    with VectorCache.open(tmp_path / name) as saved:
        assert saved.holds(["v2", "v0", "v1"]) == [True, False, True]
    assert VectorCache(dimensions=3).holds(["v1"]) == [False]


def test_holds_no_id_whose_vectors_have_expired() -> None:
    """holds() says an id is held only while one of its vectors still counts (within the TTL),
    judged at the clock's last reading, as the search that follows it sees the vectors."""
    clock = FakeClock()
    cache = VectorCache(dimensions=2, ttl_ms=1000, clock=clock)
    cache.add(unit(1, 0), id="old")
    clock.now = 600
    cache.add(unit(0, 1), id="new")
    assert cache.holds(["old", "new"]) == [True, True]
    clock.now = 1200  # "old" is 1200 ms old, "new" 600 ms
    assert [entry.id for entry in cache.entries()] == ["new"]
    assert cache.holds(["old", "new"]) == [False, True]
    clock.now = 5000
    assert cache.nearest(unit(0, 1)) is None
    assert cache.holds(["old", "new"]) == [False, False]


@settings(max_examples=100, deadline=None)
@given(
    dimensions=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=30),
    max_elements=st.integers(1, 12),
    block_bytes=scan_budgets,
    data=st.data(),
)
def test_a_sliced_scan_names_one_of_the_most_similar(
    *,
    dimensions: int,
    seed: int,
    picks: list[int],
    max_elements: int,
    block_bytes: int | None,
    data: st.DataObject,
) -> None:
    """However the keys are sliced, nearest names a top match within 1e-6, its own id left out."""
    rng = np.random.default_rng(seed)
    pool = rng.normal(size=(4, dimensions)).astype(np.float32)
    scales = rng.choice(np.array([1.0, 2.0, 0.5, -1.0, 0.0], dtype=np.float32), len(picks))
    vectors = pool[picks] * scales[:, None]  # repeated directions: exact ties are common
    sliced = VectorCache(max_elements, dimensions, block_bytes=block_bytes or BLOCK_BYTES)
    whole = VectorCache(max_elements, dimensions)
    for position, vector in enumerate(vectors):  # past max_elements the ring wraps
        sliced.add(vector, id=f"v{position}")
        whole.add(vector, id=f"v{position}")
    held = list(whole.entries())
    query = pool[data.draw(st.integers(0, 3))] * data.draw(st.sampled_from([1.0, -2.0]))
    excluded = data.draw(st.sampled_from([None, *(e.id for e in held)]))

    found = sliced.nearest(query, exclude_id=excluded)
    kept = [e for e in held if e.id != excluded]
    if not kept:
        assert found is None
        assert whole.nearest(query, exclude_id=excluded) is None
        return
    assert found is not None
    cosines = {
        e.id: float(e.vector.astype(np.float64) @ unit_rows(query[None, :])[0]) for e in kept
    }
    best = min(1.0, max(-1.0, *cosines.values()))
    assert found.similarity == pytest.approx(best, abs=1e-6)
    assert cosines[found.id] == pytest.approx(best, abs=1e-6)
    again = sliced.nearest_many([query], exclude_ids=[excluded])[0]
    assert again is not None
    assert again.similarity == pytest.approx(found.similarity, abs=1e-6)


def test_the_width_is_taken_from_the_first_vector() -> None:
    """Without dimensions, the first vector sets them; a vector of another width is refused."""
    cache = VectorCache(max_elements=3)
    assert (cache.dimensions, cache.nearest(unit(1, 0, 0, 0)), cache.size) == (None, None, 0)
    cache.add(unit(1, 0, 0, 0), id="a")
    assert cache.dimensions == 4
    with pytest.raises(VectorError, match=r"shape \(2,\).*4 dimensions"):
        cache.add(unit(1, 0))
    found = cache.nearest_then_add_many(np.eye(4, dtype=np.float32)[[0, 1]], ids=["b", "c"])
    assert [n.id if n else None for n in found] == ["a", "a"]


def test_the_seeds_cache_of_25_scores_the_default_novelty_text() -> None:
    """TraceValueScorer(cache=VectorCache(max_elements=25)): the 1,152-d default text fits."""
    cache = VectorCache(max_elements=25)
    scorer = TraceValueScorer(embedder=HashingEmbedder(), cache=cache)
    first = scorer.score(make_trace(trace_id="kp:trace:1", objective="refund a flight"))
    second = scorer.score(make_trace(trace_id="kp:trace:2", objective="refund a flight"))
    assert cache.dimensions == 3 * HashingEmbedder().dimensions
    assert first.novelty.source == "empty_cache"
    assert second.novelty.nearest_id == "kp:trace:1"
    assert [e.id for e in cache.entries()] == ["kp:trace:1", "kp:trace:2"]


@pytest.mark.parametrize("name", ["c.npz", "c.kpcache"])
def test_a_cache_that_records_no_model_says_how_to_record_it(tmp_path: Path, name: str) -> None:
    """A cache saved without a model id is refused saying so (not "model None"), and the fix
    it names, loading and saving it with the model id, makes it load."""
    path = tmp_path / name
    cache = VectorCache(dimensions=2)
    cache.add(unit(1, 1), id="x")
    cache.save(path)
    with pytest.raises(CacheFileError) as refused:
        VectorCache.load(path, expected_model_id="model-b")
    message = str(refused.value)
    assert "records no model" in message
    assert "None" not in message
    assert "VectorCache.load(path).save(path, model_id='model-b')" in message
    VectorCache.load(path).save(path, model_id="model-b")
    assert VectorCache.load(path, expected_model_id="model-b").size == 1


def test_a_cache_of_no_model_and_another_width_names_the_width(tmp_path: Path) -> None:
    """Recording a model would not fit vectors of another width: the width is what is named."""
    path = tmp_path / "c.npz"
    VectorCache(dimensions=2).save(path)
    with pytest.raises(CacheFileError, match=r"2-dimensional.*384-dimensional"):
        VectorCache.load(path, expected_model_id="model-b", expected_dimensions=384)
