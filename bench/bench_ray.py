"""Ray on one machine against the plain process: traces/s of ``kp score``'s scoring.

    python bench/bench_ray.py [--traces 2000] [--workers 2] [--batch-size 32] [--repeats 3]

Prints, for N generated traces (``bench/generate_traces.py``) scored with the bundled embedder
and the default novelty text, the median of ``--repeats`` runs of:

- the plain process: ``TraceValueScorer.score_many`` with the bundled model on 2 threads;
- ``RayEmbedder``: the same scorer with a local Ray of ``--workers`` CPUs and as many actors of
  one thread each (what ``kp score --engine ray`` runs), actors started once, beforehand;
- ``score_dataset``: the traces as a ``ray.data.Dataset`` of JSON strings, embedded by a
  ``map_batches`` actor pool, novelty in the driver (actor start-up included: Ray Data starts
  its pool per run);

and the ratio of each Ray figure to the plain one. Ray's start-up (``ray.init`` and the actors)
is printed once, apart. The scores of every run are checked against the plain run's.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray

from knowledgepulse.engines.ray_engine import MiniLMFactory, RayEmbedder
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.runs.on_ray import score_dataset
from knowledgepulse.value import TraceValueScorer, ValueBreakdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_traces import traces as generated_traces


def median_rate(
    run: Callable[[], list[ValueBreakdown]], count: int, repeats: int
) -> tuple[float, list[ValueBreakdown]]:
    """Median traces/s over ``repeats`` runs, and the last run's breakdowns."""
    seconds: list[float] = []
    result: list[ValueBreakdown] = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return count / statistics.median(seconds), result


def max_difference(ours: list[ValueBreakdown], plain: list[ValueBreakdown]) -> float:
    """The largest score difference, after checking the ids and nearest ids match."""
    assert [b.trace_id for b in ours] == [b.trace_id for b in plain]
    assert [b.novelty.nearest_id for b in ours] == [b.novelty.nearest_id for b in plain]
    return max(abs(a.score - b.score) for a, b in zip(ours, plain, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    traces: list[dict[str, Any]] = list(generated_traces(args.traces))
    lines = [json.dumps(trace) for trace in traces]
    count, repeats, batch = args.traces, args.repeats, args.batch_size
    print(f"{count} generated traces, batch size {batch}, medians of {repeats} runs")

    plain_embedder = MiniLMEmbedder(threads=2)
    plain_embedder.load()

    def plain() -> list[ValueBreakdown]:
        return TraceValueScorer(embedder=plain_embedder, batch_size=batch).score_many(traces)

    plain_rate, reference = median_rate(plain, count, repeats)
    print(f"plain process, bundled model, 2 threads: {plain_rate:8.1f} traces/s")

    warnings.simplefilter("ignore", DeprecationWarning)  # Ray Data's own, at first use
    start = time.perf_counter()
    ray.init(
        num_cpus=args.workers,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    init_s = time.perf_counter() - start
    with RayEmbedder(MiniLMFactory(), concurrency=args.workers) as embedder:
        print(
            f"ray start-up: ray.init {init_s:.1f} s, {args.workers} actors loaded "
            f"{time.perf_counter() - start - init_s:.1f} s (once per kp run)"
        )

        def with_actors() -> list[ValueBreakdown]:
            return TraceValueScorer(embedder=embedder, batch_size=batch).score_many(traces)

        actor_rate, ours = median_rate(with_actors, count, repeats)
    print(
        f"RayEmbedder, {args.workers} actors x 1 thread: {actor_rate:8.1f} traces/s "
        f"({actor_rate / plain_rate:.2f} x plain; max score diff "
        f"{max_difference(ours, reference):.1e})"
    )
    dataset = ray.data.from_items(
        [{"seq": i, "trace": line} for i, line in enumerate(lines)],
        override_num_blocks=max(args.workers * 4, count // 250),
    )

    def with_dataset() -> list[ValueBreakdown]:
        scorer = TraceValueScorer(embedder=MiniLMFactory()(), batch_size=batch)
        scored = score_dataset(dataset, scorer=scorer, concurrency=args.workers, batch_size=batch)
        return scored.breakdowns

    dataset_rate, ours = median_rate(with_dataset, count, repeats)
    print(
        f"score_dataset, {args.workers} actors x 1 thread: {dataset_rate:8.1f} traces/s "
        f"({dataset_rate / plain_rate:.2f} x plain; max score diff "
        f"{max_difference(ours, reference):.1e})"
    )
    ray.shutdown()


if __name__ == "__main__":
    main()
