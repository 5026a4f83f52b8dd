"""Ring-file cache: open time and peak RSS of a 1M x 384 cache, blocked scans, saving 1k vectors.

Run: ``python bench/bench_cache_file.py [--size 1000000]`` (writes the file once in a temp dir).
Prints medians of 3 runs; each figure comes from a fresh subprocess where RSS matters.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from knowledgepulse.novelty import VectorCache
from knowledgepulse.novelty.cache_ring import RingFile
from knowledgepulse.novelty.exact import unit_rows
from knowledgepulse.novelty.ring_file import RingLayout

DIMENSIONS = 384
PROBE = """
import json, sys, time
import numpy as np
from knowledgepulse.novelty import VectorCache
def peak():  # VmHWM: this process's own peak (ru_maxrss would carry the parent's over exec)
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
start = time.perf_counter()
cache = VectorCache.open(sys.argv[1], read_only=True)
opened = time.perf_counter() - start
rss_open = peak()
queries = np.random.default_rng(1).normal(size=(int(sys.argv[2]), 384)).astype(np.float32)
start = time.perf_counter()
cache.nearest_many(queries)
scan = time.perf_counter() - start
rss_scan = peak()
print(json.dumps([opened, rss_open, scan, rss_scan]))
"""


def build(path: Path, size: int) -> None:
    """Write a full ring file of ``size`` random unit vectors, in slices of 65,536."""
    RingFile.create(path, RingLayout(DIMENSIONS, size), model_id="bench", ttl_ms=None)
    ring = RingFile(path, writable=True)
    rng = np.random.default_rng(0)
    for start in range(0, size, 65_536):
        count = min(65_536, size - start)
        vectors = unit_rows(rng.normal(size=(count, DIMENSIONS)).astype(np.float32))
        ids: list[str | None] = [f"kp:trace:{start + i:012d}" for i in range(count)]
        ring.commit(vectors, np.full(count, time.time() * 1000), ids)
    ring.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.kpcache"
        start = time.perf_counter()
        build(path, args.size)
        print(
            f"write {args.size} x {DIMENSIONS}: {time.perf_counter() - start:.1f} s, "
            f"file {path.stat().st_size / 2**30:.2f} GiB"
        )
        runs = []
        for _ in range(3):
            out = subprocess.run(
                [sys.executable, "-c", PROBE, str(path), str(args.queries)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs.append(json.loads(out))
        opened, rss_open, scan, rss_scan = (
            statistics.median(col) for col in zip(*runs, strict=True)
        )
        print(f"open: {opened * 1000:.1f} ms, peak RSS after open {rss_open:.0f} MiB")
        print(
            f"nearest_many, {args.queries} queries (first scan, checksums checked): "
            f"{scan:.2f} s = {args.queries / scan:.0f} queries/s, "
            f"{args.queries * args.size / scan / 1e6:.0f} M pairs/s; peak RSS {rss_scan:.0f} MiB"
        )
        saves = []
        rng = np.random.default_rng(2)
        for _ in range(3):
            cache = VectorCache.open(path)
            # Only the save is timed: the vectors are held as nearest_then_add_many holds them.
            cache._store.append(
                unit_rows(rng.normal(size=(1000, DIMENSIONS)).astype(np.float32)),
                [f"kp:trace:new-{i}" for i in range(1000)],
                np.full(1000, time.time() * 1000),
            )
            start = time.perf_counter()
            cache.flush()
            saves.append(time.perf_counter() - start)
            cache.close()
        print(
            f"save 1k new vectors into it (journal, slots, header, 3 fsyncs): "
            f"{statistics.median(saves) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
