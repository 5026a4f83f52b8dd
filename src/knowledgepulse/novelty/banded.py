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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.exact import ACCUMULATE_MODES, Accumulate, select_nearest

DEFAULT_BLOCK_SIZE = 256
"""Queries per matrix product: large enough to keep BLAS busy, small next to a window of 1,000."""
BLOCK_BYTES = 64 * 1024 * 1024
"""The most one block's similarity matrix may take: a block of queries meets the keys in slices
of at most this many bytes of float32 similarities, so memory stays bounded for any cache size."""

Held = NDArray[np.float32] | Sequence[NDArray[np.float32]]
"""Held vectors, oldest first: one matrix, or several read as one (a ring buffer's two halves,
a file's rows then the rows not saved yet), never copied whole."""


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


class Rows:
    """Several arrays read as one, oldest first; a slice is copied only when it spans a seam."""

    def __init__(self, parts: Sequence[NDArray[np.generic]]) -> None:
        if not parts:
            raise ValueError("Rows needs at least one array (an empty one gives the shape)")
        self._empty = parts[0][:0]
        self._parts = [part for part in parts if len(part)]
        self._starts = np.cumsum([0, *(len(part) for part in self._parts)]).tolist()

    @classmethod
    def of(cls, held: NDArray[np.generic] | Sequence[NDArray[np.generic]]) -> Rows:
        """``held`` as rows: one array, or a sequence of arrays read one after another."""
        if isinstance(held, Rows):
            return held
        return cls([held] if isinstance(held, np.ndarray) else list(held))

    @property
    def parts(self) -> list[NDArray[np.generic]]:
        """The non-empty arrays, in order."""
        return list(self._parts)

    def __len__(self) -> int:
        return int(self._starts[-1])

    def take(self, low: int, high: int) -> NDArray[Any]:
        """Rows ``low:high``: a view when they lie in one array, else a copy of just them."""
        pieces = []
        for part, first in zip(self._parts, self._starts, strict=False):
            stop = first + len(part)
            if stop <= low or first >= high:
                continue
            pieces.append(part[max(low, first) - first : min(high, stop) - first])
        if not pieces:
            return self._empty
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


def online_nearest(
    held: Held,
    vectors: NDArray[np.float32],
    *,
    max_elements: int,
    held_added_at: NDArray[np.float64] | Sequence[NDArray[np.float64]] | None = None,
    query_times: NDArray[np.float64] | None = None,
    add_times: NDArray[np.float64] | None = None,
    ttl_ms: float | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    block_bytes: int = BLOCK_BYTES,
    accumulate: Accumulate = "float64",
) -> Neighbours:
    """Each vector's nearest neighbour in an online cache that every vector joins after its query.

    Args:
        held: the cache's vectors before the batch, oldest first (only the last
            ``max_elements`` count): a matrix or a sequence of matrices read as one.
        vectors: the batch, in scoring order.
        max_elements: the cache's bound (its FIFO window).
        held_added_at: when each held vector was added, in ms (needed with ``ttl_ms``).
        query_times: each query's time, in ms (needed with ``ttl_ms``).
        add_times: when each batch vector is added, in ms (needed with ``ttl_ms``).
        ttl_ms: a vector added at ``t`` counts for a query at ``now`` when
            ``t > now - ttl_ms``, as the cache decides; ``None``: for ever.
        block_size: queries per matrix product.
        block_bytes: the most bytes one product's similarities may take; a window wider than
            that is scanned in slices of keys (same answer, to the bit in ``float64``).
        accumulate: ``float64`` (exact, the cache's own answer) or ``float32`` (faster).

    Returns:
        The neighbours; ``index`` counts the held vectors first, then the batch.

    Raises:
        ValueError: inconsistent shapes, a missing time array, or a bad setting.
    """
    _check_settings(max_elements, block_size, accumulate, block_bytes)
    held_rows = Rows.of(held)
    _check_vectors(held_rows, vectors)
    width = len(held_rows)
    # Vectors beyond the window were evicted before the batch began.
    dropped = max(0, width - max_elements)
    keys = Rows([held_rows.take(dropped, width), vectors])
    times: Rows | None = None
    due: NDArray[np.float64] | None = None
    if ttl_ms is not None:
        if held_added_at is None or query_times is None or add_times is None:
            raise ValueError("with ttl_ms, held_added_at, query_times and add_times are needed")
        held_times = Rows.of(held_added_at)
        _check_lengths(
            held_added_at=(held_times, width),
            query_times=(query_times, len(vectors)),
            add_times=(add_times, len(vectors)),
        )
        times = Rows([held_times.take(dropped, width), np.asarray(add_times, dtype=np.float64)])
        due = np.asarray(query_times, dtype=np.float64) - ttl_ms
    prior, count = width - dropped, len(vectors)
    index = np.full(count, -1, dtype=np.intp)
    similarity = np.full(count, np.nan, dtype=np.float64)
    masks = _BandMasks(max_elements)
    for start in range(0, count, block_size):
        stop = min(count, start + block_size)
        rows = stop - start
        first = prior + start  # the block's first query, counting the held vectors
        queries = vectors[start:stop]
        best = (index[start:stop], similarity[start:stop])
        # The block's last query sees the vectors before it, back to its first's window.
        for low, high in _slices(max(0, first - max_elements), prior + stop - 1, rows, block_bytes):
            block = keys.take(low, high)
            scores = queries @ block.T
            invalid = masks.get(first - low, rows, high - low)
            if times is not None and due is not None:
                expired = times.take(low, high)[None, :] <= due[start:stop, None]
                invalid = expired if invalid is None else invalid | expired
            if invalid is not None:
                np.copyto(scores, np.float32(-np.inf), where=invalid)
            found, value = select_nearest(scores, queries, block, accumulate=accumulate, clip=False)
            _merge(best, found, value, low, None)
    index[index >= 0] += dropped
    return Neighbours(index, np.clip(similarity, -1.0, 1.0))


