"""Novelty representations on real traces: do repeats get lower novelty than new tasks?

For each corpus and each named representation (``TraceValueScorer(novelty_text=...)``), every
trace is embedded once, one trace per call (timed: the p50 and p95 cost per trace), and then,
for each of several random orders, every trace is compared with all the traces before it (an
online cache holding everything): its novelty is ``1 - max cosine``. A trace is a *repeat* when
a trace of the same task came before it. The AUC is the chance that a new task's novelty is
above a repeat's (ties count half), averaged over the orders. ``false pairs`` counts the pairs
of traces of different tasks at cosine 0.85 or more: what ``kp dedupe --threshold 0.85`` could
take for near-duplicates.

Task groups (see ``corpora/README.md``): tau-bench's task index (in the trace id) and
Reflexion's question (the objective).

    python bench/bench_novelty.py [--names windows truncate objective-actions] [--orders 10]
        [--sample N] [--plain]

``--plain`` makes every trace a plain run with no action step (each ``tool_call`` and
``error_recovery`` becomes a ``thought`` with the same content), as a chat model's answers or a
MATH solution are: what a representation does with a trace that has no actions.

Figures only; nothing here fails on a timing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.representation import NOVELTY_TEXTS
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import load_traces
from knowledgepulse.value import TraceValueScorer

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def load(name: str, *, plain: bool = False) -> tuple[list[ReasoningTrace], NDArray[np.int64]]:
    """The corpus's traces and each one's task group (``plain``: with no action step)."""
    root = CORPORA
    lines = (root / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line) for line in lines if line.strip()]
    if plain:
        for document in documents:
            for step in document["steps"]:
                if step["type"] in ("tool_call", "error_recovery"):
                    step["type"] = "thought"
                    step.pop("tool", None)
                    step.pop("input", None)
    traces = [ReasoningTrace.model_validate(document) for document in documents]
    groups: dict[str, int] = {}
    keys = [task_key(name, trace) for trace in traces]
    return traces, np.array([groups.setdefault(key, len(groups)) for key in keys])


def corpus_items(name: str) -> list[TraceItem]:
    """The corpus's traces as kp reads them (each with its location), for the curation benches."""
    found = load_traces([CORPORA / f"{name}.jsonl"])
    return [item for item in found if isinstance(item, TraceItem)]


def task_key(corpus: str, trace: ReasoningTrace) -> str:
    """The task a trace of ``corpus`` is a run of: tau-bench's index, Reflexion's question."""
    found = re.search(r"task(\d+)-", trace.id) if corpus == "taubench" else None
    return found.group(1) if found else trace.task.objective


def online_novelty(
    similarity: NDArray[np.float32], order: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Each trace's novelty (``1 - max cosine``, clamped) against those before it in ``order``,
    from the second on: an online cache holding everything."""
    sims = similarity[np.ix_(order, order)]
    nearest = np.array([sims[k, :k].max() for k in range(1, len(order))], dtype=np.float64)
    novelty: NDArray[np.float64] = np.clip(1 - nearest, 0, 1)
    return novelty


def separation(
    similarity: NDArray[np.float32],
    groups: NDArray[np.int64],
    orders: int,
    calibration: Callable[[float], float] | None = None,
) -> tuple[float, float, float]:
    """Mean AUC over random orders, and the median novelty of new tasks and of repeats
    (through ``calibration``, a monotone map onto another scale, if given)."""
    rng = np.random.default_rng(0)
    aucs: list[float] = []
    new_all: list[float] = []
    repeat_all: list[float] = []
    for _ in range(orders):
        order = rng.permutation(len(groups))
        seen_groups = groups[order]
        novelty = online_novelty(similarity, order)
        if calibration is not None:
            novelty = np.array([calibration(float(value)) for value in novelty])
        repeat = np.array(
            [seen_groups[k] in set(seen_groups[:k].tolist()) for k in range(1, len(order))]
        )
        new, old = novelty[~repeat], novelty[repeat]
        wins = (new[:, None] > old[None, :]).sum() + 0.5 * (new[:, None] == old[None, :]).sum()
        aucs.append(float(wins / (len(new) * len(old))))
        new_all += new.tolist()
        repeat_all += old.tolist()
    return float(np.mean(aucs)), float(np.median(new_all)), float(np.median(repeat_all))


def main() -> None:
    """Print one row per corpus and representation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", nargs="+", default=sorted(NOVELTY_TEXTS))
    parser.add_argument("--corpora", nargs="+", default=["taubench", "reflexion_hotpotqa"])
    parser.add_argument("--orders", type=int, default=10)
    parser.add_argument("--sample", type=int, default=None, help="traces a corpus (seeded)")
    parser.add_argument("--plain", action="store_true", help="turn every action into a thought")
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    embedder.load()
    print(
        "corpus | novelty_text | AUC | median N new / repeat | false pairs >= 0.85"
        " | cost p50 / p95 ms a trace"
    )
    for corpus in args.corpora:
        traces, groups = load(corpus, plain=args.plain)
        if args.sample is not None and args.sample < len(traces):
            keep = np.sort(np.random.default_rng(1).choice(len(traces), args.sample, False))
            traces, groups = [traces[i] for i in keep], groups[keep]
        for name in args.names:
            scorer = TraceValueScorer(embedder=embedder, novelty_text=name)
            scorer.embed_traces(traces[:1])  # warm up: the first call pays one-off costs
            rows, costs = [], []
            for trace in traces:
                start = time.perf_counter()
                vectors = scorer.embed_traces([trace])
                costs.append((time.perf_counter() - start) * 1000)
                assert vectors is not None
                rows.append(vectors[0])
            matrix = np.stack(rows)
            similarity = matrix @ matrix.T
            auc, new, repeat = separation(similarity, groups, args.orders)
            other_task = np.triu(groups[:, None] != groups[None, :], k=1)
            false_pairs = int((similarity[other_task] >= 0.85).sum())
            p50, p95 = np.percentile(costs, [50, 95])
            print(
                f"{corpus} | {name} | {auc:.3f} | {new:.2f} / {repeat:.2f} | {false_pairs} "
                f"| {p50:.0f} / {p95:.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
