"""The ring-file cache format: its fixed layout, and pure functions that encode and check it.

A ring file is one file that a cache maps into memory instead of reading::

    offset 0       superblock    _, version, dimensions, capacity, id width, chunk, model id,
                                 CRC-32; written once, when the file is made
    4096, 8192     commit A, B   generation, head, count, added, TTL, CRC-32; a save writes the
                                 slot the current one is not in, so one valid copy always remains
    12288 ...      regions       vectors (capacity x dimensions float32), added_at (float64),
                                 sequence (int64), id hash (uint64), ids (fixed-width slots),
                                 checksums (per chunk of slots: generation written, CRC-32)
    end of regions journal       only during a save: the new entries and the new commit header,
                                 written and fsynced before any slot is overwritten

The slots form a ring: ``head`` is where the next vector goes, the ``count`` slots before it hold
the live vectors, oldest first, and their sequence numbers run ``added - count .. added - 1``.
Everything here is pure (bytes in, values or :class:`RingFormatError` out); the locking and
commit order are in :mod:`knowledgepulse.novelty.cache_ring`, the journal's I/O in
:mod:`knowledgepulse.novelty.ring_journal`.
"""

from __future__ import annotations

import hashlib
import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.digest import stable_hash64

RING_MAGIC = b"KPRING1\n"
RING_VERSION = 1
PAGE = 4096
COMMIT_OFFSETS = (PAGE, 2 * PAGE)
REGIONS_OFFSET = 3 * PAGE
DEFAULT_ID_BYTES = 128
"""Bytes per id slot: a 2-byte length, then the UTF-8 id. A ``kp:trace:<uuid>`` takes 45."""
DEFAULT_CHUNK = 1024
"""Slots per checksum: a save re-checksums only the chunks it touched."""
MAX_MODEL_ID_BYTES = 1024
MAX_DIMENSIONS = 65_536
MAX_CAPACITY = 1 << 36
LONG_ID_PREFIX = "kp:long-id:sha256:"
"""An id longer than its slot is stored as this prefix and the SHA-256 of the id (see
:func:`stored_id`): visibly not the id, the same for the same id, never a silent truncation."""
_NO_ID = 0xFFFF

_SUPER = struct.Struct("<8sIIQIII")  # magic, version, dimensions, capacity, id, chunk, model len
_COMMIT = struct.Struct("<QQQQd")  # generation, head, count, added, ttl_ms (0: none)
_JOURNAL = struct.Struct("<8sQQQ")  # magic, base generation, first slot, entries
JOURNAL_MAGIC = b"KPJOURN1"
_CRC = struct.Struct("<I")
JOURNAL_HEADER_BYTES = _JOURNAL.size + _COMMIT.size + 3 * _CRC.size  # commit, payload, own CRCs


class RingFormatError(ValueError):
    """Raised by the pure checks; the I/O layer adds the file's name and the fix."""


