"""Novelty for a whole batch at once, equal to scoring the traces one by one.

Online, trace ``g`` of a run is compared with what the cache holds when it arrives: the last
``max_elements`` vectors added before it (what the cache held before the run counts, oldest
first), less the ones older than the TTL at its time. That is a band: a block of ``B`` traces
needs only the ``max_elements`` vectors before the block and the block itself, so it is one
``B x (max_elements + B)`` matrix product with a causal mask (key ``c`` counts for query ``g``
when ``g - max_elements <= c < g``), instead of ``B`` matrix-vector products.

Frozen, every query is compared with the same held vectors (less the expired ones and, when
keys are given, those of the query's own key): the same blocked product without the band.

The products are float32; with ``accumulate="float64"`` the contenders are recomputed exactly
(:mod:`knowledgepulse.novelty.exact`), which makes the result the same bits as
:meth:`VectorCache.nearest <knowledgepulse.novelty.VectorCache.nearest>` one query at a time.
Every input row must be a unit vector or zero (:func:`~knowledgepulse.novelty.exact.unit_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.exact import ACCUMULATE_MODES, Accumulate, select_nearest

DEFAULT_BLOCK_SIZE = 256
"""Queries per matrix product: large enough to keep BLAS busy, small next to a window of 1,000."""
BLOCK_BYTES = 64 * 1024 * 1024
"""The most one block's similarity matrix may take (frozen: a block against every held key)."""


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Each query's nearest counted vector.

    Attributes:
        index: the row of the nearest vector (online: in the held vectors followed by the
            batch; frozen: in the held vectors), ``-1`` when nothing counts for that query.
        similarity: its cosine similarity, clamped to [-1, 1]; ``nan`` when nothing counts.
    """

    index: NDArray[np.intp]
    similarity: NDArray[np.float64]


def online_nearest(
    held: NDArray[np.float32],
    vectors: NDArray[np.float32],
    *,
    max_elements: int,
    held_added_at: NDArray[np.float64] | None = None,
    query_times: NDArray[np.float64] | None = None,
    add_times: NDArray[np.float64] | None = None,
    ttl_ms: float | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    accumulate: Accumulate = "float64",
) -> Neighbours:
    """Each vector's nearest neighbour in an online cache that every vector joins after its query.

    Args:
        held: the cache's vectors before the batch, oldest first (only the last
            ``max_elements`` count).
        vectors: the batch, in scoring order.
        max_elements: the cache's bound (its FIFO window).
        held_added_at: when each held vector was added, in ms (needed with ``ttl_ms``).
        query_times: each query's time, in ms (needed with ``ttl_ms``).
        add_times: when each batch vector is added, in ms (needed with ``ttl_ms``).
        ttl_ms: a vector added at ``t`` counts for a query at ``now`` when
            ``t > now - ttl_ms``, as the cache decides; ``None``: for ever.
        block_size: queries per matrix product.
        accumulate: ``float64`` (exact, the cache's own answer) or ``float32`` (faster).

    Returns:
        The neighbours; ``index`` counts the held vectors first, then the batch.

    Raises:
        ValueError: inconsistent shapes, a missing time array, or a bad setting.
    """
    _check_settings(max_elements, block_size, accumulate)
    _check_vectors(held, vectors)
    times: NDArray[np.float64] | None = None
    due: NDArray[np.float64] | None = None
    if ttl_ms is not None:
        if held_added_at is None or query_times is None or add_times is None:
            raise ValueError("with ttl_ms, held_added_at, query_times and add_times are needed")
        _check_lengths(
            held_added_at=(held_added_at, len(held)),
            query_times=(query_times, len(vectors)),
            add_times=(add_times, len(vectors)),
        )
        times = np.concatenate([held_added_at, add_times]).astype(np.float64)
        due = np.asarray(query_times, dtype=np.float64) - ttl_ms
    # Vectors beyond the window were evicted before the batch began.
    dropped = max(0, len(held) - max_elements)
    held = held[dropped:]
    times = None if times is None else times[dropped:]
    prior, count = len(held), len(vectors)
    index = np.full(count, -1, dtype=np.intp)
    similarity = np.full(count, np.nan, dtype=np.float64)
    masks = _BandMasks(max_elements)
    for start in range(0, count, block_size):
        stop = min(count, start + block_size)
        first = prior + start  # the block's first query, counting the held vectors
        low = max(0, first - max_elements)
        high = prior + stop - 1  # the block's last query sees the vectors before it
        keys = _rows(held, vectors, low, high)
        queries = vectors[start:stop]
        scores = queries @ keys.T
        invalid = masks.get(first - low, stop - start, high - low)
        if times is not None and due is not None:
            invalid = invalid | (times[None, low:high] <= due[start:stop, None])
        np.copyto(scores, np.float32(-np.inf), where=invalid)
        found, best = select_nearest(scores, queries, keys, accumulate=accumulate)
        index[start:stop] = np.where(found >= 0, found + low + dropped, -1)
        similarity[start:stop] = best
    return Neighbours(index, similarity)


def frozen_nearest(
    held: NDArray[np.float32],
    vectors: NDArray[np.float32],
    *,
    held_added_at: NDArray[np.float64] | None = None,
    query_times: NDArray[np.float64] | None = None,
    ttl_ms: float | None = None,
    held_keys: NDArray[np.intp] | None = None,
    query_keys: NDArray[np.intp] | None = None,
    tie_rank: NDArray[np.int64] | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    block_bytes: int = BLOCK_BYTES,
    accumulate: Accumulate = "float64",
) -> Neighbours:
    """Each vector's nearest neighbour among fixed held vectors (frozen cache, corpus).

    Args:
        held: the vectors compared with.
        vectors: the queries.
        held_added_at: when each held vector was added, in ms (needed with ``ttl_ms``).
        query_times: each query's time, in ms (needed with ``ttl_ms``).
        ttl_ms: a held vector counts when ``added_at > query_time - ttl_ms``.
        held_keys: an integer key per held vector (a trace id's code; ``-1`` for none).
        query_keys: a key per query; a held vector with the query's key does not count
            for it (``-1``: nothing is left out).
        tie_rank: each held vector's age, smaller is older (default: the row order).
        block_size: the most queries per matrix product.
        block_bytes: the most bytes one block's similarities may take.
        accumulate: ``float64`` (exact, the cache's own answer) or ``float32`` (faster).

    Returns:
        The neighbours; ``index`` is a row of ``held``.

    Raises:
        ValueError: inconsistent shapes, a missing time or key array, or a bad setting.
    """
    _check_settings(1, block_size, accumulate)
    count, width = len(vectors), len(held)
    _check_vectors(held, vectors)
    due: NDArray[np.float64] | None = None
    if ttl_ms is not None:
        if held_added_at is None or query_times is None:
            raise ValueError("with ttl_ms, held_added_at and query_times are needed")
        _check_lengths(held_added_at=(held_added_at, width), query_times=(query_times, count))
        due = np.asarray(query_times, dtype=np.float64) - ttl_ms
    if (held_keys is None) != (query_keys is None):
        raise ValueError("held_keys and query_keys go together")
    if held_keys is not None and query_keys is not None:
        _check_lengths(held_keys=(held_keys, width), query_keys=(query_keys, count))
    if tie_rank is not None:
        _check_lengths(tie_rank=(tie_rank, width))
    index = np.full(count, -1, dtype=np.intp)
    similarity = np.full(count, np.nan, dtype=np.float64)
    rows_per_block = max(1, min(block_size, block_bytes // (4 * max(1, width))))
    for start in range(0, count, rows_per_block):
        stop = min(count, start + rows_per_block)
        queries = vectors[start:stop]
        scores = queries @ held.T
        invalid: NDArray[np.bool_] | None = None
        if held_added_at is not None and due is not None:
            invalid = held_added_at[None, :] <= due[start:stop, None]
        if held_keys is not None and query_keys is not None:
            own = query_keys[start:stop, None]
            same = (held_keys[None, :] == own) & (own >= 0)
            invalid = same if invalid is None else invalid | same
        if invalid is not None:
            np.copyto(scores, np.float32(-np.inf), where=invalid)
        found, best = select_nearest(
            scores, queries, held, accumulate=accumulate, tie_rank=tie_rank
        )
        index[start:stop] = found
        similarity[start:stop] = best
    return Neighbours(index, similarity)


class _BandMasks:
    """The causal band's mask, kept while blocks share a shape (every full block does)."""

    def __init__(self, window: int) -> None:
        self._window = window
        self._key: tuple[int, int, int] | None = None
        self._mask: NDArray[np.bool_] = np.zeros((0, 0), dtype=bool)

    def get(self, offset: int, rows: int, width: int) -> NDArray[np.bool_]:
        """Where a key column does not count for row ``r``, whose query is ``offset + r``."""
        key = (offset, rows, width)
        if key != self._key:
            query = offset + np.arange(rows)[:, None]
            column = np.arange(width)[None, :]
            self._mask = (column >= query) | (column < query - self._window)
            self._key = key
        return self._mask


def _rows(
    held: NDArray[np.float32], vectors: NDArray[np.float32], low: int, high: int
) -> NDArray[np.float32]:
    """Rows ``low:high`` of ``held`` followed by ``vectors``, copying only across the seam."""
    prior = len(held)
    if high <= prior:
        return held[low:high]
    if low >= prior:
        return vectors[low - prior : high - prior]
    return np.concatenate([held[low:], vectors[: high - prior]])


def _check_settings(max_elements: int, block_size: int, accumulate: str) -> None:
    if max_elements < 1:
        raise ValueError(f"max_elements must be at least 1, got {max_elements}")
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    if accumulate not in ACCUMULATE_MODES:
        raise ValueError(f"accumulate must be one of {ACCUMULATE_MODES}, got {accumulate!r}")


def _check_vectors(held: NDArray[np.float32], vectors: NDArray[np.float32]) -> None:
    if held.ndim != 2 or vectors.ndim != 2 or held.shape[1] != vectors.shape[1]:
        raise ValueError(
            f"held {held.shape} and vectors {vectors.shape} must be matrices of equal width"
        )
    if held.dtype != np.float32 or vectors.dtype != np.float32:
        raise ValueError(f"vectors must be float32, got {held.dtype} and {vectors.dtype}")


def _check_lengths(**arrays: tuple[NDArray[np.generic], int]) -> None:
    for name, (array, expected) in arrays.items():
        if len(array) != expected:
            raise ValueError(f"{name} has {len(array)} entries; expected {expected}")
