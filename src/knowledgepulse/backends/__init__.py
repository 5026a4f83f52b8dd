"""Embedding backends: where the model runs (one process, worker processes, PyTorch on a device).

The texts' word pieces are planned into batches once, in :class:`~knowledgepulse.novelty.
MiniLMEmbedder`; a backend only runs them. So every backend sees the same batches and gives the
same window embeddings, whichever runs them. :func:`embedder_for` picks the embedder for a device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledgepulse._util.lazy import lazy_exports

if TYPE_CHECKING:
    from knowledgepulse.backends.batches import BatchRunner, PaddedBatch, pad_batch
    from knowledgepulse.backends.devices import DEVICES, embedder_for, resolve_device
    from knowledgepulse.backends.torch_minilm import TorchMiniLMEmbedder

# Imported on first use: numpy and torch load only for a run that embeds, and the devices
# module imports knowledgepulse.novelty, which imports this package.
_HOME_OF = {
    "BatchRunner": "knowledgepulse.backends.batches",
    "DEVICES": "knowledgepulse.backends.devices",
    "PaddedBatch": "knowledgepulse.backends.batches",
    "pad_batch": "knowledgepulse.backends.batches",
    "TorchMiniLMEmbedder": "knowledgepulse.backends.torch_minilm",
    "embedder_for": "knowledgepulse.backends.devices",
    "resolve_device": "knowledgepulse.backends.devices",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME_OF, globals())

__all__ = [
    "DEVICES",
    "BatchRunner",
    "PaddedBatch",
    "TorchMiniLMEmbedder",
    "embedder_for",
    "pad_batch",
    "resolve_device",
]
