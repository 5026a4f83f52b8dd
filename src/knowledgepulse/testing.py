"""Helpers for testing code that uses knowledgepulse: a fake embedder and ``assert_passes``.

Use :class:`HashingEmbedder` in unit tests instead of the real model: no extra to install, no
model to load, the same vectors in every process, and texts that share words get similar
vectors, so novelty behaves as it would (a repeated text is not novel, an unrelated one is).
:func:`assert_passes` fails a test with an evaluation case's diagnosis (see
:mod:`knowledgepulse.evals.assertions`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np
import regex
from numpy.typing import NDArray

from knowledgepulse.evals.assertions import assert_passes

__all__ = ["HashingEmbedder", "assert_passes"]

_WORD = regex.compile(r"\w+")


class HashingEmbedder:
    """Bag-of-words feature hashing: each word adds +-1 to one of ``dimensions`` slots.

    The slot and sign come from the word's BLAKE2b hash (not Python's salted ``hash``), so the
    vectors are the same in every process. Rows are L2-normalised; a text with no words gives
    a zero vector.

    Args:
        dimensions: the vector length (default 384, like all-MiniLM-L6-v2).
    """

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be at least 1, got {dimensions}")
        self.dimensions = dimensions
        self.model_id = f"hashing-{dimensions}"

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text."""
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                slot, sign = _slot(word, self.dimensions)
                vectors[row, slot] += sign
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


@functools.lru_cache(maxsize=65536)
def _slot(word: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
    return digest % dimensions, 1.0 if (digest >> 63) & 1 else -1.0
