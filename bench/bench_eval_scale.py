"""Scoring a big case grows with its size, not with its square: a page of thousands of blocks.

    python bench/bench_eval_scale.py            # 250 and 4,000 blocks
    python bench/bench_eval_scale.py 500 8000

Each case edits everything: every block updated, every second one inserted after, every third
deleted; the three scorers that resolve operations against the page run on it (best of 3).
Before operations found their block by id, a scan of the page per operation made 16x the case
cost about 256x the time (20 s for one case of 5,000 blocks under ``kp eval``); after, about 45x
(2026-11-29, loaded machine: list moves in C are what is left). Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.builders import make_case, op, page

from knowledgepulse.evals.models import Case
from knowledgepulse.evals.scorer import CaseContext, get_scorer_class

SCORERS = ("operation-accuracy", "anti-hallucination", "target-block-precision")


def edit_everything(blocks: int) -> Case:
    """A page of ``blocks`` blocks: each updated, every 2nd inserted after, every 3rd deleted."""
    ids = [f"b{i}" for i in range(blocks)]
    operations = [
        *(op("update", b, content=f"new {b}") for b in ids),
        *(op("insert", b, content="x") for b in ids[::2]),
        *(op("delete", b) for b in ids[1::3]),
    ]
    return make_case(
        [page("p", **{b: f"old {b}" for b in ids})], actual=operations, expected=operations
    )


def seconds(case: Case) -> float:
    """The best of 3 wall times of the three scorers on ``case``."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for name in SCORERS:
            get_scorer_class(name)().score_case(CaseContext.of(case))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[250, 4000])
    sizes = parser.parse_args().sizes
    figures = [(size, seconds(edit_everything(size))) for size in sizes]
    for size, spent in figures:
        print(f"{size:>6,} blocks: {spent:7.3f} s")
    (small, first), (large, last) = figures[0], figures[-1]
    print(f"{large / small:.0f}x the blocks: {last / first:.0f}x the time")


if __name__ == "__main__":
    main()
