"""The vector cache: embeddings held in memory or a memory-mapped ring file, and their scans."""

from knowledgepulse.novelty.cache.search import Neighbours, frozen_nearest, online_nearest
from knowledgepulse.novelty.cache.vector_cache import (
    CachedVector,
    Clock,
    Nearest,
    VectorCache,
    wall_clock_ms,
)

__all__ = [
    "CachedVector",
    "Clock",
    "Nearest",
    "Neighbours",
    "VectorCache",
    "frozen_nearest",
    "online_nearest",
    "wall_clock_ms",
]