@dataclass(frozen=True, slots=True)
class RingLayout:
    """Where each region of a ring file lies, from its fixed parameters.

    Attributes:
        dimensions: the length of every vector.
        capacity: the number of slots (the cache's ``max_elements``).
        id_bytes: the bytes of one id slot (2 of them hold the length).
        chunk: slots per checksum.
    """

    dimensions: int
    capacity: int
    id_bytes: int = DEFAULT_ID_BYTES
    chunk: int = DEFAULT_CHUNK

    @property
    def chunks(self) -> int:
        """How many checksummed chunks the slots form."""
        return -(-self.capacity // self.chunk)

    @property
    def vectors_offset(self) -> int:
        """Where the float32 vectors begin."""
        return REGIONS_OFFSET

    @property
    def added_at_offset(self) -> int:
        """Where the float64 added-at times begin."""
        return _aligned(self.vectors_offset + self.capacity * self.dimensions * 4)

    @property
    def sequence_offset(self) -> int:
        """Where the int64 sequence numbers begin."""
        return _aligned(self.added_at_offset + self.capacity * 8)

    @property
    def hash_offset(self) -> int:
        """Where the uint64 id hashes begin."""
        return _aligned(self.sequence_offset + self.capacity * 8)

    @property
    def ids_offset(self) -> int:
        """Where the id slots begin."""
        return _aligned(self.hash_offset + self.capacity * 8)

    @property
    def checksums_offset(self) -> int:
        """Where the per-chunk (generation, CRC-32) pairs begin."""
        return _aligned(self.ids_offset + self.capacity * self.id_bytes)

    @property
    def journal_offset(self) -> int:
        """The end of the regions: a file is at least this long; a save's journal goes here."""
        return _aligned(self.checksums_offset + self.chunks * 16)

    @property
    def entry_bytes(self) -> int:
        """The bytes of one entry across the regions (vector, time, sequence, hash, id)."""
        return self.dimensions * 4 + 8 + 8 + 8 + self.id_bytes


@dataclass(frozen=True, slots=True)
class Superblock:
    """The fixed part of a ring file: its layout and the model that made its vectors."""

    layout: RingLayout
    model_id: str | None


@dataclass(frozen=True, slots=True)
class CommitHeader:
    """One committed state of the ring.

    Attributes:
        generation: counts saves; the larger valid copy is the current state.
        head: the slot the next vector goes to.
        count: how many slots before ``head`` hold live vectors.
        added: vectors ever added (the next sequence number).
        ttl_ms: the saved TTL (``None``: none).
    """

    generation: int
    head: int
    count: int
    added: int
    ttl_ms: float | None

    @property
    def oldest(self) -> int:
        """The slot of the oldest live vector (with ``count`` of 0, where it would be)."""
        return self.head - self.count  # may be negative: a ring index, taken modulo capacity


@dataclass(frozen=True, slots=True)
class JournalHeader:
    """A save in progress: the state it leads to and where its entries go."""

    base_generation: int
    first_slot: int
    entries: int
    commit: CommitHeader
    payload_crc: int


def encode_superblock(block: Superblock) -> bytes:
    """The superblock's bytes (shorter than a page), CRC included."""
    model = b"" if block.model_id is None else block.model_id.encode("utf-8")
    if len(model) > MAX_MODEL_ID_BYTES:
        raise RingFormatError(f"the model id is {len(model)} bytes; at most 1024 are stored")
    layout = block.layout
    body = _SUPER.pack(
        RING_MAGIC,
        RING_VERSION,
        layout.dimensions,
        layout.capacity,
        layout.id_bytes,
        layout.chunk,
        0xFFFFFFFF if block.model_id is None else len(model),
    )
    body += model
    return body + _CRC.pack(zlib.crc32(body))


def decode_superblock(data: bytes) -> Superblock:
    """Check and read a superblock (the first page of the file)."""
    if len(data) < _SUPER.size + _CRC.size or not data.startswith(RING_MAGIC):
        raise RingFormatError("it does not start with the ring-file magic")
    _, version, dimensions, capacity, id_bytes, chunk, model_length = _SUPER.unpack_from(data)
    if version != RING_VERSION:
        raise RingFormatError(f"it is ring-file version {version}; this knowledgepulse reads 1")
    model_bytes = 0 if model_length == 0xFFFFFFFF else model_length
    if model_bytes > MAX_MODEL_ID_BYTES:
        raise RingFormatError(f"its superblock declares a model id of {model_bytes} bytes")
    end = _SUPER.size + model_bytes
    if len(data) < end + _CRC.size:
        raise RingFormatError("its superblock is cut short")
    (stored,) = _CRC.unpack_from(data, end)
    if zlib.crc32(data[:end]) != stored:
        raise RingFormatError("its superblock fails its checksum")
    if not 1 <= dimensions <= MAX_DIMENSIONS:
        raise RingFormatError(f"its dimensions is {dimensions}, not a width from 1 to 65536")
    if not 1 <= capacity <= MAX_CAPACITY:
        raise RingFormatError(f"its capacity is {capacity}, out of range")
    if not 3 <= id_bytes <= 65_537 or not 1 <= chunk <= 1 << 20:
        raise RingFormatError(f"its id width {id_bytes} or chunk {chunk} is out of range")
    try:
        model_id = None if model_length == 0xFFFFFFFF else data[_SUPER.size : end].decode()
    except UnicodeDecodeError:
        raise RingFormatError("its model id is not UTF-8") from None
    return Superblock(RingLayout(dimensions, capacity, id_bytes, chunk), model_id)


def encode_commit(header: CommitHeader) -> bytes:
    """A commit header's bytes, CRC included."""
    ttl = 0.0 if header.ttl_ms is None else header.ttl_ms
    body = _COMMIT.pack(header.generation, header.head, header.count, header.added, ttl)
    return body + _CRC.pack(zlib.crc32(body))


def decode_commit(data: bytes, layout: RingLayout) -> CommitHeader:
    """Check and read a commit header against the layout."""
    if len(data) < _COMMIT.size + _CRC.size:
        raise RingFormatError("a commit header is cut short")
    body = data[: _COMMIT.size]
    (stored,) = _CRC.unpack_from(data, _COMMIT.size)
    if zlib.crc32(body) != stored:
        raise RingFormatError("a commit header fails its checksum")
    generation, head, count, added, ttl = _COMMIT.unpack(body)
    header = CommitHeader(generation, head, count, added, None if ttl == 0.0 else ttl)
    check_commit(header, layout)
    return header


def check_commit(header: CommitHeader, layout: RingLayout) -> None:
    """Refuse counters that cannot describe this ring."""
    if not 0 <= header.head < layout.capacity:
        raise RingFormatError(f"its head {header.head} is outside 0..{layout.capacity - 1}")
    if not 0 <= header.count <= min(layout.capacity, header.added):
        raise RingFormatError(
            f"its count {header.count} exceeds the capacity {layout.capacity} or the "
            f"{header.added} vectors ever added"
        )
    if header.added >= 1 << 62:
        raise RingFormatError(f"its added counter {header.added} is out of range")
    ttl = header.ttl_ms
    if ttl is not None and not (math.isfinite(ttl) and ttl > 0):
        raise RingFormatError(f"its ttl_ms is {ttl}, not a positive number of milliseconds")


def current_commit(slots: list[bytes], layout: RingLayout) -> CommitHeader:
    """The current commit header: the larger generation of the two copies.

    Both copies are checked, since a save rewrites only the other one: each must be valid and
    in the slot of its generation's parity, and they must be consecutive generations (a new
    file holds generations 0 and 1, both empty).
    """
    headers: list[CommitHeader] = []
    for position, data in enumerate(slots):
        header = decode_commit(data, layout)
        if header.generation % 2 != position:
            raise RingFormatError(f"commit copy {position} holds generation {header.generation}")
        headers.append(header)
    current = max(headers, key=lambda header: header.generation)
    if abs(headers[0].generation - headers[1].generation) != 1:
        raise RingFormatError("the two commit headers are not consecutive saves")
    return current


def encode_journal(journal: JournalHeader) -> bytes:
    """A journal header's bytes: its own CRC covers the new commit and the payload's CRC."""
    body = _JOURNAL.pack(
        JOURNAL_MAGIC, journal.base_generation, journal.first_slot, journal.entries
    )
    body += encode_commit(journal.commit) + _CRC.pack(journal.payload_crc)
    return body + _CRC.pack(zlib.crc32(body))


def decode_journal(data: bytes, layout: RingLayout) -> JournalHeader | None:
    """A journal header, or ``None`` when the bytes are not a complete, valid one.

    A journal cut short or torn is what a save killed before its journal was durable leaves:
    no slot was touched then, so it is ignored, not an error.
    """
    if len(data) < JOURNAL_HEADER_BYTES or not data.startswith(JOURNAL_MAGIC):
        return None
    end = JOURNAL_HEADER_BYTES - _CRC.size
    (stored,) = _CRC.unpack_from(data, end)
    if zlib.crc32(data[:end]) != stored:
        return None
    _, base, first, entries = _JOURNAL.unpack_from(data)
    try:
        commit = decode_commit(data[_JOURNAL.size : _JOURNAL.size + _COMMIT.size + 4], layout)
    except RingFormatError:
        return None
    (payload_crc,) = _CRC.unpack_from(data, _JOURNAL.size + _COMMIT.size + _CRC.size)
    if not 0 <= first < layout.capacity or not 0 <= entries <= layout.capacity:
        return None
    return JournalHeader(base, first, entries, commit, payload_crc)


def stored_id(trace_id: str | None, id_bytes: int) -> str | None:
    """The id as a slot of ``id_bytes`` holds it: itself, or the long-id form when too long."""
    if trace_id is None or len(trace_id.encode("utf-8", "surrogatepass")) <= id_bytes - 2:
        return trace_id
    digest = hashlib.sha256(trace_id.encode("utf-8", "surrogatepass")).hexdigest()
    return LONG_ID_PREFIX + digest


def encode_ids(
    ids: list[str | None], id_bytes: int
) -> tuple[NDArray[np.uint8], NDArray[np.uint64]]:
    """The ids' slots (``len(ids) x id_bytes``) and hashes; too-long ids take the long-id form."""
    slots = np.zeros((len(ids), id_bytes), dtype=np.uint8)
    hashes = np.zeros(len(ids), dtype=np.uint64)
    for row, trace_id in enumerate(ids):
        kept = stored_id(trace_id, id_bytes)
        if kept is None:
            slots[row, :2] = 0xFF
            continue
        raw = kept.encode("utf-8", "surrogatepass")
        if len(raw) > id_bytes - 2:
            raise RingFormatError(f"id slots of {id_bytes} bytes cannot hold even a long-id form")
        slots[row, :2] = np.frombuffer(struct.pack("<H", len(raw)), dtype=np.uint8)
        slots[row, 2 : 2 + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        hashes[row] = id_hash(kept)
    return slots, hashes


def decode_id(slot: NDArray[np.uint8]) -> str | None:
    """The id in one slot, or ``None``."""
    (length,) = struct.unpack("<H", slot[:2].tobytes())
    if length == _NO_ID:
        return None
    if length > len(slot) - 2:
        raise RingFormatError(f"an id slot declares {length} bytes in a slot of {len(slot) - 2}")
    try:
        return slot[2 : 2 + length].tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise RingFormatError("an id slot does not hold UTF-8") from None


def id_hash(trace_id: str | None) -> int:
    """A 64-bit hash of an id as stored (0 for none), to find an id's slots without decoding all."""
    if trace_id is None:
        return 0
    return stable_hash64(trace_id) | 1  # never 0, the hash of no id


def check_sequence(sequence: NDArray[np.int64], header: CommitHeader) -> None:
    """The live slots' sequence numbers, oldest first, must run ``added - count`` upwards.

    A mix of two saves, or slots moved or damaged, breaks the run.
    """
    expected = np.arange(header.added - header.count, header.added, dtype=np.int64)
    if len(sequence) != header.count or not np.array_equal(sequence, expected):
        wrong = int(np.argmax(sequence != expected)) if len(sequence) == header.count else 0
        raise RingFormatError(
            f"its live slots do not hold the sequence numbers its header promises (the "
            f"{wrong}th oldest is out of place)"
        )


def ring_slots(first: int, count: int, capacity: int) -> list[tuple[int, int]]:
    """``count`` slots from ``first`` onwards, wrapping, as at most two ``(start, stop)`` runs."""
    start = first % capacity
    if count <= 0:
        return []
    if start + count <= capacity:
        return [(start, start + count)]
    return [(start, capacity), (0, start + count - capacity)]


def looks_like_ring_file(prefix: bytes) -> bool:
    """Whether a file's first bytes are a ring file's (the format is told by content, not name)."""
    return prefix.startswith(RING_MAGIC)


def _aligned(offset: int) -> int:
    return -(-offset // PAGE) * PAGE
