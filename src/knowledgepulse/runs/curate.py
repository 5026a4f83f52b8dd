"""Curation as library calls: the best items of a corpus, its near-duplicates, decontamination.

:func:`select` and :func:`dedupe` read the whole input (anything
:func:`~knowledgepulse.runs.items_of` takes: files, row dicts, a DataFrame, an Arrow table, a
``datasets.Dataset``), redact it when asked, and score it in corpus mode: each item's novelty
against every other item, so no verdict depends on the input's order. Either also takes a
:class:`~knowledgepulse.curation.Corpus` (a result's ``corpus``), to choose again without
scoring again. :func:`decontaminate` removes from a set the items that copy a reference
(evaluation) set's tasks, by n-gram overlap and, with an embedder, by cosine; it scores nothing.
The results are plain data: the items, why each was left out, and the rows in the input's own
form.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from knowledgepulse.curation import dedupe as dedupe_candidates
from knowledgepulse.curation import infer_tasks, score_corpus
from knowledgepulse.curation import select as select_candidates
from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.curation.overlap import MIN_OVERLAP, NGRAM, OverlapIndex
from knowledgepulse.curation.percentiles import MinScore
from knowledgepulse.curation.select import (
    INFERRED_TASK_SIMILARITY,
    budget_for_top,
    dedupe_by_task,
)
from knowledgepulse.errors import (
    EmbedderUnavailableError,
    InputFileError,
    Location,
    ScorerParameterError,
    Setting,
)
from knowledgepulse.records import Problem
from knowledgepulse.reports.rows import DEDUPE_COLUMNS, SCORE_COLUMNS, kp_columns
from knowledgepulse.runs.inputs import RunInput, items_of
from knowledgepulse.runs.read import OnProblem, valid_items
from knowledgepulse.runs.redaction import redactor_of
from knowledgepulse.runs.write import annotated_like, redacted_like
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._read import Notes
from knowledgepulse.trace.item import TraceItem, number_at
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.curation.select import RejectionReason
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.redact.walk import Finding

RANK_BY_SCORE = "score"
"""``rank_by`` for the trace score alone (successful runs still before failed ones)."""
RANK_BY_REWARD = "reward"
"""``rank_by`` for each item's reward: its dataset's success column, when that is a number."""

DEDUPE_BY_SIMILARITY: Final = "similarity"
"""``dedupe(by=...)`` for near-copies: items whose cosine reaches the threshold."""
DEDUPE_BY_TASK: Final = "task"
"""``dedupe(by=...)`` for runs of one task: the tasks read with the items, else inferred."""
DedupeBy = Literal["similarity", "task"]

NO_VECTORS = (
    "{what} needs an embedder, and none could be loaded: install knowledgepulse[embeddings], "
    "or give a scorer whose embedder loads"
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
        similarity: with ``near_duplicate``, the cosine with that item.
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


@dataclass(frozen=True, slots=True)
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
        min_score: the minimum score applied (a percentile resolved), or ``None``.
        rank_by: what the items were ranked by first: ``score``, ``reward`` or a field.
        min_reward: the minimum outcome applied, or ``None``.
        outcomes: each item's outcome (its reward, or the ``rank_by`` field's number; ``None``:
            it has none), in input order; empty when no outcome was read.
        problems: what could not be read, and the warnings, in input order.
        data: the input, for :attr:`rows` in its form.
    """

    corpus: Corpus
    picks: tuple[int, ...]
    rejected: tuple[Rejected, ...]
    tasks: tuple[str | None, ...]
    tasks_inferred: bool
    task_field: str | None = None
    budget: int | None = None
    min_score: float | None = None
    rank_by: str = RANK_BY_SCORE
    min_reward: float | None = None
    outcomes: tuple[float | None, ...] = ()
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)

    @property
    def selected(self) -> list[ScoredItem]:
        """The selected items, in the order picked."""
        return [self.corpus.items[index] for index in self.picks]

    @property
    def rows(self) -> Any:
        """The selected items in the input's form, in the order picked.

        A pandas ``DataFrame``, an Arrow ``Table`` or a ``datasets.Dataset`` for those inputs
        (their rows, with the ``kp_`` columns added); otherwise dicts: a dataset row with its
        ``kp_`` columns, a trace with ``metadata.quality_score`` set.
        """
        columns = [kp_columns(scored.breakdown) for scored in self.selected]
        return annotated_like(self.data, self.selected, columns)


