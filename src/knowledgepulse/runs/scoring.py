"""Scoring trace items: in input order as they stream, in time order, or as a corpus.

Input order holds only the current batch; ``order="time"``, corpus mode and a percentile
minimum score read the whole input first. A :class:`ScoreRun` opens a saved vector cache made
for its scorer's model and novelty text before the first item, and saves it after a clean run.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from knowledgepulse._util.atomic import through_links
from knowledgepulse._util.collector import young_collections_only
from knowledgepulse._util.settings import instance_of, one_of, optional_path, wrong_setting
from knowledgepulse.errors import (
    CacheFileError,
    Location,
    ParameterConflictError,
    ScorerParameterError,
    Setting,
)
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS
from knowledgepulse.reports.value import CacheChange
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD, TraceValueScorer, checked_scorer

if TYPE_CHECKING:  # numpy, and the cache, load only for the runs that need them
    from knowledgepulse.curation.percentiles import MinScore
    from knowledgepulse.novelty.cache import VectorCache
    from knowledgepulse.reports.value import RunTally
    from knowledgepulse.sources import TraceOptions

_log = logging.getLogger("knowledgepulse")

Order: TypeAlias = Literal["input", "time"]
"""``input``: as the items come; ``time``: by ``metadata.created_at`` (ties by id, content)."""

CacheOutcome: TypeAlias = Literal["saved", "frozen", "no_embedder"]
"""What closing a run did with its cache: saved it, left it (frozen), or had nothing to save
(no embedder was available, so no vector was made)."""


def tell_unweighed_domain(
    scorer: TraceValueScorer, options: TraceOptions | None, notes: Callable[[str], object] | None
) -> None:
    """Say when the converted traces' domain names none of ``scorer``'s weight profiles.

    Told to ``notes``, else logged (``knowledgepulse``): those traces get the default weights.
    """
    domain = options.domain if options is not None else None
    said = scorer.profiles.unweighed(domain) if domain else None
    if said is not None:
        (notes or _log.warning)(said)


def score_items(
    items: Iterable[TraceItem],
    scorer: TraceValueScorer,
    *,
    order: Order = "input",
    corpus: bool = False,
    min_score: MinScore | None = None,
) -> Iterator[ScoredItem]:
    """Each item with its breakdown, in input order or in ``order``.

    Args:
        items: the trace items (problems already set aside: see :func:`valid_items`).
        scorer: the scorer; its cache is read and (online) filled, except in corpus mode.
        order: ``input`` streams, a batch at a time; ``time`` reads every item first.
        corpus: novelty against every other item of the input (leave-one-out), so no verdict
            depends on order; reads every item first, and the scorer's cache is not used.
        min_score: the threshold of every verdict instead of the scorer's: a score
            (``MinScore.parse("0.8")``), or a percentile of the scores (``"p90"``), known once
            every score is (reads every item first).

    Raises:
        ScorerParameterError: an unknown ``order``, or ``order="time"`` with ``corpus``.
    """
    one_of(order, "order", ("input", "time"))
    if corpus and order == "time":
        raise ScorerParameterError(
            "corpus scoring does not depend on order; drop ", Setting("order", "time")
        )
    percentile = min_score is not None and min_score.percentile is not None
    if order == "input" and not corpus and not percentile:
        scored = _in_input_order(scorer, items)
    else:
        scored = _whole(scorer, list(items), order, corpus, min_score)
    fixed = None if min_score is None else min_score.value
    if fixed is None or fixed == scorer.threshold:
        return scored
    return (ScoredItem(s.item, dataclasses.replace(s.breakdown, threshold=fixed)) for s in scored)


def _in_input_order(scorer: TraceValueScorer, items: Iterable[TraceItem]) -> Iterator[ScoredItem]:
    """Each breakdown with its item, in order, holding only the items of the current batch.

    Not ``itertools.tee``: it frees its buffer 57 items at a time, and traces kept alive that
    long survive into older GC generations (20k traces: 2,290 collections against 61, +20% time).
    """
    pending: deque[TraceItem] = deque()

    def feed() -> Iterator[ReasoningTrace]:
        for item in items:
            pending.append(item)
            yield item.trace

    for breakdown in scorer.iter_scores(feed()):
        yield ScoredItem(pending.popleft(), breakdown)


def _whole(
    scorer: TraceValueScorer,
    items: list[TraceItem],
    order: Order,
    corpus: bool,
    min_score: MinScore | None,
) -> Iterator[ScoredItem]:
    """Every item with its breakdown, for the modes that need the whole input first."""
    from knowledgepulse.curation import score_corpus  # noqa: PLC0415 - numpy
    from knowledgepulse.curation.corpus import time_order  # noqa: PLC0415 - numpy

    if corpus:
        with young_collections_only():  # every item is held
            breakdowns = score_corpus(scorer, items).breakdowns
    else:
        if order == "time":
            items = [items[i] for i in time_order(items)]
        breakdowns = scorer.score_many(item.trace for item in items)
    if min_score is not None and min_score.percentile is not None:
        # The threshold is known only now: the verdicts are recomputed against it.
        threshold = min_score.resolve([b.score for b in breakdowns])
        breakdowns = [dataclasses.replace(b, threshold=threshold) for b in breakdowns]
    return map(ScoredItem, items, breakdowns)


def min_score_of(value: MinScore | float | str | None) -> MinScore | None:
    """A minimum score as given to a run: ``0.8``, ``"0.8"``, ``"p90"`` or a ``MinScore``.

    Raises:
        ThresholdSpecError: a text or number that is neither a score in [0, 1] nor ``pNN``,
            naming ``min_score`` (a ``SettingTypeError`` for another type).
    """
    if value is None:
        return None
    from knowledgepulse.curation.percentiles import (  # noqa: PLC0415 - numpy
        MinScore,
        ThresholdSpecError,
    )

    if isinstance(value, MinScore):
        return value
    allowed = "a score in [0, 1] (0.6) or a percentile of the scores from p0 to p100 ('p90')"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise wrong_setting("min_score", value, allowed, wrong_type=True)
    try:
        return MinScore.parse(str(value))
    except ThresholdSpecError:
        raise ThresholdSpecError(Setting("min_score", value), f": give {allowed}") from None


def threshold_of(min_score: MinScore | None) -> float:
    """The threshold a scorer starts with: a fixed minimum score, else the default."""
    if min_score is None or min_score.value is None:
        return DEFAULT_THRESHOLD
    return min_score.value


def check_engine(
    *,
    engine: str = "local",
    address: str | None = None,
    kind: str | None = None,
    max_windows: str | int | None = None,
    corpus: bool = False,
    no_embedder: bool = False,
) -> None:
    """Refuse the settings of a run's embedding engine that contradict each other.

    Args:
        engine: ``local``, or ``ray`` (the MiniLM model on a Ray cluster's actors).
        address: the Ray cluster to join (``engine`` ``ray`` only).
        kind: the embedder asked for (``static`` takes no engine and no window cap).
        max_windows: the MiniLM model's window cap, if one is given.
        corpus: novelty against the input's other traces, which needs an embedder.
        no_embedder: the run embeds nothing.

    Raises:
        ParameterConflictError: the first conflict, naming its parameters.
    """
    ray = Setting("engine", "ray")
    rules = (
        (
            address is not None and engine != "ray",
            (Setting("address"), " names a Ray cluster; it needs ", ray),
        ),
        (
            engine == "ray" and no_embedder,
            (
                ray,
                " runs the embedding model on Ray; with ",
                Setting("no_embedder", True),
                " there is nothing to run: drop one of them",
            ),
        ),
        (
            kind == "static" and engine == "ray",
            (
                ray,
                " runs the MiniLM model on a cluster; the static embedder needs none: drop ",
                ray,
                " or ",
                Setting("kind", "static"),
            ),
        ),
        (
            kind == "static" and max_windows is not None,
            (
                Setting("max_windows"),
                " caps the windows the MiniLM model reads; the static embedder reads the "
                f"first {DEFAULT_MAX_WINDOWS}, MiniLM's default: drop ",
                Setting("max_windows"),
            ),
        ),
        (
            corpus and no_embedder,
            (
                Setting("corpus", True),
                " compares the input's traces with each other by their embeddings: it needs "
                "an embedder; drop ",
                Setting("no_embedder", True),
            ),
        ),
    )
    for broken, parts in rules:
        if broken:
            raise ParameterConflictError(*parts)


class ScoreRun:
    """A scorer for one run, with its saved vector cache: opened now, saved by :meth:`close`.

    Used as a context manager, the cache is saved when the block completes and left as it was
    when it raises (an interrupted run adds nothing to the file).

    Args:
        scorer: the scorer whose embedder, profiles, threshold, batch size and novelty text the
            run uses (default: ``TraceValueScorer()``). Without cache settings it is used as it
            is; with them, a scorer of the same settings is made around the cache they ask for.
        cache_path: a saved cache to score against, made if missing. It must have been made
            under the same model and novelty text (``CacheFileError`` otherwise).
        frozen: score against ``cache_path`` without adding to it (order-independent).
        cache_size: how many vectors the cache holds (default: the file's, else 1000).
        ttl_ms: the cache's time-to-live in milliseconds (default: the file's, else none).

    Raises:
        CacheFileError: ``cache_path`` is damaged, of another model, text or width, or
            missing while ``frozen``.
        ScorerParameterError: ``frozen`` without ``cache_path``, or a setting out of range.
        SettingTypeError: ``frozen`` is not a bool (``"no"`` would freeze the cache), or
            ``cache_path`` is not a path.
    """

    def __init__(
        self,
        scorer: TraceValueScorer | None = None,
        *,
        cache_path: str | Path | None = None,
        frozen: bool = False,
        cache_size: int | None = None,
        ttl_ms: float | None = None,
    ) -> None:
        frozen = instance_of(frozen, "frozen", bool, "True or False")
        cache_path = optional_path(
            cache_path, "cache_path", "the cache file's path, a str or a Path"
        )
        if frozen and cache_path is None:
            raise ScorerParameterError(
                Setting("frozen", True),
                " scores against a saved cache: give ",
                Setting("cache_path"),
            )
        scorer = checked_scorer(scorer) or TraceValueScorer()
        cache = None
        made = cache_path is not None and not frozen and not cache_path.exists()
        if (cache_path, cache_size, ttl_ms) != (None, None, None):
            # The cache's identity (model and novelty text) and width are the scorer's.
            cache = _open_cache(cache_path, scorer, cache_size, ttl_ms, frozen=frozen)
            scorer = TraceValueScorer(
                embedder=scorer.embedder,
                cache=cache,
                # A loaded cache took these already; a new one is made by the scorer.
                cache_size=cache_size if cache is None else None,
                ttl_ms=ttl_ms if cache is None else None,
                profiles=scorer.profiles,
                threshold=scorer.threshold,
                mode="frozen" if frozen else scorer.mode,
                batch_size=scorer.batch_size,
                novelty_text=scorer.novelty_text,
            )
        self.scorer = scorer
        self.cache_path = cache_path
        self.frozen = frozen
        # The file this run's opening made, removed if the run stops before it saves.
        self._made = cache_stat(cache_path) if cache is not None and made else None
        self.cache_size = cache_size
        self.dropped_on_open = 0 if cache is None else cache.dropped_on_load
        """How many of ``cache_path``'s oldest vectors a smaller ``cache_size`` left out."""
        self.cache_outcome: CacheOutcome | None = None
        """What :meth:`close` did with the cache (``None``: no cache, or not closed yet)."""
        self._counts_before = None if cache is None else cache.counts()
        self.cache_change: CacheChange | None = None
        """What the run did to the cache, as :meth:`close` found it (``None``: no cache)."""

    def score(
        self,
        items: Iterable[TraceItem],
        *,
        order: Order = "input",
        corpus: bool = False,
        min_score: MinScore | None = None,
    ) -> Iterator[ScoredItem]:
        """The items scored by this run's scorer: :func:`score_items`.

        Raises:
            ScorerParameterError: ``corpus`` in a run with a cache (corpus mode uses none).
            SettingTypeError: ``corpus`` is not a bool.
        """
        corpus = instance_of(corpus, "corpus", bool, "True or False")
        if corpus and self.cache_path is not None:
            raise ScorerParameterError(
                Setting("corpus", True),
                " compares the input's items with each other, not with a cache: drop ",
                Setting("cache_path"),
            )
        return score_items(items, self.scorer, order=order, corpus=corpus, min_score=min_score)

    @property
    def already_cached(self) -> int:
        """How many items met a vector held under their own id (scored by an earlier run)."""
        return self.scorer.already_cached

    def close(self) -> None:
        """Save the cache to ``cache_path`` (unless frozen, or no embedder made any vector)."""
        scorer, path = self.scorer, self.cache_path
        if path is None:
            return
        if scorer.embedder is None:
            self.cache_outcome = "frozen" if self.frozen else "no_embedder"
            return
        if self.frozen:
            self.cache_outcome = "frozen"
        elif scorer.cache.path is not None:
            scorer.cache.flush()  # opened from cache_path: append what this run added
            self.cache_outcome = "saved"
        else:  # made by the scorer: another run may have made the file since this one began
            scorer.cache.append_to(path, model_id=scorer.cache_model_id)
            self.cache_outcome = "saved"
        # After the save: what another run saved meanwhile is not counted as this one's.
        self.cache_change = CacheChange.of(
            self._counts_before, scorer.cache.counts(), scorer.cache.max_elements
        )

    def __enter__(self) -> ScoreRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            try:
                self.close()
            except BaseException:  # a save that failed (a full disk) leaves no file it made
                self._remove_made()
                raise
        else:
            self._remove_made()

    def _remove_made(self) -> None:
        if self._made is not None and self.cache_path is not None:
            self.scorer.cache.close()
            remove_unsaved_cache(self.cache_path, self._made)


def cache_stat(path: Path | None) -> os.stat_result | None:
    """The file at ``path`` as it is now (``None``: none there)."""
    try:
        return None if path is None else os.stat(path)
    except OSError:
        return None


def remove_unsaved_cache(path: Path, made: os.stat_result) -> None:
    """Remove the empty ring file a run made at ``path`` (``made``) and stopped before saving.

    An interrupted run then leaves no cache it was not to write. A file another run saved
    vectors into meanwhile, or replaced, is kept: those vectors are that run's.
    """
    from knowledgepulse.novelty.cache.ring_file import RingFile  # noqa: PLC0415 - numpy

    now = cache_stat(path)
    if now is None or not os.path.samestat(now, made):
        return
    try:
        ring = RingFile(path, writable=False)
        try:
            empty = ring.header.count == 0
        finally:
            ring.close()
        if empty:
            through_links(path).unlink()  # the file made: a link the user gave is kept
    except (OSError, CacheFileError):  # best effort: the run is being stopped anyway
        pass


def _open_cache(
    cache_path: Path | None,
    identity: TraceValueScorer,
    cache_size: int | None,
    ttl_ms: float | None,
    *,
    frozen: bool,
) -> VectorCache | None:
    """The cache file opened (``CacheFileError``: made under another model or text)."""
    if identity.embedder is None or cache_path is None:
        return None
    if frozen and not cache_path.exists():
        raise CacheFileError(
            f"{Location(str(cache_path))}: no such cache file (it is made by a run that adds)"
        )
    if not cache_path.exists() and identity.cache_dimensions is None:
        return None  # the scorer makes it once the first vectors give the width
    from knowledgepulse.novelty.cache import VectorCache  # noqa: PLC0415 - numpy, only with a cache

    return VectorCache.open(
        cache_path,
        model_id=identity.cache_model_id,
        dimensions=identity.cache_dimensions,
        max_elements=cache_size,
        ttl_ms=ttl_ms,
        read_only=frozen,
    )


def tallied(
    scored: Iterable[ScoredItem], tally: RunTally, progress: Callable[[int], object] | None = None
) -> Iterator[ScoredItem]:
    """The scored items, each counted in ``tally`` as it passes; ``progress`` told the count.

    The tally's threshold follows the items' (a percentile's is known once the whole input is).
    """
    for result in scored:
        tally.threshold = result.breakdown.threshold
        tally.add(result)
        if progress is not None:
            progress(tally.scored)
        yield result
