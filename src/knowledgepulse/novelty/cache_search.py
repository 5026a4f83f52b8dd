"""A :class:`~knowledgepulse.novelty.VectorCache`'s searches over its store, in blocks.

The cache checks the input and holds its lock and the store's view; these functions read the
clock as the one-query-at-a-time calls would (as often, in the same order), run the banded
search of :mod:`knowledgepulse.novelty.banded` over the store's parts in place, and name each
neighbour by the id it was added with.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.banded import Neighbours, frozen_nearest, online_nearest
from knowledgepulse.novelty.cache_store import FileRing, MemoryRing
from knowledgepulse.novelty.cache_types import Clock, Nearest


def nearest_then_add(
    store: MemoryRing | FileRing,
    units: NDArray[np.float32],
    ids: list[str | None],
    *,
    max_elements: int,
    ttl_ms: float | None,
    clock: Clock,
    block_bytes: int,
) -> list[Nearest | None]:
    """Each unit vector's nearest among those held before it, each then held (online)."""
    held = store.count
    query_times = np.full(len(units), np.nan)
    add_times = np.empty(len(units))
    for i in range(len(units)):
        # One by one, a query reads the clock (for the TTL) once anything is held.
        if ttl_ms and (held or i):
            query_times[i] = clock()
        add_times[i] = clock()
    found = online_nearest(
        store.vector_parts(),
        units,
        max_elements=max_elements,
        held_added_at=store.time_parts(),
        query_times=query_times,
        add_times=add_times,
        ttl_ms=ttl_ms,
        block_bytes=block_bytes,
    )
    nearest = as_nearest(store, found, ids)
    store.append(units, ids, add_times)
    return nearest


def frozen_search(
    store: MemoryRing | FileRing,
    units: NDArray[np.float32],
    excluded: list[str | None],
    *,
    ttl_ms: float | None,
    clock: Clock,
    block_bytes: int,
) -> list[Nearest | None]:
    """Each unit vector's nearest held vector, less those held under its excluded id (frozen).

    The store must hold something.
    """
    query_times = None
    if ttl_ms:
        query_times = np.array([clock() for _ in units], dtype=np.float64)
    held_keys = query_keys = None
    if any(e is not None for e in excluded):
        held_keys, query_keys = store.exclusion_keys(excluded)
    found = frozen_nearest(
        store.vector_parts(),
        units,
        held_added_at=store.time_parts(),
        query_times=query_times,
        ttl_ms=ttl_ms,
        held_keys=held_keys,
        query_keys=query_keys,
        block_bytes=block_bytes,
    )
    return as_nearest(store, found, [])


def as_nearest(
    store: MemoryRing | FileRing, found: Neighbours, batch_ids: list[str | None]
) -> list[Nearest | None]:
    """Each neighbour with its id: held rows first, then the batch."""
    held = store.count
    return [
        None
        if index < 0
        else Nearest(store.id_at(index) if index < held else batch_ids[index - held], similarity)
        for index, similarity in zip(found.index.tolist(), found.similarity.tolist(), strict=True)
    ]
