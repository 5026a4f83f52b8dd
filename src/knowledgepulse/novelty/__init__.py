"""Novelty: embedders, novelty texts, and the vector cache a trace's embedding is compared with.

This package does not import numpy (a run without an embedder never needs it); the parts that do
are imported from their modules: ``cache`` (``VectorCache``), ``minilm`` (``MiniLMEmbedder``).
"""

from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    batch_size_of,
    default_embedder,
    dimensions_of,
    embedder_for,
    model_id_of,
    shared_embedder,
)
from knowledgepulse.novelty.representation import (
    DEFAULT_NOVELTY_TEXT,
    NOVELTY_TEXTS,
    LeadingEmbedder,
    NoveltyText,
    novelty_text,
)
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, MODEL_POSITIONS, WINDOW_PIECES

__all__ = [
    "DEFAULT_MAX_WINDOWS",
    "DEFAULT_NOVELTY_TEXT",
    "MODEL_POSITIONS",
    "NOVELTY_TEXTS",
    "WINDOW_PIECES",
    "Embedder",
    "LeadingEmbedder",
    "NoveltyText",
    "WindowedEmbedder",
    "batch_size_of",
    "default_embedder",
    "dimensions_of",
    "embedder_for",
    "model_id_of",
    "novelty_text",
    "shared_embedder",
]
