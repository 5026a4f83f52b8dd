"""Novelty: embedders, novelty texts, and the vector cache a trace's embedding is compared with.

This package does not import numpy (a run without an embedder never needs it); the parts that do
are imported from their modules: ``cache`` (``VectorCache``), ``minilm`` (``MiniLMEmbedder``),
``static`` (``StaticEmbedder``).
The novelty texts are in ``representation``, the embedder helpers in ``embedder``.
"""

from knowledgepulse.novelty.embedder import Embedder, embedder_for, shared_embedder

__all__ = ["Embedder", "embedder_for", "shared_embedder"]
