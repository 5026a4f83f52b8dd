"""What the trace commands share: their inputs, problem reporting and model options.

``kp score``, ``kp validate``, ``kp select`` and ``kp dedupe`` read traces the same way (paths
or standard input, bad records printed as they are found and counted) and take the same model
and threshold options.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._console import ReadProgress, say
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.novelty.embedder import embedder_for
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, NOVELTY_TEXTS
from knowledgepulse.records import STDIN, Problem
from knowledgepulse.reports.value import RunTally
from knowledgepulse.trace.load import LoadedTrace, load_traces
from knowledgepulse.value.scorer import DEFAULT_BATCH_SIZE

if TYPE_CHECKING:
    from knowledgepulse.novelty import Embedder

paths_argument = click.argument("paths", nargs=-1, metavar="[PATH]...")


def sources(paths: Sequence[str]) -> list[str]:
    """The inputs: the paths given, or standard input when it is piped and no path is given."""
    if paths:
        return list(paths)
    if sys.stdin.isatty():
        raise click.UsageError("give trace files (JSON or JSONL), or - to read standard input")
    return [STDIN]


class ProblemSink:
    """Prints each problem on stderr as it is found, counts it, and keeps it if asked."""

    def __init__(self, tally: RunTally, *, keep: bool) -> None:
        self.tally = tally
        self.kept: list[Problem] = []
        self._keep = keep

    def __call__(self, problem: Problem) -> None:
        """Report, count and maybe keep one problem."""
        self.tally.add_problem(problem)
        if self._keep:
            self.kept.append(problem)
        say(str(problem), one_line=True)

    @property
    def errors(self) -> bool:
        """Whether any record was rejected."""
        return self.tally.invalid > 0


def valid_traces(
    paths: Sequence[str], sink: ProblemSink, progress: ReadProgress
) -> Iterator[LoadedTrace]:
    """The valid traces of ``paths``, in order; every problem goes to ``sink`` as it is met."""
    for item in load_traces(sources(paths), progress=progress.advance):
        if isinstance(item, Problem):
            sink(item)
        else:
            yield item


class _MinScoreType(click.ParamType):  # type: ignore[type-arg]
    name = "X|pNN"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        # curation (and numpy) load only when a --min-score is given.
        from knowledgepulse.curation import MinScore, ThresholdSpecError  # noqa: PLC0415

        if isinstance(value, MinScore):
            return value
        try:
            return MinScore.parse(str(value))
        except ThresholdSpecError as error:
            self.fail(str(error), param, ctx)


def min_score_option(
    *,
    default: str | None,
    help: str,
    shown_default: str | None = None,
) -> Callable[[Command], Command]:
    """``--min-score X|pNN``: a score in [0, 1] or a percentile of the run's scores.

    ``shown_default`` is a default the help shows but the command applies itself (it gets
    ``None`` when the option is not given), so nothing is parsed on a run without it.
    """
    if shown_default is not None:
        # click's own wording, which it gives a string default in parentheses instead.
        help = f"{help}  [default: {shown_default}]"
    return click.option(
        "--min-score",
        type=_MinScoreType(),
        default=default,
        show_default=default is not None,
        help=help,
    )


WORKER_BATCH_SIZE = 64
"""Traces a call per worker process: each call ends when its slowest batch does, so a call must
hold many batches a worker (2 workers, 120 corpus traces: 0.81x twice one worker's rate with 32
traces a call, 0.92x with 128; ``bench/bench_embedding.py``)."""


WORKERS_FROM_BYTES = 512 * 1024
"""The input size from which ``--workers`` defaults to one process per core.

