"""Streaming benchmark for ``kp score`` and ``kp validate``: prints figures, asserts nothing.

    python bench/bench_stream.py                 # 20k side by side, one trace, memory to 1M
    python bench/bench_stream.py --big 200000    # a quicker memory section
    python bench/bench_stream.py --memory-only   # only the memory section (about 8 minutes)

Every figure is a whole process, as a user runs it, medians of interleaved runs:

- 20,000 generated traces (``bench/generate_traces.py``, about 2.4 KB each) scored without
  the embedder, against the reference SDK's work on the same file (``node
  bench/reference/evaluate_value.mjs``: JSON.parse and evaluateValue, no validation);
- ``kp validate`` on the same traces as JSON Lines and as one JSON list (streamed by ijson);
- one trace, end to end (start-up and imports included);
- peak RSS of ``kp score --no-embedder -`` fed 10k and ``--big`` traces through a pipe, and how
  long the first output line takes (medians of ``--memory-repeats`` runs of each).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATE = [sys.executable, str(ROOT / "bench" / "generate_traces.py")]
KP = [sys.executable, "-m", "knowledgepulse.cli.main"]
NODE_REFERENCE = ROOT / "bench" / "reference" / "evaluate_value.mjs"


def timed(command: list[str], stdin_path: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child process, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    with open(stdin_path or os.devnull, "rb") as stdin:
        subprocess.run(
            command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
    elapsed = time.perf_counter() - start
    # ru_maxrss of children is the largest of any child so far; each run is measured alone.
    return elapsed, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def peak_rss_kib(command: list[str], producer: list[str]) -> tuple[int, float]:
    """Peak RSS of ``command`` reading ``producer``'s output, and seconds to its first line."""
    with subprocess.Popen(producer, stdout=subprocess.PIPE) as feed:
        start = time.perf_counter()
        with subprocess.Popen(
            ["/usr/bin/time", "-f", "%M", *command],
            stdin=feed.stdout,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as child:
            assert child.stdout is not None
            assert feed.stdout is not None
            feed.stdout.close()
            child.stdout.readline()
            first_line = time.perf_counter() - start
            shutil.copyfileobj(child.stdout, open(os.devnull, "wb"))  # noqa: SIM115
            _, err = child.communicate()
    return int(err.decode().strip().splitlines()[-1]), first_line


def side_by_side(traces: Path, as_list: Path, repeats: int) -> dict[str, float]:
    commands = {
        "kp_score": [*KP, "score", "--no-embedder", "-f", "jsonl", str(traces)],
        "kp_validate": [*KP, "validate", str(traces)],
        "kp_validate_json_list": [*KP, "validate", str(as_list)],
    }
    if shutil.which("node"):
        commands["reference_node"] = ["node", str(NODE_REFERENCE), str(traces)]
    samples: dict[str, list[float]] = {name: [] for name in commands}
    memory: dict[str, int] = {}
    for _ in range(repeats):
        for name, command in commands.items():
            elapsed, _ = timed(command)
            samples[name].append(elapsed)
    for name, command in commands.items():
        memory[name] = peak_of(command)
    figures = {f"{name}_s": statistics.median(times) for name, times in samples.items()}
    figures |= {f"{name}_peak_mib": kib / 1024 for name, kib in memory.items()}
    figures["json_list_over_jsonl"] = figures["kp_validate_json_list_s"] / figures["kp_validate_s"]
    if "reference_node_s" in figures:
        figures["kp_score_over_reference"] = figures["kp_score_s"] / figures["reference_node_s"]
    return figures


def peak_of(command: list[str]) -> int:
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    return int(result.stderr.decode().strip().splitlines()[-1])


def one_trace(path: Path, repeats: int) -> dict[str, float]:
    kp_times, node_times = [], []
    for _ in range(repeats):
        kp_times.append(timed([*KP, "score", "--no-embedder", "-f", "jsonl", str(path)])[0])
        if shutil.which("node"):
            node_times.append(timed(["node", str(NODE_REFERENCE), str(path)])[0])
    figures = {"one_trace_kp_s": statistics.median(kp_times)}
    if node_times:
        figures["one_trace_reference_node_s"] = statistics.median(node_times)
    return figures


def memory(big: int, repeats: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    samples: dict[int, list[tuple[int, float]]] = {10_000: [], big: []}
    for _ in range(repeats):
        for count, runs in samples.items():
            runs.append(
                peak_rss_kib(
                    [*KP, "score", "--no-embedder", "-f", "jsonl", "-"], [*GENERATE, str(count)]
                )
            )
    for count, runs in samples.items():
        figures[f"peak_mib_at_{count}"] = statistics.median(rss for rss, _ in runs) / 1024
        figures[f"first_line_s_at_{count}"] = statistics.median(first for _, first in runs)
    figures["peak_ratio_big_over_10k"] = (
        figures[f"peak_mib_at_{big}"] / figures["peak_mib_at_10000"]
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=20_000, help="traces side by side")
    parser.add_argument("--big", type=int, default=1_000_000, help="traces for the memory run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory-repeats", type=int, default=3, help="runs of each size")
    parser.add_argument(
        "--memory-only", action="store_true", help="only the peak RSS at 10k and --big"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory section")
    args = parser.parse_args()
    if args.memory_only:
        show({"machine": _machine()} | memory(args.big, args.memory_repeats))
        return
    with tempfile.TemporaryDirectory() as scratch:
        traces = Path(scratch) / "traces.jsonl"
        with traces.open("wb") as out:
            subprocess.run([*GENERATE, str(args.count)], stdout=out, check=True)
        as_list = Path(scratch) / "traces.json"
        as_list.write_bytes(b"[\n" + b",\n".join(traces.read_bytes().splitlines()) + b"\n]\n")
        one = Path(scratch) / "one.jsonl"
        one.write_bytes(traces.read_bytes().split(b"\n", 1)[0] + b"\n")
        figures: dict[str, float | str] = {
            "machine": _machine(),
            "traces": args.count,
            "mean_trace_bytes": round(traces.stat().st_size / args.count),
        }
        figures |= side_by_side(traces, as_list, args.repeats)
        figures |= one_trace(one, args.repeats)
    if not args.no_memory:
        figures |= memory(args.big, args.memory_repeats)
    show(figures)


def show(figures: dict[str, float | str]) -> None:
    for name, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else value
        print(f"{name:32} {shown}")
    print(json.dumps(figures))


def _machine() -> str:
    return f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"


if __name__ == "__main__":
    main()
