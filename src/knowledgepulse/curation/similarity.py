"""Leave-one-out nearest neighbours among a set of unit vectors (corpus novelty).

Each row is compared with every other row whose key differs: a second copy of the same trace
id is the same trace, not "another" one. The work is done in blocks of rows, so the similarity
matrix is never held whole (a block of rows against all columns at a time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

# The bytes of one block's similarity matrix: enough to keep BLAS busy, small next to the vectors.
BLOCK_BYTES = 64 * 1024 * 1024


def leave_one_out_nearest(
    vectors: NDArray[np.float32], keys: Sequence[str], *, block_bytes: int = BLOCK_BYTES
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """For each row, the most similar row with another key, and their cosine.

    Args:
        vectors: unit vectors, one row per item.
        keys: one key (trace id) per row; rows with equal keys are never compared.
        block_bytes: how large one block of the similarity matrix may be.

    Returns:
        ``(nearest, similarity)``: the index of the nearest other row (``-1`` when every row
        has the same key, so there is no other) and the cosine, clamped to [-1, 1] (``nan``
        with no other). Equal similarities go to the smallest key, then the lowest index, so
        the answer does not depend on where rows sit among those with other keys.
    """
    count = len(keys)
    if vectors.shape[0] != count:
        raise ValueError(f"{vectors.shape[0]} vectors for {count} keys")
    nearest = np.full(count, -1, dtype=np.intp)
    similarity = np.full(count, np.nan, dtype=np.float64)
    if count == 0:
        return nearest, similarity
    # Codes in key order, so "the smallest code" is "the smallest key".
    _, codes = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
    codes = codes.astype(np.intp).reshape(-1)
    rows_per_block = max(1, block_bytes // (4 * count))
    columns = np.arange(count)
    for start in range(0, count, rows_per_block):
        stop = min(count, start + rows_per_block)
        block = vectors[start:stop] @ vectors.T
        same = codes[start:stop, None] == codes[None, :]
        block[same] = -np.inf
        best = block.max(axis=1)
        found = np.isfinite(best)
        tied = block == best[:, None]
        # Among the tied columns: smallest key, then lowest index (a key * count + index order).
        rank = np.where(tied, codes[None, :] * count + columns[None, :], np.iinfo(np.intp).max)
        chosen = rank.min(axis=1) % count
        nearest[start:stop] = np.where(found, chosen, -1)
        similarity[start:stop] = np.where(found, np.clip(best, -1.0, 1.0), np.nan)
    return nearest, similarity
