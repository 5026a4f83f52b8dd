"""The static embedder against the int8 MiniLM model, in the same run: cost and separation.

    python bench/bench_static.py [--orders 10] [--plain] [--static DIR ...] [--batch 2000]
    python bench/bench_static.py --throughput [--rounds 5] [--against SRC] [--batch 2000]

On the default novelty text (``TraceValueScorer(novelty_text=...)``), for each embedder:

- cost: every tau-bench trace embedded one per call (p50 ms a trace, after a warm-up), and the
  ratio MiniLM / static; throughput: ``--batch`` tau-bench traces (repeated) in one call;
- separation, per corpus (``bench_novelty``'s method): the AUC of novelty first-seen vs repeat
  over ``--orders`` random orders (a repeat is a trace whose task came before), the median
  novelty of new tasks and of repeats, and dedupe's best F1: over every pair of traces, "same
  task" predicted by cosine >= t, at the best t (printed); for a table with a novelty
  calibration, the medians again on MiniLM's scale (``static calibrated``);
- sharing decisions, per corpus: every trace scored in file order against the ones before it
  (``kp score``'s default), the share reaching the 0.75 threshold with each embedder, and the
  share of traces whose decision agrees with MiniLM's: static's novelty as it is (``raw``) and
  through its calibration (``calibrated``, what ``kp score`` does).

``--plain`` adds each corpus with every action turned into a thought (tool-less runs).
``--static DIR`` adds tables built by ``bench/build_static_embedder.py --out DIR`` (another
``--directions``, or fitted on one corpus only), named by their folder.

``--throughput`` prints only the static embedder's traces/s: one call of ``--batch`` tau-bench
traces and one of the 200 distinct ones, each round in a fresh process (``--rounds``), medians;
``--against SRC`` runs the code under another checkout's ``src/`` alternately, round by round,
and prints the ratios. Issue 29 (batch throughput), measured on the shared 2-core machine at
load average 3.5 to 11, main at ``cda8a75`` against the faster action terms, term vectors,
piece counting, ``encode_batch_fast`` and prefixes cut before a space (vectors unchanged)::

    git archive cda8a75 src | tar -x -C /tmp/kp-main
    python bench/bench_static.py --throughput --rounds 11 --against /tmp/kp-main/src

    code | 2,000 tau-bench traces in one call, a wall second / a CPU second | the 200 distinct
    this    | 350 / 831 | 348 / 871
    against | 205 / 560 | 206 / 568
    ratio   | 1.70x / 1.48x | 1.69x / 1.53x

(7 rounds, another load: 572 / 711 against 355 / 438, 1.61x / 1.62x.) Quiet (load 0.2,
2026-11-29), ``--rounds 5 --against`` the tree at ``cda8a75``::

    this    | 1,203 / 855 | 1,421 / 915
    against | 827 / 566 | 748 / 518
    ratio   | 1.45x / 1.51x | 1.90x / 1.77x

Figures only; nothing here fails on a timing. Timings on a shared machine are noisy: read the
ratios, which come from the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench_novelty import load, separation
from knowledgepulse.novelty import Embedder
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer


def one_by_one(
    embedder: Embedder, traces: list[ReasoningTrace]
) -> tuple[NDArray[np.float32], float, float]:
    """Every trace's novelty vector, one call each, and the p50 ms a call: wall and CPU."""
    scorer = TraceValueScorer(embedder=embedder, novelty_text=DEFAULT_NOVELTY_TEXT)
    scorer.embed_traces(traces[:1])  # warm up: the first call pays one-off costs
    rows, walls, cpus = [], [], []
    for trace in traces:
        start, cpu = time.perf_counter(), time.process_time()
        vectors = scorer.embed_traces([trace])
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        assert vectors is not None
        rows.append(vectors[0])
    return np.stack(rows), float(np.median(walls)), float(np.median(cpus))


