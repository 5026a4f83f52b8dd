"""Corpus scoring: each trace's novelty against every other trace of the input.

Online scoring compares a trace with the ones before it, so of two near-duplicates only the
second looks unoriginal and shuffling the file changes the verdicts. Here nothing depends on
order: the traces are embedded in a canonical order (by id, then a digest of their content) and
each is compared with all the others (leave-one-out; a second copy of an id is the same trace).

:func:`score_corpus` holds every item; :func:`score_apart` holds of each only what choosing
needs (its breakdown, :class:`Facts` and vector: about 1 KB a trace, against 20 KB or more for
an item), for an input that can be read again to write the chosen items (:meth:`Corpus.whole`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeAlias, cast

import numpy as np
import orjson
from numpy.typing import NDArray

from knowledgepulse._util.text import comparable
from knowledgepulse.curation.lane import EmbeddingLane, lane_for
from knowledgepulse.curation.select import Candidate
from knowledgepulse.errors import InputFileError
from knowledgepulse.novelty.cache.index import approximate, held_dtype, nearest_other_key
from knowledgepulse.novelty.cache.search import BLOCK_BYTES, as_float32, frozen_nearest
from knowledgepulse.novelty.representation import in_model_script
from knowledgepulse.records import Record
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value.breakdown import NoveltyOrigin, ValueBreakdown
from knowledgepulse.value.dimensions import (
    EMPTY_CACHE_NOVELTY,
    NO_EMBEDDER_NOVELTY,
    TraceFeatures,
)
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import TraceValueScorer

NO_EMBEDDER_REASON = "no embedder: corpus novelty compares embeddings, so novelty is 0.5"
CHANGED = (
    "the input changed while kp read it: it no longer gives the traces it gave, at {location}; "
    "run again on a copy that nothing writes to"
)
HELD_APART: ReasoningTrace = ReasoningTrace.model_construct(**cast("dict[str, Any]", {}))
"""The trace of an item held apart (:func:`score_apart`): it has no field, so reading one
raises ``AttributeError`` rather than giving a value; the whole item is :meth:`Corpus.whole`'s."""

NO_LINES: Mapping[Any, int] = MappingProxyType({})
"""The lines of a record held apart: none (one empty mapping for all, not one each)."""

Reread: TypeAlias = Callable[[Collection[int]], Iterator[TraceItem]]
"""Every item of a corpus's input again, in input order, as it was scored (redacted when it
was); the redaction of the items at the indexes given is counted."""

RowsAgain: TypeAlias = Callable[[], Iterator[Record]]
"""Every record of a corpus's input (files, or rows in memory) again, in input order, not
converted: what writing the items' dataset rows back needs (:meth:`Corpus.whole` with ``rows``)."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What choosing reads of an item besides its breakdown, kept when the item is not.

    Attributes:
        digest: :func:`content_digest` of its trace's JSON (ties between copies of an id).
        success: its ``metadata.success``.
        objective_digest: a digest of its ``task.objective`` as compared (task inference groups
            equal ones, :func:`~knowledgepulse._util.text.comparable`; a prompt can be kilobytes
            long, its digest is 16 bytes).
        objective_read: whether the objective is in a script the embedding models read apart
            (:func:`~knowledgepulse.novelty.representation.in_model_script`): if not, task
            inference compares the trace by its objective only, not by its vector.
    """

    digest: bytes
    success: bool
    objective_digest: bytes
    objective_read: bool = True

    @classmethod
    def of(cls, item: TraceItem) -> Facts:
        """An item's facts."""
        trace = item.trace
        return cls(
            content_digest(item.document),
            trace.metadata.success,
            hashlib.blake2b(
                comparable(trace.task.objective).encode("utf-8", "surrogatepass"), digest_size=16
            ).digest(),
            in_model_script(trace.task.objective),
        )


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
    vectors: NDArray[np.floating[Any]],
    keys: Sequence[str],
    *,
    order: Sequence[int] | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """For each row, the most similar row with another key, and their cosine.

    Rows with equal keys (trace ids) are never compared. Returns ``(nearest, similarity)``:
    the nearest other row (``-1`` when there is none) and the cosine, clamped to [-1, 1]
    (``nan`` with none). ``order`` ranks the rows, by key (by default: by key, then index):
    equal similarities go to the earliest in it, and the answer depends only on the rows in
    that order, not on where each row sits in ``vectors``. Past
    :data:`~knowledgepulse.novelty.cache.index.EXACT_LIMIT` rows an HNSW index proposes the
    neighbours (see :mod:`~knowledgepulse.novelty.cache.index`).
    """
    if vectors.shape[0] != len(keys):
        raise ValueError(f"{vectors.shape[0]} vectors for {len(keys)} keys")
    _, codes = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
    codes = codes.astype(np.intp).reshape(-1)
    if order is None:
        order = sorted(range(len(keys)), key=keys.__getitem__)
    ranked = np.asarray(order, dtype=np.intp)
    if approximate(len(keys)):  # past the exact limit: a nearest, not always the earliest
        return nearest_other_key(vectors, codes, ranked)  # no copy of the vectors in order
    # The scan keeps the earliest of equal similarities: the rows in order make it the
    # earliest of them in ``order``.
    ordered = as_float32(vectors[ranked])
    found = frozen_nearest(
        ordered, ordered, held_keys=codes[ranked], query_keys=codes[ranked], block_bytes=block_bytes
    )
    nearest = np.full(len(keys), -1, dtype=np.intp)
    similarity = np.full(len(keys), np.nan, dtype=np.float64)
    nearest[ranked] = np.where(found.index >= 0, ranked[found.index], -1)
    similarity[ranked] = found.similarity
    return nearest, similarity


