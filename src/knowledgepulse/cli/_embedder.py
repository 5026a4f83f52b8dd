"""The embedder the model options ask for, in this process or on Ray (``--engine ray``).

With ``--engine ray`` the model runs on a Ray cluster's actors (Ray is imported only then);
everything else runs as it does locally, with the same results.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from knowledgepulse.cli._options import option_group
from knowledgepulse.novelty.embedder import embedder_for
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, NOVELTY_TEXTS
from knowledgepulse.novelty.settings import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_WINDOWS,
    GPU_BATCH_SIZE,
    WORKER_BATCH_SIZE,
)
from knowledgepulse.records.readers import STDIN

if TYPE_CHECKING:
    from knowledgepulse.novelty import Embedder

WORKERS_FROM_BYTES = 512 * 1024
"""The input size from which ``--workers`` defaults to one process per core: starting them costs
about 0.8 s, repaid from about this size (measured in docs/embedding-backends.md)."""

GZIP_RATIO = 4
"""A gzipped input counts as this many times its size (trace JSON compresses 4-10x)."""


def default_workers(paths: Sequence[str]) -> int:
    """``--workers`` when not given: one per core for an input big enough to pay, else 1.

    An input of unknown size (a pipe) gets one per core: guessing wrong costs a small input the
    0.8 s start, a big one half the speed.
    """
    from knowledgepulse.novelty.minilm import available_threads  # noqa: PLC0415 - numpy

    cores = available_threads()
    if cores == 1:
        return 1
    total = 0
    for path in paths or [STDIN]:  # a file, or one redirected to standard input, has a size
        try:
            status = os.fstat(sys.stdin.fileno()) if path == STDIN else os.stat(path)
        except (OSError, ValueError, io.UnsupportedOperation):
            return cores
        if not stat.S_ISREG(status.st_mode):
            return cores
        total += status.st_size * (GZIP_RATIO if path.endswith(".gz") else 1)
    return cores if total >= WORKERS_FROM_BYTES else 1


def _device(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from knowledgepulse.errors import ScorerParameterError  # noqa: PLC0415
    from knowledgepulse.novelty.devices import parse_device  # noqa: PLC0415 - lazy backends

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


model_options = option_group(
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
"""``--no-embedder``, ``--model``, ``--batch-size``, ``--workers`` and ``--device``."""


def build_embedder(
    no_embedder: bool,
    model: Path | None,
    *,
    workers: int | None,
    device: str,
    paths: Sequence[str],
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
) -> Embedder | None:
    """The embedder the options ask for; a named model or device that cannot load fails now.

    ``paths``, the inputs, set the default ``workers`` by their size. The bundled model on the
    CPU is shared within the process (see :func:`~knowledgepulse.novelty.shared_embedder`).
    """
    from knowledgepulse import novelty  # noqa: PLC0415 - the model is loaded lazily

    if no_embedder and model is not None:
        raise click.UsageError("--model and --no-embedder contradict each other; give one")
    if no_embedder:
        if workers is not None or device != "cpu":
            raise click.UsageError(
                "--workers and --device choose how the model runs; with --no-embedder there is "
                "no model: drop them"
            )
        return None
    workers = workers if workers is not None else default_workers(paths)
    if model is None and device == "cpu":
        return novelty.shared_embedder(workers, max_windows)
    embedder = embedder_for(device, workers=workers, model_path=model, max_windows=max_windows)
    # The user named this model or device: one that cannot load is an error now, not a silent
    # novelty of 0.5.
    embedder.load()
    click.get_current_context().call_on_close(embedder.close)
    return embedder


def ray_embedder(
    address: str | None,
    *,
    model: Path | None,
    max_windows: int | None,
    workers: int | None,
    device: str,
) -> Embedder:
    """A started ``RayEmbedder``, closed at the end; ``MissingDependencyError`` without Ray.

    ``workers`` actors (default: what the cluster's free CPUs allow, or one per GPU); a cluster
    that cannot be reached or load the model raises ``RayClusterError`` or
    ``EmbedderUnavailableError``.
    """
    from knowledgepulse.engines.ray_engine import (  # noqa: PLC0415 - Ray loads only for --engine ray
        DeviceFactory,
        EmbedderFactory,
        MiniLMFactory,
        RayEmbedder,
    )

    factory: EmbedderFactory
    if device == "cpu":
        factory = MiniLMFactory(str(model) if model else None, max_windows=max_windows)
    elif model is not None:
        raise click.UsageError(
            f"--model is an ONNX file, which runs on the CPU only; drop it or --device {device}"
        )
    else:
        factory = DeviceFactory(device, max_windows=max_windows)
    embedder = RayEmbedder(
        factory,
        concurrency=workers,
        # "auto" is resolved on each node; a GPU is reserved only when one is asked for.
        num_gpus=1.0 if device.startswith("cuda") else 0.0,
        address=address,
    )
    click.get_current_context().call_on_close(embedder.close)
    embedder.start()
    return embedder
