"""The checks on what is given to a :class:`~knowledgepulse.novelty.VectorCache`: vectors, ids.

Each returns the input as the cache holds it (float32 rows of unit length, one id per row) or
raises a :class:`~knowledgepulse.errors.VectorError` saying what was wrong and what fits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from knowledgepulse.errors import VectorError
from knowledgepulse.novelty.exact import unit_rows


def unit_vector(vector: ArrayLike, dimensions: int, what: str) -> NDArray[np.float32]:
    """The vector as float32 of unit length (a zero vector stays zero).

    Raises:
        VectorError: the vector is not of length ``dimensions``, or holds NaN or infinity.
    """
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimensions,):
        raise VectorError(
            f"the {what} has shape {array.shape}; this cache holds vectors of "
            f"{dimensions} dimensions (shape ({dimensions},))"
        )
    if not np.isfinite(array).all():
        raise VectorError(f"the {what} holds NaN or infinite values; embeddings must be finite")
    # The batch methods normalise with the same function, so both give the same bits.
    unit: NDArray[np.float32] = unit_rows(array[None, :])[0]
    return unit


def unit_matrix(vectors: ArrayLike, dimensions: int, what: str) -> NDArray[np.float32]:
    """The rows as float32 unit vectors.

    Raises:
        VectorError: not a matrix of ``dimensions`` columns, or a row (the first is named)
            holds NaN or infinity.
    """
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[1] != dimensions:
        raise VectorError(
            f"the {what} have shape {array.shape}; this cache holds vectors of "
            f"{dimensions} dimensions (shape (n, {dimensions}))"
        )
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise VectorError(
            f"the {what} hold NaN or infinite values (row {row}); embeddings must be finite"
        )
    return unit_rows(array)


def batch_ids(ids: Sequence[str | None] | None, count: int) -> list[str | None]:
    """One id per vector (``None`` for each when no ids are given).

    Raises:
        VectorError: ``ids`` has another length than ``count``.
    """
    names: list[str | None] = [None] * count if ids is None else list(ids)
    if len(names) != count:
        raise VectorError(f"{len(names)} ids were given for {count} vectors; give one each")
    return names