@dataclass(frozen=True, slots=True)
class Corpus:
    """Every item of an input scored in corpus mode, in input order, and their vectors.

    What :func:`~knowledgepulse.runs.select` and :func:`~knowledgepulse.runs.dedupe` choose from;
    give one back to either to choose again without scoring again.

    Attributes:
        items: each trace item with its breakdown (novelty against every other item).
        vectors: the items' unit vectors, row ``i`` for ``items[i]`` (``None`` without an
            embedder): float32, or float16 past the exact search's limit
            (:func:`~knowledgepulse.novelty.cache.index.held_dtype`).
        cosine_of: a cosine threshold set on MiniLM's scale as a cosine between these vectors
            (:meth:`~knowledgepulse.value.TraceValueScorer.cosine_of` of the scorer that made
            them).
        reference_cosine: a cosine between these vectors on MiniLM's scale, the inverse of
            ``cosine_of``: what a similarity is reported as, beside the thresholds.
        facts: each item's :class:`Facts` (``None``: taken from the items when asked).
        reread: for items held apart (:func:`score_apart`), what reads them again whole;
            ``None``: the items are whole.
        leave_one_out: whether each breakdown's novelty is against the other items (as
            :func:`score_corpus` and :func:`score_apart` score them): then its cosine bounds
            the item's cosine with every other (:meth:`nearest_cosines`).
        rows_again: for items held apart that are all dataset rows, read unredacted, what
            reads their records again without converting them; ``None``: they are
            converted again (:data:`Reread`).
    """

    items: list[ScoredItem]
    vectors: NDArray[np.floating[Any]] | None
    cosine_of: Callable[[float], float] = field(default=lambda cosine: cosine, compare=False)
    facts: list[Facts] | None = field(default=None, repr=False, compare=False)
    reread: Reread | None = field(default=None, repr=False, compare=False)
    leave_one_out: bool = field(default=False, compare=False)
    rows_again: RowsAgain | None = field(default=None, repr=False, compare=False)
    reference_cosine: Callable[[float], float] = field(
        default=lambda cosine: cosine, repr=False, compare=False
    )

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """Each item's breakdown, in input order."""
        return [scored.breakdown for scored in self.items]

    @property
    def held_apart(self) -> bool:
        """Whether the items are held apart (:func:`score_apart`): :meth:`whole` reads them."""
        return self.reread is not None

    def item_facts(self) -> list[Facts]:
        """Each item's :class:`Facts`, in input order."""
        if self.facts is not None:
            return self.facts
        return [Facts.of(scored.item) for scored in self.items]

    def candidates(
        self,
        tasks: Sequence[str | None] | None = None,
        outcomes: Sequence[float | None] | None = None,
        *,
        failed: bool = False,
    ) -> list[Candidate]:
        """Each item as a selection candidate, with its task when ``tasks`` gives them.

        ``outcomes``: each candidate's outcome, in input order. ``failed``: each candidate
        says whether its run failed (not its facts' ``success``), as selection ranks them.
        """
        count = len(self.items)
        keys = tasks if tasks is not None else [None] * count
        found = outcomes if outcomes is not None else [None] * count
        return [
            Candidate(
                scored.breakdown.trace_id,
                scored.breakdown.score,
                domain=scored.breakdown.domain,
                tiebreak=facts.digest,
                task=task,
                failed=failed and not facts.success,
                outcome=outcome,
            )
            for scored, facts, task, outcome in zip(
                self.items, self.item_facts(), keys, found, strict=True
            )
        ]

    def whole(
        self, indexes: Iterable[int], counted: Collection[int] | None = None, *, rows: bool = False
    ) -> Iterator[tuple[int, ScoredItem]]:
        """The items at ``indexes``, each whole, with its place in ``indexes``.

        Held, they come in the order of ``indexes``. Held apart, they are read again
        (:data:`Reread`; the redaction of those at ``counted``, by default ``indexes``, is
        counted) and come in input order: a writer puts each in its place
        (:meth:`~knowledgepulse.runs.write.ItemWriter.write`'s ``at``). ``rows``: only their
        dataset rows are needed (written back with columns added); with :attr:`rows_again`
        each item then has its row read again and no trace (about three times faster).

        Raises:
            InputFileError: the input no longer gives the items it gave (it changed).
        """
        wanted = list(indexes)
        if self.reread is None:
            yield from ((place, self.items[index]) for place, index in enumerate(wanted))
            return
        place = {index: number for number, index in enumerate(wanted)}
        if rows and self.rows_again is not None:
            yield from self._rows_whole(self.rows_again(), place)
            return
        count = 0
        for index, item in enumerate(self.reread(place.keys() if counted is None else counted)):
            if index >= len(self.items) or item.trace.id != self.items[index].breakdown.trace_id:
                raise InputFileError(CHANGED.format(location=item.location))
            if index in place:
                count += 1
                yield place[index], ScoredItem(item, self.items[index].breakdown)
        if count < len(place):
            raise InputFileError(CHANGED.format(location="its end"))

    def _rows_whole(
        self, records: Iterator[Record], place: Mapping[int, int]
    ) -> Iterator[tuple[int, ScoredItem]]:
        """:meth:`whole` of items held apart, each with its row found again by its location.

        A record at no item's row gave none (its problem was told in the first reading).
        """
        items = iter(enumerate(self.items))
        index, scored = next(items, (-1, None))
        for record in records:
            if scored is None:
                return
            if scored.item.row is None or record.location != scored.item.row.location:
                continue
            if index in place:
                yield place[index], ScoredItem(replace(scored.item, row=record), scored.breakdown)
            index, scored = next(items, (-1, None))
        if scored is not None:
            raise InputFileError(CHANGED.format(location="its end"))

    def nearest_cosines(self) -> list[float] | None:
        """Each item's highest cosine with any other item, or ``inf`` where it is not known.

        Known from the leave-one-out novelty (:attr:`leave_one_out`; else ``None``), which
        compares items of other ids only: an item whose id recurs, or with no other id, is
        ``inf``.
        """
        if not self.leave_one_out:
            return None
        ids = Counter(scored.breakdown.trace_id for scored in self.items)
        cosines = []
        for scored in self.items:
            novelty = scored.breakdown.novelty
            known = novelty.source == "embedding" and ids[scored.breakdown.trace_id] == 1
            cosine = novelty.similarity if known else None
            cosines.append(math.inf if cosine is None else cosine)
        return cosines

    def nearest_similarities(self) -> list[float]:
        """The cosine of each embedded item with its nearest other item (none for a lone id).

        On the thresholds' scale (:attr:`reference_cosine`), to choose ``max_similarity`` from.
        """
        return [
            self.reference_cosine(novelty.similarity)
            for novelty in (scored.breakdown.novelty for scored in self.items)
            if novelty.source == "embedding" and novelty.similarity is not None
        ]


