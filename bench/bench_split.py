"""Leak-proof splits on generated rows: groups on two sides, sizes against shares, same seed.

Generates N chat rows (``--rows``, default 100k) in tasks of 1 to 12 runs (most small, a few
large), in three domains, and splits them with :func:`knowledgepulse.runs.split` by task
(test 0.2, validation 0.1), then stratified by domain. Prints, for each: the groups found on
two sides (the goal: 0), each part's size against its share (the goal: within 1 %), whether the
same seed gave the same split, and the time.

    python bench/bench_split.py [--rows 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from knowledgepulse.runs import split

TEST, VALIDATION = 0.2, 0.1
DOMAINS = ("code", "support", "qa")


def generate(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` chat rows, runs of tasks of 1 to 12 runs (geometric-ish sizes)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    task = 0
    while len(rows) < count:
        runs = min(12, 1 + int(rng.expovariate(1 / 3)))
        domain = rng.choice(DOMAINS)
        for run in range(min(runs, count - len(rows))):
            rows.append(
                {
                    "id": f"t{task}-r{run}",
                    "task_id": f"task-{task}",
                    "domain": domain,
                    "messages": [
                        {"role": "user", "content": f"task {task}: do the thing"},
                        {"role": "assistant", "content": f"run {run} did it"},
                    ],
                }
            )
        task += 1
    return rows


def report(name: str, rows: list[dict[str, Any]], seed: int, stratify: str | None) -> None:
    """Split twice with the same seed and once with another; print the goals' measures."""
    start = time.perf_counter()
    first = split(
        rows, seed=seed, stratify=stratify, source="openai-chat", test=TEST, validation=VALIDATION
    )
    seconds = time.perf_counter() - start
    again = split(
        rows, seed=seed, stratify=stratify, source="openai-chat", test=TEST, validation=VALIDATION
    )
    other = split(
        rows,
        seed=seed + 1,
        stratify=stratify,
        source="openai-chat",
        test=TEST,
        validation=VALIDATION,
    )
    total = len(first.items)
    worst = 0.0
    sizes = []
    for part, count in first.sizes.items():
        share = first.fractions[part]
        off = 100 * (count / total - share)
        worst = max(worst, abs(off) / share)  # relative to the share, in %
        sizes.append(f"{part} {count} ({100 * count / total:.2f}% for {100 * share:g}%)")
    print(f"{name}: {total} rows in {len(set(first.groups))} groups, {seconds:.1f} s")
    print(f"  groups on two sides: {len(first.shared_groups)}")
    print(f"  sizes: {', '.join(sizes)}; worst {worst:.3f}% of its share off")
    print(f"  same seed, same split: {first.parts == again.parts}")
    moved = sum(a != b for a, b in zip(first.parts, other.parts, strict=True))
    print(f"  another seed moves {100 * moved / total:.0f}% of the rows")
    if stratify is not None:
        for domain in DOMAINS:
            parts = [p for p, r in zip(first.parts, rows, strict=True) if r["domain"] == domain]
            test = parts.count("test") / len(parts)
            print(f"  {domain}: test {100 * test:.2f}% of its {len(parts)} rows")


def main() -> None:
    """Generate the rows, split them by task, then stratified by domain."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = generate(args.rows, args.seed)
    report("by task", rows, args.seed, None)
    report("by task, stratified by domain", rows, args.seed, "domain")


if __name__ == "__main__":
    main()
