"""Where inferred tasks part from the true ones, what that costs selection, and which signal
could mend it.

For each corpus (tasks known, see ``corpora/README.md``), scored once, tasks inferred as
``kp select`` infers them (:func:`~knowledgepulse.runs.tasks.inferred_tasks`):

- how many true tasks inference splits (runs of one task in two inferred tasks or more), and
  how many inferred tasks mix true tasks;
- selection at each k (the successful runs of a task before its failed ones, as ``kp select``)
  given four sets of tasks: the inferred ones; the inferred ones cut along the true ones (no
  mixing, every split kept); the inferred ones joined along the true ones (no split, every mix
  kept: two true tasks mixed in one inferred task end up in one); the true ones. Each row:
  true tasks covered and the share of successful picks, and the pair-F1 of "same task";
- how well each signal tells two runs of one task from runs of two tasks (the AUC over pairs),
  over every pair of distinct tasks and over the pairs that share an identifier (a string
  argument of a tool call with a digit in it, not a date or a number: a user id, an order id):
  the novelty cosine (what inference compares), the objectives' cosine, the identifiers'
  Jaccard, the tool names' Jaccard.

    python bench/bench_task_inference.py [--k 50 100] [--corpora taubench reflexion_hotpotqa]
        [--embedder static|minilm]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from bench_coverage import coverage
from bench_dedupe import pair_f1
from bench_novelty import corpus_items, task_key
from knowledgepulse.curation import score_corpus
from knowledgepulse.curation import select as select_candidates
from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.curation.select import INFERRED_TASK_SIMILARITY
from knowledgepulse.novelty.settings import DEFAULT_EMBEDDER, EMBEDDERS
from knowledgepulse.runs.embedder import run_embedder
from knowledgepulse.runs.tasks import inferred_tasks
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value import TraceValueScorer

_NUMBER_OR_DATE = re.compile(r"[\d\-.:/ +*()]+")


def identifiers(trace: ReasoningTrace) -> set[str]:
    """The identifiers a run acted on: tool-call string arguments holding a digit (one word of
    at most 40 characters, not only digits and punctuation: no date, amount or formula)."""
    found = set()
    for step in trace.steps:
        if step.type != "tool_call" or not step.input:
            continue
        for value in step.input.values():
            for item in value if isinstance(value, list) else [value]:
                if (
                    isinstance(item, str)
                    and len(item) <= 40
                    and " " not in item
                    and any(c.isdigit() for c in item)
                    and not _NUMBER_OR_DATE.fullmatch(item)
                ):
                    found.add(item)
    return found


def tool_names(trace: ReasoningTrace) -> set[str]:
    """The tools a run called (tau-bench's ``respond``, a reply to the user, left out)."""
    return {
        step.tool.name
        for step in trace.steps
        if step.type == "tool_call" and step.tool is not None and step.tool.name != "respond"
    }


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a | b else 0.0


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive pair's value > a negative's), ties counting a half."""
    ranked = np.sort(np.asarray(negative, dtype=np.float64))
    values = np.asarray(positive, dtype=np.float64)
    below = np.searchsorted(ranked, values, "left")
    tied = np.searchsorted(ranked, values, "right") - below
    return float(np.mean(below + 0.5 * tied) / len(ranked))


def joined(inferred: Sequence[str], truth: Sequence[str]) -> list[str]:
    """The inferred tasks joined along the true ones (union-find over both labels)."""
    parent: dict[str, str] = {}

    def find(label: str) -> str:
        while parent.get(label, label) != label:
            label = parent[label]
        return label

    for task, true in zip(inferred, truth, strict=True):
        parent[find("inferred " + task)] = find("true " + true)
    return [find("inferred " + task) for task in inferred]


def unit_rows(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """The rows scaled to unit length."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def main() -> None:
    """Print, per corpus: splits and mixes, selection given each set of tasks, signal AUCs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", nargs="+", type=int, default=[50, 100])
    parser.add_argument("--corpora", nargs="+", default=["taubench", "reflexion_hotpotqa"])
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default=DEFAULT_EMBEDDER, help="as kp's --embedder"
    )
    args = parser.parse_args()
    embedder = run_embedder(kind=args.embedder)
    scorer = TraceValueScorer(embedder=embedder)
    print(f"embedder: {args.embedder}, tasks inferred at {INFERRED_TASK_SIMILARITY:g}")
    for corpus in args.corpora:
        traces = corpus_items(corpus)
        truth = [task_key(corpus, item.trace) for item in traces]
        success = [item.trace.metadata.success for item in traces]
        scored: Corpus = score_corpus(scorer, traces)
        assert scored.vectors is not None, "needs the embedder's vectors"
        inferred = inferred_tasks(scored, INFERRED_TASK_SIMILARITY)

        parts: defaultdict[str, set[str]] = defaultdict(set)
        mixes: defaultdict[str, set[str]] = defaultdict(set)
        for task, true in zip(inferred, truth, strict=True):
            parts[true].add(task)
            mixes[task].add(true)
        print(
            f"{corpus}: {len(parts)} true tasks, {len(mixes)} inferred; "
            f"{sum(len(p) > 1 for p in parts.values())} true tasks split, "
            f"{sum(len(m) > 1 for m in mixes.values())} inferred tasks mixing true ones"
        )
        print(
            f"{corpus} | tasks given | tasks | "
            + " | ".join(f"k={k}: covered, successful" for k in args.k)
            + " | pair-F1"
        )
        given = {
            "inferred (kp select)": inferred,
            "inferred, cut along the true (no mixing)": [
                f"{t} {true}" for t, true in zip(inferred, truth, strict=True)
            ],
            "inferred, joined along the true (no split)": joined(inferred, truth),
            "true": truth,
        }
        for name, tasks in given.items():
            candidates = [
                replace(candidate, failed=not succeeded)
                for candidate, succeeded in zip(scored.candidates(tasks), success, strict=True)
            ]
            cells = []
            for k in args.k:
                covered, share = coverage(
                    select_candidates(candidates, budget=k).selected, truth, success
                )
                cells.append(f"{covered} of {len(parts)}, {share:.0f}%")
            print(
                f"{corpus} | {name} | {len(set(tasks))} | {' | '.join(cells)} | "
                f"{pair_f1(tasks, truth):.3f}",
                flush=True,
            )

        cosine = scored.vectors @ scored.vectors.T
        objectives = unit_rows(embedder.embed_batch([item.trace.task.objective for item in traces]))
        objective_cosine = objectives @ objectives.T
        ids = [identifiers(item.trace) for item in traces]
        tools = [tool_names(item.trace) for item in traces]
        signals: dict[str, Callable[[int, int], float]] = {
            "novelty cosine": lambda i, j: float(cosine[i, j]),  # noqa: B023
            "objectives' cosine": lambda i, j: float(objective_cosine[i, j]),  # noqa: B023
            "identifiers' Jaccard": lambda i, j: jaccard(ids[i], ids[j]),  # noqa: B023
            "tool names' Jaccard": lambda i, j: jaccard(tools[i], tools[j]),  # noqa: B023
        }
        first, second = np.triu_indices(len(traces), 1)
        pairs = list(zip(first.tolist(), second.tolist(), strict=True))
        same = [(i, j) for i, j in pairs if truth[i] == truth[j]]
        apart = [(i, j) for i, j in pairs if truth[i] != truth[j]]
        sharing = [(i, j) for i, j in apart if ids[i] & ids[j]]
        print(
            f"{corpus} | signal | AUC, one task against two ({len(same)} against "
            f"{len(apart)} pairs) | against two sharing an identifier ({len(sharing)} pairs)"
        )
        for name, signal in signals.items():
            within = [signal(i, j) for i, j in same]
            against_sharing = (
                f"{auc(within, [signal(i, j) for i, j in sharing]):.3f}" if sharing else "-"
            )
            print(
                f"{corpus} | {name} | {auc(within, [signal(i, j) for i, j in apart]):.3f} | "
                f"{against_sharing}",
                flush=True,
            )


if __name__ == "__main__":
    main()