def score_corpus(scorer: TraceValueScorer, traces: Sequence[TraceItem]) -> Corpus:
    """Score every trace with leave-one-out novelty; the scorer's cache is neither read nor changed.

    Holds every vector at once (4 bytes per dimension per trace: 3.5 KB with the default
    novelty text; 2 past the exact search's limit,
    :func:`~knowledgepulse.novelty.cache.index.held_dtype`).
    """
    facts = [Facts.of(loaded) for loaded in traces]
    ids = [loaded.trace.id for loaded in traces]
    order = sorted(range(len(traces)), key=lambda i: (ids[i], facts[i].digest))  # canonical_order
    embedded = scorer.embed_traces([traces[i].trace for i in order])
    vectors: NDArray[np.floating[Any]] | None = None
    if embedded is not None:  # back from canonical order to the caller's
        vectors = np.empty(embedded.shape, held_dtype(len(embedded)))
        vectors[order] = embedded
        del embedded
    origins = _novelties(scorer, ids, order, vectors)
    items = [
        ScoredItem(loaded, scorer.breakdown_with_novelty(loaded.trace, value, origin))
        for loaded, (value, origin) in zip(traces, origins, strict=True)
    ]
    return Corpus(
        items,
        vectors,
        scorer.cosine_of,
        facts,
        leave_one_out=True,
        reference_cosine=scorer.reference_cosine,
    )


