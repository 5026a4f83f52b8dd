"""Where the embedding model runs: ``device`` is ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.

``cpu``: the int8 ONNX model (``MiniLMEmbedder``, the ``embeddings`` extra). ``cuda``: the float
model on PyTorch in fp16 (``TorchMiniLMEmbedder``, the ``gpu`` extra and a GPU torch can see, else
a one-line error says which is missing). ``auto``: ``cuda`` when torch sees a GPU, else ``cpu``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from knowledgepulse.errors import (
    EmbedderUnavailableError,
    ScorerParameterError,
    Setting,
    import_optional,
    install_hint,
)

GPU_INSTALL_HINT = install_hint("gpu")
"""What installs the GPU backend (torch, transformers and the float weights)."""

DEVICES = ("auto", "cpu", "cuda")

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def import_torch() -> Any:
    """The ``torch`` module, or an EmbedderUnavailableError with the install line."""
    return import_optional(
        "torch",
        lambda _: EmbedderUnavailableError(
            f"the PyTorch backend needs torch, which is not installed: {GPU_INSTALL_HINT} "
            "(on a CPU-only machine install the CPU build of torch first)"
        ),
    )


def parse_device(device: str) -> str:
    """``device`` when it is a device name this package takes, else a ScorerParameterError."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ScorerParameterError(
            f"device must be one of {', '.join(DEVICES)} or cuda:N (a GPU's index), got {device!r}"
        )
    return device


def cuda_available() -> bool:
    """Whether torch is installed and sees a CUDA GPU.

    On Linux without the NVIDIA driver (no ``/proc/driver/nvidia``) torch, 1-3 s to import, is
    not imported at all, so ``device="auto"`` costs nothing on a CPU box.
    """
    if importlib.util.find_spec("torch") is None:
        return False
    if sys.platform == "linux" and not Path("/proc/driver/nvidia").exists():
        return False
    return bool(import_torch().cuda.is_available())


def check_device(device: str) -> None:
    """Make sure torch can run on ``device``, else an EmbedderUnavailableError with the fix."""
    torch = import_torch()
    if not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        build = "a CPU-only build of torch" if torch.version.cuda is None else "no usable driver"
        raise EmbedderUnavailableError(
            Setting("device", device),
            f": no CUDA GPU found (torch {torch.__version__}: {build}); use ",
            Setting("device", "cpu"),
            ", or install a CUDA build of torch on a machine with an NVIDIA GPU",
        )
    index = int(device.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise EmbedderUnavailableError(
            Setting("device", device),
            f": there is no GPU {index}; torch sees {count} (cuda:0 to cuda:{count - 1})",
        )


def resolve_device(device: str) -> str:
    """The device ``device`` stands for: ``cpu``, or a CUDA device that exists.

    Raises:
        ScorerParameterError: an unknown device name.
        EmbedderUnavailableError: a CUDA device was named and cannot be used.
    """
    device = parse_device(device)
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device != "cpu":
        check_device(device)
    return device
