"""The embedder a run asks for: which one for a device and model, and how many workers.

:func:`run_embedder` picks it in this process, :func:`ray_embedder` on a Ray cluster's actors
(Ray is imported only then); both give the same vectors. :func:`workers_for` is the default
worker count: one process per core only for an input big enough to repay starting them.
:func:`run_scorer` is a run's scorer around the embedder its :class:`ModelSettings` choose.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from knowledgepulse.errors import ParameterConflictError, ScorerParameterError, Setting
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.settings import DEFAULT_EMBEDDER, DEFAULT_MAX_WINDOWS, max_windows_of
from knowledgepulse.records.readers import STDIN, is_compressed_name
from knowledgepulse.runs.scoring import check_engine
from knowledgepulse.value.profiles import ProfileRegistry, load_profiles
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD, TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.engines.ray_engine import RayEmbedder
    from knowledgepulse.novelty import Embedder
    from knowledgepulse.novelty.minilm import MiniLMEmbedder
    from knowledgepulse.novelty.static import StaticEmbedder

WORKERS_FROM_BYTES = 512 * 1024
"""The input size from which the default is one worker per core: starting them costs about
0.8 s, repaid from about this size (measured in docs/embedding-backends.md)."""

COMPRESSED_RATIO = 4
"""A compressed input (``.gz``, ``.xz``, ``.bz2``) counts as this many times its size (trace JSON
compresses 4-10x)."""


def workers_for(paths: Sequence[str]) -> int:
    """The worker processes for embedding ``paths``: one per core when it pays, else 1.

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
        total += status.st_size * (COMPRESSED_RATIO if is_compressed_name(path) else 1)
    return cores if total >= WORKERS_FROM_BYTES else 1


def embedder_kind(
    kind: str | None = None,
    *,
    model_path: Path | None = None,
    device: str = "cpu",
    workers: int | None = None,
) -> str:
    """The embedder a run uses: ``kind`` when given, else the default for where it runs.

    An option that only the MiniLM model takes asks for it: a model file, a GPU (``device``
    ``cuda``, or ``auto`` on a machine with one) or ``workers``. Otherwise, on the CPU,
    :data:`~knowledgepulse.novelty.settings.DEFAULT_EMBEDDER` (the static table).

    Raises:
        ScorerParameterError: an unknown device name.
    """
    from knowledgepulse.novelty.devices import cuda_available, parse_device  # noqa: PLC0415

    if kind is not None:
        return kind
    device = parse_device(device)
    on_gpu = device.startswith("cuda") or (device == "auto" and cuda_available())
    return "minilm" if on_gpu or model_path is not None or workers is not None else DEFAULT_EMBEDDER


def run_embedder(
    model_path: Path | None = None,
    *,
    device: str = "cpu",
    workers: int | None = None,
    paths: Sequence[str] = (),
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
    kind: str | None = None,
) -> MiniLMEmbedder | StaticEmbedder:
    """The embedder for a run over ``paths``: a shared bundled one, or one loaded now.

    The bundled model on the CPU and the static table are shared within the process
    (:func:`~knowledgepulse.novelty.shared_embedder`) and load on first use. A named model or
    device, and the static table named by ``kind``, are loaded here, so that one that cannot
    load fails before any work rather than leaving novelty at 0.5; the caller closes a named
    model or device.

    Args:
        model_path: your own ONNX model (CPU only; MiniLM only).
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.
        workers: processes running the model on a CPU (default: :func:`workers_for` ``paths``).
        paths: the run's inputs, which set the default ``workers`` by their size.
        max_windows: the most 254-piece windows embedded of a text (``None``: every one).
        kind: ``minilm`` (the model) or ``static`` (the table distilled from it, which runs in
            this process on the CPU: it takes no model, device or workers); default: the
            static table on the CPU, the model where an option asks for it (:func:`embedder_kind`).

    Raises:
        ScorerParameterError: an unknown device or kind, an ONNX model with a CUDA device, or
            a model, device or workers with the static embedder.
        EmbedderUnavailableError: the model or device cannot be loaded.
    """
    from knowledgepulse import novelty  # noqa: PLC0415 - the model is loaded lazily

    named = kind
    kind = embedder_kind(kind, model_path=model_path, device=device, workers=workers)
    if kind == "static":
        return _static_embedder(model_path, device=device, workers=workers, load=bool(named))
    if kind != "minilm":
        raise ScorerParameterError(
            f"unknown embedder {kind!r}; the embedders are 'minilm' and 'static'"
        )

    workers = workers if workers is not None else workers_for(paths)
    if model_path is None and device == "cpu":
        return novelty.shared_embedder(workers, max_windows, kind="minilm")
    embedder = novelty.embedder_for(
        device, workers=workers, model_path=model_path, max_windows=max_windows
    )
    embedder.load()
    return embedder


