"""Saving and loading a :class:`~knowledgepulse.novelty.VectorCache`: ``.npz`` or ring file.

The format is told by content where a file exists (an ``.npz`` is a zip, a ring file starts
with its magic) and by name where it does not (``*.npz``, else a ring file). The formats
themselves are :mod:`.cache_file` and :mod:`.cache_ring`; this module picks one, and checks that
a saved cache was made by the expected model, at the expected width.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from knowledgepulse._util.settings import optional_duration_ms, positive_int
from knowledgepulse.errors import CacheFileError, ScorerParameterError
from knowledgepulse.novelty.banded import BLOCK_BYTES
from knowledgepulse.novelty.cache_file import (
    FRESH_START,
    CacheFileContents,
    read_cache_file,
    write_cache_file,
)
from knowledgepulse.novelty.cache_ring import RingFile
from knowledgepulse.novelty.cache_types import CachedVector, Clock
from knowledgepulse.novelty.ring_file import RingLayout, looks_like_ring_file

if TYPE_CHECKING:
    from knowledgepulse.novelty.cache import VectorCache


def write_entries(
    path: Path,
    entries: list[CachedVector],
    *,
    dimensions: int,
    max_elements: int,
    ttl_ms: float | None,
    model_id: str | None,
) -> None:
    """Write a cache's live entries to ``path``, atomically, in the format :func:`wants_npz` picks.

    Raises:
        OutputError: the file cannot be created.
        CacheFileError: the ring file cannot be written.
    """
    contents = _as_contents(entries, model_id, dimensions, max_elements, ttl_ms)
    if wants_npz(path):
        write_cache_file(path, contents)
        return
    RingFile.create(
        path,
        RingLayout(dimensions, max_elements),
        model_id=model_id,
        ttl_ms=ttl_ms,
        replace=True,
        vectors=contents.vectors,
        added_at=contents.added_at,
        ids=contents.ids,
    )


def _as_contents(
    entries: list[CachedVector],
    model_id: str | None,
    dimensions: int,
    max_elements: int,
    ttl_ms: float | None,
) -> CacheFileContents:
    """Entries (oldest first) as the columns a cache file holds."""
    vectors = np.array([e.vector for e in entries], dtype=np.float32)
    return CacheFileContents(
        model_id,
        dimensions,
        max_elements,
        ttl_ms,
        [e.id for e in entries],
        vectors.reshape(len(entries), dimensions),
        np.array([e.added_at_ms for e in entries], dtype=np.float64),
    )


def load_cache(
    cls: type[VectorCache],
    path: str | Path,
    *,
    expected_model_id: str | None,
    expected_dimensions: int | None,
    max_elements: int | None,
    ttl_ms: float | None,
    clock: Clock,
) -> VectorCache:
    """See :meth:`VectorCache.load <knowledgepulse.novelty.VectorCache.load>`."""
    if max_elements is not None:
        positive_int(max_elements, "max_elements")
    ttl_ms = optional_duration_ms(ttl_ms, "ttl_ms")
    target = Path(path)
    if is_ring_file(target):
        saved = read_ring_contents(cls, target, clock)
    else:
        saved = read_cache_file(target)
    check_identity(target, saved.model_id, saved.dimensions, expected_model_id, expected_dimensions)
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
    # Oldest first, keeping the newest that fit.
    first = max(0, len(saved.ids) - cache.max_elements)
    kept = zip(saved.ids[first:], saved.vectors[first:], saved.added_at[first:], strict=True)
    for entry_id, vector, added in kept:
        cache.restore(CachedVector(entry_id, vector, float(added)))
    return cache


def read_ring_contents(cls: type[VectorCache], path: Path, clock: Clock) -> CacheFileContents:
    """A ring file's entries, read whole for :meth:`VectorCache.load` (which applies the TTL)."""
    ring = RingFile(path, writable=False)
    try:
        entries = list(cls._from_ring(ring, None, clock, BLOCK_BYTES).entries())
        layout = ring.layout
        return _as_contents(
            entries,
            ring.superblock.model_id,
            layout.dimensions,
            layout.capacity,
            ring.header.ttl_ms,
        )
    finally:
        ring.close()


def wants_npz(path: Path) -> bool:
    """Whether a save to ``path`` writes an ``.npz``: an ``.npz`` name, or an ``.npz`` there now."""
    if path.name.endswith(".npz"):
        return True
    try:
        with path.open("rb") as file:
            return file.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def is_ring_file(path: Path) -> bool:
    """Whether ``path`` holds a ring file (by its first bytes; a missing file is not one)."""
    try:
        with path.open("rb") as file:
            return looks_like_ring_file(file.read(16))
    except OSError:
        return False


def check_identity(
    path: Path,
    model_id: str | None,
    dimensions: int,
    expected_model_id: str | None,
    expected_dimensions: int | None,
) -> None:
    """Refuse a cache of another model or width.

    Raises:
        CacheFileError: naming both models (or widths) and the fix.
    """
    if expected_model_id is not None and model_id != expected_model_id:
        raise CacheFileError(
            f"{path}: the cache holds vectors of model {model_id!r}, but the embedder "
            f"is {expected_model_id!r}; their similarities mean nothing together. Use "
            "another cache file, or delete this one to start a fresh cache"
        )
    if expected_dimensions is not None and dimensions != expected_dimensions:
        raise CacheFileError(
            f"{path}: the cache holds {dimensions}-dimensional vectors, but the "
            f"embedder makes {expected_dimensions}-dimensional ones; {FRESH_START}"
        )


def same_file(one: Path, other: Path) -> bool:
    """Whether both paths name one file (``False`` when either is missing)."""
    try:
        return one.samefile(other)
    except OSError:
        return False