@dataclass(frozen=True, slots=True)
class DedupeGroup:
    """An item kept and the near-duplicates it stands for.

    Attributes:
        representative: the kept item: the group's best (highest score, then smallest id).
        members: each near-duplicate with its cosine to the representative, best first
            (``None``: no vectors, in a task's group scored without an embedder).
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


@dataclass(frozen=True, slots=True)
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

    def is_kept(self, index: int) -> bool:
        """Whether ``corpus.items[index]`` stays: it is in no group, or represents its group."""
        group = self.group_of[index]
        return group is None or self.groups[group].representative is self.corpus.items[index]

    @property
    def kept(self) -> list[ScoredItem]:
        """The items that stay, in input order."""
        return [s for i, s in enumerate(self.corpus.items) if self.is_kept(i)]

    @property
    def dropped(self) -> list[ScoredItem]:
        """The near-duplicates that would go, in input order."""
        return [s for i, s in enumerate(self.corpus.items) if not self.is_kept(i)]

    def columns(self) -> list[dict[str, Any]]:
        """Each item's ``kp_`` columns, ``kp_group`` and ``kp_kept`` last, in input order."""
        return [
            kp_columns(scored.breakdown) | {"kp_group": group, "kp_kept": self.is_kept(index)}
            for index, (scored, group) in enumerate(
                zip(self.corpus.items, self.group_of, strict=True)
            )
        ]

    @property
    def kept_rows(self) -> Any:
        """The items that stay, in the input's form (see :attr:`SelectionResult.rows`)."""
        return self._rows(keep=True)

    @property
    def dropped_rows(self) -> Any:
        """The near-duplicates that would go, in the input's form."""
        return self._rows(keep=False)

    def _rows(self, *, keep: bool) -> Any:
        indexes = [i for i in range(len(self.corpus.items)) if self.is_kept(i) == keep]
        every = self.columns()
        items = [self.corpus.items[i] for i in indexes]
        columns = [every[i] for i in indexes]
        return annotated_like(self.data, items, columns, SCORE_COLUMNS + DEDUPE_COLUMNS)


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
    task_similarity: float = INFERRED_TASK_SIMILARITY,
    rank_by: str = RANK_BY_SCORE,
    min_reward: float | None = None,
    scorer: TraceValueScorer | None = None,
    redact: bool | Redactor = False,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
) -> SelectionResult:
    """The best items of ``data``: score first, across tasks, skipping near-duplicates.

    Items are ranked by their outcome when ``rank_by`` names one (highest first; an item
    without one last), then successful before failed, then by score, then id. Each is a run of
    a task (read with it: ``task_field`` or a dataset's task column; else inferred), and the
    tasks take turns: the next pick is the best item of a task with the fewest picks so far,
    so a task's successful runs are taken before its failed ones (``docs/curation.md``).

    Args:
        data: files, row dicts, a DataFrame, an Arrow table or a ``datasets.Dataset`` (see
            :data:`~knowledgepulse.runs.RunInput`), or a scored :class:`Corpus`.
        budget: select at most this many items.
        top: select at most the top ``top`` percent (in (0, 100]) of the items.
        per_domain: share the budget evenly across domains.
        per_task: keep at most the best ``per_task`` items of each task (best of N).
        min_score: leave out items scoring below it: a score, or ``"p30"``: the 30th percentile
            of the items' scores.
        max_similarity: leave out an item whose cosine with a selected one reaches it.
        task_field: where each item's task is read: a dataset's column, else a dotted path in
            the trace's JSON (``metadata.task_id``); items without it are one task.
        task_similarity: with no task read, the cosine with a task's best run from which an
            item is a run of that task.
        rank_by: ``score``; ``reward``: each item's reward (a dataset's success column, when
            it is a number); or a field: a dataset's numeric column, else a dotted path to a
            number in the trace's JSON (``metadata.eval.pass_rate``).
        min_reward: leave out items whose outcome (the ``rank_by`` number; with ``score``,
            the reward) is below it or missing.
        scorer: scores the items (default: ``TraceValueScorer()``, the bundled model).
        redact: clean the items of secrets and personal data before scoring: ``True`` by each
            trace's privacy level, or a configured ``Redactor``.
        source: a source's name, or ``None``: recognised from the content (see ``items_of``).
        options: the domain, confidence and row columns of converted traces.
        notes: told what a reader says about a whole file.
        progress: for files, told the bytes read so far.
        on_problem: told each record that cannot be read, as it is found.

    Raises:
        ValueError: contradictory or out-of-range settings.
        ScorerParameterError: ``max_similarity`` with a scorer that has no embedder; a
            ``rank_by`` or ``min_reward`` outcome that no item has.
        EmbedderUnavailableError: ``max_similarity`` and the embedder could not be loaded.
    """
    if budget is not None and top is not None:
        raise ValueError("budget and top both set the budget; give one")
    if top is not None and not 0 < top <= 100:
        raise ValueError(f"top is a percentage in (0, 100], got {top!r}")
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be 0 or more, got {budget!r}")
    if isinstance(min_score, str):
        min_score = MinScore.parse(min_score)
    if not rank_by.strip():
        raise ScorerParameterError(Setting("rank_by", rank_by), ": give score, reward or a field")
    if min_reward is not None and not math.isfinite(min_reward):
        raise ScorerParameterError(Setting("min_reward", min_reward), ": give a finite number")
    if max_similarity is not None:
        _needs_embedder(scorer, "max_similarity")
    corpus, problems, count_redacted = _corpus(
        data,
        scorer=scorer,
        redact=redact,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        on_problem=on_problem,
    )
    if max_similarity is not None and corpus.vectors is None and corpus.items:
        raise EmbedderUnavailableError(NO_VECTORS.format(what="max_similarity"))
    tasks, inferred = _tasks(corpus, task_field, task_similarity)
    if top is not None:
        budget = budget_for_top(top, len(corpus.items))
    scores = [scored.breakdown.score for scored in corpus.items]
    threshold = min_score.resolve(scores) if isinstance(min_score, MinScore) else min_score
    by_outcome = rank_by != RANK_BY_SCORE
    outcomes = _outcomes(corpus, rank_by if by_outcome else RANK_BY_REWARD, min_reward, by_outcome)
    candidates = [
        replace(candidate, failed=not scored.trace.metadata.success, outcome=outcome)
        for candidate, scored, outcome in zip(
            corpus.candidates(tasks), corpus.items, outcomes or [None] * len(tasks), strict=True
        )
    ]
    selection = select_candidates(
        candidates,
        corpus.vectors,
        budget=budget,
        min_score=threshold,
        max_similarity=max_similarity,
        per_domain=per_domain,
        per_task=per_task,
        by_outcome=by_outcome,
        min_outcome=min_reward,
    )
    for index in selection.selected:  # what is written: the rows left out are not shared
        count_redacted(index)
    items = corpus.items
    rejected = tuple(
        Rejected(
            items[r.index],
            r.reason,
            tasks[r.index],
            None if r.duplicate_of is None else items[r.duplicate_of],
            r.similarity,
        )
        for r in selection.rejected
    )
    return SelectionResult(
        corpus,
        picks=selection.selected,
        rejected=rejected,
        tasks=tuple(tasks),
        tasks_inferred=inferred,
        task_field=task_field,
        budget=budget,
        min_score=selection.min_score,
        rank_by=rank_by,
        min_reward=min_reward,
        outcomes=tuple(outcomes),
        problems=problems,
        data=data,
    )


