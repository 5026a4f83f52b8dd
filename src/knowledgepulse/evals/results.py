"""The results of a run, as plain data: each scorer's outcome, each case's verdict, the totals.

A case passes when every score reaches its threshold; its weighted score averages the scores by
weight. Weights never change a verdict, thresholds never a score; an error result fails the case
and is left out of both. docs/evals-tasks.md explains repeated runs (pass@K).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from knowledgepulse.evals.scorer import ScoreResult
from knowledgepulse.evals.suite import Suite, scorer_label
from knowledgepulse.evals.tasks import TaskRecord, TaskSummary
from knowledgepulse.records import Location, Problem

TOLERANCE = 1e-9
"""Scores this close below a threshold still pass (14/15·0.6 + 0.6·0.4 reaches 0.8)."""


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

    def to_dict(self) -> dict[str, Any]:
        """The outcome as the JSON report gives it."""
        return {
            "type": self.type,
            **({"name": self.name} if self.name is not None else {}),
            "score": self.score,
            "threshold": self.threshold,
            "weight": self.weight,
            "passed": self.passed,
            "margin": self.margin,
            "details": dict(self.result.details),
            "error": self.error,
            "diagnosis": list(self.diagnosis),
        }


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's verdict: every scorer's outcome (suite order), or why it is malformed.

    ``duration_ms``: the task's time (the runs' mean when repeated); ``task``: how its call went
    (``None`` for recorded outputs and repeated cases); a repeated case's ``outcomes`` hold the
    means over ``runs``, each run's own result, summed up in ``repeat``.
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

    def to_dict(self) -> dict[str, Any]:
        """The case as the JSON report gives it (task and repeat keys only when present)."""
        document: dict[str, Any] = {
            "id": self.case_id,
            "file": self.location.file,
            "line": self.location.line,
            "passed": self.passed,
            "weighted_score": self.weighted_score,
            "scorers": [outcome.to_dict() for outcome in self.outcomes],
            "error": [p.to_dict() for p in self.problems] if self.problems else None,
            "warnings": [p.to_dict() for p in self.warnings],
        }
        if self.duration_ms is not None:
            document["duration_ms"] = self.duration_ms
        if self.task is not None:
            document["task"] = self.task.to_dict()
        if self.repeat is not None:
            document["repeat"] = self.repeat.to_dict()
            document["runs"] = [run.to_dict() for run in self.runs]
        return document


@dataclass(frozen=True, slots=True)
class ScorerStats:
    """One scorer over a run: mean and std / √n over the ``n`` cases scored; ``errors``: not."""

    mean: float | None
    stderr: float | None
    n: int
    errors: int

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ScorerRepeat(ScorerStats):
    """One scorer over the runs of one case: :class:`ScorerStats` over runs, and ``passed_runs``."""

    passed_runs: int


@dataclass(frozen=True, slots=True)
class RepeatStats:
    """One case run K (``runs``) times, k (``passed_runs``) of them passing."""

    runs: int
    passed_runs: int
    scorers: Mapping[str, ScorerRepeat]

    @property
    def pass_rate(self) -> float:
        """The share of runs that passed: k / K."""
        return self.passed_runs / self.runs

    @property
    def pass_at_k(self) -> bool:
        """Whether the case passed in at least one of the K runs."""
        return self.passed_runs > 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return {
            "runs": self.runs,
            "passed_runs": self.passed_runs,
            "pass_rate": self.pass_rate,
            "pass_at_k": self.pass_at_k,
            "scorers": {key: stats.to_dict() for key, stats in self.scorers.items()},
        }


@dataclass(frozen=True, slots=True)
class RepeatSummary:
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

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Totals for a run; ``cases`` and ``failed`` count malformed cases, not those lost in files.

    ``task`` and ``repeat`` are there when a task answered the cases, repeatedly.
    """

    cases: int
    passed: int
    failed: int
    malformed: int
    pass_rate: float | None
    weighted_mean: float | None
    unreadable_files: int
    warnings: int
    scorers: Mapping[str, ScorerStats]
    task: TaskSummary | None = None
    repeat: RepeatSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report, in field order (task and repeat only when present)."""
        document = asdict(self)
        return {k: v for k, v in document.items() if v is not None or k not in {"task", "repeat"}}


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