def throughput(embedder: Embedder, traces: list[ReasoningTrace], count: int) -> tuple[float, float]:
    """Traces a second embedding ``count`` traces (``traces`` repeated) in one call: a second of
    wall time, and a second of this process's CPU time (all its threads)."""
    batch = (traces * (count // len(traces) + 1))[:count]
    scorer = TraceValueScorer(embedder=embedder, novelty_text=DEFAULT_NOVELTY_TEXT)
    start, cpu = time.perf_counter(), time.process_time()
    scorer.embed_traces(batch)
    return count / (time.perf_counter() - start), count / (time.process_time() - cpu)


def compare_throughput(batch: int, rounds: int, against: Path | None) -> None:
    """Print the median throughput of the static embedder, each round in a fresh process: this
    checkout's code and, alternating with it round by round, the code under ``against``."""
    trees = {"this": Path(__file__).resolve().parents[1] / "src"}
    trees |= {"against": against.resolve()} if against is not None else {}
    rates: dict[str, list[list[float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, source in trees.items():
            found = subprocess.run(
                [sys.executable, __file__, "--one-call", "--batch", str(batch)],
                env={**os.environ, "PYTHONPATH": str(source)},
                capture_output=True,
                text=True,
                check=True,
            )
            rates[name].append([float(rate) for rate in found.stdout.split()])
    print(
        f"code | traces/s over {rounds} rounds (median): {batch} tau-bench traces in one call, "
        "a wall second / a CPU second | the 200 distinct ones in one call, same"
    )
    medians = {name: np.median(np.array(found), axis=0) for name, found in rates.items()}
    for name, median in medians.items():
        print(
            f"{name} ({trees[name]}) | {median[0]:,.0f} / {median[1]:,.0f} | "
            f"{median[2]:,.0f} / {median[3]:,.0f}"
        )
    if against is not None:
        ratio = medians["this"] / medians["against"]
        print(
            f"ratio this / against | {ratio[0]:.2f}x / {ratio[1]:.2f}x | "
            f"{ratio[2]:.2f}x / {ratio[3]:.2f}x"
        )


def one_call(batch: int) -> None:
    """Print the static embedder's traces/s (wall, CPU) for ``batch`` tau-bench traces in one
    call and for the 200 distinct ones in one call, after a warm-up call."""
    embedder = StaticEmbedder()
    embedder.load()
    taubench, _ = load("taubench")
    throughput(embedder, taubench, 20)
    rates = [*throughput(embedder, taubench, batch), *throughput(embedder, taubench, len(taubench))]
    print(" ".join(f"{rate:.1f}" for rate in rates))


def shared(
    embedder: Embedder | None, traces: list[ReasoningTrace], vectors: NDArray[np.float32]
) -> NDArray[np.bool_]:
    """Whether each trace reaches the sharing threshold, scored in order against those before it
    (the embedder's novelty calibration applied; ``None``: none applied)."""
    scorer = TraceValueScorer(embedder=embedder, novelty_text=DEFAULT_NOVELTY_TEXT)
    scores = [breakdown.shareable for breakdown in scorer.score_embedded(traces, vectors)]
    return np.array(scores)


def best_f1(similarity: NDArray[np.float32], groups: NDArray[np.int64]) -> tuple[float, float]:
    """The best F1 of "same task" predicted by cosine >= t over every pair, and that t."""
    upper = np.triu_indices(len(groups), k=1)
    scores = similarity[upper]
    same = (groups[:, None] == groups[None, :])[upper]
    order = np.argsort(-scores, kind="stable")
    hits = np.cumsum(same[order])
    predicted = np.arange(1, len(order) + 1)
    f1 = 2 * hits / (predicted + same.sum())
    best = int(np.argmax(f1))
    return float(f1[best]), float(scores[order][best])


def arguments() -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=10)
    parser.add_argument("--batch", type=int, default=2000, help="traces in the throughput call")
    parser.add_argument("--plain", action="store_true", help="add the tool-less corpora")
    parser.add_argument("--static", nargs="*", type=Path, default=[], help="more tables")
    parser.add_argument("--corpora", nargs="+", default=["taubench", "reflexion_hotpotqa"])
    parser.add_argument(
        "--throughput", action="store_true", help="only the static embedder's throughput"
    )
    parser.add_argument("--rounds", type=int, default=5, help="--throughput: fresh processes")
    parser.add_argument(
        "--against", type=Path, help="--throughput: also the code under this src/ (alternating)"
    )
    parser.add_argument("--one-call", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    """Print the cost rows, then one separation row per corpus and embedder."""
    args = arguments()
    if args.one_call:
        one_call(args.batch)
        return
    if args.throughput:
        compare_throughput(args.batch, args.rounds, args.against)
        return
    embedders: dict[str, MiniLMEmbedder | StaticEmbedder] = {
        "minilm-int8": MiniLMEmbedder(),
        "static": StaticEmbedder(),
    }
    for folder in args.static:
        embedders[f"static:{folder.name}"] = StaticEmbedder(folder)
    for embedder in embedders.values():
        embedder.load()

    taubench, _ = load("taubench")
    print(
        "embedder | p50 ms a tau-bench trace, wall / CPU | traces/s in one call, "
        "a wall second / a CPU second"
    )
    p50: dict[str, float] = {}
    cpu50: dict[str, float] = {}
    vectors: dict[tuple[str, str], NDArray[np.float32]] = {}
    for name, embedder in embedders.items():
        vectors[("taubench", name)], p50[name], cpu50[name] = one_by_one(embedder, taubench)
        count = args.batch if name != "minilm-int8" else min(args.batch, len(taubench))
        rate, cpu_rate = throughput(embedder, taubench, count)
        print(
            f"{name} | {p50[name]:.2f} / {cpu50[name]:.2f} | {rate:,.0f} / {cpu_rate:,.0f}",
            flush=True,
        )
    print(
        f"p50 ratio minilm-int8 / static: wall {p50['minilm-int8'] / p50['static']:.0f}x, "
        f"CPU {cpu50['minilm-int8'] / cpu50['static']:.0f}x\n"
    )

    print("corpus | embedder | AUC | median N new / repeat | dedupe best F1 (at cosine)")
    decisions: dict[str, tuple[list[ReasoningTrace], dict[str, NDArray[np.float32]]]] = {}
    corpora = [(name, False) for name in args.corpora]
    corpora += [(name, True) for name in args.corpora] if args.plain else []
    for corpus, plain in corpora:
        traces, groups = load(corpus, plain=plain)
        label = f"{corpus}{' (plain)' if plain else ''}"
        aucs = {}
        for name, embedder in embedders.items():
            key = (label, name)
            matrix = vectors.get(key)
            matrix = one_by_one(embedder, traces)[0] if matrix is None else matrix
            similarity = matrix @ matrix.T
            aucs[name], new, repeat = separation(similarity, groups, args.orders)
            f1, at = best_f1(similarity, groups)
            print(
                f"{label} | {name} | {aucs[name]:.3f} | {new:.2f} / {repeat:.2f} "
                f"| {f1:.3f} ({at:.2f})",
                flush=True,
            )
            calibration = getattr(embedder, "novelty_calibration", None)
            mapped = calibration(DEFAULT_NOVELTY_TEXT) if calibration else None
            if mapped is not None:
                _, new, repeat = separation(similarity, groups, args.orders, mapped)
                print(f"{label} | {name} calibrated | | {new:.2f} / {repeat:.2f} |", flush=True)
            vectors[key] = matrix
        print(f"{label} | AUC static - minilm-int8 | {aucs['static'] - aucs['minilm-int8']:+.3f}")
        decisions[label] = (traces, {name: vectors[(label, name)] for name in embedders})

    print(
        "\ncorpus | shared (>= 0.75, file order): minilm-int8 / static raw / static calibrated "
        "| decisions agreeing with minilm-int8: raw / calibrated"
    )
    for label, (traces, matrices) in decisions.items():
        reference = shared(embedders["minilm-int8"], traces, matrices["minilm-int8"])
        raw = shared(None, traces, matrices["static"])
        calibrated = shared(embedders["static"], traces, matrices["static"])
        print(
            f"{label} | {reference.mean():.3f} / {raw.mean():.3f} / {calibrated.mean():.3f} "
            f"| {(raw == reference).mean():.3f} / {(calibrated == reference).mean():.3f}"
        )


if __name__ == "__main__":
    main()
