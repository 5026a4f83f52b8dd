"""Cosine similarity that is the same bits whichever way it is computed.

A float32 matrix product rounds differently depending on how the BLAS blocks it: the same pair of
vectors gives a slightly different cosine in a matrix-vector product (one query) than in a
matrix-matrix product (a block of queries), so a batch could name another nearest trace than the
one-by-one path, and an exact tie could stop being a tie. Here the similarity is defined so that
every evaluation order gives the same answer:

* each component of the unit vectors is rounded to a multiple of ``2**-24`` (:func:`on_grid`,
  at most ``3e-8`` from the float32 value; the cosine moves by at most ``2**-24 * sqrt(d)``);
* then every product is a multiple of ``2**-48`` below 1 and every partial sum is one below 2
  (Cauchy-Schwarz), so all of them are exact in float64 and the sum is the same in any order.

Computing that for every pair would cost a float64 product. Instead the float32 product screens:
its error is at most :func:`screening_tolerance` / 2, so the nearest neighbour under the exact
similarity is among the keys within that distance of the float32 maximum, and only those are
recomputed exactly (usually one key a query; every copy when vectors repeat).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Accumulate = Literal["float32", "float64"]
"""``float64``: the exact similarity above; ``float32``: the raw float32 product (faster,
within about 1e-6 of it, exact ties may be lost)."""

ACCUMULATE_MODES: tuple[Accumulate, ...] = ("float32", "float64")
GRID = 2.0**24
_UNIT_ROUNDOFF = 2.0**-24
_UNIT_ROWS_SLICE = 4096
_LOWEST = np.finfo(np.float32).min


def unit_rows(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row scaled to unit length in float64, returned as float32 (zero rows stay zero).

    Row ``i`` of the result depends on row ``i`` alone, so one vector and a batch holding it
    give the same bits. In float64, so tiny (subnormal) float32 vectors still have a direction.
    """
    units = np.empty(matrix.shape, dtype=np.float32)
    # In slices, so a large batch never needs a float64 copy of itself.
    for start in range(0, len(matrix), _UNIT_ROWS_SLICE):
        wide = matrix[start : start + _UNIT_ROWS_SLICE].astype(np.float64)
        norms = np.sqrt(np.add.reduce(wide * wide, axis=1))
        wide /= np.where(norms == 0.0, 1.0, norms)[:, None]
        units[start : start + _UNIT_ROWS_SLICE] = wide
    return units


def on_grid(vectors: NDArray[np.float32]) -> NDArray[np.float64]:
    """The vectors' components rounded to multiples of ``2**-24``, in float64 (see the module)."""
    wide = vectors.astype(np.float64)
    wide *= GRID  # scaling by a power of two is exact, so only the rounding moves a value
    np.rint(wide, out=wide)
    wide *= 1.0 / GRID
    return wide


def exact_dots(queries: NDArray[np.float32], keys: NDArray[np.float32]) -> NDArray[np.float64]:
    """Row ``i`` of ``queries`` dotted with row ``i`` of ``keys``, exactly, on the grid.

    Rows must be unit vectors or zero (as :func:`unit_rows` makes them); then the result does
    not depend on the order of the additions.
    """
    return np.asarray(np.einsum("ij,ij->i", on_grid(queries), on_grid(keys)), dtype=np.float64)


def screening_tolerance(dimensions: int) -> float:
    """How far below the float32 maximum the exact nearest neighbour can lie.

    Twice the bound on ``|float32 product - exact grid similarity|``: the float32 rounding of a
    dot product of unit vectors in any order (``gamma_d``) plus the grid's shift
    (``2**-24 * sqrt(d)``), doubled again as a margin against a BLAS that flushes subnormals.
    """
    if dimensions * _UNIT_ROUNDOFF >= 0.5:
        return math.inf  # a bound this loose says nothing: every key is recomputed
    gamma = dimensions * _UNIT_ROUNDOFF / (1.0 - dimensions * _UNIT_ROUNDOFF)
    return 4.0 * (gamma + math.sqrt(dimensions) * _UNIT_ROUNDOFF) + 1e-30


