"""One call each on Python data: :func:`score` it, :func:`annotate` it, :func:`redact` it.

``data`` is what :func:`~knowledgepulse.runs.items_of` reads: a path or several, row dicts, a
pandas ``DataFrame``, a pyarrow ``Table``, a ``datasets.Dataset`` or another table that gives
Arrow data (a Polars DataFrame, a DuckDB relation: ``__arrow_c_stream__``); dataset rows in a
conversation format are converted, ``ReasoningTrace`` documents read as they are. A record that
gives no valid trace is set aside and told to ``on_problem`` (by default logged as a warning on
the ``knowledgepulse`` logger), and the run goes on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, Unpack, overload

from knowledgepulse._util.settings import optional_path, unknown_keyword
from knowledgepulse.records import Problem
from knowledgepulse.runs.inputs import RunInput, items_of, readable_twice, table_kind
from knowledgepulse.runs.problems import repeats_folded
from knowledgepulse.runs.read import (
    OnProblem,
    TraceSettings,
    options_with,
    tell_both,
    told_of,
    valid_items,
)
from knowledgepulse.runs.redaction import (
    messages_level,
    redact_items,
    redactor_of,
    row_cleaner,
    unread_rows,
)
from knowledgepulse.runs.scoring import Order, ScoreRun, min_score_of, tell_unweighed_domain
from knowledgepulse.runs.task_field import told_when_no_task
from knowledgepulse.runs.write import UnreadRows, in_place, kept_like, redacted_like
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value.item import ScoredItem

if TYPE_CHECKING:
    from knowledgepulse.curation.percentiles import MinScore
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.redact.walk import Finding
    from knowledgepulse.sources import TraceOptions
    from knowledgepulse.sources._read import Notes
    from knowledgepulse.value.scorer import TraceValueScorer

Paths: TypeAlias = "str | os.PathLike[str] | Sequence[str | os.PathLike[str]]"
"""Files to read: their records come back as dicts."""
Rows: TypeAlias = "list[dict[str, Any]]"
"""Records as dicts: a dataset row with its ``kp_`` columns, or a trace document."""
RunItems: TypeAlias = "Iterable[TraceItem] | Iterable[ScoredItem]"
"""The items a run gave (``score``'s ``ScoredItem``\\s), read back as they are."""
# One string each (no implicit concatenation): pyright reads such an alias as Unknown.
ListInput: TypeAlias = "Paths | Iterable[Mapping[str, Any]] | Iterable[ReasoningTrace] | RunItems"
"""What comes back as :data:`Rows`: files, row dicts, ``ReasoningTrace`` models or a run's
items (``score``'s ``ScoredItem``\\s: ``annotate(score(data))``), each a documented input."""


# A table comes back a table of its kind (which pandas, pyarrow and datasets do not type):
# each is known by what it can do, as ``table_kind`` knows it, so that rows are not one.
class _DataFrame(Protocol):
    @property
    def iloc(self) -> Any: ...


class _ArrowTable(Protocol):
    def to_batches(self) -> Any: ...


class _Dataset(Protocol):
    @property
    def features(self) -> Any: ...


class _ArrowData(Protocol):  # a Polars DataFrame, a DuckDB relation: a pyarrow Table comes back
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...


Table: TypeAlias = "_DataFrame | _ArrowTable | _Dataset | _ArrowData"
"""A pandas ``DataFrame``, a pyarrow ``Table``, a ``datasets.Dataset``, or a table that gives
Arrow data (``__arrow_c_stream__``: a Polars DataFrame, a DuckDB relation)."""

_log = logging.getLogger("knowledgepulse")


class ScoreSettings(TraceSettings, total=False):
    """The keyword arguments of :func:`score` and :func:`annotate`, all optional.

    Attributes:
        scorer: scores the items (default: ``TraceValueScorer()``, the static table): its
            embedder, profiles, threshold, batch size and novelty text.
        min_score: the sharing threshold instead of the scorer's: a score (``0.8``), or a
            percentile of these scores (``"p90"``).
        order: ``"input"`` (default) or ``"time"`` (by ``metadata.created_at``).
        corpus: novelty against every other trace of ``data`` (leave-one-out), so no verdict
            depends on order (default ``False``).
        cache_path: a saved vector cache to score against, made if missing and saved after
            (see :class:`~knowledgepulse.runs.ScoreRun`); ``frozen``: read it, add nothing;
            ``cache_size``, ``ttl_ms``: the cache's size and time-to-live.
        redact: clean the traces (and rows) of secrets and personal data first: ``True`` by
            each trace's privacy level, or a configured ``Redactor``.
        task_field: where each item's task is read (a row's column, a trace's dotted path);
            when no item has it, a warning on the ``knowledgepulse`` logger names the keys the
            items do have.
        source: how ``data`` is read: a format name, or ``auto`` (default) or ``None``:
            recognised from the content (see :func:`~knowledgepulse.runs.items_of`).
        options: the domain, confidence and row columns of converted rows; and
            :class:`~knowledgepulse.runs.read.TraceSettings`' keywords, each setting a field
            of it as ``kp``'s options do (``success_field="passed"``: ``--success-field``).
        notes: told what a reader says about a whole file.
        progress: for files, told each further count of bytes read (``tqdm``'s ``update``
            adds them up), as :func:`~knowledgepulse.runs.select` is.
        on_problem: told each record that gives no trace (default: a logged warning).
    """

    scorer: TraceValueScorer | None
    min_score: MinScore | float | str | None
    order: Order
    corpus: bool
    cache_path: str | Path | None
    frozen: bool
    cache_size: int | None
    ttl_ms: float | None
    redact: bool | Redactor
    task_field: str | None
    source: str | None
    options: TraceOptions | None
    notes: Notes | None
    progress: Callable[[int], object] | None
    on_problem: OnProblem | None


@repeats_folded()
def score(data: RunInput, **settings: Unpack[ScoreSettings]) -> list[ScoredItem]:
    """Score every trace of ``data``: each item with its value breakdown, in order.

    Args:
        data: see the module docstring.
        **settings: see :class:`ScoreSettings`.

    Raises:
        CacheFileError: ``cache_path`` was made under another model, or is damaged.
        ThresholdSpecError: ``min_score`` is neither a score in [0, 1] nor ``pNN``.
        SettingTypeError: a setting of the wrong type (``frozen="no"``, ``source=3``), before
            anything is read.
    """
    return list(_scored(data, settings))


@overload
def annotate(data: ListInput, **settings: Unpack[ScoreSettings]) -> Rows: ...
@overload
def annotate(data: Table, **settings: Unpack[ScoreSettings]) -> Any: ...


@repeats_folded()
def annotate(data: RunInput, **settings: Unpack[ScoreSettings]) -> Any:
    """``data`` scored and given back in its own form, each record with its score.

    A dataset row keeps every column and gets the ``kp_`` columns (``kp_score``,
    ``kp_shareable``, the four dimensions, ``kp_nearest``); a ``ReasoningTrace`` document gets
    ``metadata.quality_score``. A pandas ``DataFrame``, a pyarrow ``Table`` or a
    ``datasets.Dataset`` gives its own rows back (index and types kept) with the ``kp_``
    columns added; another table that gives Arrow data (a Polars DataFrame, a DuckDB relation,
    a ``RecordBatchReader``) is read once into a pyarrow ``Table``, which comes back so (text
    held as ``string_view`` as ``large_string``); row dicts or files give a list of dicts. A
    dataset row that gives no trace is kept in its place with ``kp_error`` saying why and its
    other ``kp_`` columns empty (and told to ``on_problem``), a file's line that is no JSON
    object its text in ``kp_raw``; a read row's ``kp_error`` and ``kp_raw`` are empty. A trace
    document that gives none is left out (every record of a table is a row; a list or file is
    known to hold rows once one of them reads).

    Takes the arguments of :func:`score` (:class:`ScoreSettings`), and raises as it does.
    """
    data = readable_twice(data)  # read to score, then its rows taken
    unread = UnreadRows()
    kept = in_place(
        _scored(data, settings, unread, "annotate"), unread, every_file=table_kind(data) is not None
    )
    return kept_like(data, kept, redacted=settings.get("redact", False) is not False)


@dataclass(frozen=True, slots=True, repr=False)
class Redaction:
    """What :func:`redact` gives back.

    Attributes:
        data: the records redacted, in ``data``'s own form: each dataset row with its strings
            cleaned, or each trace document; a table for a table (see :func:`annotate`), else
            a list of dicts. A dataset row that gives no trace is kept in its place, its
            strings cleaned as a read row's are (as ``kp redact`` writes it); a line that is
            no JSON object as its text, cleaned, in ``kp_raw``.
        items: the redacted trace items, in order.
        findings: what was redacted in each item (same order; empty where nothing was): the
            JSON path, the type (``email``, ``api_key``...), the rule and how many.
        counts: how many of each type were redacted, over every item, most first.
        problems: the records that gave no trace.
    """

    data: Any
    items: list[TraceItem]
    findings: list[list[Finding]]
    counts: dict[str, int]
    problems: list[Problem]

    def __repr__(self) -> str:
        # Counts, not the data and every item: a notebook prints the result of a large call.
        return (
            f"<Redaction: {len(self.items)} items, redacted {self.counts}; "
            f"{len(self.problems)} problems>"
        )


@repeats_folded()
def redact(
    data: RunInput,
    *,
    level: str | None = None,
    rules_file: str | Path | None = None,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
    **reading: Unpack[TraceSettings],
) -> Redaction:
    """``data`` with its secrets and personal identifiers redacted, and what was redacted.

    Args:
        data: see the module docstring.
        level: the privacy level to redact at (``private``, ``aggregated``, ``federated``);
            default: each trace's ``metadata.privacy_level`` (a converted row is ``private``,
            which keeps personal identifiers: give ``"aggregated"`` to remove them too).
        rules_file: a YAML file of custom rules, applied before the built-in ones
            (``docs/redaction.md``).
        source: how ``data`` is read (see :func:`~knowledgepulse.runs.items_of`).
        options: the domain, confidence and row columns of converted rows.
        **reading: set a field of ``options`` each, as ``kp``'s options do
            (``success_field="passed"`` is ``--success-field passed``: see
            :class:`~knowledgepulse.runs.read.TraceSettings`).
        notes: told what a reader says about a whole file.
        progress: for files, told each further count of bytes read.
        on_problem: told each record that gives no trace (default: a logged warning).

    Raises:
        RedactionRulesError: ``rules_file`` has errors (all of them are listed).
        SettingTypeError: a setting of the wrong type (``source=3``), before anything is read.
    """
    options = options_with(options, reading, redact)
    from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load here

    rules = optional_path(rules_file, "rules_file", "a YAML file's path, a str or a Path")
    redactor = Redactor(level, rules_file=rules)
    data = readable_twice(data)  # read to redact, then made again of its rows
    findings: list[list[Finding]] = []
    problems: list[Problem] = []
    unread = unread_rows(redactor)
    read = items_of(
        data,
        source=source,
        options=options,
        notes=notes,
        progress=progress,
        messages=messages_level(redactor),
    )
    redacted = redact_items(
        unread.valid(read, problems, told_of(on_problem)),
        redactor,
        found=lambda _, found: findings.append(found),
    )
    kept = list(in_place(redacted, unread, every_file=table_kind(data) is not None))
    items = [item for item in kept if isinstance(item, TraceItem)]
    records = [item if isinstance(item, TraceItem) else item.as_row() for item in kept]
    counts = dict(redactor.types.most_common())
    return Redaction(redacted_like(data, records), items, findings, counts, problems)


# Keywords a user tuning the score reaches for that name no setting here: each is pointed to
# where it is set, not to the closest name (``profiles`` was told "did you mean 'progress'?").
_SCORER_OWNS = {
    name: f" {name} is set on the scorer: scorer=TraceValueScorer({name}={example});"
    for name, example in (
        ("profiles", "load_profiles('profiles.yaml')"),  # from knowledgepulse.value.profiles
        ("embedder", "MiniLMEmbedder()"),
        ("novelty_text", "'windows'"),
        ("batch_size", "64"),
    )
} | {"threshold": " the sharing threshold is min_score (0.8, or 'p90');"}


def _scored(
    data: RunInput, settings: ScoreSettings, unread: UnreadRows | None = None, call: str = "score"
) -> Iterator[ScoredItem]:
    """``data`` read, redacted if asked, and scored by a :class:`ScoreRun` of ``settings``.

    ``unread``: given the problems, and counting the items, to keep the rows that gave none.
    ``call``: the function ``settings`` were given to, which a keyword refused names.

    Raises:
        SettingTypeError: a keyword that is not a setting (a TypeError, as Python's own for a
            misspelt one).
    """
    unknown = sorted(settings.keys() - ScoreSettings.__optional_keys__)
    if unknown:
        known = ScoreSettings.__optional_keys__
        raise unknown_keyword(call, unknown[0], known, _SCORER_OWNS.get(unknown[0]))
    reading = {key: settings[key] for key in TraceSettings.__optional_keys__ if key in settings}  # type: ignore[literal-required]
    options = options_with(settings.get("options"), reading, score)
    cache_path = settings.get("cache_path")
    told = told_of(settings.get("on_problem"))
    if unread is not None:
        told = tell_both(unread.add, told)
    redactor = redactor_of(settings.get("redact", False))
    items: Iterable[TraceItem] = valid_items(
        items_of(
            data,
            source=settings.get("source", "auto"),
            options=options,
            task_field=settings.get("task_field"),
            notes=settings.get("notes"),
            progress=settings.get("progress"),
            messages=messages_level(redactor),
        ),
        [],
        told,
    )
    items = told_when_no_task(items, settings.get("task_field"))
    if unread is not None:
        items = unread.items(items)
    if redactor is not None:
        items = redact_items(items, redactor)
        if unread is not None:
            unread.clean = row_cleaner(redactor)
    with ScoreRun(
        settings.get("scorer"),
        cache_path=cache_path,
        frozen=settings.get("frozen", False),
        cache_size=settings.get("cache_size"),
        ttl_ms=settings.get("ttl_ms"),
    ) as run:
        tell_unweighed_domain(run.scorer, options, settings.get("notes"))
        yield from run.score(
            items,
            order=settings.get("order", "input"),
            corpus=settings.get("corpus", False),
            min_score=min_score_of(settings.get("min_score")),
        )