def dedupe(
    data: RunInput | Corpus,
    *,
    by: DedupeBy = DEDUPE_BY_SIMILARITY,
    threshold: float = 0.95,
    task_field: str | None = None,
    task_similarity: float = INFERRED_TASK_SIMILARITY,
    scorer: TraceValueScorer | None = None,
    redact: bool | Redactor = False,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
) -> DedupeResult:
    """The groups of near-duplicate items of ``data``, each under the item it keeps.

    By ``similarity``, two items are near-duplicates when their cosine reaches
    ``threshold``, and groups do not chain; tasks play no part. By ``task``, a group is the
    runs of one task: read with the items (``task_field``, or a dataset's task column; an
    item without one is in no group), else inferred as :func:`select` infers them (the same
    objective, or a cosine with the task's best run reaching ``task_similarity``; without an
    embedder, the same objective only). Either way a group's representative is its best item
    (highest score, then smallest id). The other arguments are :func:`select`'s.

    Raises:
        ValueError: ``by`` neither ``similarity`` nor ``task``.
        ScorerParameterError: by ``similarity``, a scorer without an embedder.
        EmbedderUnavailableError: by ``similarity``, the embedder could not be loaded.
    """
    if by not in (DEDUPE_BY_SIMILARITY, DEDUPE_BY_TASK):
        raise ValueError(f"dedupe groups by 'similarity' or 'task', not {by!r}")
    by_task = by == DEDUPE_BY_TASK
    if not by_task:
        _needs_embedder(scorer, "dedupe")
    corpus, problems, count_redacted = _corpus(
        data,
        scorer=scorer,
        redact=redact,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        on_problem=on_problem,
    )
    for index in range(len(corpus.items)):  # every item is written, kept or marked to go
        count_redacted(index)
    tasks: list[str | None] = []
    inferred = False
    if by_task:
        tasks, inferred = _tasks(corpus, task_field, task_similarity)
        found = dedupe_by_task(corpus.candidates(tasks), corpus.vectors)
    elif corpus.vectors is None:
        if corpus.items:
            raise EmbedderUnavailableError(NO_VECTORS.format(what="dedupe"))
        found = []
    else:
        found = dedupe_candidates(corpus.candidates(), corpus.vectors, threshold=threshold)
    items = corpus.items
    group_of: list[int | None] = [None] * len(items)
    for number, group in enumerate(found):
        for index in (group.representative, *(member for member, _ in group.members)):
            group_of[index] = number
    groups = tuple(
        DedupeGroup(
            items[group.representative],
            tuple((items[index], similarity) for index, similarity in group.members),
        )
        for group in found
    )
    return DedupeResult(
        corpus,
        groups,
        tuple(group_of),
        threshold,
        by=by,
        tasks=tuple(tasks),
        tasks_inferred=inferred,
        problems=problems,
        data=data,
    )


