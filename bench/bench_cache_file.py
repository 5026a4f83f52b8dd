"""Ring-file cache: open time and peak RSS of a 1M x 384 cache, scans, saves, and kill -9.

Run: ``python bench/bench_cache_file.py [--size 1000000] [--kills 200]`` (writes the file once in
a temp dir). Prints medians of 3 runs; each figure comes from a fresh subprocess where RSS
matters. ``--kills N`` SIGKILLs a process that saves in a loop N times, at random moments, and
checks after each kill that the file opens holding whole saves: a run of consecutive saves
(the newest whole, the oldest possibly cut by eviction), never a part of one or damage.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.ring_file import RingFile, RingLayout, create_ring_file
from knowledgepulse.novelty.windows import unit_rows

DIMENSIONS = 384
PROBE = """
import json, sys, time
import numpy as np
from knowledgepulse.novelty.cache import VectorCache
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
    create_ring_file(path, RingLayout(DIMENSIONS, size), model_id="bench", ttl_ms=None)
    ring = RingFile(path, writable=True)
    rng = np.random.default_rng(0)
    for start in range(0, size, 65_536):
        count = min(65_536, size - start)
        vectors = unit_rows(rng.normal(size=(count, DIMENSIONS)).astype(np.float32))
        ids: list[str | None] = [f"kp:trace:{start + i:012d}" for i in range(count)]
        ring.commit(vectors, np.full(count, time.time() * 1000), ids)
    ring.close()


SAVER = """
import sys, numpy as np
from knowledgepulse.novelty.cache import VectorCache
cache = VectorCache.open(sys.argv[1], dimensions=64, max_elements=500)
rng = np.random.default_rng(int(sys.argv[2]))
print("ready", flush=True)
for round in range(int(sys.argv[3]), 10**9):
    count = int(rng.integers(1, 200))
    cache.nearest_then_add_many(
        rng.normal(size=(count, 64)).astype(np.float32),
        ids=[f"{round}-{i}-{count}" for i in range(count)],
    )
    cache.flush()
"""


def kills(count: int) -> None:
    """SIGKILL a saving process ``count`` times; check each time that whole saves remain."""
    rng = np.random.default_rng(3)
    whole = damaged = journals = saves = 0
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "kill.kpcache"
        start = time.perf_counter()
        for attempt in range(count):
            process = subprocess.Popen(
                [sys.executable, "-c", SAVER, str(path), str(attempt), str(saves + 1)],
                stdout=subprocess.PIPE,
                env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
            )
            assert process.stdout is not None
            process.stdout.readline()
            time.sleep(float(rng.uniform(0.0, 0.25)))
            process.send_signal(signal.SIGKILL)
            process.wait()
            process.stdout.close()
            journals += path.stat().st_size > RingLayout(64, 500).journal_offset
            try:
                cache = VectorCache.open(path)
                ids = [e.id or "" for e in cache.entries()]
                cache.close()
            except CacheFileError as error:
                damaged += 1
                print(f"kill {attempt}: {error}")
                continue
            rounds = [tuple(int(part) for part in i.split("-")) for i in ids]
            numbers = sorted({r for r, _, _ in rounds})
            saves = max(numbers, default=saves)
            # Whole saves: consecutive rounds, each complete but the oldest (cut by eviction).
            complete = numbers == list(range(numbers[0], numbers[-1] + 1)) if numbers else True
            for number in numbers[1:]:
                parts = [(i, n) for r, i, n in rounds if r == number]
                complete &= [i for i, _ in parts] == list(range(parts[0][1]))
            whole += complete
        elapsed = time.perf_counter() - start
    print(
        f"kill -9 at random moments: {count} kills in {elapsed:.0f} s; the file opened holding "
        f"whole saves {whole} times, damaged {damaged}, a part of a save "
        f"{count - whole - damaged}; {journals} kills left a journal (a save cut mid-way: "
        "finished on open if durable, else dropped)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=256)
    parser.add_argument("--kills", type=int, default=0, help="only the kill -9 check, N kills")
    args = parser.parse_args()
    if args.kills:
        kills(args.kills)
        return
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
            store = cache._store
            assert store is not None
            store.append(
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
