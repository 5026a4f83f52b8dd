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
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import shutil
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.atomic import (
    fsync_path,
    new_file_mode,
    remove_stale_temporaries,
    temporary_beside,
)
from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.cache_file import FRESH_START
from knowledgepulse.novelty.ring_file import (
    COMMIT_OFFSETS,
    JOURNAL_HEADER_BYTES,
    PAGE,
    CommitHeader,
    JournalHeader,
    RingFormatError,
    RingLayout,
    Superblock,
    check_sequence,
    current_commit,
    decode_id,
    decode_journal,
    decode_superblock,
    encode_commit,
    encode_ids,
    encode_journal,
    encode_superblock,
    ring_slots,
)

Step = Callable[[str], None]
"""Called between the steps of a save with the step's name; tests inject crashes with it."""


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
        remove_stale_temporaries(path)
        try:
            free = shutil.disk_usage(path.parent if str(path.parent) else ".").free
            if free < layout.journal_offset:
                raise CacheFileError(
                    f"{path}: a cache of {layout.capacity} vectors needs "
                    f"{layout.journal_offset / 2**30:.2f} GiB and the disk has "
                    f"{free / 2**30:.2f} GiB free; give a smaller --cache-size or another disk"
                )
            descriptor, temporary = temporary_beside(path)
        except OSError as error:
            raise CacheFileError(f"{path}: cannot create the cache file ({error})") from None
        try:
            superblock = encode_superblock(Superblock(layout, model_id)).ljust(PAGE, b"\0")
            os.pwrite(descriptor, superblock, 0)
            for generation, offset in enumerate(COMMIT_OFFSETS):
                empty = CommitHeader(generation, 0, 0, 0, ttl_ms)
                os.pwrite(descriptor, encode_commit(empty), offset)
            os.ftruncate(descriptor, layout.journal_offset)
            os.close(descriptor)
            if vectors is not None and len(vectors):
                ring = cls(temporary, writable=True)
                try:
                    times = np.zeros(len(vectors)) if added_at is None else added_at
                    ring.commit(vectors, times, ids or [None] * len(vectors), ttl_ms=ttl_ms)
                finally:
                    ring.close()
            fsync_path(temporary)
            os.chmod(temporary, new_file_mode())
            if replace:
                os.replace(temporary, path)
            else:
                with contextlib.suppress(FileExistsError):
                    os.link(temporary, path)
        except OSError as error:
            raise CacheFileError(f"{path}: cannot write the cache file ({error})") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        fsync_path(path.parent if str(path.parent) else Path())

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
        chunk = self.layout.chunk
        for start, stop in self.live_slots(skip):
            for index in range(start // chunk, -(-stop // chunk)):
                generation = int(self.checksums[2 * index])
                if self._verified.get(index) == generation:
                    continue
                if self._chunk_crc(index) != int(self.checksums[2 * index + 1]):
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
            payload: list[NDArray[Any]] = [
                np.ascontiguousarray(vectors, dtype=np.float32),
                np.ascontiguousarray(added_at, dtype=np.float64),
                sequence,
                hashes,
                slots,
            ]
            crc = 0
            for part in payload:
                crc = zlib.crc32(part.data, crc)
            journal = JournalHeader(base.generation, first, count, new, crc)
            self._write(
                b"".join([encode_journal(journal), *(part.tobytes() for part in payload)]),
                layout.journal_offset,
            )
            os.fsync(self._fd)
            self.step("journal")
            self._apply(journal, payload)
            self.header = new
        except OSError as error:
            raise CacheFileError(
                f"{self.path}: the cache could not be saved ({error.strerror or error}); the file "
                "keeps its state before this save"
            ) from None
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        return new

    def _apply(self, journal: JournalHeader, payload: list[NDArray[Any]]) -> None:
        """Copy a durable journal's entries into their slots, then publish its header."""
        layout = self.layout
        offsets = [
            (layout.vectors_offset, layout.dimensions * 4),
            (layout.added_at_offset, 8),
            (layout.sequence_offset, 8),
            (layout.hash_offset, 8),
            (layout.ids_offset, layout.id_bytes),
        ]
        runs = ring_slots(journal.first_slot, journal.entries, layout.capacity)
        for (offset, width), part in zip(offsets, payload, strict=True):
            done = 0
            for start, stop in runs:
                self._write(part[done : done + stop - start].tobytes(), offset + start * width)
                done += stop - start
            self.step("region")
        chunk = layout.chunk
        touched = sorted({i for a, b in runs for i in range(a // chunk, -(-b // chunk))})
        generation = journal.commit.generation
        for index in touched:
            pair = np.array([generation, self._chunk_crc(index)], dtype=np.uint64)
            self._write(pair.tobytes(), layout.checksums_offset + 16 * index)
        os.fsync(self._fd)
        self.step("slots")
        self._write(encode_commit(journal.commit), COMMIT_OFFSETS[generation % 2])
        os.fsync(self._fd)
        self.step("header")
        os.ftruncate(self._fd, layout.journal_offset)

    def _replay(self) -> bool:
        """Finish a save whose journal is durable (exclusive lock held); whether there was one."""
        layout = self.layout
        size = os.fstat(self._fd).st_size
        if size <= layout.journal_offset:
            return False
        journal = decode_journal(
            os.pread(self._fd, JOURNAL_HEADER_BYTES, layout.journal_offset), layout
        )
        base = self.header
        stale = (
            journal is None
            or journal.base_generation != base.generation
            or journal.commit.generation != base.generation + 1
        )
        payload: list[NDArray[Any]] = []
        if journal is not None and not stale:
            entries = journal.entries
            raw = os.pread(
                self._fd, entries * layout.entry_bytes, layout.journal_offset + JOURNAL_HEADER_BYTES
            )
            if len(raw) == entries * layout.entry_bytes and zlib.crc32(raw) == journal.payload_crc:
                buffer, at = memoryview(raw), 0
                shapes = [
                    (np.float32, (entries, layout.dimensions)),
                    (np.float64, (entries,)),
                    (np.int64, (entries,)),
                    (np.uint64, (entries,)),
                    (np.uint8, (entries, layout.id_bytes)),
                ]
                for dtype, shape in shapes:
                    part = np.frombuffer(buffer, dtype, int(np.prod(shape)), at).reshape(shape)
                    payload.append(part)
                    at += part.nbytes
        if not payload or journal is None:
            if self.writable:
                os.ftruncate(self._fd, layout.journal_offset)  # a save that never became durable
            return False
        if not self.writable:
            raise CacheFileError(
                f"{self.path}: a save into this cache was interrupted and must be finished by a "
                "process that may write the file; open it once with write permission (for "
                "example kp score --cache without --frozen)"
            )
        self._apply(journal, payload)
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

    def _chunk_crc(self, index: int) -> int:
        chunk = self.layout.chunk
        start, stop = index * chunk, min(self.layout.capacity, (index + 1) * chunk)
        crc = 0
        for region in (self.vectors, self.added_at, self.sequence, self.hashes, self.ids):
            crc = zlib.crc32(np.ascontiguousarray(region[start:stop]).data, crc)
        return crc

    def _write(self, data: bytes, offset: int) -> None:
        view, done = memoryview(data), 0
        while done < len(view):
            done += os.pwrite(self._fd, view[done:], offset + done)