def _needs_embedder(scorer: TraceValueScorer | None, what: str) -> None:
    if scorer is not None and scorer.embedder is None:
        raise ScorerParameterError(
            Setting(what),
            " compares embeddings, so it needs an embedder; drop ",
            Setting("embedder", None),
        )


def _corpus(
    data: RunInput | Corpus,
    *,
    scorer: TraceValueScorer | None,
    redact: bool | Redactor,
    source: str | None,
    options: TraceOptions | None,
    task_field: str | None,
    notes: Notes | None,
    progress: Callable[[int], object] | None,
    on_problem: OnProblem | None,
) -> tuple[Corpus, tuple[Problem, ...], Callable[[int], None]]:
    """``data`` read, redacted and scored in corpus mode (a ``Corpus`` as it is).

    And a function that counts the redaction of ``corpus.items[index]`` in the redactor: every
    item is redacted before it is scored, and only those written are counted.
    """
    if isinstance(data, Corpus):
        return data, (), lambda _: None
    redactor = redactor_of(redact)
    problems: list[Problem] = []
    read = items_of(
        data, source=source, options=options, task_field=task_field, notes=notes, progress=progress
    )
    items: list[TraceItem] = []
    found: list[tuple[TraceItem, list[Finding]]] = []
    for item in valid_items(read, problems, on_problem):
        if redactor is None:
            items.append(item)
            continue
        cleaned, findings = redactor.redact(item, count=False)
        found.append((item, findings))
        items.append(cleaned)

    def count(index: int) -> None:
        if redactor is not None:
            redactor.count(*found[index])

    return score_corpus(scorer or TraceValueScorer(), items), tuple(problems), count


