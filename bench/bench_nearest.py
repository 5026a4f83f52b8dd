"""Nearest-neighbour scans: batches (plain float32 products) against one query at a time.

    python bench/bench_nearest.py               # n = 100k, W = 1,000, d = 384
    python bench/bench_nearest.py --n 20000 --runs 5
    OPENBLAS_NUM_THREADS=1 python bench/bench_nearest.py   # one core

The vectors are random unit vectors, a tenth of them exact copies of an earlier one (so exact
ties occur). Each batch figure is the median of ``--runs`` runs over the whole stream, starting
from an empty cache; the one-by-one loop (``VectorCache.nearest`` then ``add``, what
:meth:`TraceValueScorer.score` does) runs once, and the ratio and the differences come from
that run (the contract: within 1e-6; of exact copies either may be named). Peak RSS is the
process's, vectors included (``n x d x 4`` bytes). Figures only; nothing here fails on a
timing, and timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.search import Neighbours, online_nearest
from knowledgepulse.novelty.cache.vector_cache import Nearest
from knowledgepulse.novelty.windows import unit_rows


def stream(count: int, dimensions: int, seed: int = 0) -> NDArray[np.float32]:
    """Random unit vectors, a tenth of them copies of an earlier row."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, dimensions), dtype=np.float32)
    copies = np.flatnonzero(rng.random(count) < 0.1)
    copies = copies[copies > 0]
    vectors[copies] = vectors[rng.integers(0, copies)]
    return unit_rows(vectors)


def timed(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def batch(vectors: NDArray[np.float32], window: int) -> Neighbours:
    empty = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    return online_nearest(empty, vectors, max_elements=window)


def one_by_one(vectors: NDArray[np.float32], window: int) -> list[Nearest | None]:
    cache = VectorCache(max_elements=window, dimensions=vectors.shape[1])
    found = []
    for position, vector in enumerate(vectors):
        found.append(cache.nearest(vector))
        cache.add(vector, id=str(position))
    return found


def main() -> None:
    """Print items/s for each method, the ratio, the differences and peak RSS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="vectors in the stream")
    parser.add_argument("--window", type=int, default=1000, help="the cache's max_elements")
    parser.add_argument("--dimensions", type=int, default=384)
    parser.add_argument("--runs", type=int, default=3, help="runs per batch figure")
    args = parser.parse_args()
    n = args.n
    vectors = stream(n, args.dimensions)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(
        f"n={n} W={args.window} d={args.dimensions}; {os.cpu_count()} CPUs, "
        f"OPENBLAS_NUM_THREADS={threads}; numpy {np.__version__}, Python "
        f"{platform.python_version()}"
    )
    batch(vectors[:512], args.window)  # warm up BLAS

    seconds = []
    for _ in range(args.runs):
        elapsed, found = timed(partial(batch, vectors, args.window))
        seconds.append(elapsed)
    assert isinstance(found, Neighbours)
    rate = n / statistics.median(seconds)
    print(f"online_nearest (batch): {rate:,.0f} items/s (median of {args.runs})")

    cache_seconds = []
    ids = [str(position) for position in range(n)]
    for _ in range(args.runs):
        cache = VectorCache(max_elements=args.window, dimensions=args.dimensions)
        elapsed, _ = timed(partial(cache.nearest_then_add_many, vectors, ids=ids))
        cache_seconds.append(elapsed)
    cache_rate = n / statistics.median(cache_seconds)
    print(f"VectorCache.nearest_then_add_many: {cache_rate:,.0f} items/s (median of {args.runs})")

    elapsed, sequential = timed(lambda: one_by_one(vectors, args.window))
    assert isinstance(sequential, list)
    slow = n / elapsed
    print(f"one by one (nearest, add): {slow:,.0f} items/s (one run)")
    print(f"ratio: batch {rate / slow:.1f}x, through the cache {cache_rate / slow:.1f}x")

    expected_index = np.array([-1 if s is None else int(s.id or 0) for s in sequential])
    expected = np.array([np.nan if s is None else s.similarity for s in sequential])
    gap = np.nanmax(np.abs(found.similarity - expected))
    differing = int(np.count_nonzero(found.similarity[1:] != expected[1:]))
    other = found.index != expected_index
    copies = int(np.count_nonzero(other & (np.abs(expected - 1.0) < 1e-6)))
    print(
        f"batch vs one by one: max |difference| {gap:.1e}, {differing} similarities not "
        f"bit-identical, {int(other.sum())} other neighbours ({copies} of them exact copies)"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak RSS {rss:,.0f} MiB (the vectors alone: {vectors.nbytes / 2**20:,.0f} MiB; "
        f"{rss_data:,.0f} MiB once they were made)"
    )


if __name__ == "__main__":
    main()
