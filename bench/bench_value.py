"""Trace value scoring benchmark: prints medians measured on this machine; asserts nothing.

    python bench/bench_value.py                  # everything (a few minutes on 2 cores)
    python bench/bench_value.py --batch-limit 40 # a quicker batch section
    python bench/bench_value.py --windows-study  # what max_windows changes (about 2 minutes)

Figures: one evaluation without embedder; one with the embedder (after warm-up) against the
model's own time on the same text, as a ratio; the first call in a fresh process; a
VectorCache scan of 1,000 x 384; batch throughput with and without the embedder; peak memory;
one huge trace (1 MB and 50 MB of text) with the default cap on windows.
Timings interleave the things they compare, so a noisy neighbour hits both alike.

The windows study measures the figures behind the default ``max_windows``: windows per trace
on the corpora, and, for sampled traces embedded window by window, how close an embedding of
the first K windows (or the first K-1 and the last, or K evenly spaced) is to the whole text's,
and how much novelty against the other sampled traces moves. The sample is N traces a corpus
drawn with a fixed seed, plus every trace of more than 32 windows.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, WINDOW_PIECES
from knowledgepulse.novelty.windows import batches_by_length, split_windows
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.trace.text import whole_text
from knowledgepulse.value import TraceValueScorer

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [
    ROOT / "corpora" / "reflexion_hotpotqa.jsonl",
    ROOT / "corpora" / "taubench.jsonl",
]
FALLBACK = ROOT / "examples" / "traces" / "traces.jsonl"


def load_traces(paths: list[Path]) -> list[ReasoningTrace]:
    found = [path for path in paths if path.exists()] or [FALLBACK]
    return [
        ReasoningTrace.model_validate_json(line)
        for path in found
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def median_seconds(action: Callable[[], object], repeats: int, number: int = 1) -> float:
    """Median over ``repeats`` of the mean time of ``number`` calls."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            action()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def interleaved(
    first: Callable[[], object], second: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Medians of two actions timed alternately (A B A B ...)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeats):
        for action, samples in ((first, a), (second, b)):
            start = time.perf_counter()
            action()
            samples.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def bench_no_embedder(traces: list[ReasoningTrace]) -> dict[str, float]:
    scorer = TraceValueScorer(embedder=None)
    sample = traces[:200]
    per_trace = median_seconds(lambda: [scorer.score(t) for t in sample], 15) / len(sample)
    raw = [t.model_dump(mode="json", by_alias=True) for t in sample]
    with_validation = median_seconds(lambda: [scorer.score(r) for r in raw], 5) / len(sample)
    return {
        "no_embedder_us_per_trace": per_trace * 1e6,
        "no_embedder_with_validation_us_per_trace": with_validation * 1e6,
    }


