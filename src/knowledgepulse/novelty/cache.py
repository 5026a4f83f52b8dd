"""``VectorCache``: the vectors novelty is measured against, scanned exactly with numpy.

Vectors are stored L2-normalised in one preallocated ``float32`` matrix used as a ring buffer,
so a query is a single matrix-vector product (1,000 x 384 is about 1.5 MB and a few tens of
microseconds) and the oldest vector is overwritten first when the cache is full. Each vector
keeps the id it was added with (the breakdown names the most similar earlier trace) and the time
it was added (for the TTL). Time comes from an injectable clock, in milliseconds.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from knowledgepulse.errors import CacheFileError, VectorError

Clock = Callable[[], float]
"""Returns the current time in milliseconds."""

DEFAULT_MAX_ELEMENTS = 1000
DEFAULT_DIMENSIONS = 384
CACHE_FILE_FORMAT = "knowledgepulse-vector-cache/1"


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
    """

    def __init__(
        self,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        dimensions: int = DEFAULT_DIMENSIONS,
        ttl_ms: float | None = None,
        *,
        clock: Clock = wall_clock_ms,
    ) -> None:
        if isinstance(max_elements, bool) or not isinstance(max_elements, int) or max_elements < 1:
            raise ValueError(f"max_elements must be a positive integer, got {max_elements!r}")
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise ValueError(f"dimensions must be a positive integer, got {dimensions!r}")
        if ttl_ms is not None and not (math.isfinite(ttl_ms) and ttl_ms > 0):
            raise ValueError(f"ttl_ms must be a positive number of milliseconds, got {ttl_ms!r}")
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

    def nearest(self, query: ArrayLike) -> Nearest | None:
        """The held vector most similar to ``query``, or ``None`` when nothing is held.

        A zero vector (query or held) has similarity 0 with everything. Exact ties go to the
        vector added first.

        Raises:
            VectorError: the query has the wrong length, or holds NaN or infinity.
        """
        unit = self._unit(query, "query")
        with self._lock:
            if self._filled == 0:
                return None
            similarities = self._vectors[: self._filled] @ unit
            if self._ttl_ms:
                live = self._live_mask()
                if not live.any():
                    return None
                similarities = np.where(live, similarities, -np.inf)
            best = float(similarities.max())
            ties = np.flatnonzero(similarities == best)
            slot = int(ties[np.argmin(self._sequence[ties])]) if len(ties) > 1 else int(ties[0])
            # Rounding can push the dot product of two unit vectors just past +-1.
            return Nearest(self._ids[slot], min(1.0, max(-1.0, best)))

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
            self._vectors.fill(0.0)
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

        The file is written next to ``path`` and renamed over it, so a crash never leaves half a
        cache behind. ``model_id`` names the embedder that made the vectors: vectors of another
        model are not comparable, and :meth:`load` can refuse them.
        """
        entries = list(self.entries())
        header = {
            "format": CACHE_FILE_FORMAT,
            "model_id": model_id,
            "dimensions": self._dimensions,
            "max_elements": self._max_elements,
            "ttl_ms": self._ttl_ms,
            "ids": [entry.id for entry in entries],
        }
        vectors = np.array([e.vector for e in entries], dtype=np.float32).reshape(
            len(entries), self._dimensions
        )
        added_at = np.array([entry.added_at_ms for entry in entries], dtype=np.float64)
        target = Path(path)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(
                    file, header=np.array(json.dumps(header)), vectors=vectors, added_at=added_at
                )
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

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

        Args:
            path: the ``.npz`` file.
            expected_model_id: refuse a cache whose vectors another model made.
            expected_dimensions: refuse a cache of another vector length.
            max_elements: the loaded cache's bound (default: the saved one); the newest
                vectors are kept when it is smaller.
            ttl_ms: the loaded cache's TTL (default: the saved one).
            clock: the loaded cache's clock.

        Raises:
            CacheFileError: the file is missing, not a cache, or does not fit the expectations.
        """
        header, vectors, added_at = _read_cache_file(Path(path))
        saved_model = header.get("model_id")
        if expected_model_id is not None and saved_model != expected_model_id:
            raise CacheFileError(
                f"{path}: the cache holds vectors of model {saved_model!r}, but the embedder is "
                f"{expected_model_id!r}; their similarities mean nothing together. Use another "
                "--cache file, or delete this one to start afresh"
            )
        dimensions = int(header["dimensions"])
        if expected_dimensions is not None and dimensions != expected_dimensions:
            raise CacheFileError(
                f"{path}: the cache holds {dimensions}-dimensional vectors, but the embedder "
                f"makes {expected_dimensions}-dimensional ones"
            )
        cache = cls(
            max_elements=max_elements or int(header["max_elements"]),
            dimensions=dimensions,
            ttl_ms=ttl_ms if ttl_ms is not None else header.get("ttl_ms"),
            clock=clock,
        )
        for entry_id, vector, added in zip(header["ids"], vectors, added_at, strict=True):
            cache.restore(CachedVector(entry_id, vector, float(added)))
        return cache

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
        # In float64, so tiny (subnormal) float32 vectors still have a direction.
        wide = array.astype(np.float64)
        norm = float(np.linalg.norm(wide))
        return array if norm == 0.0 else (wide / norm).astype(np.float32)


def _read_cache_file(path: Path) -> tuple[dict[str, Any], NDArray[np.float32], NDArray[np.float64]]:
    """The header, vectors and times of a saved cache, checked for consistency."""
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            vectors = np.asarray(data["vectors"], dtype=np.float32)
            added_at = np.asarray(data["added_at"], dtype=np.float64)
    except FileNotFoundError:
        raise CacheFileError(f"{path}: no such cache file") from None
    except (OSError, ValueError, KeyError) as error:
        raise CacheFileError(
            f"{path}: not a knowledgepulse vector cache ({error}); delete it to start afresh"
        ) from None
    if not isinstance(header, dict) or header.get("format") != CACHE_FILE_FORMAT:
        raise CacheFileError(
            f"{path}: not a knowledgepulse vector cache (expected format {CACHE_FILE_FORMAT!r})"
        )
    ids = header.get("ids")
    count = len(ids) if isinstance(ids, list) else -1
    if vectors.ndim != 2 or count != vectors.shape[0] or added_at.shape != (count,):
        raise CacheFileError(f"{path}: the cache file is damaged (its parts disagree in length)")
    return header, vectors, added_at
