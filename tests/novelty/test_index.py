"""The HNSW index past the exact limit: the same neighbours and groups as exact scans."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from knowledgepulse.curation import dedupe
from knowledgepulse.curation.corpus import leave_one_out_nearest
from knowledgepulse.curation.select import Candidate
from knowledgepulse.novelty.cache import index
from knowledgepulse.novelty.cache.index import EXACT_LIMIT, GrowingRows, approximate

pytest.importorskip("usearch")


def _planted(originals: int = 300, seed: int = 3, width: int = 64) -> tuple[np.ndarray, list[int]]:
    """Unit vectors: ``originals`` random ones, and one to three near-copies of each."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((originals, width)).astype(np.float32)
    rows, source = [], []
    for number, vector in enumerate(base):
        for _ in range(1 + int(rng.integers(1, 4))):
            rows.append(vector + 0.08 * rng.standard_normal(width).astype(np.float32))
            source.append(number)
    order = rng.permutation(len(rows))
    vectors = np.asarray(rows, dtype=np.float32)[order]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, [source[i] for i in order]


def _groups(vectors: np.ndarray) -> list[tuple[int, tuple[tuple[int, float | None], ...]]]:
    candidates = [Candidate(f"t{i:04d}", score=(i * 7919 % 101) / 101) for i in range(len(vectors))]
    found = dedupe(candidates, vectors, threshold=0.9)
    return [(group.representative, group.members) for group in found]


def test_dedupe_through_the_index_finds_the_exact_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """On planted near-copies, the index gives every group the exact scan gives."""
    vectors, source = _planted()
    exact = _groups(vectors)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    assert approximate(len(vectors))
    found = _groups(vectors)
    assert [(r, [m for m, _ in ms]) for r, ms in found] == [
        (r, [m for m, _ in ms]) for r, ms in exact
    ]
    cosines = [c for _, ms in found for _, c in ms]
    assert cosines == pytest.approx([c for _, ms in exact for _, c in ms], abs=1e-6)
    planted = {frozenset(i for i, s in enumerate(source) if s == k) for k in set(source)}
    grouped = {frozenset((r, *(m for m, _ in members))) for r, members in exact}
    assert grouped == planted


def test_nearest_through_the_index_is_the_exact_nearest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave-one-out nearest: the same neighbour and the same cosine through the index."""
    vectors, _ = _planted()
    keys = [f"t{i:04d}" for i in range(len(vectors))]
    exact = leave_one_out_nearest(vectors, keys)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    monkeypatch.setattr(index, "BLOCK_ROWS", 100)  # several blocks of queries
    found = leave_one_out_nearest(vectors, keys)
    assert (found[0] == exact[0]).all()
    np.testing.assert_allclose(found[1], exact[1], atol=1e-6)


def test_wide_vectors_are_indexed_along_their_leading_directions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Vectors wider than the index's rows: 64 directions kept, the same neighbours and groups."""
    vectors, _ = _planted(originals=200, width=256)
    assert index.principal_directions(vectors).shape == (256, index.PROJECTED)
    keys = [f"t{i:04d}" for i in range(len(vectors))]
    exact, exact_groups = leave_one_out_nearest(vectors, keys), _groups(vectors)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    found = leave_one_out_nearest(vectors, keys)
    assert (found[0] == exact[0]).all()
    np.testing.assert_allclose(found[1], exact[1], atol=1e-6)
    assert _groups(vectors) == exact_groups


def test_copies_of_one_id_are_passed_over_to_another_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row whose proposed neighbours all share its id is answered by an exact scan."""
    vectors, _ = _planted(originals=40)
    copies = np.repeat(vectors[:1], 30, axis=0)
    keys = ["same"] * 30 + [f"t{i:04d}" for i in range(1, len(vectors))]
    every = np.concatenate([copies, vectors[1:]])
    exact = leave_one_out_nearest(every, keys)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    found = leave_one_out_nearest(every, keys)
    assert (found[0][:30] == exact[0][:30]).all()
    assert all(keys[i] != "same" for i in found[0][:30])


def test_up_to_the_limit_searches_are_exact() -> None:
    """At the limit nothing goes through the index, so small inputs' results do not move."""
    assert not approximate(EXACT_LIMIT)
    assert approximate(EXACT_LIMIT + 1)


