"""``VectorCache``: the vectors novelty is measured against, scanned exactly with numpy.

Vectors are stored L2-normalised in one preallocated ``float32`` matrix used as a ring buffer,
so a query is a single matrix-vector product (1,000 x 384 is about 1.5 MB and a few tens of
microseconds) and the oldest vector is overwritten first when the cache is full. Each vector
keeps the id it was added with (the breakdown names the most similar earlier trace) and the time
it was added (for the TTL). Time comes from an injectable clock, in milliseconds.

Similarities are the order-independent ones of :mod:`knowledgepulse.novelty.exact`, so the batch
methods (:meth:`VectorCache.nearest_then_add_many`, :meth:`VectorCache.nearest_many`), which
compute blocks of queries at once (:mod:`knowledgepulse.novelty.banded`), give the same bits as
one query at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from knowledgepulse._util.settings import optional_duration_ms, positive_int
from knowledgepulse.errors import CacheFileError, ScorerParameterError, VectorError
from knowledgepulse.novelty.banded import Neighbours, frozen_nearest, online_nearest
from knowledgepulse.novelty.cache_file import (
    FRESH_START,
    CacheFileContents,
    read_cache_file,
    write_cache_file,
)
from knowledgepulse.novelty.exact import select_nearest, unit_rows

Clock = Callable[[], float]
"""Returns the current time in milliseconds."""

DEFAULT_MAX_ELEMENTS = 1000
DEFAULT_DIMENSIONS = 384
MAX_CACHE_BYTES = 4 << 30
"""The most memory a cache's vectors may take (about 2.8 million 384-d vectors): a bound that
keeps a mistyped size, or a damaged cache file, from exhausting memory."""


def check_cache_size(max_elements: int, dimensions: int) -> None:
    """Refuse a cache whose vectors would take more than :data:`MAX_CACHE_BYTES`.

    Raises:
        ScorerParameterError: saying how much it would take and what to lower.
    """
    if max_elements * dimensions * 4 > MAX_CACHE_BYTES:
        raise ScorerParameterError(
            f"a cache of {max_elements} vectors of {dimensions} dimensions would take "
            f"{max_elements * dimensions * 4 / 2**30:.1f} GiB; the limit is "
            f"{MAX_CACHE_BYTES >> 30} GiB, so give a smaller cache size (max_elements)"
        )


def wall_clock_ms() -> float:
    """Milliseconds since the epoch: comparable across processes, as a saved cache needs."""
    return time.time() * 1000.0


@dataclass(frozen=True, slots=True)
class Nearest:
    """The held vector most similar to a query.

    Attributes:
        id: the id it was added with (``None`` if it was added without one).
        similarity: the cosine similarity, in [-1, 1].
    """

    id: str | None
    similarity: float


@dataclass(frozen=True, slots=True)
class CachedVector:
    """One held vector, as :meth:`VectorCache.entries` gives it (oldest first)."""

    id: str | None
    vector: NDArray[np.float32]
    added_at_ms: float


class VectorCache:
    """A bounded set of embeddings with exact cosine search, oldest-first eviction and a TTL.

    Args:
        max_elements: how many vectors are held at most; adding one more evicts the oldest.
        dimensions: the length every vector must have.
        ttl_ms: if given, a vector older than this many milliseconds no longer counts anywhere
            (a topic revisited after the TTL is novel again).
        clock: the current time in milliseconds (default: wall-clock time); inject one in tests.

    Thread-safe: every method takes the cache's lock.

    Raises:
        ScorerParameterError: a size that is not a positive whole number, vectors that would
            take more than 4 GiB, or a TTL that is not a positive number.
    """

    def __init__(
        self,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        dimensions: int = DEFAULT_DIMENSIONS,
        ttl_ms: float | None = None,
        *,
        clock: Clock = wall_clock_ms,
    ) -> None:
        positive_int(max_elements, "max_elements")
        positive_int(dimensions, "dimensions")
        ttl_ms = optional_duration_ms(ttl_ms, "ttl_ms")
        check_cache_size(max_elements, dimensions)
        self._max_elements = max_elements
        self._dimensions = dimensions
        self._ttl_ms = ttl_ms
        self._clock = clock
        self._lock = threading.RLock()
        self._vectors = np.zeros((max_elements, dimensions), dtype=np.float32)
        self._added_at = np.zeros(max_elements, dtype=np.float64)
        # Insertion sequence numbers break exact ties in favour of the oldest vector, so the
        # nearest id does not depend on where the ring buffer happens to hold it.
        self._sequence = np.zeros(max_elements, dtype=np.int64)
        self._ids: list[str | None] = [None] * max_elements
        self._filled = 0  # slots 0.._filled-1 hold vectors
        self._next = 0  # the slot the next vector goes to (the oldest once full)
        self._added = 0  # vectors ever added: the next sequence number

    @property
    def max_elements(self) -> int:
        """How many vectors are held at most."""
        return self._max_elements

    @property
    def dimensions(self) -> int:
        """The length of every vector."""
        return self._dimensions

    @property
    def ttl_ms(self) -> float | None:
        """How long a vector counts, in milliseconds (``None``: for ever)."""
        return self._ttl_ms

    @property
    def size(self) -> int:
        """How many vectors are held now (expired ones do not count)."""
        with self._lock:
            return int(np.count_nonzero(self._live_mask())) if self._ttl_ms else self._filled

    def __len__(self) -> int:
        return self.size

    def add(self, vector: ArrayLike, *, id: str | None = None) -> None:
        """Hold a vector (evicting the oldest when full).

        Raises:
            VectorError: the vector has the wrong length, or holds NaN or infinity.
        """
        unit = self._unit(vector, "vector")
        with self._lock:
            slot = self._next
            self._vectors[slot] = unit
            self._added_at[slot] = self._clock()
            self._sequence[slot] = self._added
            self._ids[slot] = id
            self._added += 1
            self._next = (slot + 1) % self._max_elements
            self._filled = min(self._filled + 1, self._max_elements)

    def nearest(self, query: ArrayLike, *, exclude_id: str | None = None) -> Nearest | None:
        """The held vector most similar to ``query``, or ``None`` when nothing is held.

        A zero vector (query or held) has similarity 0 with everything. Exact ties go to the
        vector added first. ``exclude_id`` leaves out the vectors held under that id, so a trace
        scored against a cache that already holds it is not compared with itself.

        Raises:
            VectorError: the query has the wrong length, or holds NaN or infinity.
        """
        unit = self._unit(query, "query")
        with self._lock:
            if self._filled == 0:
                return None
            held = self._vectors[: self._filled]
            similarities = (held @ unit)[None, :]
            if self._ttl_ms:
                expired = ~self._live_mask()
                np.copyto(similarities, np.float32(-np.inf), where=expired[None, :])
            if exclude_id is not None:
                for slot, held_id in enumerate(self._ids[: self._filled]):
                    if held_id == exclude_id:
                        similarities[0, slot] = -np.inf
            found, best = select_nearest(
                similarities, unit[None, :], held, tie_rank=self._sequence[: self._filled]
            )
            slot = int(found[0])
            return None if slot < 0 else Nearest(self._ids[slot], float(best[0]))

    def nearest_then_add_many(
        self, vectors: ArrayLike, *, ids: Sequence[str | None] | None = None
    ) -> list[Nearest | None]:
        """For each vector in turn, its nearest held vector, and then hold it (online scoring).

        The same as ``nearest(v)`` then ``add(v, id=i)`` for each pair in order, to the bit,
        the state afterwards included, but computed in blocks (see
        :func:`~knowledgepulse.novelty.banded.online_nearest`). The clock is read as often
        and in the same order as those calls would read it.

        Raises:
            VectorError: ``vectors`` is not a matrix of this cache's width, holds NaN or
                infinity, or ``ids`` has another length; nothing is added then.
        """
        units = self._units(vectors, "vectors")
        names = self._batch_ids(ids, len(units))
        with self._lock:
            order = np.argsort(self._sequence[: self._filled], kind="stable")
            held_ids = [self._ids[slot] for slot in order]
            query_times = np.full(len(units), np.nan)
            add_times = np.empty(len(units))
            for i in range(len(units)):
                # One by one, a query reads the clock (for the TTL) once anything is held.
                if self._ttl_ms and (self._filled or i):
                    query_times[i] = self._clock()
                add_times[i] = self._clock()
            found = online_nearest(
                self._vectors[order],
                units,
                max_elements=self._max_elements,
                held_added_at=self._added_at[order],
                query_times=query_times,
                add_times=add_times,
                ttl_ms=self._ttl_ms,
            )
            self._append(units, names, add_times)
        return self._as_nearest(found, [*held_ids, *names])

    def nearest_many(
        self, queries: ArrayLike, *, exclude_ids: Sequence[str | None] | None = None
    ) -> list[Nearest | None]:
        """Each query's nearest held vector, leaving the cache as it is (frozen scoring).

        The same as ``nearest(q, exclude_id=e)`` for each pair in order, to the bit, computed in
        blocks (see :func:`~knowledgepulse.novelty.banded.frozen_nearest`).

        Raises:
            VectorError: ``queries`` is not a matrix of this cache's width, holds NaN or
                infinity, or ``exclude_ids`` has another length.
        """
        units = self._units(queries, "queries")
        excluded = self._batch_ids(exclude_ids, len(units))
        with self._lock:
            if self._filled == 0:
                return [None] * len(units)
            query_times = None
            if self._ttl_ms:
                query_times = np.array([self._clock() for _ in units], dtype=np.float64)
            held_ids = self._ids[: self._filled]
            codes: dict[str | None, int] = {}
            held_keys = np.array([codes.setdefault(i, len(codes)) for i in held_ids])
            query_keys = np.array([-1 if e is None else codes.get(e, -1) for e in excluded])
            found = frozen_nearest(
                self._vectors[: self._filled],
                units,
                held_added_at=self._added_at[: self._filled],
                query_times=query_times,
                ttl_ms=self._ttl_ms,
                held_keys=held_keys.astype(np.intp),
                query_keys=query_keys.astype(np.intp),
                tie_rank=self._sequence[: self._filled],
            )
            return self._as_nearest(found, list(held_ids))

    def max_cosine_similarity(self, query: ArrayLike) -> float:
        """The largest cosine similarity between ``query`` and any held vector; 0.0 when empty.

        Raises:
            VectorError: the query has the wrong length, or holds NaN or infinity.
        """
        found = self.nearest(query)
        return 0.0 if found is None else found.similarity

    def clear(self) -> None:
        """Forget every vector."""
        with self._lock:
            # Only filled slots are ever read; touching the rest would commit their memory.
            self._vectors[: self._filled] = 0.0
            self._ids = [None] * self._max_elements
            self._filled = 0
            self._next = 0

    def entries(self) -> Iterator[CachedVector]:
        """The live vectors (normalised), oldest first, with their ids and times."""
        with self._lock:
            order = np.argsort(self._sequence[: self._filled], kind="stable")
            live = self._live_mask() if self._ttl_ms else None
            snapshot = [
                CachedVector(
                    self._ids[slot], self._vectors[slot].copy(), float(self._added_at[slot])
                )
                for slot in (int(s) for s in order)
                if live is None or live[slot]
            ]
        return iter(snapshot)

    def restore(self, entry: CachedVector) -> None:
        """Hold a vector with the time it was first added (used when loading a saved cache).

        Raises:
            VectorError: the vector has the wrong length, or holds NaN or infinity.
        """
        with self._lock:
            self.add(entry.vector, id=entry.id)
            self._added_at[(self._next - 1) % self._max_elements] = entry.added_at_ms

    def save(self, path: str | Path, *, model_id: str | None = None) -> None:
        """Write the live vectors, their ids and times to ``path`` (``.npz``), atomically.

        The file is written beside ``path``, flushed to disk and renamed over it, so a crash
        never leaves half a cache behind; temporaries of saves that crashed are removed, and the
        file gets the mode the user's umask gives. ``model_id`` names the embedder that made the
        vectors: vectors of another model are not comparable, and :meth:`load` can refuse them.

        Raises:
            OutputError: the file cannot be created.
        """
        entries = list(self.entries())
        contents = CacheFileContents(
            model_id=model_id,
            dimensions=self._dimensions,
            max_elements=self._max_elements,
            ttl_ms=self._ttl_ms,
            ids=[entry.id for entry in entries],
            vectors=np.array([e.vector for e in entries], dtype=np.float32).reshape(
                len(entries), self._dimensions
            ),
            added_at=np.array([entry.added_at_ms for entry in entries], dtype=np.float64),
        )
        write_cache_file(Path(path), contents)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        expected_model_id: str | None = None,
        expected_dimensions: int | None = None,
        max_elements: int | None = None,
        ttl_ms: float | None = None,
        clock: Clock = wall_clock_ms,
    ) -> VectorCache:
        """Read a cache written by :meth:`save`.

        Whatever the file holds (truncated, empty, bit-flipped, another program's), the result
        is a valid cache or a :class:`~knowledgepulse.errors.CacheFileError`.

        Args:
            path: the ``.npz`` file.
            expected_model_id: refuse a cache whose vectors another model made.
            expected_dimensions: refuse a cache of another vector length.
            max_elements: the loaded cache's bound (default: the saved one); the newest
                vectors are kept when it is smaller.
            ttl_ms: the loaded cache's TTL (default: the saved one).
            clock: the loaded cache's clock.

        Raises:
            CacheFileError: the file is missing, not a cache, damaged, or does not fit the
                expectations; the message names the file, the fault and the fix.
            ScorerParameterError: ``max_elements`` or ``ttl_ms`` is not a valid setting.
        """
        if max_elements is not None:
            positive_int(max_elements, "max_elements")
        ttl_ms = optional_duration_ms(ttl_ms, "ttl_ms")
        saved = read_cache_file(Path(path))
        if expected_model_id is not None and saved.model_id != expected_model_id:
            raise CacheFileError(
                f"{path}: the cache holds vectors of model {saved.model_id!r}, but the embedder "
                f"is {expected_model_id!r}; their similarities mean nothing together. Use "
                "another cache file, or delete this one to start a fresh cache"
            )
        if expected_dimensions is not None and saved.dimensions != expected_dimensions:
            raise CacheFileError(
                f"{path}: the cache holds {saved.dimensions}-dimensional vectors, but the "
                f"embedder makes {expected_dimensions}-dimensional ones; {FRESH_START}"
            )
        try:
            cache = cls(
                max_elements=max_elements or saved.max_elements,
                dimensions=saved.dimensions,
                ttl_ms=ttl_ms if ttl_ms is not None else saved.ttl_ms,
                clock=clock,
            )
        except ScorerParameterError as error:
            if max_elements is not None:
                raise
            raise CacheFileError(
                f"{path}: the vector cache is damaged or too large to load: {error}; {FRESH_START}"
            ) from None
        cache._fill(saved.ids, saved.vectors, saved.added_at)
        return cache

    def _fill(
        self,
        ids: list[str | None],
        vectors: NDArray[np.float32],
        added_at: NDArray[np.float64],
    ) -> None:
        """Hold saved vectors (oldest first) with their times, keeping the newest that fit."""
        first = max(0, len(ids) - self._max_elements)
        kept = zip(ids[first:], vectors[first:], added_at[first:], strict=True)
        for entry_id, vector, added in kept:
            self.restore(CachedVector(entry_id, vector, float(added)))

    def _live_mask(self) -> NDArray[np.bool_]:
        """Which filled slots are younger than the TTL (call with the lock held, TTL set)."""
        assert self._ttl_ms is not None
        return np.asarray(self._added_at[: self._filled] > self._clock() - self._ttl_ms)

    def _unit(self, vector: ArrayLike, what: str) -> NDArray[np.float32]:
        """The vector as float32 of unit length (a zero vector stays zero), or a VectorError."""
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self._dimensions,):
            raise VectorError(
                f"the {what} has shape {array.shape}; this cache holds vectors of "
                f"{self._dimensions} dimensions (shape ({self._dimensions},))"
            )
        if not np.isfinite(array).all():
            raise VectorError(f"the {what} holds NaN or infinite values; embeddings must be finite")
        # The batch methods normalise with the same function, so both give the same bits.
        unit: NDArray[np.float32] = unit_rows(array[None, :])[0]
        return unit

    def _units(self, vectors: ArrayLike, what: str) -> NDArray[np.float32]:
        """The rows as float32 unit vectors, or a VectorError naming the first bad row."""
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[1] != self._dimensions:
            raise VectorError(
                f"the {what} have shape {array.shape}; this cache holds vectors of "
                f"{self._dimensions} dimensions (shape (n, {self._dimensions}))"
            )
        finite = np.isfinite(array).all(axis=1)
        if not finite.all():
            row = int(np.argmin(finite))
            raise VectorError(
                f"the {what} hold NaN or infinite values (row {row}); embeddings must be finite"
            )
        return unit_rows(array)

    @staticmethod
    def _batch_ids(ids: Sequence[str | None] | None, count: int) -> list[str | None]:
        names: list[str | None] = [None] * count if ids is None else list(ids)
        if len(names) != count:
            raise VectorError(f"{len(names)} ids were given for {count} vectors; give one each")
        return names

    def _append(
        self, units: NDArray[np.float32], ids: list[str | None], times: NDArray[np.float64]
    ) -> None:
        """Hold ``units`` as ``add`` would one by one (call with the lock held)."""
        count = len(units)
        kept = np.arange(max(0, count - self._max_elements), count)  # the rest are overwritten
        slots = (self._next + kept) % self._max_elements
        self._vectors[slots] = units[kept]
        self._added_at[slots] = times[kept]
        self._sequence[slots] = self._added + kept
        for slot, position in zip(slots.tolist(), kept.tolist(), strict=True):
            self._ids[slot] = ids[position]
        self._added += count
        self._next = (self._next + count) % self._max_elements
        self._filled = min(self._filled + count, self._max_elements)

    @staticmethod
    def _as_nearest(found: Neighbours, ids: list[str | None]) -> list[Nearest | None]:
        return [
            None if index < 0 else Nearest(ids[index], similarity)
            for index, similarity in zip(
                found.index.tolist(), found.similarity.tolist(), strict=True
            )
        ]