def frozen_nearest(
    held: Held,
    vectors: NDArray[np.float32],
    *,
    held_added_at: NDArray[np.float64] | Sequence[NDArray[np.float64]] | None = None,
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
        held: the vectors compared with: a matrix or a sequence of matrices read as one.
        vectors: the queries.
        held_added_at: when each held vector was added, in ms (needed with ``ttl_ms``).
        query_times: each query's time, in ms (needed with ``ttl_ms``).
        ttl_ms: a held vector counts when ``added_at > query_time - ttl_ms``.
        held_keys: an integer key per held vector (a trace id's code; ``-1`` for none).
        query_keys: a key per query; a held vector with the query's key does not count
            for it (``-1``: nothing is left out).
        tie_rank: each held vector's age, smaller is older (default: the row order).
        block_size: the most queries per matrix product.
        block_bytes: the most bytes one product's similarities may take; more held vectors
            than that are scanned in slices (same answer, to the bit in ``float64``).
        accumulate: ``float64`` (exact, the cache's own answer) or ``float32`` (faster).

    Returns:
        The neighbours; ``index`` is a row of ``held``.

    Raises:
        ValueError: inconsistent shapes, a missing time or key array, or a bad setting.
    """
    _check_settings(1, block_size, accumulate, block_bytes)
    keys = Rows.of(held)
    count, width = len(vectors), len(keys)
    _check_vectors(keys, vectors)
    times: Rows | None = None
    due: NDArray[np.float64] | None = None
    if ttl_ms is not None:
        if held_added_at is None or query_times is None:
            raise ValueError("with ttl_ms, held_added_at and query_times are needed")
        times = Rows.of(held_added_at)
        _check_lengths(held_added_at=(times, width), query_times=(query_times, count))
        due = np.asarray(query_times, dtype=np.float64) - ttl_ms
    if (held_keys is None) != (query_keys is None):
        raise ValueError("held_keys and query_keys go together")
    if held_keys is not None and query_keys is not None:
        _check_lengths(held_keys=(held_keys, width), query_keys=(query_keys, count))
    if tie_rank is not None:
        _check_lengths(tie_rank=(tie_rank, width))
    index = np.full(count, -1, dtype=np.intp)
    similarity = np.full(count, np.nan, dtype=np.float64)
    for start in range(0, count, block_size):
        stop = min(count, start + block_size)
        queries = vectors[start:stop]
        best = (index[start:stop], similarity[start:stop])
        for low, high in _slices(0, width, stop - start, block_bytes):
            block = keys.take(low, high)
            scores = queries @ block.T
            invalid: NDArray[np.bool_] | None = None
            if times is not None and due is not None:
                invalid = times.take(low, high)[None, :] <= due[start:stop, None]
            if held_keys is not None and query_keys is not None:
                own = query_keys[start:stop, None]
                same = (held_keys[None, low:high] == own) & (own >= 0)
                invalid = same if invalid is None else invalid | same
            if invalid is not None:
                np.copyto(scores, np.float32(-np.inf), where=invalid)
            rank = None if tie_rank is None else tie_rank[low:high]
            found, value = select_nearest(
                scores, queries, block, accumulate=accumulate, tie_rank=rank, clip=False
            )
            _merge(best, found, value, low, tie_rank)
    return Neighbours(index, np.clip(similarity, -1.0, 1.0))


def _slices(low: int, high: int, rows: int, block_bytes: int) -> list[tuple[int, int]]:
    """Key columns ``low:high`` in slices whose ``rows x slice`` float32 scores fit the budget."""
    step = max(1, block_bytes // (4 * max(1, rows)))
    return [(first, min(high, first + step)) for first in range(low, high, step)]


def _merge(
    best: tuple[NDArray[np.intp], NDArray[np.float64]],
    found: NDArray[np.intp],
    value: NDArray[np.float64],
    offset: int,
    tie_rank: NDArray[np.int64] | None,
) -> None:
    """Keep, per query, the larger exact value; on a tie the older key (slices come in order).

    The values are unclamped, so two keys above 1 by rounding still compare as the one scan
    over every key would compare them.
    """
    index, similarity = best
    seen = found >= 0
    column = found + offset
    better = seen & ((index < 0) | (value > similarity))
    if tie_rank is not None:
        tied = seen & (index >= 0) & (value == similarity)
        better |= tied & (tie_rank[np.where(tied, column, 0)] < tie_rank[np.maximum(index, 0)])
    index[better] = column[better]
    similarity[better] = value[better]


class _BandMasks:
    """The causal band's mask, kept while blocks share a shape (every full block does)."""

    def __init__(self, window: int) -> None:
        self._window = window
        self._key: tuple[int, int, int] | None = None
        self._mask: NDArray[np.bool_] | None = None

    def get(self, offset: int, rows: int, width: int) -> NDArray[np.bool_] | None:
        """Where key column ``c`` does not count for row ``r``, whose query is ``offset + r``.

        ``None`` when every column counts for every row (the middle of a wide window).
        """
        if width <= offset and offset + rows - 1 - self._window <= 0:
            return None
        key = (offset, rows, width)
        if key != self._key or self._mask is None:
            query = offset + np.arange(rows)[:, None]
            column = np.arange(width)[None, :]
            self._mask = (column >= query) | (column < query - self._window)
            self._key = key
        return self._mask


def _check_settings(max_elements: int, block_size: int, accumulate: str, block_bytes: int) -> None:
    if block_bytes < 1:
        raise ValueError(f"block_bytes must be at least 1, got {block_bytes}")
    if max_elements < 1:
        raise ValueError(f"max_elements must be at least 1, got {max_elements}")
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    if accumulate not in ACCUMULATE_MODES:
        raise ValueError(f"accumulate must be one of {ACCUMULATE_MODES}, got {accumulate!r}")


def _check_vectors(held: Rows, vectors: NDArray[np.float32]) -> None:
    for part in [*held.parts, held.take(0, 0)]:
        if part.ndim != 2 or vectors.ndim != 2 or part.shape[1] != vectors.shape[1]:
            raise ValueError(
                f"held {part.shape} and vectors {vectors.shape} must be matrices of equal width"
            )
        if part.dtype != np.float32 or vectors.dtype != np.float32:
            raise ValueError(f"vectors must be float32, got {part.dtype} and {vectors.dtype}")


def _check_lengths(**arrays: tuple[NDArray[np.generic] | Rows, int]) -> None:
    for name, (array, expected) in arrays.items():
        if len(array) != expected:
            raise ValueError(f"{name} has {len(array)} entries; expected {expected}")
