"""Novelty: embedders, and the vector cache a trace's embedding is compared with.

The names are imported on first use: a run without an embedder looks up a novelty text's name
or a cache default but never embeds or searches, and should not pay for numpy to do so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledgepulse._util.lazy import lazy_exports
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    default_embedder,
    dimensions_of,
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

if TYPE_CHECKING:
    from knowledgepulse.novelty.banded import Neighbours, frozen_nearest, online_nearest
    from knowledgepulse.novelty.cache import CachedVector, Clock, Nearest, VectorCache
    from knowledgepulse.novelty.minilm import MiniLMEmbedder
    from knowledgepulse.novelty.windows import WindowedEmbeddings

# These import numpy (and the model's runtime): imported on first use.
_HOME_OF = {
    "CachedVector": "knowledgepulse.novelty.cache",
    "Clock": "knowledgepulse.novelty.cache",
    "MiniLMEmbedder": "knowledgepulse.novelty.minilm",
    "Nearest": "knowledgepulse.novelty.cache",
    "Neighbours": "knowledgepulse.novelty.banded",
    "VectorCache": "knowledgepulse.novelty.cache",
    "WindowedEmbeddings": "knowledgepulse.novelty.windows",
    "frozen_nearest": "knowledgepulse.novelty.banded",
    "online_nearest": "knowledgepulse.novelty.banded",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME_OF, globals())

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
