"""Corpus scoring: each trace's novelty against every other trace of the input.

Online scoring compares a trace with the ones before it, so the first of two near-duplicates
looks novel and the second does not, and shuffling the file changes the verdicts. Here both get
a low novelty, and nothing depends on order: the traces are embedded in a canonical order (by
id, then content, so even batched inference sees the same batches) and each is compared with
all the others (leave-one-out; a second copy of the same id is the same trace, not another).
The comparison is the frozen cache's blocked scan (see
:func:`~knowledgepulse.novelty.cache.frozen_nearest`), every trace held and its own id left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.curation.ordering import canonical_order
from knowledgepulse.novelty.cache import frozen_nearest
from knowledgepulse.trace.load import LoadedTrace
from knowledgepulse.value.breakdown import NoveltyOrigin, ValueBreakdown
from knowledgepulse.value.dimensions import (
    EMPTY_CACHE_NOVELTY,
    NO_EMBEDDER_NOVELTY,
    novelty,
)
from knowledgepulse.value.scorer import TraceValueScorer

NO_EMBEDDER_REASON = "no embedder: corpus novelty compares embeddings, so novelty is 0.5"


@dataclass(frozen=True, slots=True)
class CorpusScores:
    """Every trace's breakdown and vector, aligned with the traces given.

    Attributes:
        breakdowns: one per trace, in the order the traces were given.
        vectors: their unit vectors (row ``i`` for trace ``i``), or ``None`` without an embedder.
    """

    breakdowns: list[ValueBreakdown]
    vectors: NDArray[np.float32] | None


def score_corpus(scorer: TraceValueScorer, traces: Sequence[LoadedTrace]) -> CorpusScores:
    """Score every trace with leave-one-out novelty; the scorer's cache is neither read nor changed.

    Holds every vector at once (4 bytes per dimension per trace: 1.5 KB with MiniLM).
    """
    order = canonical_order(traces)
    embedded = scorer.embed_traces([traces[i].trace for i in order])
    vectors: NDArray[np.float32] | None = None
    origins: list[tuple[float, NoveltyOrigin]]
    if embedded is None:
        origins = [(NO_EMBEDDER_NOVELTY, NoveltyOrigin("no_embedder", reason=NO_EMBEDDER_REASON))]
        origins *= len(traces)
    else:
        # Back from canonical order to the caller's.
        vectors = np.empty_like(embedded)
        vectors[order] = embedded
        ids = [loaded.trace.id for loaded in traces]
        # Canonical order sorts by id, so the lowest row among equals has the smallest id too.
        _, codes = np.unique(np.asarray([ids[i] for i in order], dtype=object), return_inverse=True)
        keys = codes.astype(np.intp).reshape(-1)
        found = frozen_nearest(embedded, embedded, held_keys=keys, query_keys=keys)
        nearest, similarity = found.index, found.similarity
        origins = [(0.0, NoveltyOrigin("empty_cache"))] * len(traces)
        for rank, index in enumerate(order):
            if nearest[rank] < 0:
                origins[index] = (EMPTY_CACHE_NOVELTY, NoveltyOrigin("empty_cache"))
            else:
                cosine = float(similarity[rank])
                origins[index] = (
                    novelty(cosine),
                    NoveltyOrigin(
                        "embedding", nearest_id=ids[order[nearest[rank]]], similarity=cosine
                    ),
                )
    breakdowns = [
        scorer.breakdown_with_novelty(loaded.trace, value, origin)
        for loaded, (value, origin) in zip(traces, origins, strict=True)
    ]
    return CorpusScores(breakdowns, vectors)
