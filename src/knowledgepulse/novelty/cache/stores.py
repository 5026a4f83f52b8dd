"""Where a ``VectorCache`` keeps its vectors: in memory, or a ring file and the unsaved ones.

Both show the held vectors oldest first as a few contiguous parts (a ring's two halves; a file's
live slots, then the vectors added since the last save), which a scan reads in place.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.cache.ring_file import RingFile, id_hash, ring_slots, stored_id


class MemoryRing:
    """Vectors in preallocated arrays used as a ring buffer (pages are touched only once used)."""

    def __init__(self, capacity: int, dimensions: int) -> None:
        self.capacity = capacity
        self.vectors = np.zeros((capacity, dimensions), dtype=np.float32)
        self.added_at = np.zeros(capacity, dtype=np.float64)
        self.ids: list[str | None] = [None] * capacity
        self.count = 0  # how many slots hold vectors
        self.next = 0  # the slot the next vector goes to (the oldest once full)

    @contextlib.contextmanager
    def view(self) -> Iterator[None]:
        """Nothing to lock or refresh in memory."""
        yield

    def _runs(self) -> list[tuple[int, int]]:
        return ring_slots(self.next - self.count, self.count, self.capacity)

    def vector_parts(self) -> list[NDArray[np.float32]]:
        """The held vectors, oldest first, as views."""
        return [self.vectors[a:b] for a, b in self._runs()] or [self.vectors[:0]]

    def time_parts(self) -> list[NDArray[np.float64]]:
        """When each was added (ms), as :meth:`vector_parts`."""
        return [self.added_at[a:b] for a, b in self._runs()] or [self.added_at[:0]]

    def id_at(self, index: int) -> str | None:
        """The id of the ``index``-th oldest vector."""
        return self.ids[(self.next - self.count + index) % self.capacity]

    def codes(self, wanted: dict[str | None, int]) -> NDArray[np.intp]:
        """Per held vector, oldest first, the code ``wanted`` gives its id (``-1``: none)."""
        held = np.full(self.count, -1, dtype=np.intp)
        if not wanted.keys().isdisjoint(self.ids):  # a slot holds a live vector's id, or None
            held[:] = [wanted.get(i, -1) for a, b in self._runs() for i in self.ids[a:b]]
        return held

    def append(
        self, units: NDArray[np.float32], ids: list[str | None], times: NDArray[np.float64]
    ) -> None:
        """Hold ``units`` (oldest first), overwriting the oldest when full."""
        count = len(units)
        kept = np.arange(max(0, count - self.capacity), count)  # the rest are overwritten
        slots = (self.next + kept) % self.capacity
        self.vectors[slots] = units[kept]
        self.added_at[slots] = times[kept]
        for slot, position in zip(slots.tolist(), kept.tolist(), strict=True):
            self.ids[slot] = ids[position]
        self.next = (self.next + count) % self.capacity
        self.count = min(self.count + count, self.capacity)

    def clear(self) -> None:
        """Forget every vector."""
        # Only filled slots are ever read; touching the rest would commit their memory.
        for a, b in self._runs():
            self.vectors[a:b] = 0.0
        self.ids = [None] * self.capacity
        self.count = 0
        self.next = 0


class FileRing:
    """A ring file's last save, followed by the vectors added since (in memory until saved)."""

    def __init__(self, ring: RingFile) -> None:
        self.ring = ring
        layout = ring.layout
        self.capacity = layout.capacity
        self.pending = MemoryRing(layout.capacity, layout.dimensions)
        self.pending_total = 0  # added since the last save, including those evicted since
        self.cleared = False

    @property
    def _file_kept(self) -> int:
        held = 0 if self.cleared else self.ring.header.count
        return max(0, held - max(0, held + self.pending_total - self.capacity))

    @property
    def _skip(self) -> int:
        return (0 if self.cleared else self.ring.header.count) - self._file_kept

    @property
    def count(self) -> int:
        """How many vectors are held (valid inside :meth:`view`)."""
        return self._file_kept + self.pending.count

    @contextlib.contextmanager
    def view(self) -> Iterator[None]:
        """Hold the file's shared lock, on its latest save, its live chunks checked."""
        with self.ring.reading():
            if not self.cleared:
                self.ring.verify(self._skip)
            yield

    def _runs(self) -> list[tuple[int, int]]:
        return [] if self.cleared else self.ring.live_slots(self._skip)

    def vector_parts(self) -> list[NDArray[np.float32]]:
        """The held vectors, oldest first, as views."""
        return [*(self.ring.vectors[a:b] for a, b in self._runs()), *self.pending.vector_parts()]

    def time_parts(self) -> list[NDArray[np.float64]]:
        """When each was added (ms), as :meth:`vector_parts`."""
        return [*(self.ring.added_at[a:b] for a, b in self._runs()), *self.pending.time_parts()]

    def id_at(self, index: int) -> str | None:
        """The id of the ``index``-th oldest vector."""
        kept = self._file_kept
        if index >= kept:
            return self.pending.id_at(index - kept)
        return self.ring.id_at((self.ring.header.head - kept + index) % self.capacity)

    def codes(self, wanted: dict[str | None, int]) -> NDArray[np.intp]:
        """As :meth:`MemoryRing.codes`, finding the file's slots by id hash."""
        stored = {stored_id(e, self.ring.layout.id_bytes): code for e, code in wanted.items()}
        hashes = np.array([id_hash(e) for e in stored], dtype=np.uint64)
        held = np.full(self.count, -1, dtype=np.intp)
        offset = 0
        for a, b in self._runs():
            for slot in np.flatnonzero(np.isin(self.ring.hashes[a:b], hashes)).tolist():
                held[offset + slot] = stored.get(self.ring.id_at(a + slot), -1)
            offset += b - a
        held[offset:] = self.pending.codes(wanted)
        return held

    def append(
        self, units: NDArray[np.float32], ids: list[str | None], times: NDArray[np.float64]
    ) -> None:
        """Hold vectors until the next save."""
        self.pending.append(units, ids, times)
        self.pending_total += len(units)

    def clear(self) -> None:
        """Forget every vector (the file forgets them at the next save)."""
        self.pending.clear()
        self.pending_total = 0
        self.cleared = True

    def commit(self, ttl_ms: float | None) -> None:
        """Save the vectors added since the last save into the file, atomically."""
        pending = self.pending
        vectors = np.concatenate(pending.vector_parts())
        times = np.concatenate(pending.time_parts())
        ids = [pending.id_at(i) for i in range(pending.count)]
        self.ring.commit(
            vectors,
            times,
            ids,
            dropped=self.pending_total - pending.count,
            clear=self.cleared,
            ttl_ms=ttl_ms,
        )
        pending.clear()
        self.pending_total = 0
        self.cleared = False
