"""Novelty: embedders, and the vector cache a trace's embedding is compared with."""

from knowledgepulse.novelty.cache import CachedVector, Clock, Nearest, VectorCache
from knowledgepulse.novelty.embedder import (
    Embedder,
    default_embedder,
    dimensions_of,
    model_id_of,
)
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.windows import MODEL_POSITIONS, WINDOW_PIECES

__all__ = [
    "MODEL_POSITIONS",
    "WINDOW_PIECES",
    "CachedVector",
    "Clock",
    "Embedder",
    "MiniLMEmbedder",
    "Nearest",
    "VectorCache",
    "default_embedder",
    "dimensions_of",
    "model_id_of",
]