def chosen_embedder(
    paths: Sequence[str] = (),
    *,
    no_embedder: bool = False,
    model_path: Path | None = None,
    kind: str | None = None,
    device: str = "cpu",
    workers: int | None = None,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
    batch_size: int | None = None,
) -> MiniLMEmbedder | StaticEmbedder | None:
    """The embedder a run's settings choose (:func:`run_embedder`), or ``None`` for none.

    ``batch_size`` is only checked here: the scorer feeds the embedder in batches of it.

    Raises:
        ParameterConflictError: ``no_embedder`` with a ``model_path`` or ``kind`` (which choose
            one), or with ``workers``, a ``device`` other than the CPU or a ``batch_size``
            (which run one).
    """
    if not no_embedder:
        return run_embedder(
            model_path,
            device=device,
            workers=workers,
            paths=paths,
            max_windows=max_windows,
            kind=kind,
        )
    if model_path is not None or kind is not None:
        raise ParameterConflictError(
            Setting("model_path"),
            " and ",
            Setting("kind"),
            " choose the embedder, and ",
            Setting("no_embedder", True),
            " asks for none; give one or the other",
        )
    if workers is not None or device != "cpu":
        raise ParameterConflictError(
            Setting("workers"),
            " and ",
            Setting("device"),
            " choose how the model runs; with ",
            Setting("no_embedder", True),
            " there is no model: drop them",
        )
    if batch_size is not None:
        raise ParameterConflictError(
            Setting("batch_size"),
            " sets how many traces the model embeds at once; with ",
            Setting("no_embedder", True),
            " there is no model: drop it",
        )
    return None


def _static_embedder(
    model_path: Path | None, *, device: str, workers: int | None, load: bool
) -> MiniLMEmbedder | StaticEmbedder:
    """The shared static table (``load``: loaded now); refuses the options only the model takes.

    As the default it loads on first use, as the bundled model does: without the extra,
    novelty is 0.5 and one line says why; asked for by name, it fails before any work.
    """
    from knowledgepulse import novelty  # noqa: PLC0415 - numpy

    if model_path is not None or device not in ("cpu", "auto") or workers is not None:
        raise ScorerParameterError(
            "the static embedder is a table read in this process, on the CPU: ",
            Setting("model_path"),
            ", ",
            Setting("device"),
            " and ",
            Setting("workers"),
            " choose how the MiniLM model runs; drop them or use the MiniLM embedder",
        )
    embedder = novelty.shared_embedder(kind="static")
    if load:
        embedder.load()
    return embedder


def ray_embedder(
    address: str | None = None,
    *,
    model_path: Path | None = None,
    device: str = "cpu",
    workers: int | None = None,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
) -> RayEmbedder:
    """A ``RayEmbedder`` (not started) running the model a run asks for on a cluster's actors.

    ``workers`` actors (default: what the cluster's free CPUs allow, or one per GPU); a GPU is
    reserved for each only when ``device`` asks for one (``auto`` is resolved on each node).

    Raises:
        ScorerParameterError: an ONNX ``model_path`` with a device other than ``cpu``.
        MissingDependencyError: Ray is not installed.
    """
    from knowledgepulse.engines.ray_engine import (  # noqa: PLC0415 - Ray loads only here
        DeviceFactory,
        EmbedderFactory,
        MiniLMFactory,
        RayEmbedder,
    )

    factory: EmbedderFactory
    if device == "cpu":
        factory = MiniLMFactory(str(model_path) if model_path else None, max_windows=max_windows)
    elif model_path is not None:
        raise ScorerParameterError(
            Setting("model_path"),
            " is an ONNX file, which runs on the CPU only; drop it or ",
            Setting("device", device),
        )
    else:
        factory = DeviceFactory(device, max_windows=max_windows)
    return RayEmbedder(
        factory,
        concurrency=workers,
        num_gpus=1.0 if device.startswith("cuda") else 0.0,
        address=address,
    )


