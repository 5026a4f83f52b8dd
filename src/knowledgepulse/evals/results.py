"""The results of a run, as plain data: each scorer's outcome, each case's verdict, the totals.

A case passes when every score reaches its threshold; its weighted score averages the scores by
weight. Weights never change a verdict, thresholds never a score; an error result fails the case
and is left out of both. docs/evals-tasks.md explains repeated runs (pass@K). The totals and
repeat statistics are pydantic models that the JSON report (:mod:`.report`) holds as they are.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from knowledgepulse.evals.scorer import ScoreResult
from knowledgepulse.evals.suite import Suite, scorer_label
from knowledgepulse.evals.tasks import TaskRecord
from knowledgepulse.records import Location, Problem

ERROR_LIMIT = 500
"""The most characters of an exception's message (a task's, a scorer's) a view or a stderr line
shows, the rest counted (:func:`~knowledgepulse._util.text.cut`); a JUnit ``message`` is one
line for a CI tool's list of failures. The JSON report keeps it whole."""
TOLERANCE = 1e-9
"""Scores this close below a threshold still pass (14/15·0.6 + 0.6·0.4 reaches 0.8)."""


class Unset(Enum):
    """The one value of :data:`UNSET`."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET
"""A case result's output or expectation that its case does not have.

``None`` is JSON ``null``, an answer like any other (a task may return it), so it cannot also
mean "none": a report shows ``output: null`` and leaves out an output the case never had.
"""

Given = JsonValue | Literal[Unset.UNSET]
"""A JSON value a case gave, or :data:`UNSET`."""


@dataclass(frozen=True, slots=True)
class ScorerOutcome:
    """One scorer's result on one case, with the suite entry's key, weight and threshold.

    ``diagnosis`` says what to check when it fell below its threshold.
    """

    key: str
    type: str
    name: str | None
    weight: float
    threshold: float
    result: ScoreResult
    diagnosis: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How reports name the scorer (see :func:`scorer_label`)."""
        return scorer_label(self.key, self.type, self.name)

    @property
    def score(self) -> float | None:
        """The result's score."""
        return self.result.score

    @property
    def error(self) -> str | None:
        """The result's error."""
        return self.result.error

    @property
    def passed(self) -> bool:
        """Whether the score reaches the threshold (an error result never passes)."""
        return passes(self.score, self.threshold)

    @property
    def margin(self) -> float | None:
        """``score - threshold``, 0.0 within the tolerance, rounded: 1.0 - 0.8 reads 0.2."""
        if self.score is None:
            return None
        margin = self.score - self.threshold
        return 0.0 if abs(margin) <= TOLERANCE else round(margin, 12)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's verdict: every scorer's outcome (suite order), or why it is malformed.

    ``duration_ms``: the task's time (the runs' mean when repeated); ``task``: how its call went
    (``None`` for recorded outputs and repeated cases); a repeated case's ``outcomes`` hold the
    means over ``runs``, each run's own result, summed up in ``repeat``. ``output`` is what was
    scored (the task's answer, or the case's ``actual``; :data:`UNSET` for a repeated case, whose
    runs hold theirs, and for a case without one), ``expected`` the case's expectation
    (:data:`UNSET` when it gives none): reports show them beside a failure.
    """

    case_id: str | None
    location: Location
    outcomes: tuple[ScorerOutcome, ...] = ()
    problems: tuple[Problem, ...] = ()
    description: str | None = None
    warnings: tuple[Problem, ...] = ()
    duration_ms: float | None = None
    task: TaskRecord | None = None
    repeat: RepeatStats | None = None
    runs: tuple[CaseResult, ...] = ()
    output: Given = UNSET
    expected: Given = UNSET

    @property
    def malformed(self) -> bool:
        """Whether the case is malformed (it never passes)."""
        return bool(self.problems)

    @property
    def passed(self) -> bool:
        """Whether the case is valid and every scorer reached its threshold."""
        return not self.problems and all(outcome.passed for outcome in self.outcomes)

    @property
    def failing(self) -> tuple[ScorerOutcome, ...]:
        """Every scorer below its threshold (or without a score), in suite order."""
        return tuple(outcome for outcome in self.outcomes if not outcome.passed)

    @property
    def weighted_score(self) -> float | None:
        """The outcomes' :func:`weighted_score`."""
        return weighted_score([(o.score, o.weight) for o in self.outcomes])


