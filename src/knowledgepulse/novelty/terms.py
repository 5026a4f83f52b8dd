"""Sets of terms as unit vectors, by signed feature hashing: exact-match overlap as a cosine.

An embedding model says that two user ids, two order numbers or two dates are alike, because
they look alike; what tells a repeat of a task from a new one is often that they are the *same*
id. A set of terms hashed into a fixed number of signed buckets (Weinberger et al., "Feature
Hashing for Large Scale Multitask Learning", 2009) is a vector whose cosine with another such
vector estimates the two sets' overlap, |A ∩ B| / sqrt(|A| |B|), without a vocabulary: any
process, any machine, any order of the terms gives the same vector.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.digest import stable_hash64
from knowledgepulse.novelty.settings import TERM_DIMENSIONS


def term_vector(terms: Iterable[str], dimensions: int = TERM_DIMENSIONS) -> NDArray[np.float32]:
    """One unit vector for a set of terms (zeros for an empty set).

    Each distinct term adds +1 or -1 to one bucket, both chosen by an 8-byte BLAKE2b digest of
    its UTF-8 bytes (stable across processes, unlike ``hash``); the sign makes the collisions
    of different terms cancel on average instead of adding up.
    """
    vector = np.zeros(dimensions, dtype=np.float32)
    for term in set(terms):
        digest = stable_hash64(term)
        vector[digest % dimensions] += 1.0 if digest >> 63 else -1.0
    norm = float(np.linalg.norm(vector))
    return vector / np.float32(norm) if norm > 0 else vector


def term_vectors(
    term_sets: Sequence[Iterable[str]], dimensions: int = TERM_DIMENSIONS
) -> NDArray[np.float32]:
    """:func:`term_vector` of each set, stacked: (sets, dimensions)."""
    matrix = np.zeros((len(term_sets), dimensions), dtype=np.float32)
    for row, terms in enumerate(term_sets):
        matrix[row] = term_vector(terms, dimensions)
    return matrix
