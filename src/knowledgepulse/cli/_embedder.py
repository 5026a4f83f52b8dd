"""The model options, and the scorer they ask for (:func:`knowledgepulse.runs.embedder.run_scorer`).

Which embedder, and how many workers, is the run layer's choice; here are the options.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._options import option_group, unless_given
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT, NOVELTY_TEXTS
from knowledgepulse.novelty.settings import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBEDDER,
    EMBEDDERS,
    GPU_BATCH_SIZE,
    STATIC_BATCH_SIZE,
    WORKER_BATCH_SIZE,
)
from knowledgepulse.runs.embedder import COMPRESSED_RATIO, WORKERS_FROM_BYTES, run_scorer

if TYPE_CHECKING:
    from knowledgepulse.value.scorer import TraceValueScorer


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
    callback=unless_given,
    help="What stands for a trace in novelty: its objective, actions and the terms they act on "
    "(two short model calls and hashed ids), its objective and actions, every window of its "
    "text, or its first 510 word pieces (see docs/novelty.md).",
)


profiles_file_option = click.option(
    "--profiles",
    "profiles_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML/JSON file of extra weight profiles: {domain: {complexity, novelty, tool_diversity, "
    "outcome_confidence}}.",
)


model_options = option_group(
    click.option(
        "--no-embedder",
        is_flag=True,
        help="Score without an embedder: novelty is 0.5 for every trace.",
    ),
    click.option(
        "--embedder",
        "kind",
        type=click.Choice(EMBEDDERS),
        help="minilm: the all-MiniLM-L6-v2 model; static: a table distilled from it, tens of "
        "times faster on a CPU, its novelty mapped onto the model's scale (see docs/novelty.md) "
        f"[default: {DEFAULT_EMBEDDER} on the CPU; minilm with --device cuda, --model or "
        "--workers].",
    ),
    click.option(
        "--model",
        "model_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Another local all-MiniLM-L6-v2-compatible ONNX model to embed with.",
    ),
    click.option(
        "--batch-size",
        type=click.IntRange(min=1),
        help="Traces embedded per batch (more: faster, more memory) [default: "
        f"{DEFAULT_BATCH_SIZE}; {WORKER_BATCH_SIZE} a worker with --workers 2 or more; "
        f"{GPU_BATCH_SIZE} on a GPU; {STATIC_BATCH_SIZE} for the static embedder].",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        help="Processes that run the embedding model on the CPU, one thread each; the "
        "embeddings are the same for any count [default: the cores for an input of "
        f"{WORKERS_FROM_BYTES // 1024} KiB or more (a compressed file counting "
        f"{COMPRESSED_RATIO}x) or of unknown size (a pipe), else 1: starting workers takes "
        "about 0.8 s].",
    ),
    click.option(
        "--device",
        metavar="cpu|cuda[:N]|auto",
        callback=_device,
        default="cpu",
        show_default=True,
        help="Where the model runs: cpu (the bundled int8 model), cuda (a GPU, fp16: "
        "needs the gpu extra), auto (cuda when there is one).",
    ),
)
"""``--no-embedder``, ``--embedder``, ``--model``, ``--batch-size``, ``--workers``, ``--device``."""

scorer_options = option_group(model_options, novelty_text_option, profiles_file_option)
"""The model options, ``--novelty-text`` and ``--profiles``: all that makes the scorer."""

MODEL_OPTIONS = (
    *("no_embedder", "kind", "model_path", "device", "workers", "batch_size"),
    *("novelty_text", "profiles_file"),
)
"""The parameters of :data:`scorer_options`: the names of ``runs.embedder.ModelSettings``."""


def scorer_from(paths: Sequence[str], options: dict[str, Any]) -> TraceValueScorer:
    """The scorer the model options ask for (taken out of ``options``), closed with the command.

    See :func:`~knowledgepulse.runs.embedder.run_scorer`.
    """
    model = {name: options.pop(name) for name in MODEL_OPTIONS if name in options}
    return click.get_current_context().with_resource(run_scorer(paths, **model))