class ModelSettings(TypedDict, total=False):
    """How a run embeds and scores (:func:`run_scorer`), all optional.

    Attributes:
        no_embedder: embed nothing: novelty is 0.5 for every trace.
        kind: ``minilm`` or ``static`` (default: :func:`embedder_kind`).
        model_path: your own ONNX model; ``device``: ``cpu``, ``cuda[:N]`` or ``auto``;
            ``workers``: processes running the model on a CPU (see :func:`run_embedder`).
        max_windows: the MiniLM model's window cap: a count, ``"none"``, or ``None`` for the
            default (a cap given asks for the model).
        engine: ``local``, or ``ray``: the model on a Ray cluster's actors (``address``: the
            cluster to join; default: a local Ray for this run).
        batch_size: traces embedded per batch (default: the embedder's own).
        profiles_file: a YAML/JSON file of extra weight profiles.
        novelty_text: what stands for a trace in novelty (``None``: the default); the text
            an embedder embeds, so not with ``no_embedder``.
        threshold: the scorer's sharing threshold.
    """

    no_embedder: bool
    kind: str | None
    model_path: Path | None
    device: str
    workers: int | None
    max_windows: str | int | None
    engine: str
    address: str | None
    batch_size: int | None
    profiles_file: Path | None
    novelty_text: str | None
    threshold: float


def profiles_of(profiles_file: str | Path | None) -> ProfileRegistry:
    """The built-in weight profiles plus any from ``profiles_file``."""
    return ProfileRegistry(load_profiles(profiles_file) if profiles_file is not None else None)


def check_model(model: ModelSettings, *, corpus: bool = False) -> None:
    """Refuse settings that contradict each other (:func:`check_engine`) or a bad window cap.

    ``corpus``: the run compares its traces with each other (so it needs an embedder).

    Raises:
        ParameterConflictError: the first conflict, naming its parameters (a ``novelty_text``
            with ``no_embedder``: nothing is embedded).
        ScorerParameterError: ``max_windows`` is neither a positive count nor ``"none"``.
    """
    if model.get("no_embedder", False) and model.get("novelty_text") is not None:
        raise ParameterConflictError(
            Setting("novelty_text"),
            " chooses the text the embedder embeds; with ",
            Setting("no_embedder", True),
            " nothing is embedded: drop it",
        )
    check_engine(
        engine=model.get("engine", "local"),
        address=model.get("address"),
        kind=model.get("kind"),
        max_windows=model.get("max_windows"),
        corpus=corpus,
        no_embedder=model.get("no_embedder", False),
    )
    max_windows_of(model.get("max_windows"))


@contextmanager
def run_scorer(paths: Sequence[str], **model: Unpack[ModelSettings]) -> Iterator[TraceValueScorer]:
    """A scorer around the embedder ``model`` chooses for ``paths``, closed after the block.

    Raises:
        ParameterConflictError: settings that contradict each other (:func:`check_engine`).
        EmbedderUnavailableError: a named model or device cannot be loaded.
    """
    engine, address = model.get("engine", "local"), model.get("address")
    kind, max_windows = model.get("kind"), model.get("max_windows")
    no_embedder, device = model.get("no_embedder", False), model.get("device", "cpu")
    check_model(model)
    window_cap = max_windows_of(max_windows)
    workers, model_path = model.get("workers"), model.get("model_path")
    embedder: Embedder | None
    if engine == "ray":
        embedder = ray_embedder(
            address, model_path=model_path, device=device, workers=workers, max_windows=window_cap
        )
        embedder.start()
    else:
        embedder = chosen_embedder(
            paths,
            no_embedder=no_embedder,
            model_path=model_path,
            # A window cap, like workers, is the model's setting, so it asks for the model.
            kind=kind or ("minilm" if max_windows is not None else None),
            device=device,
            workers=workers,
            max_windows=window_cap,
            batch_size=model.get("batch_size"),
        )
    # The shared bundled embedders stay loaded for the process; one loaded for this run closes.
    owned = engine == "ray" or model_path is not None or device != "cpu"
    try:
        yield TraceValueScorer(
            embedder=embedder,
            profiles=profiles_of(model.get("profiles_file")),
            batch_size=model.get("batch_size"),
            novelty_text=(
                text if (text := model.get("novelty_text")) is not None else DEFAULT_NOVELTY_TEXT
            ),
            threshold=model.get("threshold", DEFAULT_THRESHOLD),
        )
    finally:
        if owned and embedder is not None:
            embedder.close()
