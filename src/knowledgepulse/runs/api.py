"""One call each on Python data: :func:`score` it, :func:`annotate` it, :func:`redact` it.

``data`` is what :func:`~knowledgepulse.runs.items_of` reads: a path or several, row dicts, a
pandas ``DataFrame``, a pyarrow ``Table`` or a ``datasets.Dataset``; dataset rows in a
conversation format are converted, ``ReasoningTrace`` documents read as they are. A record that
gives no valid trace is set aside and told to ``on_problem`` (by default logged as a warning on
the ``knowledgepulse`` logger), and the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.records import Problem
from knowledgepulse.runs.inputs import RunInput, items_of
from knowledgepulse.runs.redaction import redact_items
from knowledgepulse.runs.scoring import Order, ScoreRun, min_score_of, threshold_of
from knowledgepulse.runs.write import annotated
from knowledgepulse.trace import TraceItem
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import DEFAULT_BATCH_SIZE, DEFAULT_EMBEDDER

if TYPE_CHECKING:
    from knowledgepulse.curation import MinScore
    from knowledgepulse.integrations import TraceOptions
    from knowledgepulse.novelty import Embedder
    from knowledgepulse.redact.walk import Finding
    from knowledgepulse.value.profiles import ProfileRegistry, ScoringWeights

_log = logging.getLogger("knowledgepulse")

OnProblem = Callable[[Problem], object]
"""Told each record that gave no valid trace (and each warning), as it is met."""


class ScoreSettings(TypedDict, total=False):
    """The keyword arguments of :func:`score` and :func:`annotate` (see :func:`score`)."""

    embedder: Embedder | None
    min_score: MinScore | float | str | None
    order: Order
    corpus: bool
    profiles: ProfileRegistry | Mapping[str, ScoringWeights] | None
    novelty_text: str
    batch_size: int
    cache_path: str | Path | None
    frozen: bool
    cache_size: int | None
    ttl_ms: float | None
    source: str
    options: TraceOptions | None
    task_field: str | None
    on_problem: OnProblem | None


def score(data: RunInput, **settings: Unpack[ScoreSettings]) -> list[ScoredItem]:
    """Score every trace of ``data``: each item with its value breakdown, in order.

    Args:
        data: see the module docstring.
        **settings: any of these keyword arguments.

            - ``embedder``: the embedder (default: the bundled model); ``None``: no embedder,
              novelty 0.5.
            - ``min_score``: the sharing threshold, ``0.8``, or a percentile of these scores,
              ``"p90"`` (default 0.75).
            - ``order``: ``"input"`` (default) or ``"time"`` (by ``metadata.created_at``).
            - ``corpus``: novelty against every other trace of ``data`` (leave-one-out), so
              no verdict depends on order (default ``False``).
            - ``profiles``: the weight profiles by domain (default: the built-in ones).
            - ``novelty_text``, ``batch_size``: as :class:`~knowledgepulse.value.TraceValueScorer`
              takes them.
            - ``cache_path``: a saved vector cache to score against, made if missing and saved
              after; ``frozen``: read it without adding to it; ``cache_size``, ``ttl_ms``: its
              size and time-to-live (see :class:`ScoreRun`).
            - ``source``, ``options``, ``task_field``: how ``data`` is read (see
              :func:`~knowledgepulse.runs.items_of`).
            - ``on_problem``: told each record that gives no trace (default: a logged warning).

    Raises:
        CacheFileError: ``cache_path`` was made under another model, or is damaged.
        ThresholdSpecError: ``min_score`` is neither a score in [0, 1] nor ``pNN``.
    """
    return list(_scored(data, settings))


def annotate(data: RunInput, **settings: Unpack[ScoreSettings]) -> Any:
    """``data`` scored and given back in its own form, each record with its score.

    A dataset row keeps every column and gets the ``kp_`` columns (``kp_score``,
    ``kp_shareable``, the four dimensions, ``kp_nearest``); a ``ReasoningTrace`` document gets
    ``metadata.quality_score``. Row dicts (or paths, or a ``datasets.Dataset``) give a list of
    dicts, a pandas ``DataFrame`` a ``DataFrame``, a pyarrow ``Table`` a ``Table``. A record
    that gives no trace is left out (and told to ``on_problem``).

    Takes the arguments of :func:`score`.
    """
    return _in_form_of(data, [annotated(scored) for scored in _scored(data, settings)])


@dataclass(frozen=True, slots=True)
class Redaction:
    """What :func:`redact` gives back.

    Attributes:
        data: the records redacted, in ``data``'s own form (see :func:`annotate`): each dataset
            row with its strings cleaned, or each trace document.
        items: the redacted trace items, in order.
        findings: what was redacted in each item (same order; empty where nothing was): the
            JSON path, the type (``email``, ``api_key``...), the rule and how many.
        counts: how many of each type were redacted, over every item.
    """

    data: Any
    items: list[TraceItem]
    findings: list[list[Finding]]
    counts: dict[str, int]


def redact(
    data: RunInput,
    *,
    level: str | None = None,
    rules_file: str | Path | None = None,
    source: str = "auto",
    options: TraceOptions | None = None,
    on_problem: OnProblem | None = None,
) -> Redaction:
    """``data`` with its secrets and personal identifiers redacted, and what was redacted.

    Args:
        data: see the module docstring.
        level: the privacy level to redact at (``private``, ``aggregated``, ``federated``);
            default: each trace's ``metadata.privacy_level`` (a converted row is ``private``,
            which keeps personal identifiers: give ``"aggregated"`` to remove them too).
        rules_file: a YAML file of custom rules, applied before the built-in ones
            (``docs/redaction.md``).
        source: the conversation format of dataset rows, or ``auto`` (see
            :func:`~knowledgepulse.runs.items_of`).
        options: the domain, confidence and row columns of converted rows.
        on_problem: told each record that gives no trace (default: a logged warning).

    Raises:
        RedactionRulesError: ``rules_file`` has errors (all of them are listed).
    """
    from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load here

    redactor = Redactor(level, rules_file=None if rules_file is None else Path(rules_file))
    findings: list[list[Finding]] = []
    items = list(
        redact_items(
            _valid(items_of(data, source=source, options=options), on_problem),
            redactor,
            found=lambda _, found: findings.append(found),
        )
    )
    records = [item.row.value if item.row is not None else item.document for item in items]
    return Redaction(
        _in_form_of(data, records), items, findings, dict(redactor.types.most_common())
    )


def _scored(data: RunInput, settings: ScoreSettings) -> Iterator[ScoredItem]:
    """``data`` read and scored by a :class:`ScoreRun` made from ``settings``."""
    min_score = min_score_of(settings.get("min_score"))
    cache_path = settings.get("cache_path")
    items = items_of(
        data,
        source=settings.get("source", "auto"),
        options=settings.get("options"),
        task_field=settings.get("task_field"),
    )
    with ScoreRun(
        settings.get("embedder", DEFAULT_EMBEDDER),
        cache_path=None if cache_path is None else Path(cache_path),
        frozen=settings.get("frozen", False),
        cache_size=settings.get("cache_size"),
        ttl_ms=settings.get("ttl_ms"),
        profiles=settings.get("profiles"),
        threshold=threshold_of(min_score),
        batch_size=settings.get("batch_size", DEFAULT_BATCH_SIZE),
        novelty_text=settings.get("novelty_text", DEFAULT_NOVELTY_TEXT),
    ) as run:
        yield from run.score(
            _valid(items, settings.get("on_problem")),
            order=settings.get("order", "input"),
            corpus=settings.get("corpus", False),
            min_score=min_score,
        )


def _valid(
    stream: Iterable[TraceItem | Problem], on_problem: OnProblem | None
) -> Iterator[TraceItem]:
    """The items of ``stream``; each problem told to ``on_problem``, else logged as a warning."""
    for item in stream:
        if isinstance(item, Problem):
            if on_problem is None:
                _log.warning("%s", item)
            else:
                on_problem(item)
        else:
            yield item


def _in_form_of(data: Any, records: list[dict[str, Any]]) -> Any:
    """``records`` as ``data`` came: a pyarrow ``Table``, a pandas ``DataFrame``, else a list."""
    if callable(getattr(data, "to_batches", None)) and hasattr(data, "schema"):
        return type(data).from_pylist(records)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return type(data)(records)
    return records
