"""Nearest neighbours past what exact scans can do: an HNSW graph (usearch), exact below it.

An exact scan compares every vector with every other: at a million traces that is 10^12
products, hours on two cores. Past :data:`EXACT_LIMIT` vectors the searches here go through a
usearch HNSW index (the ``scale`` extra; without it they stay exact, and
slow). The index only proposes neighbours: every similarity reported is recomputed exactly from
the two vectors, so a threshold compares true cosines, and what the index can miss is a
neighbour, never a wrong value. So the index holds narrow rows: each vector's part along the
:data:`PROJECTED` principal directions of the vectors (fitted on a sample of them, rescaled to
unit length), in int8, which makes it about three times cheaper to build and search than
half-precision 864-wide rows and finds the true nearest as often or more (``docs/novelty.md``).
The index is built in one thread, in the caller's order, so the same input gives the same answer
(a graph built on several threads differs from run to run); it is searched in batches on every
core (:data:`THREADS`). Up to :data:`EXACT_LIMIT` nothing here changes a result.

Past the limit a corpus's vectors are held in half precision (:func:`held_dtype`: 1.7 KB a
trace instead of 3.4 KB with the default novelty text); each cosine is still a float32 product,
of float32 copies of a block of them, so the rounding is that of the vectors' 11-bit mantissas
(cosines move by about 1e-4, ``docs/performance.md``).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import import_optional, install_hint
from knowledgepulse.novelty.cache.search import BLOCK_BYTES, as_float32, frozen_nearest

EXACT_LIMIT = 50_000
"""Vectors up to which searches scan exactly; past it they use an HNSW index when installed."""
NEIGHBOURS = 16
"""Candidates the index proposes for each query, of which the best allowed one is taken."""
BLOCK_ROWS = 4096
"""Queries whose proposed neighbours' vectors are held at once (16 rows each)."""
THREADS = 0
"""usearch's threads for a batch of searches: 0, every core."""
PROJECTED = 64
"""The index's row width: the vectors' leading principal directions kept (at most their width)."""
FIT_ROWS = 4096
"""About how many evenly spaced vectors the principal directions are fitted on."""
SCALE_HINT = install_hint("scale")


def approximate(count: int) -> bool:
    """Whether a search over ``count`` vectors goes through the index (past the limit)."""
    return count > EXACT_LIMIT and importlib.util.find_spec("usearch") is not None


def held_dtype(count: int) -> type[np.float16] | type[np.float32]:
    """How a corpus of ``count`` vectors holds them: float16 where its search is approximate.

    There the index only proposes neighbours, so half the memory is worth cosines that move
    within the vectors' rounding; up to the limit every result stays float32's.
    """
    return np.float16 if approximate(count) else np.float32


def _index(dimensions: int, *, narrow: bool = True) -> Any:
    """An empty usearch index of inner products over unit vectors.

    Narrow rows (:func:`principal_directions`) are held in int8; whole vectors in half
    precision, since int8 steps are coarse beside the small parts of a wide unit vector.
    """
    usearch = import_optional("usearch.index", lambda _: ImportError(SCALE_HINT))
    return usearch.Index(ndim=dimensions, metric="ip", dtype="i8" if narrow else "f16")


