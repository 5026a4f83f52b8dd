"""Where a :class:`~.vector_cache.VectorCache` holds its vectors: in memory, or in a ring file.

``MemoryRing`` is a ring buffer of preallocated arrays; ``FileRing`` is a memory-mapped ring
file's last save (:mod:`.ring_file`) followed by the vectors added since, held in a
``MemoryRing`` until the next save. Both give the vectors oldest first, with their ids and the
times they were added, for the cache's scans.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.cache.ring_file import CommitHeader, RingFile, ring_slots

SAME_VECTOR = 1e-5
"""The largest difference of any component of two unit vectors that are one vector: a trace
embedded again (another batch size, worker count) may differ in float rounding, never this much
once its text changed."""


def same_vector(one: NDArray[np.floating[Any]], other: NDArray[np.float32]) -> bool:
    """Whether two unit vectors are one vector, within :data:`SAME_VECTOR`."""
    return bool(np.abs(np.asarray(one, dtype=np.float32) - other).max() <= SAME_VECTOR)


class MemoryRing:
    """Vectors in preallocated arrays used as a ring buffer (pages are touched only once used)."""

    def __init__(self, capacity: int, dimensions: int) -> None:
        self.capacity = capacity
        self.vectors = np.zeros((capacity, dimensions), dtype=np.float32)
        self.added_at = np.zeros(capacity, dtype=np.float64)
        self.ids: list[str | None] = [None] * capacity
        self.count = 0  # how many slots hold vectors
        self.next = 0  # the slot the next vector goes to (the oldest once full)

    def view(self) -> contextlib.nullcontext[None]:
        """Nothing to lock or refresh in memory."""
        return contextlib.nullcontext()

    def _runs(self) -> list[tuple[int, int]]:
        return ring_slots(self.next - self.count, self.count, self.capacity)

    def parts(self) -> tuple[list[NDArray[np.float32]], list[NDArray[np.float64]]]:
        """The held vectors, oldest first, as views, and when each was added (ms)."""
        runs = self._runs() or [(0, 0)]
        return [self.vectors[a:b] for a, b in runs], [self.added_at[a:b] for a, b in runs]

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
        """Forget every vector (a slot is read only once refilled)."""
        self.ids = [None] * self.capacity
        self.count = 0
        self.next = 0


class FileRing:
    """A ring file's last save, followed by the vectors added since (in memory until saved)."""

    def __init__(self, ring: RingFile) -> None:
        self.ring, self.capacity = ring, ring.layout.capacity
        self.pending = MemoryRing(self.capacity, ring.layout.dimensions)
        self.pending_total = 0  # added since the last save, including those evicted since
        self.cleared = False
        self._first_scan: tuple[int, int] | None = None  # (file's added, ring's own) then
        self.saved_meanwhile = 0
        """Vectors other processes saved into the file between this store's first scan and its
        last (:attr:`CacheCounts.saved_meanwhile`)."""

    def scanned(self) -> None:
        """Note the file's state a scan sees (view held): what others saved since the first."""
        ring = self.ring
        if self._first_scan is None:
            self._first_scan = (ring.header.added, ring.advanced)
            return
        added, own = self._first_scan
        # A file replaced meanwhile restarts its count: nothing can be said then.
        others = ring.header.added - added - (ring.advanced - own)
        self.saved_meanwhile = max(self.saved_meanwhile, others)

    @property
    def _skip(self) -> int:
        """How many of the file's live vectors those added since evicted (all, once cleared)."""
        held = 0 if self.cleared else self.ring.header.count
        return min(held, max(0, held + self.pending_total - self.capacity))

    @property
    def _file_kept(self) -> int:
        return (0 if self.cleared else self.ring.header.count) - self._skip

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

    def parts(self) -> tuple[list[NDArray[np.float32]], list[NDArray[np.float64]]]:
        """As :meth:`MemoryRing.parts`: the file's live slots, then the unsaved vectors."""
        runs, (vectors, times) = self._runs(), self.pending.parts()
        return (
            [*(self.ring.vectors[a:b] for a, b in runs), *vectors],
            [*(self.ring.added_at[a:b] for a, b in runs), *times],
        )

    def id_at(self, index: int) -> str | None:
        """The id of the ``index``-th oldest vector."""
        kept = self._file_kept
        if index >= kept:
            return self.pending.id_at(index - kept)
        # The file's own capacity: a file replaced by one of another size is reopened as it is.
        slot = (self.ring.header.head - kept + index) % self.ring.layout.capacity
        return self.ring.id_at(slot)

    def codes(self, wanted: dict[str | None, int]) -> NDArray[np.intp]:
        """As :meth:`MemoryRing.codes`, finding the file's slots by id hash."""
        held = np.full(self.count, -1, dtype=np.intp)
        if runs := self._runs():
            for slot, name in self.ring.slots_holding(wanted, runs):
                # The runs wrap at most once: a slot's place is its distance from the first.
                held[(slot - runs[0][0]) % self.ring.layout.capacity] = wanted[name]
        held[self._file_kept :] = self.pending.codes(wanted)
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

    def commit(self, ttl_ms: float | None) -> int:
        """Save the vectors added since the last save into the file, atomically.

        Returns how many of them another process had saved meanwhile (not appended again).
        """
        pending = self.pending
        vectors, times = pending.parts()
        ids = [pending.id_at(i) for i in range(pending.count)]
        dropped = self.pending_total - pending.count
        appended = self.ring.commit(
            np.concatenate(vectors),
            np.concatenate(times),
            ids,
            dropped=dropped,
            clear=self.cleared,
            ttl_ms=ttl_ms,
            keep=functools.partial(self._not_saved, dropped=dropped, ttl_ms=ttl_ms),
        )
        pending.clear()
        self.pending_total = 0
        self.cleared = False
        return len(ids) - appended

    def _not_saved(
        self,
        base: CommitHeader,
        vectors: NDArray[np.float32],
        times: NDArray[np.float64],
        ids: list[str | None],
        *,
        dropped: int,
        ttl_ms: float | None,
    ) -> NDArray[np.bool_]:
        """Which entries the file does not hold yet under their id (exclusive lock held).

        Another process may have saved the same traces since this one read the file (two runs
        scoring one file at once): their vectors are not appended a second time.
        """
        kept = np.ones(len(ids), dtype=bool)
        wanted = {name for name in ids if name is not None}
        if self.cleared or not wanted:
            return kept
        # The file's slots that outlive this save, as if every entry were appended.
        skip = max(0, base.count + len(ids) + dropped - self.ring.layout.capacity)
        ring = self.ring
        ring.verify(skip)
        slots_of: dict[str | None, list[int]] = {}
        for slot, found in ring.slots_holding(wanted, ring.live_slots(skip)):
            slots_of.setdefault(found, []).append(slot)
        for row, name in enumerate(ids):
            for slot in slots_of.get(name, []) if name is not None else []:
                if ttl_ms and ring.added_at[slot] <= times[row] - ttl_ms:
                    continue  # expired by the time this one was added
                if same_vector(ring.vectors[slot], vectors[row]):
                    kept[row] = False
                    break
        return kept