class _VectorArray:
    """One array of vectors, grown in place as batches come (a realloc: no second copy).

    In half precision once it passes the exact search's limit (:func:`held_dtype`). No view of
    it outlives a call of :meth:`add`, so resizing may skip its reference check.
    """

    def __init__(self) -> None:
        self.array: NDArray[np.floating[Any]] | None = None
        self.count = 0

    def add(self, *batches: NDArray[np.floating[Any]]) -> None:
        """Each batch's rows after those added before."""
        for vectors in batches:
            if self.array is None:
                self.array = np.empty((0, vectors.shape[1]), dtype=vectors.dtype)
            if self.array.dtype != (dtype := held_dtype(self.count + len(vectors))):
                self.array = self.array[: self.count].astype(dtype)
            if self.count + len(vectors) > len(self.array):
                grown = max(self.count + len(vectors), len(self.array) * 5 // 4)
                self.array.resize((grown, vectors.shape[1]), refcheck=False)
            self.array[self.count : self.count + len(vectors)] = vectors
            self.count += len(vectors)

    def whole(self) -> NDArray[np.floating[Any]] | None:
        """The rows added, trimmed to them (``None``: none was ever added)."""
        if self.array is not None:
            self.array.resize((self.count, self.array.shape[1]), refcheck=False)
        return self.array


def score_apart(scorer: TraceValueScorer, traces: Iterable[TraceItem], reread: Reread) -> Corpus:
    """:func:`score_corpus` holding of each trace only its breakdown, facts and vector.

    ``reread`` gives the traces again for :meth:`Corpus.whole`; each item of the corpus is
    held without its JSON, its row's value or its trace (:data:`HELD_APART`). The breakdowns
    are :func:`score_corpus`'s, except that the traces are embedded in batches in input order:
    an embedder whose vectors depend on the batch (MiniLM's padding) may round differently.
    """
    held: list[TraceItem] = []
    facts: list[Facts] = []
    counted: list[tuple[str, str, TraceFeatures]] = []
    batch: list[ReasoningTrace] = []
    embedded = _VectorArray()
    unembedded = False
    lane: EmbeddingLane | None = None  # a second process, past LANE_AFTER traces

    def embed() -> None:
        nonlocal unembedded, lane
        if lane is None and embedded.count:  # the first batch here: the embedder loads
            lane = lane_for(scorer.embedder, scorer.novelty_text, len(held))
        if lane is not None:
            lane.put(batch)
            embedded.add(*lane.ready())
        elif not unembedded:
            vectors = scorer.embed_traces(batch)
            unembedded = vectors is None
            if vectors is not None:
                embedded.add(vectors)
        batch.clear()

    # Equal features (and domains) are one object: most traces share them with others.
    shared: dict[Any, Any] = {}
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: lane.close() if lane else None)
        for loaded in traces:
            trace = loaded.trace
            facts.append(Facts.of(loaded))
            domain, features = trace.metadata.task_domain, TraceFeatures.of(trace)
            counted.append(
                (trace.id, shared.setdefault(domain, domain), shared.setdefault(features, features))
            )
            held.append(_light(loaded))
            if scorer.embedder is not None and not unembedded:
                batch.append(trace)
                if len(batch) >= scorer.batch_size:
                    embed()
        if batch or (embedded.array is None and scorer.embedder is not None):
            embed()  # the rest; or none: the embedder's empty answer, as score_corpus has it
        if lane is not None:
            embedded.add(*lane.ready(wait=True))
    vectors = None if unembedded else embedded.whole()
    ids = [trace_id for trace_id, _, _ in counted]
    order = sorted(range(len(ids)), key=lambda i: (ids[i], facts[i].digest))
    origins = _novelties(scorer, ids, order, vectors)
    breakdowns = _breakdowns(scorer, counted, origins)
    items = [ScoredItem(light, found) for light, found in zip(held, breakdowns, strict=True)]
    return Corpus(
        items,
        vectors,
        scorer.cosine_of,
        facts,
        reread,
        leave_one_out=True,
        reference_cosine=scorer.reference_cosine,
    )


