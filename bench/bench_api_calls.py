"""The Python API's calls on chat rows in memory: peak memory, CPU seconds, rows in and out.

    python bench/bench_api_calls.py --rows 20000
    python bench/bench_api_calls.py --rows 200000 --kinds dataset --calls annotate select

Each call (``score``, ``annotate``, ``select`` held whole and with ``reread=True``, ``dedupe``
by similarity (``HashingEmbedder``) and by task, ``split``, ``decontaminate``, ``redact``, and
``select(...).write_to(messages=True)``) runs in a fresh process on bench_rows.py's generated
OpenAI-chat rows (1 in 100 unreadable) as a ``datasets.Dataset``, an Arrow table, a pandas
``DataFrame`` or a list of dicts, scored without an embedder unless it needs one. Peak is
``ru_maxrss`` less the process's after reading the data; rows out are counted in what the call
gave or wrote (every row, those that gave no trace included).

2026-11-30, 20,000 rows, the 2-core development machine under load (peak MB, CPU s; every row
out): annotate (Dataset, Arrow, DataFrame, dicts) 691/479/428/384 MB before each item was let
go, 248/67/17/26 MB after; select held whole 421/454/422/372 MB, with reread 8/85/38/36 MB;
dedupe by similarity 1,145/1,179/1,146/1,096 MB (the held items, and every vector made at once).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CALLS = [
    "score", "annotate", "select", "select_reread", "dedupe_sim", "dedupe_task", "split",
    "decontaminate", "redact", "messages",
]  # fmt: skip
KINDS = ("dataset", "arrow", "pandas", "list")


def _data(kind: str, path: Path) -> Any:
    import pyarrow.parquet as pq  # noqa: PLC0415 - in the measured process only

    table = pq.read_table(path)
    if kind == "dataset":
        import datasets  # noqa: PLC0415

        datasets.disable_progress_bars()
        return datasets.Dataset(table)
    if kind == "pandas":
        return table.to_pandas()
    return table if kind == "arrow" else table.to_pylist()


def one(kind: str, call: str, path: Path, rows: int, out: Path) -> dict[str, Any]:
    """Run one call and measure it (in this process: run it in a fresh one)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    from knowledgepulse import runs  # noqa: PLC0415
    from knowledgepulse.testing import HashingEmbedder  # noqa: PLC0415
    from knowledgepulse.value.scorer import TraceValueScorer  # noqa: PLC0415

    logging.getLogger("knowledgepulse").setLevel(logging.ERROR)
    data = _data(kind, path)
    plain = TraceValueScorer(embedder=None)

    def used() -> tuple[float, float]:
        got = resource.getrusage(resource.RUSAGE_SELF)
        return got.ru_maxrss / 1024, got.ru_utime + got.ru_stime

    def written(target: Path) -> int:  # a split of dicts is JSON Lines
        if target.suffix != ".parquet":
            return len(target.read_text().splitlines())
        return int(pq.ParquetFile(target).metadata.num_rows)

    base, start = used()
    target = out / f"{kind}-{call}.parquet"
    chat: Any = {"source": "openai-chat"}
    if call == "score":  # the rows that gave no trace are told to on_problem
        told: list[object] = []
        count = len(runs.score(data, scorer=plain, on_problem=told.append, **chat)) + len(told)
    elif call == "annotate":
        count = len(runs.annotate(data, scorer=plain, **chat))
    elif call in {"select", "select_reread", "messages"}:
        picked = runs.select(data, scorer=plain, reread=call == "select_reread", **chat)
        picked.write_to(target, messages=call == "messages")
        count = written(target)
    elif call.startswith("dedupe"):
        by_task = call == "dedupe_task"
        scorer = plain if by_task else TraceValueScorer(embedder=HashingEmbedder())
        runs.dedupe(data, by="task" if by_task else "similarity", scorer=scorer, **chat).write_to(
            target
        )
        count = written(target)
    elif call == "split":
        parts = runs.split(data, test=0.1, scorer=plain, **chat).write_to(out / f"{kind}-split")
        count = sum(written(part) for part in parts.values())
    elif call == "decontaminate":
        texts = [f"Please handle the invoice #{n} for customer 5." for n in range(0, rows, 97)]
        clean = runs.decontaminate(data, against_texts=texts, scorer=plain, **chat)
        clean.write_to(target)
        count = written(target) + len(clean.removed)
    else:
        count = len(runs.redact(data, **chat).data)
    peak, end = used()
    return {
        "kind": kind,
        "call": call,
        "peak_mb": round(peak - base),
        "cpu_s": round(end - start, 1),
        "rows_in": rows,
        "rows_out": count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--calls", nargs="+", choices=CALLS, default=CALLS)
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # KIND CALL DIRECTORY
    args = parser.parse_args()
    if args.one:
        kind, call, folder = args.one
        print(json.dumps(one(kind, call, Path(folder) / "rows.parquet", args.rows, Path(folder))))
        return
    from bench_rows import write_rows  # noqa: PLC0415 - run from the repository's root

    with tempfile.TemporaryDirectory() as folder:
        write_rows(Path(folder) / "rows.parquet", args.rows, bad_every=100)
        for kind in args.kinds:
            for call in args.calls:
                command = [sys.executable, __file__, "--rows", str(args.rows), "--one", kind, call]
                done = subprocess.run(
                    [*command, folder], check=False, capture_output=True, text=True
                )
                print(done.stdout.strip() or f"{kind} {call} failed: {done.stderr[-300:]}")


if __name__ == "__main__":
    main()
