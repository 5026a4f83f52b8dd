"""``--engine local|ray`` and ``--address``: where ``kp score`` runs the embedding model.

``ray`` gives the scorer a :class:`~knowledgepulse.engines.ray_engine.RayEmbedder` in place of
the local embedder; everything else (streaming, ``--cache``, ``--frozen``, ``--corpus``,
``--order``) runs as it does locally, with the same results. Ray is imported only when
``--engine ray`` is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._options import Command, option_group

if TYPE_CHECKING:
    from knowledgepulse.novelty import Embedder

ENGINES = ("local", "ray")


def engine_options(command: Command) -> Command:
    """``--engine`` and ``--address``."""
    return option_group(
        command,
        click.option(
            "--engine",
            type=click.Choice(ENGINES),
            default="local",
            show_default=True,
            help="ray: embed on a Ray cluster's actors, --workers of them (needs \"knowledge"
            'pulse[ray]"; see docs/ray.md). Same scores as local.',
        ),
        click.option(
            "--address",
            metavar="HOST:PORT",
            help="With --engine ray: the running Ray cluster to join (or auto) [default: "
            "start a local Ray for this run].",
        ),
    )


def ray_embedder(
    address: str | None,
    *,
    model: Path | None,
    window_cap: int | str | None,
    workers: int | None,
    device: str,
) -> Embedder:
    """A started :class:`~knowledgepulse.engines.ray_engine.RayEmbedder`, closed at the end.

    ``workers`` is the number of actors (default: what the cluster's free CPUs allow, or one
    per GPU with a CUDA ``device``).

    Raises:
        MissingDependencyError: Ray is not installed (the message names the extra).
        RayClusterError: the cluster cannot be reached or cannot start the actors.
        EmbedderUnavailableError: the model cannot be loaded on the cluster.
    """
    from knowledgepulse.engines.ray_engine import (  # noqa: PLC0415 - Ray loads only for --engine ray
        DeviceFactory,
        MiniLMFactory,
        RayEmbedder,
    )
    from knowledgepulse.engines.ray_engine.actor import EmbedderFactory  # noqa: PLC0415

    options: dict[str, Any] = {} if window_cap == "default" else {"max_windows": window_cap}
    factory: EmbedderFactory
    if device == "cpu":
        factory = MiniLMFactory(str(model) if model is not None else None, **options)
    elif model is not None:
        raise click.UsageError(
            f"--model is an ONNX file, which runs on the CPU only; drop it or --device {device}"
        )
    else:
        factory = DeviceFactory(device, **options)
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
