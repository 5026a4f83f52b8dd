"""Novelty: embedders, and the vector cache a trace's embedding is compared with."""

from knowledgepulse.novelty.cache import CachedVector, Clock, Nearest, VectorCache
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    default_embedder,
    dimensions_of,
    model_id_of,
)
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.windows import (
    DEFAULT_MAX_WINDOWS,
    MODEL_POSITIONS,
    WINDOW_PIECES,
    WindowedEmbeddings,
)

__all__ = [
    "DEFAULT_MAX_WINDOWS",
    "MODEL_POSITIONS",
    "WINDOW_PIECES",
    "CachedVector",
    "Clock",
    "Embedder",
    "MiniLMEmbedder",
    "Nearest",
    "VectorCache",
    "WindowedEmbedder",
    "WindowedEmbeddings",
    "default_embedder",
    "dimensions_of",
    "model_id_of",
]
