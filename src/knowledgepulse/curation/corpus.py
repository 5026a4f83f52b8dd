"""Corpus scoring: each trace's novelty against every other trace of the input.

Online scoring compares a trace with the ones before it, so of two near-duplicates only the
second looks unoriginal and shuffling the file changes the verdicts. Here nothing depends on
order: the traces are embedded in a canonical order (by id, then a digest of their content) and
each is compared with all the others (leave-one-out; a second copy of an id is the same trace).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
from numpy.typing import NDArray

from knowledgepulse.curation.select import Candidate
from knowledgepulse.novelty.cache.index import approximate, nearest_other_key
from knowledgepulse.novelty.cache.search import BLOCK_BYTES, frozen_nearest
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.value.breakdown import NoveltyOrigin, ValueBreakdown
from knowledgepulse.value.dimensions import EMPTY_CACHE_NOVELTY, NO_EMBEDDER_NOVELTY
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import TraceValueScorer

NO_EMBEDDER_REASON = "no embedder: corpus novelty compares embeddings, so novelty is 0.5"


def content_digest(document: Any) -> bytes:
    """A digest of a JSON document that does not depend on the order of its keys."""
    try:
        data = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits, a lone surrogate
        data = json.dumps(document, sort_keys=True, ensure_ascii=True).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


def canonical_order(traces: Sequence[TraceItem]) -> list[int]:
    """Indexes of ``traces`` by id, then content: the same sequence for any input order."""
    digests = [content_digest(loaded.record.value) for loaded in traces]
    return sorted(range(len(traces)), key=lambda i: (traces[i].trace.id, digests[i]))


def time_order(traces: Sequence[TraceItem]) -> list[int]:
    """Indexes of ``traces`` by ``metadata.created_at``, then id, then content."""
    # A stable sort: equal times keep the canonical order.
    return sorted(canonical_order(traces), key=lambda i: traces[i].trace.metadata.created_at)


def leave_one_out_nearest(
    vectors: NDArray[np.float32], keys: Sequence[str], *, block_bytes: int = BLOCK_BYTES
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """For each row, the most similar row with another key, and their cosine.

    Rows with equal keys (trace ids) are never compared. Returns ``(nearest, similarity)``:
    the nearest other row (``-1`` when there is none) and the cosine, clamped to [-1, 1]
    (``nan`` with none). Equal similarities go to the smallest key, then the lowest index.
    Past :data:`~knowledgepulse.novelty.cache.index.EXACT_LIMIT` rows an HNSW index proposes
    the neighbours (see :mod:`~knowledgepulse.novelty.cache.index`).
    """
    if vectors.shape[0] != len(keys):
        raise ValueError(f"{vectors.shape[0]} vectors for {len(keys)} keys")
    # The scan keeps the earliest of equal similarities: rows by key, then index, make it the
    # smallest key's lowest row.
    order = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.intp)
    _, codes = np.unique(np.asarray(keys, dtype=object)[order], return_inverse=True)
    codes = codes.astype(np.intp).reshape(-1)
    ordered = vectors[order]
    if approximate(len(keys)):  # past the exact limit: a nearest, not always the smallest key
        found_index, found_similarity = nearest_other_key(ordered, codes)
    else:
        found = frozen_nearest(
            ordered, ordered, held_keys=codes, query_keys=codes, block_bytes=block_bytes
        )
        found_index, found_similarity = found.index, found.similarity
    nearest = np.full(len(keys), -1, dtype=np.intp)
    similarity = np.full(len(keys), np.nan, dtype=np.float64)
    nearest[order] = np.where(found_index >= 0, order[found_index], -1)
    similarity[order] = found_similarity
    return nearest, similarity


@dataclass(frozen=True, slots=True)
class Corpus:
    """Every item of an input scored in corpus mode, in input order, and their vectors.

    What :func:`~knowledgepulse.runs.select` and :func:`~knowledgepulse.runs.dedupe` choose from;
    give one back to either to choose again without scoring again.

    Attributes:
        items: each trace item with its breakdown (novelty against every other item).
        vectors: the items' unit vectors, row ``i`` for ``items[i]`` (``None`` without an
            embedder).
        cosine_of: a cosine threshold set on MiniLM's scale as a cosine between these vectors
            (:meth:`~knowledgepulse.value.TraceValueScorer.cosine_of` of the scorer that made
            them).
    """

    items: list[ScoredItem]
    vectors: NDArray[np.float32] | None
    cosine_of: Callable[[float], float] = field(default=lambda cosine: cosine, compare=False)

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """Each item's breakdown, in input order."""
        return [scored.breakdown for scored in self.items]

    def candidates(self, tasks: Sequence[str | None] | None = None) -> list[Candidate]:
        """Each item as a selection candidate, with its task when ``tasks`` gives them."""
        keys = tasks if tasks is not None else [None] * len(self.items)
        return [
            Candidate(
                scored.breakdown.trace_id,
                scored.breakdown.score,
                domain=scored.breakdown.domain,
                tiebreak=content_digest(scored.item.document),
                task=task,
            )
            for scored, task in zip(self.items, keys, strict=True)
        ]

    def nearest_similarities(self) -> list[float]:
        """The cosine of each embedded item with its nearest other item (none for a lone id)."""
        return [
            novelty.similarity
            for novelty in (scored.breakdown.novelty for scored in self.items)
            if novelty.source == "embedding" and novelty.similarity is not None
        ]


def score_corpus(scorer: TraceValueScorer, traces: Sequence[TraceItem]) -> Corpus:
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
        nearest, similarity = leave_one_out_nearest(embedded, [ids[i] for i in order])
        # A trace with no other (every trace has its id) keeps the empty cache's novelty.
        origins = [(EMPTY_CACHE_NOVELTY, NoveltyOrigin("empty_cache"))] * len(traces)
        for rank, index in enumerate(order):
            if nearest[rank] >= 0:
                cosine = float(similarity[rank])
                nearest_id = ids[order[nearest[rank]]]
                origin = NoveltyOrigin(
                    "embedding",
                    nearest_id=nearest_id,
                    similarity=cosine,
                    calibrated_onto=scorer.calibrated_onto,
                )
                origins[index] = (scorer.novelty_of(cosine), origin)
    items = [
        ScoredItem(loaded, scorer.breakdown_with_novelty(loaded.trace, value, origin))
        for loaded, (value, origin) in zip(traces, origins, strict=True)
    ]
    return Corpus(items, vectors, scorer.cosine_of)
