"""Vector caches an older kp wrote (tests/data/older_kp/README.md) hold today's vectors.

A cache is matched to its embedder by model id only, so an embedder whose vectors changed under
the same id would be compared with old vectors silently: these files pin that they did not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.runs.api import score
from tests.paths import CORPORA, REPO

OLDER = REPO / "tests" / "data" / "older_kp"


def _vectors(path: Path) -> dict[str | None, np.ndarray]:
    return {entry.id: np.asarray(entry.vector) for entry in VectorCache.load(path).entries()}


@pytest.mark.parametrize("name", ["cache-f4331a0b.npz", "cache-f4331a0b.kpcache"])
def test_an_older_cache_holds_the_vectors_todays_embedder_gives(tmp_path: Path, name: str) -> None:
    """The same 3 traces embedded today: the same model id, the same vectors (within 1e-6)."""
    traces = tmp_path / "tau3.jsonl"
    with (CORPORA / "taubench.jsonl").open(encoding="utf-8") as corpus:
        traces.write_text("".join(next(corpus) for _ in range(3)), encoding="utf-8")
    fresh = tmp_path / "fresh.npz"
    score(traces, cache_path=fresh)
    old = VectorCache.load(OLDER / name)
    assert old.model_id == VectorCache.load(fresh).model_id
    held, today = _vectors(OLDER / name), _vectors(fresh)
    assert held.keys() == today.keys()
    assert len(held) == 3
    for trace_id, vector in held.items():
        np.testing.assert_allclose(vector, today[trace_id], atol=1e-6)


def test_an_older_ring_file_is_scored_against_and_added_to(tmp_path: Path) -> None:
    """Opened for writing, it keeps its vectors and takes new ones; never rebuilt empty."""
    cache = tmp_path / "c.kpcache"
    shutil.copyfile(OLDER / "cache-f4331a0b.kpcache", cache)
    traces = tmp_path / "next.jsonl"
    with (CORPORA / "taubench.jsonl").open(encoding="utf-8") as corpus:
        lines = [next(corpus) for _ in range(4)]
    traces.write_text(lines[3], encoding="utf-8")
    (item,) = score(traces, cache_path=cache, cache_size=4)
    assert item.breakdown.novelty.nearest_id in _vectors(OLDER / "cache-f4331a0b.kpcache")
    assert len(_vectors(cache)) == 4
