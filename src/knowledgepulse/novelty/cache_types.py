"""The values a :class:`~knowledgepulse.novelty.VectorCache` is set up with and gives back.

Its settings' defaults and the in-memory size bound, its clock, and the results of a search
(:class:`Nearest`) and of a listing (:class:`CachedVector`). They live apart from the cache so
that the modules it is built from (the store, the search, saving and loading) share them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import ScorerParameterError

Clock = Callable[[], float]
"""Returns the current time in milliseconds."""

DEFAULT_MAX_ELEMENTS = 1000
DEFAULT_DIMENSIONS = 384
MAX_CACHE_BYTES = 4 << 30
"""The most memory an in-memory cache's vectors may take (about 2.8 million 384-d vectors): a
bound that keeps a mistyped size, or a damaged ``.npz`` file, from exhausting memory. A ring file
(:meth:`VectorCache.open`) is mapped, not loaded, and is bounded by the disk instead."""


def check_cache_size(max_elements: int, dimensions: int) -> None:
    """Refuse a cache whose vectors would take more than :data:`MAX_CACHE_BYTES`.

    Raises:
        ScorerParameterError: saying how much it would take and what to lower.
    """
    if max_elements * dimensions * 4 > MAX_CACHE_BYTES:
        raise ScorerParameterError(
            f"a cache of {max_elements} vectors of {dimensions} dimensions would take "
            f"{max_elements * dimensions * 4 / 2**30:.1f} GiB; the limit is "
            f"{MAX_CACHE_BYTES >> 30} GiB in memory, so give a smaller cache size (max_elements), "
            "or keep the cache in a ring file (VectorCache.open, kp score --cache FILE)"
        )


def wall_clock_ms() -> float:
    """Milliseconds since the epoch: comparable across processes, as a saved cache needs."""
    return time.time() * 1000.0


@dataclass(frozen=True, slots=True)
class Nearest:
    """The held vector most similar to a query.

    Attributes:
        id: the id it was added with (``None`` if it was added without one).
        similarity: the cosine similarity, in [-1, 1].
    """

    id: str | None
    similarity: float


@dataclass(frozen=True, slots=True)
class CachedVector:
    """One held vector, as :meth:`VectorCache.entries` gives it (oldest first)."""

    id: str | None
    vector: NDArray[np.float32]
    added_at_ms: float
