"""A ring file on disk: mapped, locked, committed through a journal (format: :mod:`.ring_file`).

Locking (``fcntl.flock`` on the file itself): every read of the mapped slots happens under a
shared lock, every save under an exclusive one. A reader therefore sees the state of the last
save that finished before its scan began, never one in progress; a save waits for the scans in
progress (each is one batch) and scans wait for a save. Two writers never hold the lock at once:
the second waits, then appends its new vectors after the first's (each save re-reads the state).

A save (:meth:`RingFile.commit`) survives ``kill -9`` at any moment: (1) the new entries and the
header they lead to are written past the regions as a journal and fsynced; (2) they are copied
into their slots and the touched chunks re-checksummed, fsynced; (3) the new header is written
to the commit slot the current one is not in, fsynced; (4) the journal is cut off. Killed before
(1) is durable, the journal fails its checksum and the file is as before the save; killed after,
the next open replays the journal (whatever (2) had done) and the file is as after it.

This module holds the mapping, the lock and the order of those steps; the steps' I/O is
:mod:`.ring_journal`, and making a new file :mod:`.ring_create`.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.cache_file import FRESH_START
from knowledgepulse.novelty.ring_create import create_ring_file
from knowledgepulse.novelty.ring_file import (
    COMMIT_OFFSETS,
    PAGE,
    CommitHeader,
    RingFormatError,
    RingLayout,
    check_sequence,
    current_commit,
    decode_id,
    decode_superblock,
    encode_ids,
    ring_slots,
)
from knowledgepulse.novelty.ring_journal import (
    Payload,
    Step,
    apply_journal,
    chunk_crc,
    read_journal,
    write_journal,
)

__all__ = ["RingFile", "Step"]


def _no_step(name: str) -> None:
    del name


class RingFile:
    """An open ring file: its mapping, its current header, and saves into it.

    Use :meth:`create` and :meth:`open`; read under :meth:`reading`; save with :meth:`commit`.
    """

    def __init__(self, path: Path, *, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self.step: Step = _no_step
        self._fd = -1
        self._map: mmap.mmap | None = None
        self._verified: dict[int, int] = {}
        self._open()

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: Path,
        layout: RingLayout,
        *,
        model_id: str | None,
        ttl_ms: float | None,
        replace: bool = False,
        vectors: NDArray[np.float32] | None = None,
        added_at: NDArray[np.float64] | None = None,
        ids: list[str | None] | None = None,
    ) -> None:
        """Make a ring file at ``path`` atomically, holding the given entries (oldest first).

        Without ``replace``, a file another process made at ``path`` meanwhile is kept.

        Raises:
            CacheFileError: the directory is not writable or the disk too full for the file.
        """

        def fill(temporary: Path) -> None:
            assert vectors is not None  # only passed when there are vectors
            ring = cls(temporary, writable=True)
            try:
                times = np.zeros(len(vectors)) if added_at is None else added_at
                ring.commit(vectors, times, ids or [None] * len(vectors), ttl_ms=ttl_ms)
            finally:
                ring.close()

        create_ring_file(
            path,
            layout,
            model_id=model_id,
            ttl_ms=ttl_ms,
            replace=replace,
            fill=fill if vectors is not None and len(vectors) else None,
        )

    def _open(self) -> None:
        try:
            self._fd = os.open(self.path, os.O_RDWR if self.writable else os.O_RDONLY)
        except FileNotFoundError:
            raise CacheFileError(f"{self.path}: no such cache file") from None
        except OSError as error:
            raise CacheFileError(
                f"{self.path}: cannot open the cache file ({error.strerror or error}); check its "
                "permissions, or give another cache file"
            ) from None
        try:
            self.superblock = decode_superblock(os.pread(self._fd, PAGE, 0))
            self.layout = self.superblock.layout
            size = os.fstat(self._fd).st_size
            if size < self.layout.journal_offset:
                raise RingFormatError(
                    f"it is truncated: {size} bytes, its layout needs {self.layout.journal_offset}"
                )
            self._map = mmap.mmap(self._fd, self.layout.journal_offset, access=mmap.ACCESS_READ)
        except RingFormatError as error:
            self.close()
            raise self.damaged(str(error)) from None
        layout = self.layout
        cap, buffer = layout.capacity, self._map
        self.vectors = np.frombuffer(
            buffer, np.float32, cap * layout.dimensions, layout.vectors_offset
        ).reshape(cap, layout.dimensions)
        self.added_at = np.frombuffer(buffer, np.float64, cap, layout.added_at_offset)
        self.sequence = np.frombuffer(buffer, np.int64, cap, layout.sequence_offset)
        self.hashes = np.frombuffer(buffer, np.uint64, cap, layout.hash_offset)
        self.ids = np.frombuffer(
            buffer, np.uint8, cap * layout.id_bytes, layout.ids_offset
        ).reshape(cap, layout.id_bytes)
        self.checksums = np.frombuffer(
            buffer, np.uint64, 2 * layout.chunks, layout.checksums_offset
        )
        self.header = CommitHeader(-1, 0, 0, 0, None)
        self._verified = {}
        with self.reading():
            pass

    def close(self) -> None:
        """Unmap and close (a later use raises)."""
        for name in ("vectors", "added_at", "sequence", "hashes", "ids", "checksums"):
            self.__dict__.pop(name, None)
        if self._map is not None:
            with contextlib.suppress(BufferError):  # views still held elsewhere: GC unmaps
                self._map.close()
            self._map = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def damaged(self, what: str) -> CacheFileError:
        """The error for damage found in this file."""
        return CacheFileError(f"{self.path}: the vector cache is damaged: {what}; {FRESH_START}")

    # --- reading --------------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[CommitHeader]:
        """Hold the shared lock, with the header of the last finished save (replayed if cut)."""
        self._lock(fcntl.LOCK_SH)
        try:
            yield self._refresh()
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def live_slots(self, skip: int = 0) -> list[tuple[int, int]]:
        """The live slots, oldest first, as runs, leaving out the ``skip`` oldest."""
        header = self.header
        count = max(0, header.count - skip)
        return ring_slots(header.oldest + header.count - count, count, self.layout.capacity)

    def id_at(self, slot: int) -> str | None:
        """The id in ``slot`` (its chunk checked by :meth:`verify`)."""
        try:
            return decode_id(self.ids[slot])
        except RingFormatError as error:
            raise self.damaged(str(error)) from None

    def verify(self, skip: int = 0) -> None:
        """Check the checksum of every chunk with a live slot, once per save that wrote it."""
        chunk, regions = self.layout.chunk, self._regions()
        for start, stop in self.live_slots(skip):
            for index in range(start // chunk, -(-stop // chunk)):
                generation = int(self.checksums[2 * index])
                if self._verified.get(index) == generation:
                    continue
                if chunk_crc(regions, self.layout, index) != int(self.checksums[2 * index + 1]):
                    raise self.damaged(f"slots {index * chunk}.. fail their checksum")
                self._verified[index] = generation

    # --- saving ---------------------------------------------------------------------------

    def commit(
        self,
        vectors: NDArray[np.float32],
        added_at: NDArray[np.float64],
        ids: list[str | None],
        *,
        dropped: int = 0,
        clear: bool = False,
        ttl_ms: float | None = None,
    ) -> CommitHeader:
        """Append entries (oldest first) after whatever the file holds now, atomically.

        ``dropped`` counts entries added before these that the ring would already have
        evicted; ``clear`` forgets what the file holds first.

        Raises:
            CacheFileError: the file is read-only, damaged, or the disk is full.
        """
        if not self.writable:
            raise CacheFileError(f"{self.path}: opened read-only; it cannot be saved into")
        layout = self.layout
        count = len(vectors)
        try:
            slots, hashes = encode_ids(ids, layout.id_bytes)
        except RingFormatError as error:
            raise CacheFileError(f"{self.path}: {error}") from None
        self._lock(fcntl.LOCK_EX)
        try:
            base = self._refresh(fcntl.LOCK_EX)
            total = count + dropped
            added = base.added + total
            head = (base.head + total) % layout.capacity
            live = min((0 if clear else base.count) + total, layout.capacity)
            new = CommitHeader(base.generation + 1, head, live, added, ttl_ms)
            first = (head - count) % layout.capacity
            sequence = np.arange(added - count, added, dtype=np.int64)
            payload: Payload = [
                np.ascontiguousarray(vectors, dtype=np.float32),
                np.ascontiguousarray(added_at, dtype=np.float64),
                sequence,
                hashes,
                slots,
            ]
            journal = write_journal(self._fd, layout, payload, base=base, first_slot=first, new=new)
            self.step("journal")
            apply_journal(
                self._fd, layout, journal, payload, regions=self._regions(), step=self.step
            )
            self.header = new
        except OSError as error:
            raise CacheFileError(
                f"{self.path}: the cache could not be saved ({error.strerror or error}); the file "
                "keeps its state before this save"
            ) from None
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        return new

    def _replay(self) -> bool:
        """Finish a save whose journal is durable (exclusive lock held); whether there was one."""
        layout = self.layout
        size = os.fstat(self._fd).st_size
        if size <= layout.journal_offset:
            return False
        found = read_journal(self._fd, layout, self.header)
        if found is None:
            if self.writable:
                os.ftruncate(self._fd, layout.journal_offset)  # a save that never became durable
            return False
        if not self.writable:
            raise CacheFileError(
                f"{self.path}: a save into this cache was interrupted and must be finished by a "
                "process that may write the file; open it once with write permission (for "
                "example kp score --cache without --frozen)"
            )
        apply_journal(self._fd, layout, *found, regions=self._regions(), step=self.step)
        return True

    # --- machinery ------------------------------------------------------------------------

    def _lock(self, kind: int) -> None:
        """Take the lock on the file now at ``path`` (a replaced file is reopened first)."""
        while True:
            fcntl.flock(self._fd, kind)
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                raise CacheFileError(
                    f"{self.path}: the cache file was deleted while in use"
                ) from None
            mine = os.fstat(self._fd)
            if (current.st_ino, current.st_dev) == (mine.st_ino, mine.st_dev):
                return
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self.close()
            self._open()

    def _refresh(self, kind: int = fcntl.LOCK_SH) -> CommitHeader:
        """Read the current header under the lock; replay a cut save; check the sequence."""
        try:
            if self._journal_pending():
                self._recover(kind)
            slots = [os.pread(self._fd, 64, offset) for offset in COMMIT_OFFSETS]
            header = current_commit(slots, self.layout)
        except RingFormatError as error:
            raise self.damaged(str(error)) from None
        if header != self.header:
            self.header = header
            try:
                runs = self.live_slots()
                check_sequence(
                    np.concatenate([self.sequence[a:b] for a, b in runs] or [self.sequence[:0]]),
                    header,
                )
            except RingFormatError as error:
                self.header = CommitHeader(-1, 0, 0, 0, None)
                raise self.damaged(str(error)) from None
        return self.header

    def _journal_pending(self) -> bool:
        return os.fstat(self._fd).st_size > self.layout.journal_offset

    def _recover(self, kind: int) -> None:
        """Replay under the exclusive lock, then go back to the lock held before."""
        if kind != fcntl.LOCK_EX:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            slots = [os.pread(self._fd, 64, offset) for offset in COMMIT_OFFSETS]
            self.header = current_commit(slots, self.layout)
            self._replay()
        finally:
            self.header = CommitHeader(-1, 0, 0, 0, None)
            if kind != fcntl.LOCK_EX:
                fcntl.flock(self._fd, kind)

    def _regions(self) -> tuple[NDArray[Any], ...]:
        """The mapped regions a chunk's checksum covers, in the journal's order."""
        return (self.vectors, self.added_at, self.sequence, self.hashes, self.ids)