Starting the worker processes costs about 0.8 s (each imports onnxruntime and loads the model)
before they pay back. Measured on 2 shared cores, whole ``kp score`` runs, medians of 3, one
worker against two: 8 small traces (14 KB) 3.8 s against 5.1 s; tau-bench's first 16 traces
(280 KB) 7.7 s against 10.6 s; its first 32 (536 KB) 10.3 s against 10.8 s; all 200 (2.9 MB)
23.8 s against 13.3 s. Below it the model runs in this process, on one thread like each
worker, so the vectors are the same either way."""

GZIP_RATIO = 4
"""A gzipped input counts as this many times its size (trace JSON compresses 4-10x)."""


def default_workers(paths: Sequence[str]) -> int:
    """``--workers`` when not given: one per core for an input big enough to pay, else 1.

    An input whose size cannot be known before reading it (a pipe on standard input) gets one
    per core: guessing wrong costs a small input the 0.8 s start, a big one half the speed.
    """
    from knowledgepulse.novelty.minilm import available_threads  # noqa: PLC0415 - numpy

    cores = available_threads()
    if cores == 1:
        return 1
    total = 0
    for path in paths or [STDIN]:
        size = _input_size(path)
        if size is None:
            return cores
        total += size * (GZIP_RATIO if path.endswith(".gz") else 1)
    return cores if total >= WORKERS_FROM_BYTES else 1


def _input_size(path: str) -> int | None:
    """The bytes of a file or of a file redirected to standard input; ``None``: not known."""
    try:
        status = os.fstat(sys.stdin.fileno()) if path == STDIN else os.stat(path)
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


GPU_BATCH_SIZE = 8192
"""Traces a GPU embeds per call unless told: the tokenizing of one chunk overlaps the model's
work on the previous one only within a call, so a call must hold many chunks."""


def _device(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from knowledgepulse.errors import ScorerParameterError  # noqa: PLC0415
    from knowledgepulse.novelty.backends.devices import parse_device  # noqa: PLC0415 - lazy backends

    try:
        return parse_device(value)
    except ScorerParameterError as error:
        raise click.BadParameter(str(error), ctx, param) from None


novelty_text_option = click.option(
    "--novelty-text",
    type=click.Choice(tuple(NOVELTY_TEXTS)),
    default=DEFAULT_NOVELTY_TEXT,
    show_default=True,
    help="What stands for a trace in novelty: its objective, actions and the terms they act on "
    "(two short model calls and hashed ids), its objective and actions, every window of its "
    "text, or its first 510 word pieces (see docs/novelty.md).",
)
"""``--novelty-text``: the representation novelty compares (``TraceValueScorer(novelty_text=)``)."""


def model_options(command: Command) -> Command:
    """``--no-embedder``, ``--model``, ``--batch-size``, ``--workers`` and ``--device``.

    Shared by the commands that embed.
    """
    return option_group(
        command,
        click.option(
            "--no-embedder",
            is_flag=True,
            help="Score without an embedder: novelty is 0.5 for every trace.",
        ),
        click.option(
            "--model",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Another local all-MiniLM-L6-v2-compatible ONNX model to embed with.",
        ),
        click.option(
            "--batch-size",
            type=click.IntRange(min=1),
            help="Traces embedded per batch (more: faster, more memory) [default: "
            f"{DEFAULT_BATCH_SIZE}; {WORKER_BATCH_SIZE} a worker with --workers 2 or more; "
            f"{GPU_BATCH_SIZE} on a GPU].",
        ),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            help="Processes that run the embedding model on the CPU, one thread each; the "
            "embeddings are the same for any count [default: the cores for an input of "
            f"{WORKERS_FROM_BYTES // 1024} KiB or more (a .gz counting {GZIP_RATIO}x) or of "
            "unknown size (a pipe), else 1: starting workers takes about 0.8 s].",
        ),
        click.option(
            "--device",
            metavar="cpu|cuda[:N]|auto",
            callback=_device,
            default="cpu",
            show_default=True,
            help="Where the model runs: cpu (the bundled int8 model), cuda (a GPU, fp16: "
            'needs "knowledgepulse[gpu]"), auto (cuda when there is one).',
        ),
    )


def batch_size_for(batch_size: int | None, embedder: Embedder | None) -> int:
    """``--batch-size``, or its default for where the embedder runs."""
    if batch_size is not None:
        return batch_size
    if str(getattr(embedder, "device", "cpu")).startswith("cuda"):
        return GPU_BATCH_SIZE
    workers = getattr(embedder, "workers", 1)
    if isinstance(workers, int) and workers > 1:
        return WORKER_BATCH_SIZE * workers
    return DEFAULT_BATCH_SIZE


def embedder_from(
    no_embedder: bool,
    model: Path | None,
    *,
    workers: int | None,
    device: str,
    paths: Sequence[str] = (),
) -> Embedder | None:
    """The embedder ``--no-embedder``/``--model``/``--workers``/``--device`` ask for."""
    if no_embedder and model is not None:
        raise click.UsageError("--model and --no-embedder contradict each other; give one")
    return build_embedder(
        no_embedder, model, "default", workers=workers, device=device, paths=paths
    )


def build_embedder(
    no_embedder: bool,
    model: Path | None,
    window_cap: int | str | None,
    *,
    workers: int | None,
    device: str,
    paths: Sequence[str] = (),
) -> Embedder | None:
    """The embedder the options ask for; a named model or device that cannot load fails now.

    ``window_cap`` is ``"default"`` or the ``max_windows`` to use; ``paths`` are the inputs,
    whose size sets the default ``workers`` (:func:`default_workers`). The bundled model on the
    CPU is shared within the process (see :func:`~knowledgepulse.novelty.shared_embedder`).
    """
    from knowledgepulse import novelty  # noqa: PLC0415 - the model is loaded lazily

    if no_embedder:
        if workers is not None or device != "cpu":
            raise click.UsageError(
                "--workers and --device choose how the model runs; with --no-embedder there is "
                "no model: drop them"
            )
        return None
    workers = workers if workers is not None else default_workers(paths)
    max_windows = novelty.DEFAULT_MAX_WINDOWS if window_cap == "default" else window_cap
    assert not isinstance(max_windows, str)  # "default" is the only word _window_cap gives
    if model is None and device == "cpu":
        return novelty.shared_embedder(workers, max_windows)
    embedder = embedder_for(device, workers=workers, model_path=model, max_windows=max_windows)
    # The user named this model or device: one that cannot load is an error now, not a silent
    # novelty of 0.5.
    embedder.load()
    click.get_current_context().call_on_close(embedder.close)
    return embedder