def test_growing_rows_through_the_index_name_the_earliest_of_equal_vectors() -> None:
    """Two equal held vectors: the index, like the exact scan, names the first added."""
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    for approximate_search in (False, True):
        rows = GrowingRows(3, 8, approximate=approximate_search)
        rows.add(np.eye(8, dtype=np.float32)[0])
        rows.add(vector)
        rows.add(vector)
        assert rows.nearest(vector)[0] == 1


def test_the_model_runtime_loads_after_the_index_library() -> None:
    """onnxruntime imported after usearch does not crash (usearch 2.26.2 on did: pinned below)."""
    code = "import usearch.index\nimport onnxruntime\n"
    done = subprocess.run([sys.executable, "-c", code], check=False, timeout=60)
    assert done.returncode == 0


@pytest.mark.parametrize("through_index", [False, True])
def test_nearest_of_many_queries_is_the_nearest_of_each(through_index: bool) -> None:
    """GrowingRows.nearest_many names what nearest names for each query (cosines within 1e-6)."""
    vectors, _ = _planted(originals=60)
    rows = GrowingRows(len(vectors), vectors.shape[1], approximate=through_index)
    rows.add_many(vectors[:100])
    queries = vectors[100:]
    best, cosine = rows.nearest_many(queries)
    one_by_one = [rows.nearest(query) for query in queries]
    assert best.tolist() == [number for number, _ in one_by_one]
    assert cosine.tolist() == pytest.approx([found for _, found in one_by_one], abs=1e-6)
    assert GrowingRows(3, 64).nearest_many(queries[:2])[0].tolist() == [-1, -1]


def test_a_last_block_of_one_query_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows one past a whole number of blocks: usearch answers the lone query flat, still read."""
    vectors, _ = _planted(originals=40)
    rows = vectors[:41]
    keys = [f"t{i:04d}" for i in range(len(rows))]
    exact = leave_one_out_nearest(rows, keys)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    monkeypatch.setattr(index, "BLOCK_ROWS", 20)  # blocks of 20, 20 and 1
    found = leave_one_out_nearest(rows, keys)
    assert (found[0] == exact[0]).all()
    held = GrowingRows(len(rows), rows.shape[1], approximate=True, sample=rows)
    held.add_many(rows)
    best, _ = held.nearest_many(rows)
    assert list(best) == list(range(len(rows)))


def test_half_precision_rows_are_held_so_and_compared_in_float32(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the index, float16 vectors stay float16 held; answers are their float32 values'."""
    half = _planted()[0].astype(np.float16)
    monkeypatch.setattr(index, "EXACT_LIMIT", 0)
    answers = []
    for vectors in (half, half.astype(np.float32)):
        rows = GrowingRows(len(vectors), vectors.shape[1], approximate=True, sample=vectors)
        rows.add_many(vectors[:200])
        answers.append((rows.nearest_many(vectors[200:]), rows.nearest(vectors[300])))
        assert rows._rows.dtype == vectors.dtype
    (best, cosine), one = answers[0]
    (widened_best, widened_cosine), widened_one = answers[1]
    assert best.tolist() == widened_best.tolist()
    assert cosine.tobytes() == widened_cosine.tobytes()
    assert one == widened_one
    keys = [f"t{i:04d}" for i in range(len(half))]
    found, exact = (
        leave_one_out_nearest(half, keys),
        leave_one_out_nearest(half.astype(np.float32), keys),
    )
    assert found[0].tolist() == exact[0].tolist()
    assert found[1].tobytes() == exact[1].tobytes()
