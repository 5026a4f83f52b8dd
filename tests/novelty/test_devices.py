"""Which embedder each ``device`` gives, and the one-line errors when it cannot be had."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty import devices
from knowledgepulse.novelty.devices import resolve_device
from knowledgepulse.novelty.embedder import embedder_for
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.torch_minilm import TorchMiniLMEmbedder

NO_TORCH = (
    "torch is not installed (the `gpu` extra; its CPU build: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch is installed and sees no GPU."""
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture
def one_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch sees one GPU (nothing is run on it)."""
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(devices, "cuda_available", lambda: True)


def test_cpu_and_auto_without_a_gpu_give_the_onnx_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cpu``, and ``auto`` with no GPU, are the bundled int8 model in ``workers`` processes."""
    monkeypatch.setattr(devices, "cuda_available", lambda: False)
    for device in ("cpu", "auto"):
        embedder = embedder_for(device, workers=2, max_windows=None)
        assert type(embedder) is MiniLMEmbedder
        assert (embedder.workers, embedder.max_windows) == (2, None)
        assert not embedder.loaded


def test_cpu_takes_your_own_onnx_model(tmp_path: Path) -> None:
    """``--model`` goes to the ONNX embedder, which names it by its hash."""
    model = tmp_path / "model.onnx"
    model.write_bytes(b"not really a model")
    assert embedder_for("cpu", model_path=model).model_id.startswith("onnx:")


@pytest.mark.usefixtures("one_gpu")
def test_cuda_gives_the_torch_embedder_in_fp16_with_gpu_sized_batches() -> None:
    """``cuda`` and ``auto`` with a GPU: PyTorch, fp16, 262,144 positions a batch."""
    for device in ("cuda", "auto", "cuda:0"):
        embedder = embedder_for(device, workers=4, max_windows=8)
        assert isinstance(embedder, TorchMiniLMEmbedder)
        assert embedder.device.startswith("cuda")
        assert (embedder.dtype, embedder.max_windows) == ("float16", 8)
        assert embedder._max_batch_tokens == 262_144
        assert not embedder.loaded


@pytest.mark.usefixtures("one_gpu")
def test_an_onnx_model_on_cuda_is_refused(tmp_path: Path) -> None:
    """``model_path`` is an ONNX file: on a GPU that is a clear error, not a silent other model."""
    model = tmp_path / "model.onnx"
    with pytest.raises(ScorerParameterError, match="runs on the CPU only") as error:
        embedder_for("cuda", model_path=model)
    assert str(error.value).startswith(f"model_path={str(model)!r} is an ONNX file")
    assert "drop model_path or use device='cpu'" in str(error.value)
    assert "--" not in str(error.value)


@pytest.mark.usefixtures("one_gpu")
def test_the_gpu_embedder_asks_for_gpu_sized_calls() -> None:
    """On a GPU the embedder declares 8,192 traces a call, which a scorer then gives it."""
    assert embedder_for("cuda").batch_size == 8192
    assert TorchMiniLMEmbedder(device="cpu").batch_size == 32


def test_the_cpu_embedder_asks_for_64_traces_a_call_per_worker() -> None:
    """In this process 32 traces a call; with workers, 64 for each, so that all stay busy."""
    assert MiniLMEmbedder().batch_size == 32
    assert MiniLMEmbedder(workers=3).batch_size == 192


@pytest.mark.usefixtures("one_gpu")
def test_a_gpu_index_that_does_not_exist_is_refused() -> None:
    """``cuda:3`` on a one-GPU machine names the GPUs there are, and the parameter given."""
    with pytest.raises(EmbedderUnavailableError, match=r"no GPU 3; torch sees 1 \(cuda:0") as error:
        resolve_device("cuda:3")
    assert str(error.value).startswith("device='cuda:3': there is no GPU 3")


@pytest.mark.usefixtures("no_gpu")
def test_cuda_without_a_gpu_is_refused_with_the_fix() -> None:
    """No GPU: ``cuda`` fails at once and says to use ``device='cpu'``, Python's words, no flag."""
    with pytest.raises(EmbedderUnavailableError, match="no CUDA GPU found") as error:
        embedder_for("cuda")
    assert str(error.value).startswith("device='cuda': no CUDA GPU found")
    assert "use device='cpu'" in str(error.value)
    assert "--" not in str(error.value)
    assert "\n" not in str(error.value)


def test_cuda_without_torch_gives_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch not installed: the error is the ``gpu`` extra's pip line; ``auto`` falls to CPU."""
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    with pytest.raises(EmbedderUnavailableError, match=r'pip install -e "\.\[gpu\]"'):
        embedder_for("cuda")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert type(embedder_for("auto")) is MiniLMEmbedder


@pytest.mark.parametrize("device", ["gpu", "CUDA", "cuda:", "cuda:x", "", "mps"])
def test_unknown_devices_list_the_valid_ones(device: str) -> None:
    """A misspelt device names every valid one."""
    with pytest.raises(ScorerParameterError, match="auto, cpu, cuda or cuda:N"):
        embedder_for(device)


def test_without_the_nvidia_driver_auto_does_not_import_torch() -> None:
    """On Linux with no NVIDIA driver, ``auto`` decides without the cost of importing torch."""
    import subprocess

    code = (
        "import sys; from knowledgepulse.novelty import devices; "
        "print(devices.resolve_device('auto'), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    if Path("/proc/driver/nvidia").exists() or sys.platform != "linux":
        assert out.stdout.split()[0] in {"cpu", "cuda"}
    else:
        assert out.stdout.split() == ["cpu", "False"]
