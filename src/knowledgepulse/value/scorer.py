"""The trace value scorer: features, novelty against a vector cache, profile, overrides.

A :class:`TraceValueScorer` owns its configuration (embedder, cache, profiles, threshold); the
module-level functions in :mod:`knowledgepulse.value.api` use a process-wide default one.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError, VectorError
from knowledgepulse.novelty import Embedder, VectorCache, default_embedder, dimensions_of
from knowledgepulse.novelty.cache import DEFAULT_DIMENSIONS
from knowledgepulse.trace.load import parse_trace
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value.breakdown import NoveltyOrigin, ValueBreakdown, compose
from knowledgepulse.value.dimensions import (
    EMPTY_CACHE_NOVELTY,
    NO_EMBEDDER_NOVELTY,
    TraceFeatures,
    embedding_text,
    novelty,
)
from knowledgepulse.value.profiles import ProfileRegistry, ScoringWeights

CacheMode = Literal["online", "frozen"]
DEFAULT_THRESHOLD = 0.75
DEFAULT_BATCH_SIZE = 32

_log = logging.getLogger("knowledgepulse")


class _DefaultEmbedder:
    """Marker for "use the MiniLM embedder if it is installed"."""


DEFAULT_EMBEDDER: Any = _DefaultEmbedder()

TraceInput = ReasoningTrace | Mapping[str, Any]


class TraceValueScorer:
    """Scores traces 0.0-1.0 and explains every score.

    Args:
        embedder: what turns trace texts into vectors: by default the process-wide
            all-MiniLM-L6-v2 (novelty falls back to 0.5, with one log line, when the
            ``embeddings`` extra is not installed), any object with ``embed_batch(texts)`` (see
            :class:`~knowledgepulse.novelty.Embedder`), or ``None`` for no embedder (novelty 0.5).
        cache: the vectors novelty is measured against (default: an empty
            ``VectorCache(1000, embedder dimensions)``).
        profiles: weight profiles by domain (default: the five built-ins).
        threshold: the sharing threshold a score must reach (default 0.75).
        mode: ``online`` (the seed's behaviour: each scored trace joins the cache, so scoring the
            same trace twice gives a lower novelty the second time) or ``frozen`` (score against
            the cache as it is, without changing it, so results do not depend on order).
        batch_size: how many traces :meth:`score_many` embeds per call.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = DEFAULT_EMBEDDER,
        cache: VectorCache | None = None,
        profiles: ProfileRegistry | Mapping[str, ScoringWeights] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        mode: CacheMode = "online",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
        if mode not in ("online", "frozen"):
            raise ValueError(f"mode must be 'online' or 'frozen', got {mode!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size!r}")
        self._embedder: Embedder | None = (
            default_embedder() if isinstance(embedder, _DefaultEmbedder) else embedder
        )
        self._no_embedder_reason: str | None = (
            None if self._embedder is not None else "scoring without an embedder, as configured"
        )
        self._cache = cache
        self.profiles = (
            profiles if isinstance(profiles, ProfileRegistry) else ProfileRegistry(profiles)
        )
        self.threshold = threshold
        self.mode: CacheMode = mode
        self.batch_size = batch_size
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder in use, or ``None`` when there is none (or it could not be loaded)."""
        return self._embedder

    @property
    def cache(self) -> VectorCache:
        """The vector cache novelty is measured against.

        Created on first use, as long as the embedder's vectors: its declared ``dimensions``,
        else the width of its first output, else 384.
        """
        return self._cache_for(dimensions_of(self._embedder) if self._embedder else None)

    def _cache_for(self, dimensions: int | None) -> VectorCache:
        if self._cache is None:
            with self._lock:
                if self._cache is None:
                    self._cache = VectorCache(dimensions=dimensions or DEFAULT_DIMENSIONS)
        return self._cache

    def register_profile(
        self, domain: str, weights: ScoringWeights | Mapping[str, Any], *, replace: bool = False
    ) -> ScoringWeights:
        """Add a weight profile for a domain (see :meth:`ProfileRegistry.register`)."""
        return self.profiles.register(domain, weights, replace=replace)

    def score(self, trace: TraceInput) -> ValueBreakdown:
        """Score one trace and explain the score (synchronous).

        Raises:
            TraceValidationError: ``trace`` is a mapping that is not a valid trace.
        """
        valid = parse_trace(trace)
        vectors = self._embed([embedding_text(valid)])
        return self._finish(valid, None if vectors is None else vectors[0])

    def score_many(self, traces: Iterable[TraceInput]) -> list[ValueBreakdown]:
        """Score traces in order, embedding them in batches.

        Gives the same breakdowns as calling :meth:`score` on each in turn (exactly, given the
        same embeddings; batched float32 inference may differ from single by about 1e-7).
        """
        return list(self.iter_scores(traces))

    def iter_scores(self, traces: Iterable[TraceInput]) -> Iterator[ValueBreakdown]:
        """Like :meth:`score_many`, yielding each breakdown as soon as its batch is scored."""
        valid = (parse_trace(trace) for trace in traces)
        while chunk := list(islice(valid, self.batch_size)):
            vectors = self._embed([embedding_text(trace) for trace in chunk])
            for position, trace in enumerate(chunk):
                yield self._finish(trace, None if vectors is None else vectors[position])

    async def evaluate(self, trace: TraceInput) -> ValueBreakdown:
        """Score one trace without blocking the event loop (embedding runs in a worker thread).

        Safe under concurrent calls: each trace's cache lookup and insertion happen together.
        """
        valid = parse_trace(trace)
        vectors = None
        if self._embedder is not None:
            vectors = await asyncio.to_thread(self._embed, [embedding_text(valid)])
        return self._finish(valid, None if vectors is None else vectors[0])

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32] | None:
        embedder = self._embedder
        if embedder is None:
            return None
        try:
            vectors = np.asarray(embedder.embed_batch(texts), dtype=np.float32)
        except EmbedderUnavailableError as error:
            self._give_up_embedding(embedder, str(error))
            return None
        width = vectors.shape[-1] if vectors.ndim == 2 else None
        cache = self._cache_for(dimensions_of(embedder) or width)
        expected = (len(texts), cache.dimensions)
        if vectors.shape != expected:
            raise VectorError(
                f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts; "
                f"expected {expected} (a cache of {cache.dimensions} dimensions)"
            )
        return vectors

    def _give_up_embedding(self, embedder: Embedder, reason: str) -> None:
        with self._lock:
            if self._embedder is not embedder:
                return  # another thread already gave up on it and said so
            self._embedder = None
            self._no_embedder_reason = reason
        _log.warning("novelty is %s for every trace: %s", NO_EMBEDDER_NOVELTY, reason)

    def _finish(self, trace: ReasoningTrace, vector: NDArray[np.float32] | None) -> ValueBreakdown:
        features = TraceFeatures.of(trace)
        value, origin = self._novelty(trace.id, vector)
        profile, weights = self.profiles.select(trace.metadata.task_domain)
        return compose(
            trace_id=trace.id,
            domain=trace.metadata.task_domain,
            features=features,
            novelty_value=value,
            novelty_origin=origin,
            profile=profile,
            weights=weights,
            threshold=self.threshold,
        )

    def _novelty(
        self, trace_id: str, vector: NDArray[np.float32] | None
    ) -> tuple[float, NoveltyOrigin]:
        if vector is None:
            return NO_EMBEDDER_NOVELTY, NoveltyOrigin(
                "no_embedder", reason=self._no_embedder_reason
            )
        cache = self.cache
        with self._lock:
            nearest = cache.nearest(vector)
            if self.mode == "online":
                cache.add(vector, id=trace_id)
        if nearest is None:
            return EMPTY_CACHE_NOVELTY, NoveltyOrigin("empty_cache")
        return novelty(nearest.similarity), NoveltyOrigin(
            "embedding", nearest_id=nearest.id, similarity=nearest.similarity
        )