def _tasks(
    corpus: Corpus, task_field: str | None, similarity: float
) -> tuple[list[str | None], bool]:
    """Each item's task, and whether they were inferred.

    The tasks read with the items when the caller named a task field or any item has a task
    (a dataset's task column); else inferred from the objectives and the vectors.
    """
    read = [scored.item.task for scored in corpus.items]
    if task_field is not None or any(task is not None for task in read):
        return read, False
    objectives = [scored.trace.task.objective for scored in corpus.items]
    inferred = infer_tasks(corpus.candidates(), objectives, corpus.vectors, threshold=similarity)
    return list(inferred), True


def outcome_of(item: TraceItem, rank_by: str) -> float | None:
    """An item's outcome: its ``reward``, or the number at the field ``rank_by`` names.

    A field is a column of the item's dataset row (a dotted path into it), else a dotted path
    in its trace's JSON; ``None`` when it holds no number.
    """
    if rank_by == RANK_BY_REWARD:
        return item.reward
    if item.row is not None:
        found = number_at(item.row.value, rank_by)
        if found is not None:
            return found
    return number_at(item.document, rank_by)


def _outcomes(
    corpus: Corpus, field: str, minimum: float | None, ranked: bool
) -> list[float | None]:
    """Each item's outcome when it is ranked by or compared with ``minimum``, else none.

    Raises:
        ScorerParameterError: items, and not one of them with that outcome (a misspelt field).
    """
    if not ranked and minimum is None:
        return []
    found = [outcome_of(scored.item, field) for scored in corpus.items]
    if found and all(value is None for value in found):
        setting = Setting("rank_by", field) if ranked else Setting("min_reward", minimum)
        why = (
            "a reward is the number in a dataset's success column (rows whose success "
            "column holds numbers)"
            if field == RANK_BY_REWARD
            else f"name a numeric column of the rows or a dotted path to a number in the "
            f"trace's JSON (metadata.eval.pass_rate), not {field!r}"
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
        "file": location.file,
        "line": location.line,
    }


@dataclass(frozen=True, slots=True)
class Reference:
    """An item of the reference (evaluation) set: its id, its task text, where it was read.

    Attributes:
        id: the trace's id, or ``<file>:<line>`` for a line of a text file (``texts:<n>`` for
            the n-th of ``against_texts``, from 1).
        text: its task text (the trace's ``task.objective``, or the line).
        location: where it was read.
    """

    id: str
    text: str
    location: Location


@dataclass(frozen=True, slots=True)
class Contaminated:
    """An item :func:`decontaminate` removed, and the reference item it matched.

    Attributes:
        item: the removed item.
        reference: the reference item it matched.
        reason: ``ngram`` (its task text covers the reference's, see
            :mod:`knowledgepulse.curation.overlap`) or ``embedding`` (its novelty vector's
            cosine with the reference's reaches the threshold).
        overlap: the share of the reference's words it covers, when the n-grams matched.
        similarity: the cosine with the reference, when compared by embedding.
    """

    item: TraceItem
    reference: Reference
    reason: Literal["ngram", "embedding"]
    overlap: float | None = None
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A report row: the item's id and place, why, and the reference item it matched."""
        location, matched = self.item.location, self.reference.location
        return {
            "id": self.item.trace.id,
            "file": location.file,
            "line": location.line,
            "reason": self.reason,
            "matched_id": self.reference.id,
            "matched_file": matched.file,
            "matched_line": matched.line,
            "overlap": self.overlap,
            "similarity": self.similarity,
        }