def bench_one_with_embedder(traces: list[ReasoningTrace]) -> dict[str, float]:
    embedder = MiniLMEmbedder()
    embedder.load()
    # A typical trace: the median by text length.
    trace = sorted(traces, key=lambda t: len(whole_text(t)))[len(traces) // 2]
    text = whole_text(trace)
    cache = VectorCache()
    rng = np.random.default_rng(0)
    for i in range(1000):
        cache.add(rng.normal(size=384).astype(np.float32), id=f"kp:trace:filler-{i}")
    scorer = TraceValueScorer(embedder=embedder, cache=cache, mode="frozen")
    for _ in range(3):
        scorer.score(trace)
    score_s, model_s = interleaved(
        lambda: scorer.score(trace), lambda: embedder.embed_batch([text]), 21
    )
    pieces = len(embedder._tokenizer.encode(text, add_special_tokens=False).ids)
    return {
        "typical_trace_pieces": pieces,
        "with_embedder_ms": score_s * 1e3,
        "model_alone_ms": model_s * 1e3,
        "with_embedder_over_model": score_s / model_s,
    }


FIRST_CALL = """
import time
start = time.perf_counter()
from knowledgepulse.value import TraceValueScorer
from tests.builders import make_trace
imported = time.perf_counter()
TraceValueScorer().score(make_trace())
print(imported - start, time.perf_counter() - imported)
"""


def bench_first_call() -> dict[str, float]:
    imports, firsts = [], []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
        imports.append(float(out[0]))
        firsts.append(float(out[1]))
    return {
        "import_ms": statistics.median(imports) * 1e3,
        "first_call_ms": statistics.median(firsts) * 1e3,
    }


def bench_cache_scan() -> dict[str, float]:
    rng = np.random.default_rng(1)
    cache = VectorCache(max_elements=1000, dimensions=384)
    timed = VectorCache(max_elements=1000, dimensions=384, ttl_ms=3_600_000)
    for _ in range(1000):
        vector = rng.normal(size=384).astype(np.float32)
        cache.add(vector)
        timed.add(vector)
    query = rng.normal(size=384).astype(np.float32)
    matrix = rng.normal(size=(1000, 384)).astype(np.float32)
    return {
        "cache_scan_1000x384_us": median_seconds(
            lambda: cache.max_cosine_similarity(query), 50, 200
        )
        * 1e6,
        "cache_scan_with_ttl_us": median_seconds(
            lambda: timed.max_cosine_similarity(query), 50, 200
        )
        * 1e6,
        "bare_numpy_matvec_us": median_seconds(lambda: matrix @ query, 50, 200) * 1e6,
        "cache_bytes": cache.max_elements * (cache.dimensions or 0) * 4,
    }


def bench_batches(traces: list[ReasoningTrace], limit: int) -> dict[str, float]:
    batch = traces[:: max(1, len(traces) // limit)][:limit]
    plain = TraceValueScorer(embedder=None)
    no_embedder_s = median_seconds(lambda: plain.score_many(batch), 5)
    embedder = MiniLMEmbedder()
    embedder.load()
    texts = [whole_text(t) for t in batch]
    embedder.embed_batch(texts)  # warm-up: onnxruntime's first call on each shape is slower
    scored_s, model_s = interleaved(
        lambda: TraceValueScorer(embedder=embedder).score_many(batch),
        lambda: embedder.embed_batch(texts),
        3,
    )
    pieces = sum(len(e.ids) for e in embedder._tokenizer.encode_batch(texts))
    return {
        "batch_traces": len(batch),
        "batch_pieces": pieces,
        "batch_no_embedder_traces_per_s": len(batch) / no_embedder_s,
        "batch_with_embedder_traces_per_s": len(batch) / scored_s,
        "batch_model_alone_traces_per_s": len(batch) / model_s,
        "batch_with_embedder_over_model": scored_s / model_s,
        "batch_ms_per_piece": scored_s * 1e3 / pieces,
    }


PEAK = """
import resource, sys
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
lines = [l for p in sys.argv[2:] for l in open(p, encoding="utf-8") if l.strip()][:int(sys.argv[1])]
traces = [ReasoningTrace.model_validate_json(l) for l in lines]
scorer = TraceValueScorer() if "{embedder}" == "yes" else TraceValueScorer(embedder=None)
scorer.score_many(traces)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def bench_peak_memory(limit: int) -> dict[str, float]:
    paths = [str(p) for p in CORPORA if p.exists()] or [str(FALLBACK)]
    result = {}
    for embedder in ("no", "yes"):
        out = subprocess.run(
            [sys.executable, "-c", PEAK.format(embedder=embedder), str(limit), *paths],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        result[f"peak_rss_mb_{'with' if embedder == 'yes' else 'no'}_embedder"] = float(out)
    return result


HUGE = """
import resource, sys, time
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
sys.path.insert(0, "bench")
from bench_value import huge_trace
trace = huge_trace(int(sys.argv[1]), sys.argv[2:])
scorer = TraceValueScorer()
scorer.score(trace)  # loads the model and fills the cache, so the next call is a comparison
start = time.perf_counter()
breakdown = scorer.score(trace)
elapsed = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(elapsed, rss, breakdown.novelty.windows, breakdown.novelty.capped)
"""


def huge_trace(chars: int, paths: list[str]) -> ReasoningTrace:
    """A valid trace of about ``chars`` characters of real step text, in 10 kB steps."""
    texts = [whole_text(t) for t in load_traces([Path(p) for p in paths])]
    text = " ".join(texts)
    body = (text * (chars // len(text) + 1))[:chars]
    size = 10_000
    steps = [
        {"step_id": i, "type": "observation", "content": body[start : start + size]}
        for i, start in enumerate(range(0, len(body), size))
    ]
    return ReasoningTrace.model_validate(
        {
            "@context": "https://openknowledgepulse.org/schema/v1",
            "@type": "ReasoningTrace",
            "id": "kp:trace:huge",
            "metadata": {
                "created_at": "2026-01-31T12:00:00Z",
                "task_domain": "code",
                "success": True,
                "quality_score": 0.5,
                "visibility": "network",
                "privacy_level": "aggregated",
            },
            "task": {"objective": "A huge trace"},
            "steps": steps,
            "outcome": {"result_summary": "done", "confidence": 0.9},
        }
    )


def bench_huge_trace() -> dict[str, float]:
    """One huge trace scored with the default cap, each size in a fresh process (for its RSS)."""
    paths = [str(p) for p in CORPORA if p.exists()] or [str(FALLBACK)]
    result: dict[str, float] = {"default_max_windows": DEFAULT_MAX_WINDOWS}
    for label, chars in (("1mb", 1_000_000), ("50mb", 50_000_000)):
        out = subprocess.run(
            [sys.executable, "-c", HUGE, str(chars), *paths],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        result[f"huge_{label}_score_s"] = float(out[0])
        result[f"huge_{label}_peak_rss_mb"] = float(out[1])
        result[f"huge_{label}_windows_embedded"] = int(out[2])
    return result


def windows_study(sample_per_corpus: int) -> None:
    """Print what capping the windows changes on the corpora (see the module docstring)."""
    embedder = MiniLMEmbedder(max_windows=None)
    embedder.load()
    tokenizer = embedder._tokenizer
    rng = np.random.default_rng(0)
    texts: list[str] = []
    for path in (p for p in CORPORA if p.exists()):
        corpus = [whole_text(t) for t in load_traces([path])]
        pieces = [len(e.ids) for e in tokenizer.encode_batch(corpus, add_special_tokens=False)]
        counts = np.maximum(1, -(-np.array(pieces) // WINDOW_PIECES))
        p50, p95 = np.percentile(counts, [50, 95])
        capped = ", ".join(f"{k}: {np.mean(counts > k):.1%}" for k in (4, 8, 16, 32))
        print(
            f"{path.name}: {len(corpus)} traces, {sum(map(len, corpus)) / sum(pieces):.2f} "
            f"chars/piece; windows p50 {p50:.0f} p95 {p95:.1f} max {counts.max()}; "
            f"capped at {capped}"
        )
        chosen = rng.choice(len(corpus), size=min(sample_per_corpus, len(corpus)), replace=False)
        # Every trace over the largest cap studied joins the sample: only they show its effect.
        longest = np.flatnonzero(counts > 32)
        texts += [corpus[int(i)] for i in sorted({*chosen.tolist(), *longest.tolist()})]

    ids = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    windows = split_windows(ids)
    embeddings = np.zeros((len(windows), 384), dtype=np.float32)
    start = time.perf_counter()
    for batch in batches_by_length(windows, max_tokens=512, max_batch=64):
        embeddings[batch] = embedder._run([windows[i].pieces for i in batch])
    per_window = (time.perf_counter() - start) / len(windows)
    owner = np.array([w.text for w in windows])
    weight = np.array([len(w.pieces) for w in windows], dtype=np.float64)
    rows = [np.flatnonzero(owner == t) for t in range(len(texts))]
    counts = np.array([len(r) for r in rows])
    print(
        f"sample: {len(texts)} traces, {len(windows)} windows, "
        f"{per_window * 1e3:.1f} ms a window embedded"
    )

    def combine(chosen: NDArray[np.int64]) -> NDArray[np.float64]:
        total = (embeddings[chosen] * weight[chosen, None]).sum(axis=0)
        return np.asarray(total / np.linalg.norm(total))

    def novelties(vectors: NDArray[np.float64]) -> NDArray[np.float64]:
        similarity = vectors @ vectors.T
        np.fill_diagonal(similarity, -np.inf)
        return np.asarray(1 - similarity.max(axis=1))

    whole = np.stack([combine(r) for r in rows])
    whole_novelty = novelties(whole)
    strategies: dict[str, Callable[[NDArray[np.int64], int], NDArray[np.int64]]] = {
        "first": lambda r, k: r[:k],
        "first+last": lambda r, k: np.r_[r[: k - 1], r[-1:]],
        "spread": lambda r, k: r[np.unique(np.round(np.linspace(0, len(r) - 1, k)).astype(int))],
    }
    for k in (4, 8, 16, 32):
        cut = counts > k
        cost = np.minimum(counts, k).mean() * per_window * 1e3
        for name, keep in strategies.items():
            capped_vectors = np.stack([combine(keep(r, k) if len(r) > k else r) for r in rows])
            cosine = (capped_vectors * whole).sum(axis=1)[cut]
            moved = np.abs(novelties(capped_vectors) - whole_novelty)
            print(
                f"cap {k:2d} {name:10s} capped {cut.sum():2d}/{len(texts)}  cosine to whole "
                f"min {cosine.min() if cut.any() else 1:.4f} median "
                f"{np.median(cosine) if cut.any() else 1:.4f}  novelty moved median "
                f"{np.median(moved):.4f} max {moved.max():.4f}  ~{cost:.0f} ms a trace"
            )
    print(f"uncapped: ~{counts.mean() * per_window * 1e3:.0f} ms a trace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-limit", type=int, default=120, help="traces in the batch runs")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--windows-study",
        nargs="?",
        const=30,
        type=int,
        metavar="N",
        help="only measure what max_windows changes, on N sampled traces a corpus (30) and the "
        "longest ones",
    )
    args = parser.parse_args()
    if args.windows_study:
        windows_study(args.windows_study)
        return

    traces = load_traces(CORPORA)
    figures: dict[str, float] = {"traces_loaded": len(traces)}
    # Peak memory first: a child process inherits its parent's high-water mark on Linux.
    sections: tuple[Callable[[], dict[str, float]], ...] = (
        lambda: bench_peak_memory(args.batch_limit),
        lambda: bench_no_embedder(traces),
        bench_cache_scan,
        lambda: bench_one_with_embedder(traces),
        bench_first_call,
        lambda: bench_batches(traces, args.batch_limit),
        bench_huge_trace,
    )
    for section in sections:
        figures.update(section())
    figures["bench_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for name, value in figures.items():
        print(
            f"{name:45s} {value:12.3f}" if isinstance(value, float) else f"{name:45s} {value:12d}"
        )


if __name__ == "__main__":
    main()