class ReportModel(BaseModel):
    """A part of the JSON report: fields a newer version adds are ignored, the rest strict.

    ``"0.5"`` is no score, ``true`` no count, NaN no number.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)


def absent(value: object) -> bool:
    """Whether a report field is left out of the JSON (``task``, say, for a run without one)."""
    return value is None


def zero(value: int) -> bool:
    """Whether a count is 0, so left out of the JSON (``unscored``: reports stay as they were)."""
    return value == 0


class ScorerStats(ReportModel):
    """One scorer over a run: mean and std / √n over the ``n`` cases scored; ``errors``: not."""

    mean: float | None = None
    stderr: float | None = None
    n: int = 0
    errors: int = 0


class ScorerRepeat(ScorerStats):
    """One scorer over the runs of one case: :class:`ScorerStats` over runs, and ``passed_runs``."""

    passed_runs: int


class RepeatStats(ReportModel):
    """One case run K (``runs``) times, k (``passed_runs``) of them passing.

    ``pass_rate`` is k / K; ``pass_at_k`` whether at least one run passed.
    """

    runs: int
    passed_runs: int
    pass_rate: float
    pass_at_k: bool
    scorers: dict[str, ScorerRepeat]

    @classmethod
    def of(cls, runs: int, passed_runs: int, scorers: Mapping[str, ScorerRepeat]) -> RepeatStats:
        """The statistics of a case that passed ``passed_runs`` of ``runs`` runs."""
        return cls(
            runs=runs,
            passed_runs=passed_runs,
            pass_rate=passed_runs / runs,
            pass_at_k=passed_runs > 0,
            scorers=dict(scorers),
        )


class RepeatSummary(ReportModel):
    """Repeated runs over a run: the share of cases passed in some run, passed runs / runs."""

    runs_per_case: int
    pass_at_k: float | None
    run_pass_rate: float | None

    @classmethod
    def of(cls, stats: list[RepeatStats], cases: int) -> RepeatSummary:
        """The summary of the repeated cases among ``cases`` cases in all."""
        runs = sum(s.runs for s in stats)
        return cls(
            runs_per_case=max((s.runs for s in stats), default=0),
            pass_at_k=sum(s.pass_at_k for s in stats) / cases if cases else None,
            run_pass_rate=sum(s.passed_runs for s in stats) / runs if runs else None,
        )


class TaskSummary(ReportModel):
    """The task calls of a run (one per case and run): cached, failed (timeouts included)..."""

    runs: int
    cached: int
    errors: int
    timeouts: int
    mean_duration_ms: float | None
    max_duration_ms: float | None

    @classmethod
    def of(cls, calls: Sequence[tuple[TaskRecord, float | None]]) -> TaskSummary:
        """The summary of (record, duration in ms) pairs."""
        durations = [duration for _, duration in calls if duration is not None]
        return cls(
            runs=len(calls),
            cached=sum(record.cached for record, _ in calls),
            errors=sum(record.failed for record, _ in calls),
            timeouts=sum(record.timed_out for record, _ in calls),
            mean_duration_ms=statistics.fmean(durations) if durations else None,
            max_duration_ms=max(durations) if durations else None,
        )


class RunSummary(ReportModel):
    """Totals for a run; ``cases`` and ``failed`` count malformed cases, not those lost in files.

    ``task`` and ``repeat`` are there when a task answered the cases, repeatedly. Every field has
    a default, so that a report an older version wrote without it still reads.
    """

    cases: int = 0
    passed: int = 0
    failed: int = 0
    malformed: int = 0
    pass_rate: float | None = None
    weighted_mean: float | None = None
    # Valid cases with no weighted score (no scorer weighted above 0 gave one): not in the mean,
    # which would otherwise read 1.000 over a run whose only failure went unscored.
    unscored: int = Field(default=0, exclude_if=zero)
    unreadable_files: int = 0
    warnings: int = 0
    scorers: dict[str, ScorerStats] = {}
    task: TaskSummary | None = Field(default=None, exclude_if=absent)
    repeat: RepeatSummary | None = Field(default=None, exclude_if=absent)


@dataclass(frozen=True, slots=True)
class EvalRun:
    """A suite run over cases: each case's result in order, the totals, and file problems."""

    suite: Suite
    cases: tuple[CaseResult, ...]
    summary: RunSummary
    file_problems: tuple[Problem, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether every case passed, none was malformed, and every file was read in full."""
        return self.summary.failed == 0 and self.summary.unreadable_files == 0

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """Every warning of the run: on files, then on cases, in input order."""
        on_files = tuple(problem for problem in self.file_problems if problem.warning)
        return on_files + tuple(w for result in self.cases for w in result.warnings)


def passes(score: float | None, threshold: float) -> bool:
    """``score >= threshold`` within :data:`TOLERANCE`; no score never passes."""
    return score is not None and score >= threshold - TOLERANCE


def weighted_score(scores: Sequence[tuple[float | None, float]]) -> float | None:
    """``Σ score·weight / Σ weight`` over the (score, weight) pairs that have a score.

    ``None`` when no pair with a weight above 0 has one: a 0 would read as a bad score. Clamped
    to the scores' range, which rounding could leave by an ulp.
    """
    scored = [(s, w) for s, w in scores if s is not None and w > 0]
    if not scored:
        return None
    # Weights relative to the largest, so tiny (subnormal) weights do not underflow to 0.
    top = max(w for _, w in scored)
    relative = [(s, w / top) for s, w in scored]
    average = math.fsum(s * w for s, w in relative) / math.fsum(w for _, w in relative)
    return min(max(average, min(s for s, _ in scored)), max(s for s, _ in scored))


def mean_and_stderr(values: Sequence[float]) -> tuple[float | None, float | None]:
    """The mean (``None`` when empty) and its standard error (``None`` when n < 2)."""
    mean = statistics.fmean(values) if values else None
    stderr = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return mean, stderr
