"""The vector cache: embeddings held in memory or a memory-mapped ring file, and their scans.

The nearest-neighbour scans are in ``search``; a cache's result types in ``vector_cache``.
"""

from knowledgepulse.novelty.cache.vector_cache import VectorCache

__all__ = ["VectorCache"]
