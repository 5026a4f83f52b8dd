"""``VectorCache``: the vectors novelty is measured against, scanned exactly with numpy.

Vectors are stored L2-normalised in a ring buffer: in memory (:mod:`.cache_store`), or in a
memory-mapped ring file (:meth:`VectorCache.open`, :mod:`.cache_ring`) that opens without being
read and is scanned in blocks of bounded memory. The oldest vector is overwritten first when the
cache is full. Each vector keeps the id it was added with (the breakdown names the most similar
earlier trace) and the time it was added (for the TTL). Time comes from an injectable clock, in
milliseconds.

This class holds the state and the lock; the input checks are :mod:`.cache_input`, the
searches :mod:`.cache_search`, saving and loading :mod:`.cache_io` and :mod:`.cache_open`.

Similarities are the order-independent ones of :mod:`knowledgepulse.novelty.exact`, so the batch
methods (:meth:`VectorCache.nearest_then_add_many`, :meth:`VectorCache.nearest_many`), which
compute blocks of queries at once (:mod:`knowledgepulse.novelty.banded`), give the same bits as
one query at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from knowledgepulse._util.settings import optional_duration_ms, positive_int
from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.banded import BLOCK_BYTES
from knowledgepulse.novelty.cache_input import batch_ids, unit_matrix, unit_vector
from knowledgepulse.novelty.cache_io import load_cache, same_file, write_entries
from knowledgepulse.novelty.cache_open import open_cache
from knowledgepulse.novelty.cache_ring import RingFile
from knowledgepulse.novelty.cache_search import frozen_search, nearest_then_add
from knowledgepulse.novelty.cache_store import FileRing, MemoryRing, live_entries
from knowledgepulse.novelty.cache_types import CachedVector, Clock, Nearest, wall_clock_ms
from knowledgepulse.novelty.settings import (
    DEFAULT_DIMENSIONS,
    DEFAULT_MAX_ELEMENTS,
    MAX_CACHE_BYTES,
    check_cache_size,
)

# The shared values live in cache_types and settings; they stay importable from here, where
# they began.
__all__ = [
    "DEFAULT_DIMENSIONS",
    "DEFAULT_MAX_ELEMENTS",
    "MAX_CACHE_BYTES",
    "CachedVector",
    "Clock",
    "Nearest",
    "VectorCache",
    "check_cache_size",
    "wall_clock_ms",
]


class VectorCache:
    """A bounded set of embeddings with exact cosine search, oldest-first eviction and a TTL.

    Args:
        max_elements: how many vectors are held at most; adding one more evicts the oldest.
        dimensions: the length every vector must have.
        ttl_ms: if given, a vector older than this many milliseconds no longer counts anywhere
            (a topic revisited after the TTL is novel again).
        clock: the current time in milliseconds (default: wall-clock time); inject one in tests.
        block_bytes: the most memory one block of similarities takes while scanning; a large
            cache is scanned in slices, with the same answers.

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
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        positive_int(max_elements, "max_elements")
        positive_int(dimensions, "dimensions")
        positive_int(block_bytes, "block_bytes")
        ttl_ms = optional_duration_ms(ttl_ms, "ttl_ms")
        check_cache_size(max_elements, dimensions)
        self._setup(MemoryRing(max_elements, dimensions), dimensions, ttl_ms, clock, block_bytes)

    def _setup(
        self,
        store: MemoryRing | FileRing,
        dimensions: int,
        ttl_ms: float | None,
        clock: Clock,
        block_bytes: int,
    ) -> None:
        self._store = store
        self._max_elements = store.capacity
        self._dimensions = dimensions
        self._ttl_ms = ttl_ms
        self._clock = clock
        self._block_bytes = block_bytes
        self._lock = threading.RLock()
        self._path: Path | None = None  # the file flush() saves to
        self._model_id: str | None = None

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
    def path(self) -> Path | None:
        """The file this cache was opened from (:meth:`open`), which :meth:`flush` saves to."""
        return self._path

    @property
    def size(self) -> int:
        """How many vectors are held now (expired ones do not count)."""
        with self._lock, self._store.view():
            if not self._ttl_ms or self._store.count == 0:
                return self._store.count
            due = self._clock() - self._ttl_ms
            return sum(int(np.count_nonzero(part > due)) for part in self._store.time_parts())

    def __len__(self) -> int:
        return self.size

    def add(self, vector: ArrayLike, *, id: str | None = None) -> None:
        """Hold a vector (evicting the oldest when full).

        Raises:
            VectorError: the vector has the wrong length, or holds NaN or infinity.
        """
        unit = unit_vector(vector, self._dimensions, "vector")
        with self._lock:
            self._store.append(unit[None, :], [id], np.array([self._clock()], dtype=np.float64))

    def nearest(self, query: ArrayLike, *, exclude_id: str | None = None) -> Nearest | None:
        """The held vector most similar to ``query``, or ``None`` when nothing is held.

        A zero vector (query or held) has similarity 0 with everything. Exact ties go to the
        vector added first. ``exclude_id`` leaves out the vectors held under that id, so a trace
        scored against a cache that already holds it is not compared with itself.

        Raises:
            VectorError: the query has the wrong length, or holds NaN or infinity.
        """
        unit = unit_vector(query, self._dimensions, "query")
        with self._lock, self._store.view():
            if self._store.count == 0:
                return None
            return self._frozen(unit[None, :], [exclude_id])[0]

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
        units = unit_matrix(vectors, self._dimensions, "vectors")
        names = batch_ids(ids, len(units))
        with self._lock, self._store.view():
            return nearest_then_add(
                self._store,
                units,
                names,
                max_elements=self._max_elements,
                ttl_ms=self._ttl_ms,
                clock=self._clock,
                block_bytes=self._block_bytes,
            )

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
        units = unit_matrix(queries, self._dimensions, "queries")
        excluded = batch_ids(exclude_ids, len(units))
        with self._lock, self._store.view():
            if self._store.count == 0:
                return [None] * len(units)
            return self._frozen(units, excluded)

    def _frozen(
        self, units: NDArray[np.float32], excluded: list[str | None]
    ) -> list[Nearest | None]:
        """Frozen search (lock and view held, something held)."""
        return frozen_search(
            self._store,
            units,
            excluded,
            ttl_ms=self._ttl_ms,
            clock=self._clock,
            block_bytes=self._block_bytes,
        )

    def max_cosine_similarity(self, query: ArrayLike) -> float:
        """The largest cosine similarity between ``query`` and any held vector; 0.0 when empty.

        Raises:
            VectorError: the query has the wrong length, or holds NaN or infinity.
        """
        found = self.nearest(query)
        return 0.0 if found is None else found.similarity

    def clear(self) -> None:
        """Forget every vector (a file-backed cache forgets them at the next :meth:`flush`)."""
        with self._lock:
            self._store.clear()

    def entries(self) -> Iterator[CachedVector]:
        """The live vectors (normalised), oldest first, with their ids and times."""
        with self._lock, self._store.view():
            due = self._clock() - self._ttl_ms if self._ttl_ms else None
            snapshot = live_entries(self._store, due)
        return iter(snapshot)

    def restore(self, entry: CachedVector) -> None:
        """Hold a vector with the time it was first added (used when loading a saved cache).

        Raises:
            VectorError: the vector has the wrong length, or holds NaN or infinity.
        """
        unit = unit_vector(entry.vector, self._dimensions, "vector")
        with self._lock:
            self._store.append(unit[None, :], [entry.id], np.array([entry.added_at_ms]))

    def flush(self) -> None:
        """Save what was added since :meth:`open` or the last flush into the cache's own file.

        A ring file gets the new vectors appended in one atomic commit (after whatever other
        processes saved meanwhile); an ``.npz`` file is rewritten atomically.

        Raises:
            CacheFileError: the cache was not opened from a file, or the file cannot be saved.
            OutputError: an ``.npz`` file cannot be written.
        """
        with self._lock:
            if isinstance(self._store, FileRing):
                self._store.commit(self._ttl_ms)
            elif self._path is not None:
                self.save(self._path, model_id=self._model_id)
            else:
                raise CacheFileError(
                    "this cache was not opened from a file, so flush() has nowhere to save; "
                    "use save(path), or VectorCache.open(path)"
                )

    def close(self) -> None:
        """Release a ring file (unsaved additions are dropped: :meth:`flush` first)."""
        if isinstance(self._store, FileRing):
            self._store.ring.close()

    def __enter__(self) -> VectorCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def save(self, path: str | Path, *, model_id: str | None = None) -> None:
        """Write the live vectors, their ids and times to ``path``, atomically.

        The format follows the file: an ``.npz`` name, or an existing ``.npz`` cache, gets an
        ``.npz`` (written beside ``path``, flushed and renamed over it); any other path a ring
        file (see :meth:`open`), made the same way. Saving a cache opened from ``path`` is
        :meth:`flush`. ``model_id`` names the embedder that made the vectors: vectors of
        another model are not comparable, and :meth:`load` can refuse them.

        Raises:
            OutputError: the file cannot be created.
            CacheFileError: the ring file cannot be written.
        """
        target = Path(path)
        own_file = self._path if isinstance(self._store, FileRing) else None
        if own_file is not None and same_file(target, own_file):
            self.flush()
            return
        write_entries(
            target,
            list(self.entries()),
            dimensions=self._dimensions,
            max_elements=self._max_elements,
            ttl_ms=self._ttl_ms,
            model_id=model_id,
        )

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        model_id: str | None = None,
        dimensions: int | None = None,
        max_elements: int | None = None,
        ttl_ms: float | None = None,
        read_only: bool = False,
        clock: Clock = wall_clock_ms,
        block_bytes: int = BLOCK_BYTES,
    ) -> VectorCache:
        """A cache kept in the file at ``path``, made there if missing; :meth:`flush` saves it.

        A ring file (any name but ``*.npz``) is memory-mapped, not read: opening takes the
        same time for a thousand vectors or millions, and a scan reads it in blocks. Additions
        stay in memory until :meth:`flush`, which commits them atomically (see
        :mod:`knowledgepulse.novelty.cache_ring` for locking and crash safety). An ``.npz``
        cache (told by its content) is loaded whole, as :meth:`load` does, and rewritten by
        :meth:`flush`.

        Args:
            path: the cache file.
            model_id: the embedder that makes the vectors: a new file records it, an existing
                one must have been made by it.
            dimensions: the vectors' length: a new file needs it, an existing one must match.
            max_elements: the bound (default: the file's, or 1000 for a new file); a ring file
                of another capacity is rewritten with its newest vectors.
            ttl_ms: the TTL (default: the file's).
            read_only: only read (frozen scoring): no file is made, :meth:`flush` is refused.
            clock: the cache's clock.
            block_bytes: see the class.

        Raises:
            CacheFileError: the file is damaged, of another model or width, missing when
                ``read_only``, or cannot be made; the message names the file and the fix.
            ScorerParameterError: a setting out of range.
        """
        return open_cache(
            cls,
            Path(path),
            model_id=model_id,
            dimensions=dimensions,
            max_elements=max_elements,
            ttl_ms=ttl_ms,
            read_only=read_only,
            clock=clock,
            block_bytes=block_bytes,
        )

    @classmethod
    def _from_ring(
        cls, ring: RingFile, ttl_ms: float | None, clock: Clock, block_bytes: int
    ) -> VectorCache:
        cache = cls.__new__(cls)
        cache._setup(FileRing(ring), ring.layout.dimensions, ttl_ms, clock, block_bytes)
        cache._path = ring.path
        cache._model_id = ring.superblock.model_id
        return cache

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
        """Read a saved cache (``.npz`` or ring file, told apart by content) into memory.

        Whatever the file holds (truncated, empty, bit-flipped, another program's), the result
        is a valid cache or a :class:`~knowledgepulse.errors.CacheFileError`.

        Args:
            path: the cache file.
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
        return load_cache(
            cls,
            path,
            expected_model_id=expected_model_id,
            expected_dimensions=expected_dimensions,
            max_elements=max_elements,
            ttl_ms=ttl_ms,
            clock=clock,
        )