@dataclass(frozen=True, slots=True)
class DecontaminationResult:
    """What :func:`decontaminate` removed from its input, and what it kept.

    Attributes:
        items: every valid item of the input, in input order.
        removed: each removed item with the reference item it matched, in input order.
        references: how many reference items were compared.
        ngram: the words per n-gram.
        min_overlap: the share of a reference item's words from which an item contains it.
        threshold: the cosine from which an item is a near-copy, or ``None``: no embedding.
        problems: what could not be read (the input's, then the references'), in order.
        data: the input, for :attr:`kept_rows` in its form.
    """

    items: tuple[TraceItem, ...]
    removed: tuple[Contaminated, ...]
    references: int
    ngram: int = NGRAM
    min_overlap: float = MIN_OVERLAP
    threshold: float | None = None
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)

    @property
    def kept(self) -> list[TraceItem]:
        """The items that stay, in input order."""
        gone = {id(found.item) for found in self.removed}
        return [item for item in self.items if id(item) not in gone]

    @property
    def kept_rows(self) -> Any:
        """The items that stay in the input's form: its rows, else the trace documents.

        A pandas ``DataFrame``, an Arrow ``Table`` or a ``datasets.Dataset`` for those inputs;
        otherwise dicts. Nothing is added: the rows are as they came.
        """
        return redacted_like(self.data, self.kept)


def decontaminate(
    data: RunInput,
    *,
    against: RunInput | None = None,
    against_texts: Iterable[str] = (),
    ngram: int = NGRAM,
    min_overlap: float = MIN_OVERLAP,
    threshold: float = 0.95,
    scorer: TraceValueScorer | None = None,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
) -> DecontaminationResult:
    """The items of ``data`` that are no copy of a reference (evaluation) item, and the rest.

    Only ``data`` loses items. An item goes when its task text (``task.objective``) covers
    ``min_overlap`` of a reference item's words in shared ``ngram``-word n-grams, case,
    punctuation and numbers aside (:mod:`knowledgepulse.curation.overlap` gives the sources
    of the defaults); and, with a ``scorer`` that has an embedder, when its novelty vector's
    cosine with a reference item's reaches ``threshold``.

    Args:
        data: the set to clean: files, row dicts, a DataFrame, an Arrow table or a
            ``datasets.Dataset`` (see :data:`~knowledgepulse.runs.RunInput`).
        against: the reference set, in any of those forms; a ``.txt`` file is read as task
            texts, one a line (blank lines skipped).
        against_texts: reference task texts given as strings, besides ``against``.
        ngram: words per n-gram.
        min_overlap: the share of a reference item's words (0-1] from which an item contains
            it.
        threshold: with an embedder, the cosine from which an item is a near-copy.
        scorer: its embedder compares novelty vectors (a text line is embedded as it is);
            ``None``, or a scorer without an embedder: n-grams only.
        source: a source's name, or ``None``: recognised from the content (see ``items_of``),
            for both sets.
        options: the domain, confidence and row columns of converted traces, for both sets.
        notes: told what a reader says about a whole file.
        progress: for files of ``data``, told the bytes read so far.
        on_problem: told each record that cannot be read, as it is found.

    Raises:
        ValueError: ``ngram`` below 1, or ``min_overlap`` outside (0, 1].
        EmbedderUnavailableError: the scorer's embedder could not be loaded.
    """
    if not 0 < min_overlap <= 1:
        raise ValueError(f"min_overlap is a share of words in (0, 1], got {min_overlap!r}")
    problems: list[Problem] = []
    items = list(
        valid_items(
            items_of(data, source=source, options=options, notes=notes, progress=progress),
            problems,
            on_problem,
        )
    )
    references, reference_items = _references(
        against, against_texts, source, options, notes, problems, on_problem
    )
    index = OverlapIndex((reference.text for reference in references), ngram)
    found: dict[int, Contaminated] = {}
    for position, item in enumerate(items):
        match = index.best_match(item.trace.task.objective)
        if match is not None and match.overlap >= min_overlap:
            reference = references[match.index]
            found[position] = Contaminated(item, reference, "ngram", overlap=match.overlap)
    embedded = scorer is not None and scorer.embedder is not None
    if embedded and items and references:
        assert scorer is not None
        for position, (row, cosine) in _embedding_matches(
            scorer, items, references, reference_items
        ).items():
            earlier = found.get(position)
            if earlier is not None:
                found[position] = replace(earlier, similarity=cosine)
            elif cosine >= threshold:
                found[position] = Contaminated(
                    items[position], references[row], "embedding", similarity=cosine
                )
    return DecontaminationResult(
        tuple(items),
        tuple(found[position] for position in sorted(found)),
        len(references),
        ngram=ngram,
        min_overlap=min_overlap,
        threshold=threshold if embedded else None,
        problems=tuple(problems),
        data=data,
    )


