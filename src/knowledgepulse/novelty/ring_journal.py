"""A ring file's journal: a save's entries written past the regions, then copied into their slots.

These functions do the I/O of steps (1) to (4) of a save (:mod:`.cache_ring` says why the order
makes a save survive ``kill -9``) on an open ring file's descriptor; the caller holds the
exclusive lock. The byte layout is :mod:`.ring_file`'s.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.ring_file import (
    COMMIT_OFFSETS,
    JOURNAL_HEADER_BYTES,
    CommitHeader,
    JournalHeader,
    RingLayout,
    decode_journal,
    encode_commit,
    encode_journal,
    ring_slots,
)

Step = Callable[[str], None]
"""Called between the steps of a save with the step's name; tests inject crashes with it."""

Payload = list[NDArray[Any]]
"""A save's entries as the five regions hold them: vectors, added_at, sequence, id hash, ids."""


def write_at(descriptor: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (``pwrite`` may write less than it was given)."""
    view, done = memoryview(data), 0
    while done < len(view):
        done += os.pwrite(descriptor, view[done:], offset + done)


def chunk_crc(regions: Sequence[NDArray[Any]], layout: RingLayout, index: int) -> int:
    """The CRC-32 of chunk ``index``'s slots across the five regions (as :data:`Payload`)."""
    chunk = layout.chunk
    start, stop = index * chunk, min(layout.capacity, (index + 1) * chunk)
    crc = 0
    for region in regions:
        crc = zlib.crc32(np.ascontiguousarray(region[start:stop]).data, crc)
    return crc


def write_journal(
    descriptor: int,
    layout: RingLayout,
    payload: Payload,
    *,
    base: CommitHeader,
    first_slot: int,
    new: CommitHeader,
) -> JournalHeader:
    """Step (1): the entries and the header they lead to, past the regions, fsynced."""
    crc = 0
    for part in payload:
        crc = zlib.crc32(part.data, crc)
    journal = JournalHeader(base.generation, first_slot, len(payload[0]), new, crc)
    write_at(
        descriptor,
        b"".join([encode_journal(journal), *(part.tobytes() for part in payload)]),
        layout.journal_offset,
    )
    os.fsync(descriptor)
    return journal


def read_journal(
    descriptor: int, layout: RingLayout, base: CommitHeader
) -> tuple[JournalHeader, Payload] | None:
    """A durable journal of the save after ``base``, with its entries; ``None`` for any other.

    A journal that fails its checksums (torn: killed while writing it) or that follows another
    header than ``base`` (stale) never became a save.
    """
    journal = decode_journal(
        os.pread(descriptor, JOURNAL_HEADER_BYTES, layout.journal_offset), layout
    )
    if (
        journal is None
        or journal.base_generation != base.generation
        or journal.commit.generation != base.generation + 1
    ):
        return None
    entries = journal.entries
    raw = os.pread(
        descriptor, entries * layout.entry_bytes, layout.journal_offset + JOURNAL_HEADER_BYTES
    )
    if len(raw) != entries * layout.entry_bytes or zlib.crc32(raw) != journal.payload_crc:
        return None
    buffer, at = memoryview(raw), 0
    shapes = [
        (np.float32, (entries, layout.dimensions)),
        (np.float64, (entries,)),
        (np.int64, (entries,)),
        (np.uint64, (entries,)),
        (np.uint8, (entries, layout.id_bytes)),
    ]
    payload: Payload = []
    for dtype, shape in shapes:
        part = np.frombuffer(buffer, dtype, int(np.prod(shape)), at).reshape(shape)
        payload.append(part)
        at += part.nbytes
    return journal, payload


def apply_journal(
    descriptor: int,
    layout: RingLayout,
    journal: JournalHeader,
    payload: Payload,
    *,
    regions: Sequence[NDArray[Any]],
    step: Step,
) -> None:
    """Steps (2) to (4): copy a durable journal's entries into their slots, then publish its header.

    ``regions`` are the file's mapped regions (as :data:`Payload`), read back to checksum the
    chunks the entries touched.
    """
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
            write_at(descriptor, part[done : done + stop - start].tobytes(), offset + start * width)
            done += stop - start
        step("region")
    chunk = layout.chunk
    touched = sorted({i for a, b in runs for i in range(a // chunk, -(-b // chunk))})
    generation = journal.commit.generation
    for index in touched:
        pair = np.array([generation, chunk_crc(regions, layout, index)], dtype=np.uint64)
        write_at(descriptor, pair.tobytes(), layout.checksums_offset + 16 * index)
    os.fsync(descriptor)
    step("slots")
    write_at(descriptor, encode_commit(journal.commit), COMMIT_OFFSETS[generation % 2])
    os.fsync(descriptor)
    step("header")
    os.ftruncate(descriptor, layout.journal_offset)
