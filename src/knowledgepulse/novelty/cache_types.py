"""The values a :class:`~knowledgepulse.novelty.VectorCache` is set up with and gives back.

Its clock, and the results of a search (:class:`Nearest`) and of a listing
(:class:`CachedVector`); its defaults and size bound are in
:mod:`knowledgepulse.novelty.settings`. They live apart from the cache so that the modules it
is built from (the store, the search, saving and loading) share them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Clock = Callable[[], float]
"""Returns the current time in milliseconds."""


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
