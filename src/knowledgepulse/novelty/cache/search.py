"""Nearest-neighbour scans: plain float32 matrix products and an argmax, in bounded blocks.

The held vectors come as a few arrays read as one, oldest first, never copied whole: a block of
queries meets them in slices whose similarities take at most ``block_bytes``. Every row is a unit
vector or zero (``windows.unit_rows``), so a product is a cosine. Batch and one-by-one answers
agree within 1e-6; of two exact copies either may be named nearest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

BLOCK_BYTES = 64 * 1024 * 1024
"""The most one block of float32 similarities may take, whatever the cache's size."""
BLOCK_QUERIES = 256
"""Queries per block: enough to keep BLAS busy; online, a block is scored before it is held."""

Parts = NDArray[np.floating[Any]] | Sequence[NDArray[np.floating[Any]]]
"""Held vectors: float32, or float16 (a large corpus's, ``index.held_dtype``) read as float32."""
Times = Sequence[NDArray[np.float64]]


def as_float32(vectors: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """``vectors`` as float32 (no copy when they are): products of half-precision rows in BLAS."""
    return np.asarray(vectors, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Each query's nearest counted vector: its row among the keys, and the cosine.

    Online the keys are the held vectors, then the batch; ``-1`` and ``nan``: nothing counts.
    """

    index: NDArray[np.intp]
    similarity: NDArray[np.float64]


def frozen_nearest(
    held: Parts,
    queries: NDArray[np.float32],
    *,
    held_times: Times | None = None,
    due: NDArray[np.float64] | None = None,
    held_keys: NDArray[np.intp] | None = None,
    query_keys: NDArray[np.intp] | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Neighbours:
    """Each query's nearest held vector (a frozen cache; a corpus against itself).

    ``held`` is one array or several read as one, oldest first; ``held_times`` when each was
    added (ms). ``due`` is per query the time at or before which a held vector has expired.
    ``held_keys`` (a code per held vector's id) and ``query_keys`` leave out, for a query, the
    held vectors of its key (``-1``: none left out).
    """
    parts = [held] if isinstance(held, np.ndarray) else list(held)
    return _scan(queries, parts, held_times, due, held_keys, query_keys, None, block_bytes)


def online_nearest(
    held: Parts,
    vectors: NDArray[np.float32],
    *,
    max_elements: int,
    held_times: Times | None = None,
    query_times: NDArray[np.float64] | None = None,
    add_times: NDArray[np.float64] | None = None,
    ttl_ms: float | None = None,
    keys: NDArray[np.intp] | None = None,
    joins: NDArray[np.bool_] | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Neighbours:
    """Each vector's nearest in a FIFO cache of ``max_elements`` that it joins after its query.

    Vector ``g`` is compared with the ``max_elements`` vectors before it (the held ones, oldest
    first, then the batch), less those added at or before ``query_times[g] - ttl_ms`` and
    those of its own key (``keys``: one per held vector, then one per batch vector, a code for
    its id; ``-1``: none). ``joins`` (default: all) says which batch vectors join the cache
    after their query; the others are only queries, taking no place in it. A block of queries
    is one product against that band, masked where a key is not yet, or no longer, in a
    query's window. ``index`` counts the held vectors first, then the batch vectors that join.
    """
    held_parts = [held] if isinstance(held, np.ndarray) else list(held)
    prior = sum(len(part) for part in held_parts)
    joining = np.ones(len(vectors), dtype=bool) if joins is None else joins
    joined = vectors[joining]
    parts = [*held_parts, joined]
    # A query's place in the sequence of keys: the held ones and the batch's joined before it.
    positions = prior + np.cumsum(joining) - joining
    times, due = None, None
    if ttl_ms is not None:
        if held_times is None or query_times is None or add_times is None:
            raise ValueError("with ttl_ms, held_times, query_times and add_times are needed")
        times, due = [*held_times, add_times[joining]], query_times - ttl_ms
    column_keys = own = None
    if keys is not None:
        own = keys[len(keys) - len(vectors) :]
        column_keys = np.concatenate([keys[: len(keys) - len(vectors)], own[joining]])
    return _scan(
        vectors, parts, times, due, column_keys, own, (max_elements, positions), block_bytes
    )


def _scan(  # noqa: PLR0917 - the two searches' settings, passed straight through
    queries: NDArray[np.float32],
    parts: list[NDArray[np.floating[Any]]],
    times: Sequence[NDArray[np.float64]] | None,
    due: NDArray[np.float64] | None,
    keys: NDArray[np.intp] | None,
    query_keys: NDArray[np.intp] | None,
    window: tuple[int, NDArray[np.intp]] | None,
    block_bytes: int,
) -> Neighbours:
    """Each query's best key of ``parts``, in blocks, less those due or of the query's key.

    With a ``window`` (online: its size, and each query's position among the keys), a query
    sees the keys of the ``size`` positions before its own.
    """
    index = np.full(len(queries), -1, dtype=np.intp)
    best = np.full(len(queries), -np.inf, dtype=np.float32)
    for start in range(0, len(queries), BLOCK_QUERIES):
        rows = slice(start, min(len(queries), start + BLOCK_QUERIES))
        block, low, high = queries[rows], 0, None
        if window is not None:
            size, positions = window
            low, high = max(0, int(positions[rows.start]) - size), int(positions[rows.stop - 1])
        step = max(1, block_bytes // (4 * len(block)))
        offset = 0
        for number, part in enumerate(parts):
            stop = offset + len(part) if high is None else min(high, offset + len(part))
            for first in range(max(low, offset), stop, step):
                last = min(stop, first + step)
                span = slice(first - offset, last - offset)
                scores = block @ as_float32(part[span]).T
                if window is not None:
                    query = positions[rows, None]
                    column = np.arange(first, last)[None, :]
                    scores[(column >= query) | (column < query - size)] = -np.inf
                if due is not None and times is not None:
                    scores[times[number][span][None, :] <= due[rows, None]] = -np.inf
                if keys is not None and query_keys is not None:
                    own = query_keys[rows, None]
                    scores[(keys[None, first:last] == own) & (own >= 0)] = -np.inf
                column = scores.argmax(axis=1)
                value = scores[np.arange(len(block)), column]
                better = value > best[rows]  # ties keep the earlier (older) key
                index[rows][better] = column[better] + first
                best[rows][better] = value[better]
            offset += len(part)
    similarity = np.clip(best.astype(np.float64), -1.0, 1.0)
    similarity[index < 0] = np.nan
    return Neighbours(index, similarity)
