"""Novelty: embedders, and the vector cache a trace's embedding is compared with."""

from knowledgepulse.novelty.banded import Neighbours, frozen_nearest, online_nearest
from knowledgepulse.novelty.cache import CachedVector, Clock, Nearest, VectorCache
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    default_embedder,
    dimensions_of,
    model_id_of,
    shared_embedder,
)
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.novelty.representation import (
    DEFAULT_NOVELTY_TEXT,
    NOVELTY_TEXTS,
    LeadingEmbedder,
    NoveltyText,
    novelty_text,
)
from knowledgepulse.novelty.windows import (
    DEFAULT_MAX_WINDOWS,
    MODEL_POSITIONS,
    WINDOW_PIECES,
    WindowedEmbeddings,
)

__all__ = [
    "DEFAULT_MAX_WINDOWS",
    "DEFAULT_NOVELTY_TEXT",
    "MODEL_POSITIONS",
    "NOVELTY_TEXTS",
    "WINDOW_PIECES",
    "CachedVector",
    "Clock",
    "Embedder",
    "LeadingEmbedder",
    "MiniLMEmbedder",
    "Nearest",
    "Neighbours",
    "NoveltyText",
    "VectorCache",
    "WindowedEmbedder",
    "WindowedEmbeddings",
    "default_embedder",
    "dimensions_of",
    "frozen_nearest",
    "model_id_of",
    "novelty_text",
    "online_nearest",
    "shared_embedder",
]