def _references(  # noqa: PLR0917 - one private call, the run's reading settings
    against: RunInput | None,
    texts: Iterable[str],
    source: str | None,
    options: TraceOptions | None,
    notes: Notes | None,
    problems: list[Problem],
    on_problem: OnProblem | None,
) -> tuple[list[Reference], list[TraceItem | None]]:
    """The reference items, and each one's trace (``None`` for a text)."""
    references: list[Reference] = []
    traces: list[TraceItem | None] = []

    def add_text(text: str, name: str, line: int) -> None:
        if text.strip():
            where = Location(name, line)
            references.append(Reference(str(where), text.strip(), where))
            traces.append(None)

    paths = [] if against is None else _text_paths(against)
    if against is not None and paths is None:
        for item in valid_items(
            items_of(against, source=source, options=options, notes=notes), problems, on_problem
        ):
            references.append(Reference(item.trace.id, item.trace.task.objective, item.location))
            traces.append(item)
    for path in paths or ():
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as error:
            raise InputFileError(
                f"{path}: cannot read the reference texts ({error.strerror or error})"
            ) from None
        for number, line in enumerate(lines, start=1):
            add_text(line, str(path), number)
    for number, text in enumerate(texts, start=1):
        add_text(text, "texts", number)
    return references, traces


def _text_paths(against: RunInput) -> list[str | os.PathLike[str]] | None:
    """The paths of ``against`` when every one is a ``.txt`` file of task texts, else ``None``.

    Raises:
        ValueError: ``.txt`` files mixed with other inputs.
    """
    paths = [against] if isinstance(against, str | os.PathLike) else against
    if not isinstance(paths, list | tuple) or not paths:
        return None
    texts = [p for p in paths if isinstance(p, str | os.PathLike) and _is_text(p)]
    if not texts:
        return None
    if len(texts) != len(paths):
        raise ValueError("give the reference's .txt files of task texts apart from its traces")
    return texts


def _is_text(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() == ".txt"


def _embedding_matches(
    scorer: TraceValueScorer,
    items: Sequence[TraceItem],
    references: Sequence[Reference],
    reference_items: Sequence[TraceItem | None],
) -> dict[int, tuple[int, float]]:
    """Each item's nearest reference item by cosine, and the cosine (for the report too)."""
    import numpy as np  # noqa: PLC0415 - only with an embedder

    from knowledgepulse.novelty.cache.search import frozen_nearest  # noqa: PLC0415

    vectors = scorer.embed_traces([item.trace for item in items])
    if vectors is None:
        raise EmbedderUnavailableError(NO_VECTORS.format(what="embedding decontamination"))
    held = np.zeros((len(references), vectors.shape[1]), dtype=np.float32)
    traced = [i for i, item in enumerate(reference_items) if item is not None]
    if traced:
        traced_vectors = scorer.embed_traces([reference_items[i].trace for i in traced])  # type: ignore[union-attr]
        assert traced_vectors is not None
        held[traced] = traced_vectors
    lines = [i for i, item in enumerate(reference_items) if item is None]
    if lines:
        assert scorer.embedder is not None
        raw = np.asarray(
            scorer.embedder.embed_batch([references[i].text for i in lines]), dtype=np.float32
        )
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        held[lines] = raw / np.maximum(norms, 1e-12)
    nearest = frozen_nearest(held, np.asarray(vectors, dtype=np.float32))
    return {
        position: (int(row), float(cosine))
        for position, (row, cosine) in enumerate(
            zip(nearest.index, nearest.similarity, strict=True)
        )
        if row >= 0
    }