def principal_directions(sample: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """The leading :data:`PROJECTED` directions of ``sample``'s rows, as columns.

    Not centred: the part of each vector along them keeps the most of its inner products.
    Fitted on about :data:`FIT_ROWS` evenly spaced rows, so the same sample gives the same ones.
    """
    rows = sample[:: max(1, len(sample) // FIT_ROWS)]
    _, _, directions = np.linalg.svd(rows.astype(np.float32), full_matrices=False)
    return np.ascontiguousarray(directions[:PROJECTED].T)


def _narrowed(
    vectors: NDArray[np.floating[Any]], directions: NDArray[np.float32]
) -> NDArray[np.float32]:
    """The index's rows: ``vectors`` along ``directions``, rescaled to unit length."""
    rows = as_float32(vectors) @ directions
    lengths = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.asarray(rows / np.where(lengths > 0, lengths, 1), dtype=np.float32)


def _keys(found: Any, queries: int) -> NDArray[np.intp]:
    """The keys of a batch search's answer, a row a query (usearch answers one query flat)."""
    return np.asarray(found.keys, dtype=np.intp).reshape(queries, -1)


def _cosines(
    queries: NDArray[np.float32], vectors: NDArray[np.floating[Any]], rows: NDArray[np.intp]
) -> NDArray[np.float32]:
    """Each query's cosine with the vectors at its row of ``rows``, in float32.

    A column of ``rows`` at a time: the vectors gathered for a block of queries are one per
    query, not :data:`NEIGHBOURS` (those took 226 MB a block, 339 MB from half precision).
    """
    found = np.empty(rows.shape, dtype=np.float32)
    for column in range(rows.shape[1]):
        found[:, column] = np.einsum("ij,ij->i", queries, as_float32(vectors[rows[:, column]]))
    return found


def nearest_other_key(
    vectors: NDArray[np.floating[Any]],
    codes: NDArray[np.intp],
    order: NDArray[np.intp] | None = None,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """For each row, a nearest row of another code (through the index), and their cosine.

    ``(-1, nan)`` for a row with no other code. A row whose proposed neighbours all share its
    code (many copies of one id) is scanned exactly. ``order`` (default: as they are) is the
    order the rows are fitted on and added to the index in, so that the same rows in any
    places give the same graph, and with it the same answer (of equal cosines among a scanned
    row's candidates, the lowest row of ``vectors`` is taken); the vectors are read through
    it, never copied in it.
    """
    ranked = np.arange(len(vectors)) if order is None else order
    fitted = ranked[:: max(1, len(ranked) // FIT_ROWS)]  # principal_directions' own sample
    directions = principal_directions(vectors[fitted])
    index = _index(directions.shape[1])
    narrow = np.empty((len(vectors), directions.shape[1]), dtype=np.float32)
    for start in range(0, len(vectors), BLOCK_ROWS):
        narrow[start : start + BLOCK_ROWS] = _narrowed(
            vectors[ranked[start : start + BLOCK_ROWS]], directions
        )
    index.add(np.arange(len(vectors)), narrow, threads=1)  # a key is a rank in ``order``
    del narrow
    nearest = np.full(len(vectors), -1, dtype=np.intp)
    similarity = np.full(len(vectors), np.nan, dtype=np.float64)
    for start in range(0, len(vectors), BLOCK_ROWS):  # the proposed rows, a block at a time
        rows = ranked[start : start + BLOCK_ROWS]
        block = as_float32(vectors[rows])
        found = index.search(_narrowed(block, directions), NEIGHBOURS, threads=THREADS)
        keys = _keys(found, len(rows))
        keys[keys >= len(vectors)] = -1  # usearch pads a short answer with its "no key"
        proposed = np.where(keys >= 0, ranked[np.maximum(keys, 0)], -1)
        allowed = (proposed >= 0) & (codes[np.maximum(proposed, 0)] != codes[rows, None])
        cosines = _cosines(block, vectors, np.maximum(proposed, 0))
        cosines[~allowed] = -np.inf
        column = cosines.argmax(axis=1)
        at = np.arange(len(proposed))
        nearest[rows] = np.where(allowed[at, column], proposed[at, column], -1)
        similarity[rows] = np.clip(cosines[at, column].astype(np.float64), -1.0, 1.0)
    missed = np.flatnonzero(nearest < 0)
    if len(missed):
        queries = as_float32(vectors[missed])
        exact = frozen_nearest(vectors, queries, held_keys=codes, query_keys=codes[missed])
        nearest[missed], similarity[missed] = exact.index, exact.similarity
    similarity[nearest < 0] = np.nan
    return nearest, similarity


class GrowingRows:
    """Vectors added one at a time, each query answered with the most similar one so far.

    Exact (a row per vector, one product a query) unless ``approximate``: then an HNSW index
    proposes :data:`NEIGHBOURS` and the most similar of them is taken.

    Args:
        capacity: the most vectors that will be added.
        dimensions: their length.
        approximate: search through the index (see :func:`approximate`).
        sample: vectors like those that will be added and asked about (all of them, say): the
            index holds their :func:`principal_directions`; ``None``: whole vectors.

    Through the index, rows are held as ``sample`` holds them (half precision past the limit:
    :func:`held_dtype`); every product is float32's.
    """

    def __init__(
        self,
        capacity: int,
        dimensions: int,
        *,
        approximate: bool = False,
        sample: NDArray[np.floating[Any]] | None = None,
    ) -> None:
        dtype = sample.dtype if approximate and sample is not None else np.float32
        self._rows = np.zeros((capacity, dimensions), dtype=dtype)
        self._count = 0
        self._directions = None  # the index's rows are whole vectors without a sample
        if approximate and sample is not None:
            self._directions = principal_directions(sample)
        width = dimensions if self._directions is None else self._directions.shape[1]
        narrow = self._directions is not None
        self._index = _index(width, narrow=narrow) if approximate else None

    def _narrowed(self, vectors: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
        """What the index holds of ``vectors``."""
        if self._directions is None:
            return as_float32(vectors)
        return _narrowed(vectors, self._directions)

    def __len__(self) -> int:
        return self._count

    def add(self, vector: NDArray[np.floating[Any]]) -> None:
        """Hold ``vector``; it is number ``len(self)`` before the call."""
        self._rows[self._count] = vector
        if self._index is not None:
            self._index.add(self._count, self._narrowed(vector), threads=1)
        self._count += 1

    def add_many(self, vectors: NDArray[np.floating[Any]]) -> None:
        """Hold each row of ``vectors``, numbered on from ``len(self)``."""
        count = len(vectors)
        if not count:
            return
        self._rows[self._count : self._count + count] = vectors
        if self._index is not None:
            keys = np.arange(self._count, self._count + count)
            self._index.add(keys, self._narrowed(vectors), threads=1)
        self._count += count

    def nearest_many(
        self, vectors: NDArray[np.floating[Any]]
    ) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        """:meth:`nearest` of each row of ``vectors``, in blocks: the numbers and the cosines.

        The earliest of equals; ``-1`` and ``-inf`` where none is held.
        """
        best = np.full(len(vectors), -1, dtype=np.intp)
        similarity = np.full(len(vectors), -np.inf, dtype=np.float32)
        if not self._count or not len(vectors):
            return best, similarity
        held = self._rows[: self._count]
        step = max(1, BLOCK_BYTES // (4 * self._count)) if self._index is None else BLOCK_ROWS
        for start in range(0, len(vectors), step):
            block = slice(start, start + step)
            rows = as_float32(vectors[block])
            if self._index is None:
                products = rows @ held.T
                best[block] = products.argmax(axis=1)
            else:
                queries = self._narrowed(rows)
                found = self._index.search(queries, NEIGHBOURS, threads=THREADS)
                keys = np.sort(_keys(found, len(queries)), axis=1)  # ties: the earliest
                keys[keys >= self._count] = -1  # usearch pads a short answer with "no key"
                products = _cosines(rows, held, np.maximum(keys, 0))
                products[keys < 0] = -np.inf
                column = products.argmax(axis=1)
                best[block] = keys[np.arange(len(keys)), column]
            similarity[block] = products[np.arange(len(products)), products.argmax(axis=1)]
        best[np.isneginf(similarity)] = -1
        return best, similarity

    def nearest(self, vector: NDArray[np.floating[Any]]) -> tuple[int, float]:
        """The held vector most similar to ``vector``: its number and their cosine.

        The earliest of equals; ``(-1, -inf)`` when none is held.
        """
        if not self._count:
            return -1, -np.inf
        vector = as_float32(vector)
        if self._index is None:
            similarities = self._rows[: self._count] @ vector
            best = int(np.argmax(similarities))
            return best, float(similarities[best])
        found = self._index.search(self._narrowed(vector), NEIGHBOURS)
        keys = np.sort(found.keys.astype(np.intp))
        keys = keys[(keys >= 0) & (keys < self._count)]
        similarities = as_float32(self._rows[keys]) @ vector
        best = int(np.argmax(similarities))
        return int(keys[best]), float(similarities[best])