def _breakdowns(
    scorer: TraceValueScorer,
    counted: Sequence[tuple[str, str, TraceFeatures]],
    origins: Sequence[tuple[float, NoveltyOrigin]],
) -> list[ValueBreakdown]:
    """Each trace's breakdown from its id, domain, features and novelty (``breakdown_of``).

    A breakdown is a pure function of them, and its id is only copied into it: traces of equal
    domain, features and novelty get one composed breakdown, each with its own id. Without an
    embedder every novelty is one, and most traces share their features (a dataset's rows), so
    the dimensions, overrides and numbers are held once (about 200 bytes a trace: 40 MB at
    200,000 rows) and composed once. A novelty from an embedding is the trace's own (its nearest
    other): composed each time, nothing kept.
    """
    made: dict[tuple[str, TraceFeatures, float, NoveltyOrigin], ValueBreakdown] = {}
    found = []
    for (trace_id, domain, features), (value, origin) in zip(counted, origins, strict=True):
        if origin.source == "embedding":
            found.append(scorer.breakdown_of(trace_id, domain, features, value, origin))
            continue
        like = made.get(key := (domain, features, value, origin))
        if like is None:
            like = made[key] = scorer.breakdown_of(trace_id, domain, features, value, origin)
        found.append(like if like.trace_id == trace_id else replace(like, trace_id=trace_id))
    return found


def _light(item: TraceItem) -> TraceItem:
    """What :func:`score_apart` holds of an item: where it and its row were read, task, reward.

    One record stands for both places when they are one (a dataset row's).
    """
    record = Record(item.location, None, NO_LINES)
    row = None
    if item.row is not None:
        same = item.row.location == item.location
        row = record if same else Record(item.row.location, None, NO_LINES)
    return TraceItem(record, HELD_APART, row, item.task, (), item.reward)


def _novelties(
    scorer: TraceValueScorer,
    ids: Sequence[str],
    order: Sequence[int],
    vectors: NDArray[np.floating[Any]] | None,
) -> list[tuple[float, NoveltyOrigin]]:
    """Each trace's leave-one-out novelty and its origin, in input order.

    ``ids`` and ``vectors`` are in input order; ``order`` is the canonical order
    (:func:`canonical_order`), which breaks ties and makes the answer the same for any input
    order.
    """
    if vectors is None:
        origin = NoveltyOrigin("no_embedder", reason=NO_EMBEDDER_REASON)
        return [(NO_EMBEDDER_NOVELTY, origin)] * len(ids)
    nearest, similarity = leave_one_out_nearest(vectors, ids, order=order)
    # A trace with no other (every trace has its id) keeps the empty cache's novelty.
    origins = [(EMPTY_CACHE_NOVELTY, NoveltyOrigin("empty_cache"))] * len(ids)
    for index, other in enumerate(nearest):
        if other >= 0:
            cosine = float(similarity[index])
            origin = NoveltyOrigin(
                "embedding",
                nearest_id=ids[other],
                similarity=cosine,
                calibrated_onto=scorer.calibrated_onto,
            )
            origins[index] = (scorer.novelty_of(cosine), origin)
    return origins
