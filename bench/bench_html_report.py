"""The HTML report of a run with many failing cases stays small enough for a browser to open.

    python bench/bench_html_report.py            # 10,000 failing cases, 2,000-character answers
    python bench/bench_html_report.py 2000 500

Each case answers a text that misses its one content pattern, so every case fails and shows its
answer. Before the page detailed only the first 100 failing cases and 1,000 matrix rows, 10,000
such cases made a 27.6 MB page rendered in 2.7 s; after, 0.42 MB in 0.22 s (2026-11-30, loaded
2-core machine). Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.builders import make_suite

from knowledgepulse.evals.runner import run_suite
from knowledgepulse.reports.evals_html import to_html

WORDS = ("alpha", "beta", "gamma", "delta", "tool", "call")


def main() -> None:
    """Score the cases, render the page, print its size and the time it took."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=int, nargs="?", default=10_000)
    parser.add_argument("characters", type=int, nargs="?", default=2_000)
    args = parser.parse_args()
    rng = random.Random(1)
    cases = [
        {
            "id": f"case-{i}",
            "actual": " ".join(rng.choice(WORDS) for _ in range(args.characters // 6)),
            "expected": {"contentPatterns": ["not-in-the-answer"]},
        }
        for i in range(args.cases)
    ]
    run = run_suite(make_suite({"type": "content-quality"}), cases)
    start = time.perf_counter()
    page = to_html(run)
    took = time.perf_counter() - start
    print(f"{args.cases:,} failing cases: {len(page.encode()) / 1e6:.2f} MB in {took:.2f} s")


if __name__ == "__main__":
    main()
