"""``VectorCache.open``: a cache bound to its file, the format told by content (name when new)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from knowledgepulse._util.settings import optional_duration_ms, positive_int
from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.cache_file import FRESH_START
from knowledgepulse.novelty.cache_io import check_identity, is_ring_file, wants_npz
from knowledgepulse.novelty.cache_ring import RingFile
from knowledgepulse.novelty.cache_types import Clock
from knowledgepulse.novelty.ring_file import MAX_CAPACITY, RingLayout
from knowledgepulse.novelty.settings import DEFAULT_DIMENSIONS, DEFAULT_MAX_ELEMENTS

if TYPE_CHECKING:
    from knowledgepulse.novelty.cache import VectorCache


def open_cache(
    cls: type[VectorCache],
    path: Path,
    *,
    model_id: str | None,
    dimensions: int | None,
    max_elements: int | None,
    ttl_ms: float | None,
    read_only: bool,
    clock: Clock,
    block_bytes: int,
) -> VectorCache:
    """See :meth:`VectorCache.open`."""
    if max_elements is not None:
        positive_int(max_elements, "max_elements")
        if max_elements > MAX_CAPACITY:
            raise CacheFileError(f"{path}: a cache of {max_elements} vectors is too large")
    if dimensions is not None:
        positive_int(dimensions, "dimensions")
    positive_int(block_bytes, "block_bytes")
    ttl_ms = optional_duration_ms(ttl_ms, "ttl_ms")
    exists = path.exists()
    if not exists and read_only:
        raise CacheFileError(f"{path}: no such cache file (it is made by a run that adds)")
    if wants_npz(path) and not is_ring_file(path):  # a missing file is no ring file
        return _npz_cache(
            cls,
            path,
            model_id=model_id,
            dimensions=dimensions,
            max_elements=max_elements,
            ttl_ms=ttl_ms,
            read_only=read_only,
            clock=clock,
        )
    if not exists:
        if dimensions is None:
            raise CacheFileError(f"{path}: a new cache file needs the vectors' dimensions")
        layout = RingLayout(dimensions, max_elements or DEFAULT_MAX_ELEMENTS)
        RingFile.create(path, layout, model_id=model_id, ttl_ms=ttl_ms)
    elif not is_ring_file(path):
        raise CacheFileError(
            f"{path}: not a knowledgepulse vector cache (neither a ring file nor an .npz); "
            f"{FRESH_START}"
        )
    ring = RingFile(path, writable=not read_only)
    try:
        check_identity(path, ring.superblock.model_id, ring.layout.dimensions, model_id, dimensions)
    except CacheFileError:
        ring.close()
        raise
    if max_elements is not None and max_elements != ring.layout.capacity:
        # Another capacity is another layout: rewrite the file with its newest vectors.
        resized = cls._from_ring(ring, ring.header.ttl_ms, clock, block_bytes)
        entries = list(resized.entries())[-max_elements:]
        ring.close()
        copy = cls(max_elements, ring.layout.dimensions, ttl_ms or ring.header.ttl_ms, clock=clock)
        for entry in entries:
            copy.restore(entry)
        if read_only:
            return copy
        copy.save(path, model_id=ring.superblock.model_id)
        ring = RingFile(path, writable=True)
    return cls._from_ring(
        ring, ttl_ms if ttl_ms is not None else ring.header.ttl_ms, clock, block_bytes
    )


def _npz_cache(
    cls: type[VectorCache],
    path: Path,
    *,
    model_id: str | None,
    dimensions: int | None,
    max_elements: int | None,
    ttl_ms: float | None,
    read_only: bool,
    clock: Clock,
) -> VectorCache:
    """An ``.npz`` cache loaded whole, bound to its file so that ``flush`` rewrites it."""
    if path.exists():
        cache = cls.load(
            path,
            expected_model_id=model_id,
            expected_dimensions=dimensions,
            max_elements=max_elements,
            ttl_ms=ttl_ms,
            clock=clock,
        )
    else:
        cache = cls(
            max_elements or DEFAULT_MAX_ELEMENTS,
            dimensions or DEFAULT_DIMENSIONS,
            ttl_ms,
            clock=clock,
        )
    if not read_only:
        cache._path = path
        cache._model_id = model_id
    return cache