def select_nearest(
    scores: NDArray[np.float32],
    queries: NDArray[np.float32],
    keys: NDArray[np.float32],
    *,
    accumulate: Accumulate = "float64",
    tie_rank: NDArray[np.int64] | None = None,
    clip: bool = True,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Each query's nearest key, from a block of float32 similarities.

    Args:
        scores: ``queries @ keys.T`` in float32, ``-inf`` where a key does not count for that
            query (outside its window, expired, excluded).
        queries: the block's unit query vectors, one row per row of ``scores``.
        keys: the unit key vectors, one row per column of ``scores``.
        accumulate: ``float64`` recomputes the contenders exactly (see the module);
            ``float32`` takes the float32 scores as they are.
        tie_rank: each key's age (smaller is older); default: the column order.
        clip: clamp the similarity to [-1, 1]; a scan in blocks of keys compares the unclamped
            values across blocks, and clamps once at the end.

    Returns:
        ``(index, similarity)``: the column of the most similar key, exact ties going to the
        oldest (``-1`` when no key counts), and its similarity clamped to [-1, 1] (``nan``
        when none).
    """
    rows, width = scores.shape
    index = np.full(rows, -1, dtype=np.intp)
    similarity = np.full(rows, np.nan, dtype=np.float64)
    if rows == 0 or width == 0:
        return index, similarity
    tolerance = screening_tolerance(keys.shape[1]) if accumulate == "float64" else 0.0
    if rows == 1:
        return _select_one(
            scores[0],
            queries[0],
            keys,
            accumulate=accumulate,
            tolerance=tolerance,
            tie_rank=tie_rank,
            clip=clip,
        )
    best = scores.max(axis=1)
    # A row with no key that counts gets a threshold nothing reaches.
    threshold = np.where(best > -np.inf, _lowered(best, tolerance), np.float32(np.inf))
    flat = np.flatnonzero(scores >= threshold[:, None])
    if len(flat) == 0:
        return index, similarity
    contender_rows, columns = np.divmod(flat, width)
    if accumulate == "float64":
        values = exact_dots(queries[contender_rows], keys[columns])
    else:
        values = scores.reshape(-1)[flat].astype(np.float64)
    age = columns if tie_rank is None else tie_rank[columns]
    # Best value first within each row, then the oldest key; keep each row's first.
    order = np.lexsort((age, -values, contender_rows))
    ordered_rows = contender_rows[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = ordered_rows[1:] != ordered_rows[:-1]
    chosen = order[first]
    index[contender_rows[chosen]] = columns[chosen]
    chosen_values = values[chosen]
    similarity[contender_rows[chosen]] = (
        np.clip(chosen_values, -1.0, 1.0) if clip else chosen_values
    )
    return index, similarity


def _select_one(
    scores: NDArray[np.float32],
    query: NDArray[np.float32],
    keys: NDArray[np.float32],
    *,
    accumulate: Accumulate,
    tolerance: float,
    tie_rank: NDArray[np.int64] | None,
    clip: bool,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """:func:`select_nearest` for one query, in fewer numpy calls (the one-by-one path)."""
    index = np.full(1, -1, dtype=np.intp)
    similarity = np.full(1, np.nan, dtype=np.float64)
    best = scores.max(keepdims=True)
    if best[0] == -np.inf:
        return index, similarity
    columns = np.flatnonzero(scores >= _lowered(best, tolerance))
    if accumulate == "float64":
        values = on_grid(keys[columns]) @ on_grid(query)
    else:
        values = scores[columns].astype(np.float64)
    if len(columns) == 1:
        chosen = 0
    else:
        top = np.flatnonzero(values == values.max())
        age = columns[top] if tie_rank is None else tie_rank[columns[top]]
        chosen = int(top[np.argmin(age)])
    index[0] = columns[chosen]
    value = float(values[chosen])
    similarity[0] = min(1.0, max(-1.0, value)) if clip else value
    return index, similarity


def _lowered(best: NDArray[np.float32], tolerance: float) -> NDArray[np.float32]:
    """``best - tolerance`` in float32, never down to ``-inf`` (keys that do not count)."""
    return np.asarray(np.maximum(best - np.float32(tolerance), _LOWEST), dtype=np.float32)
