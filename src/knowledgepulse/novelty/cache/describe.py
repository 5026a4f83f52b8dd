"""What a saved cache holds, for ``kp inspect CACHE``: its settings, its vectors and their ids.

A curator whose cache grows by a batch a day asks what is in it before trusting its novelty:
which embedder and novelty text made it, how full it is, what has expired, which ids repeat.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from knowledgepulse.errors import CacheFileError, Location, Setting
from knowledgepulse.novelty.cache.ring_file import is_ring_file
from knowledgepulse.novelty.cache.vector_cache import VectorCache
from knowledgepulse.records.readers import starts_with

_NEEDS_A_WRITER = Setting("read_only", False)
"""What a read-only open of a cache whose save was interrupted names as the fix."""


@dataclass(frozen=True, slots=True)
class CacheDescription:
    """A saved cache's settings and contents (times in milliseconds since the epoch)."""

    file: str
    format: str
    """``ring file`` or ``npz``."""
    model_id: str | None
    """The embedder and novelty text that made the vectors (``None``: not recorded)."""
    embedder: str | None
    """The bundled embedder's ``--embedder`` name (``None``: another model)."""
    novelty_text: str | None
    dimensions: int
    capacity: int
    ttl_ms: float | None
    live: int
    """Vectors that count now."""
    expired: int
    """Vectors past the TTL, still held until evicted."""
    distinct_ids: int
    """Distinct ids among the live vectors."""
    repeated_ids: int
    """Live ids held more than once: a trace whose text changed since, or copies an older
    knowledgepulse saved when a file was scored again."""
    oldest_ms: float | None
    newest_ms: float | None


def is_cache_file(path: str | Path) -> bool:
    """Whether ``path`` looks like a saved cache: a ring file, or an ``.npz`` archive."""
    target = Path(path)
    return target.is_file() and (
        is_ring_file(target) or (target.name.endswith(".npz") and starts_with(target, b"PK"))
    )


def describe_cache(path: str | Path) -> CacheDescription:
    """What the cache at ``path`` holds, read without changing it.

    Raises:
        CacheFileError: the file is missing, damaged, or not a cache, or a save into it was
            interrupted (which only a writer finishes); the message says the fix.
    """
    from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID  # noqa: PLC0415 - only here
    from knowledgepulse.novelty.representation import split_cache_model_id  # noqa: PLC0415
    from knowledgepulse.novelty.static import STATIC_MODEL_ID  # noqa: PLC0415

    target = Path(path)
    try:
        with VectorCache.open(target, read_only=True) as cache:
            counts = cache.counts()
            entries = list(cache.entries())
            model_id, dimensions = cache.model_id, cache.dimensions or 0
            capacity, ttl_ms = cache.max_elements, cache.ttl_ms
    except CacheFileError as error:
        if _NEEDS_A_WRITER not in error.parts:
            raise
        # The open's fix (read_only=False) is no parameter of ours: say whose it is.
        raise CacheFileError(
            f"{Location(str(target))}: a save into this cache was interrupted, and only a process "
            "that may write the file finishes it; kp inspect (describe_cache) only reads a cache: "
            "score with it once (kp score TRACES --cache FILE, without --frozen; in "
            "Python, VectorCache.open(FILE)), then inspect it again"
        ) from None
    embedder = text = None
    if model_id is not None:
        embedder_id, text = split_cache_model_id(model_id)
        names = {STATIC_MODEL_ID: "static", BUNDLED_MODEL_ID: "minilm"}
        embedder = names.get(embedder_id)
    ids = Counter(entry.id for entry in entries if entry.id is not None)
    times = [entry.added_at_ms for entry in entries]
    return CacheDescription(
        file=str(target),
        format="ring file" if is_ring_file(target) else "npz",
        model_id=model_id,
        embedder=embedder,
        novelty_text=text,
        dimensions=dimensions,
        capacity=capacity,
        ttl_ms=ttl_ms,
        live=counts.live,
        expired=counts.expired,
        distinct_ids=len(ids),
        repeated_ids=sum(1 for n in ids.values() if n > 1),
        oldest_ms=min(times, default=None),
        newest_ms=max(times, default=None),
    )
