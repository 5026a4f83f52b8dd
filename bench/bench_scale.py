"""Issue 9's benchmark, "a million traces": every figure in one run; asserts nothing.

    python bench/bench_scale.py               # everything (about 15 minutes on 2 cores)
    python bench/bench_scale.py --quick       # 10k and 100k traces, small embedder runs
    python bench/bench_scale.py --device cuda # on a GPU machine: the GPU section too

Sections (each a whole process or the library as a user runs it; medians where repeated):

1. ``kp score --no-embedder`` on 100k and 1M generated traces (``bench/generate_traces.py``,
   about 2.4 KB each): traces/s and peak RSS.
2. Batch novelty: plain float scans against one by one (``bench/bench_nearest.py``).
3. The embedder on the CPU, ``--workers 1`` and 2, against the model's own rate on the same
   texts; the PyTorch backend on the CPU, or on ``--device cuda`` against its model-only rate
   (``bench/bench_embedding.py``).
4. Ray, local, 2 workers, against the plain process (``bench/bench_ray.py``).
5. The ring-file cache: open, scan and save at 1M vectors (``bench/bench_cache_file.py``).

Each section's script prints its own figures (run one alone for its options); the first
section's figures end the output as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
GENERATE = [sys.executable, str(BENCH / "generate_traces.py")]
KP = [sys.executable, "-m", "knowledgepulse.cli.main"]


def no_embedder(count: int, repeats: int, scratch: Path) -> dict[str, float]:
    """Traces/s and peak RSS of ``kp score --no-embedder`` over ``count`` generated traces."""
    traces = scratch / f"traces-{count}.jsonl"
    with traces.open("wb") as out:
        subprocess.run([*GENERATE, str(count)], stdout=out, check=True)
    command = ["/usr/bin/time", "-f", "%M", *KP, "score", "--no-embedder", "-f", "jsonl"]
    seconds, peaks = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        run = subprocess.run(
            [*command, str(traces)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True
        )
        seconds.append(time.perf_counter() - start)
        peaks.append(int(run.stderr.decode().strip().splitlines()[-1]))
    traces.unlink()
    middle = sorted(range(repeats), key=lambda i: seconds[i])[repeats // 2]
    return {
        f"no_embedder_{count}_traces_per_s": count / seconds[middle],
        f"no_embedder_{count}_peak_mib": peaks[middle] / 1024,
    }


def section(script: str, *args: str) -> None:
    """Run another benchmark script, its output shown as it comes."""
    print(f"\n== python bench/{script} {' '.join(args)}", flush=True)
    run = subprocess.run([sys.executable, str(BENCH / script), *args], check=False)
    if run.returncode != 0:
        print(f"(bench/{script} failed: exit code {run.returncode})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a few minutes")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda on a GPU machine")
    args = parser.parse_args()
    counts = (10_000, 100_000) if args.quick else (100_000, 1_000_000)
    figures: dict[str, object] = {
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
    }
    print("== kp score --no-embedder", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for count in counts:
            found = no_embedder(count, 3 if count <= 100_000 else 1, Path(scratch))
            for name, value in found.items():
                print(f"{name:40} {value:,.1f}", flush=True)
            figures |= found
    section("bench_nearest.py", *(["--n", "20000"] if args.quick else []))
    embedding = ["--traces", "64" if args.quick else "120", "--batch-size", "128"]
    section(
        "bench_embedding.py",
        *embedding,
        *(["--device", args.device, "--no-onnx"] if args.device != "cpu" else []),
    )
    section("bench_ray.py", *(["--traces", "200"] if args.quick else []))
    section("bench_cache_file.py", *(["--size", "100000"] if args.quick else []))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
