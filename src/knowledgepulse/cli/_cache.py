"""``kp score --cache``: the vector cache file opened before the run and saved after it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from knowledgepulse.cli._console import say

if TYPE_CHECKING:
    from knowledgepulse.novelty.cache import VectorCache
    from knowledgepulse.value.scorer import TraceValueScorer


def open_cache_file(
    cache_path: Path | None,
    identity: TraceValueScorer,
    cache_size: int | None,
    ttl_seconds: float | None,
    *,
    frozen: bool = False,
) -> VectorCache | None:
    """The cache bound to its file, resized or given a TTL when asked; ``None``: none yet.

    A cache made under another model or novelty text is refused (``CacheFileError``).
    """
    if identity.embedder is None or cache_path is None:
        return None
    if not cache_path.exists() and identity.cache_dimensions is None:
        return None  # the scorer makes it once the first vectors give the width
    from knowledgepulse.novelty.cache import VectorCache  # noqa: PLC0415 - numpy, only with a cache

    return VectorCache.open(
        cache_path,
        model_id=identity.cache_model_id,
        dimensions=identity.cache_dimensions,
        max_elements=cache_size,
        ttl_ms=ttl_ms(ttl_seconds),
        read_only=frozen,
    )


def ttl_ms(ttl_seconds: float | None) -> float | None:
    """``--ttl`` in milliseconds, as the cache takes it."""
    return None if ttl_seconds is None else ttl_seconds * 1000


def save_cache_file(scorer: TraceValueScorer, cache_path: Path) -> None:
    """Commit what the run added to the cache file (or write a new one); say so if none."""
    if scorer.embedder is None:
        say(f"kp: the cache was not saved to {cache_path}: no embedder was available")
        return
    if scorer.cache.path is not None:
        scorer.cache.flush()  # opened from cache_path: append what this run added
    else:
        scorer.cache.save(cache_path, model_id=scorer.cache_model_id)
