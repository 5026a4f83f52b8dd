"""A batch of windows as the model reads it, and what runs such batches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True, slots=True)
class PaddedBatch:
    """Windows as ``[CLS] pieces [SEP]`` rows, zero-padded to the longest.

    Attributes:
        input_ids: (windows, positions) int64.
        attention_mask: (windows, positions) int64, 1 on the real positions.
    """

    input_ids: NDArray[np.int64]
    attention_mask: NDArray[np.int64]


def pad_batch(windows: Sequence[Sequence[int]], special: tuple[int, int]) -> PaddedBatch:
    """The model's inputs for ``windows`` (word-piece ids without [CLS]/[SEP])."""
    cls_id, sep_id = special
    length = max(len(pieces) for pieces in windows) + 2
    input_ids = np.zeros((len(windows), length), dtype=np.int64)
    attention_mask = np.zeros((len(windows), length), dtype=np.int64)
    for row, pieces in enumerate(windows):
        input_ids[row, : len(pieces) + 2] = [cls_id, *pieces, sep_id]
        attention_mask[row, : len(pieces) + 2] = 1
    return PaddedBatch(input_ids, attention_mask)


class BatchRunner(Protocol):
    """Runs the model on padded batches: one (windows, dimensions) unit-vector array each."""

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in the batches' order."""
        ...

    def close(self) -> None:
        """Release what the runner holds (processes, device memory); idempotent."""
        ...
