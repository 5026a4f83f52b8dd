"""Pure arithmetic of long-text embedding: windows of word pieces, pooling, and their mean.

all-MiniLM-L6-v2 reads 256 positions at most. A text's word pieces are split into consecutive
windows of at most 254 pieces, each read as ``[CLS] window [SEP]``; the text's embedding is the
mean of the window embeddings weighted by each window's number of pieces, L2-normalised. A text
that fits one window is embedded exactly as the model card does it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

MODEL_POSITIONS = 256
"""The model card's max_seq_length."""

WINDOW_PIECES = MODEL_POSITIONS - 2
"""Word pieces per window: the rest of the positions are [CLS] and [SEP]."""


@dataclass(frozen=True, slots=True)
class Window:
    """One model input: a run of a text's word pieces.

    Attributes:
        text: which text (its index in the batch) the window belongs to.
        pieces: the word-piece ids, without [CLS] and [SEP].
    """

    text: int
    pieces: tuple[int, ...]


def split_windows(
    pieces_per_text: Sequence[Sequence[int]],
    *,
    window_pieces: int = WINDOW_PIECES,
    max_windows: int | None = None,
) -> list[Window]:
    """Every text's pieces cut into consecutive windows, in text order.

    A text with no pieces still gets one (empty) window, so it is embedded as ``[CLS] [SEP]``
    like the model card would. ``max_windows`` keeps only each text's first windows.
    """
    if window_pieces < 1:
        raise ValueError(f"window_pieces must be at least 1, got {window_pieces}")
    if max_windows is not None and max_windows < 1:
        raise ValueError(f"max_windows must be at least 1, got {max_windows}")
    windows: list[Window] = []
    for text, pieces in enumerate(pieces_per_text):
        starts = range(0, max(len(pieces), 1), window_pieces)
        if max_windows is not None:
            starts = starts[:max_windows]
        windows.extend(Window(text, tuple(pieces[s : s + window_pieces])) for s in starts)
    return windows


def batches_by_length(
    windows: Sequence[Window], *, max_tokens: int, max_batch: int
) -> list[list[int]]:
    """Group windows (by index) into batches of similar length.

    Sorting by length keeps padding small; a batch holds at most ``max_batch`` windows and at
    most ``max_tokens`` positions once padded to its longest window (a single window longer than
    that still gets a batch of its own). The order is deterministic: by length, then index.
    """
    order = sorted(range(len(windows)), key=lambda i: (len(windows[i].pieces), i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        padded = len(windows[index].pieces) + 2
        # Sorted ascending, so this window is the longest of the batch it would join.
        if current and (len(current) + 1 > max_batch or (len(current) + 1) * padded > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def mean_pool(
    hidden: NDArray[np.float32], attention_mask: NDArray[np.int64]
) -> NDArray[np.float32]:
    """Mean of each row's token states over its real (unmasked) tokens, L2-normalised.

    ``hidden`` is (batch, positions, dims), ``attention_mask`` (batch, positions).
    """
    mask = attention_mask.astype(np.float32)[:, :, None]
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    return normalize(summed / counts)


def combine_windows(
    windows: Sequence[Window], embeddings: NDArray[np.float32], texts: int
) -> NDArray[np.float32]:
    """One unit vector per text: its windows' embeddings averaged by piece count, normalised.

    A text with one window gets that window's embedding unchanged.
    """
    dims = embeddings.shape[1]
    totals = np.zeros((texts, dims), dtype=np.float64)
    counts = np.zeros(texts, dtype=np.int64)
    singles: dict[int, int] = {}
    for position, window in enumerate(windows):
        totals[window.text] += embeddings[position] * len(window.pieces)
        counts[window.text] += 1
        singles[window.text] = position
    result = normalize(totals.astype(np.float32))
    for text in np.flatnonzero(counts == 1):
        result[text] = embeddings[singles[int(text)]]
    return result


def normalize(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row divided by its L2 norm (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
