"""Comparing two runs (score deltas, flips, cases added and removed), and the gate CI applies.

Runs are compared as :class:`~knowledgepulse.evals.report.EvalReport` s (a run in memory is
turned into one, a report file is read as one), cases matched by id and occurrence. A
*regression* passed in the base run and fails in the new one; an *improvement* the reverse;
*changed* kept its verdict but moved past the tolerance.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, get_args

from pydantic import JsonValue

from knowledgepulse._util.settings import number_of
from knowledgepulse.evals.report import (
    EvalReport,
    ReportCase,
    ReportScore,
    ReportScorer,
    load_report,
)
from knowledgepulse.evals.results import TOLERANCE, EvalRun
from knowledgepulse.records.readers import check_stdin_once

# --- Comparing two runs ------------------------------------------------------------------

DEFAULT_TOLERANCE = TOLERANCE
"""Score deltas at most this large count as unchanged: by default only float noise."""

CaseChange = Literal["regressed", "improved", "changed", "unchanged", "added", "removed"]
Flip = Literal["regressed", "improved"]
ScorerStatus = Literal["added", "removed", "changed", "same"]


@dataclass(frozen=True, slots=True)
class ScoreDelta:
    """One scorer on one case, base against new (a side is ``None`` for a malformed case).

    ``changed``: it flipped, a score appeared or vanished, or ``delta`` is past the tolerance.
    """

    key: str
    base: ReportScore | None
    new: ReportScore | None
    delta: float | None
    flip: Flip | None
    changed: bool


@dataclass(frozen=True, slots=True)
class CaseComparison:
    """One case, base against new (``None`` on the side it was added to or removed from).

    ``occurrence`` counts the cases with its id so far in its run; ``scores`` are those of the
    scorers both suites have, in the new suite's order. ``output_changed``: both reports kept the
    case's output (older ones did not; ``null`` is one) and it differs. It does not make the case
    ``changed``: any score that moves, within the tolerance too, moved with its output, so an
    answer's change would make every tolerance void; it is counted on its own (see
    :class:`ComparisonSummary`).
    """

    case_id: str
    occurrence: int
    change: CaseChange
    base: ReportCase | None
    new: ReportCase | None
    scores: tuple[ScoreDelta, ...]
    weighted_delta: float | None
    output_changed: bool = False

    @property
    def label(self) -> str:
        """The id, with ``#2`` on its second occurrence in the run, ``#3`` on the third..."""
        return self.case_id if self.occurrence == 1 else f"{self.case_id} #{self.occurrence}"

    @property
    def changed_scores(self) -> tuple[ScoreDelta, ...]:
        """The scores that flipped, moved beyond the tolerance, or appeared or vanished."""
        return tuple(score for score in self.scores if score.changed)


@dataclass(frozen=True, slots=True)
class ScorerChange:
    """One suite entry, base against new, and its mean score in each run.

    ``same`` when the type, weight and threshold are (parameters are not compared).
    """

    key: str
    status: ScorerStatus
    base: ReportScorer | None
    new: ReportScorer | None
    base_mean: float | None
    new_mean: float | None

    @property
    def mean_delta(self) -> float | None:
        """``new_mean - base_mean`` when both exist."""
        return difference(self.base_mean, self.new_mean)


@dataclass(frozen=True, slots=True)
class ComparisonSummary:
    """How many cases regressed, improved, changed, held, were added, removed (CaseChange order).

    ``output_changed``: the cases whose answer changed, whatever their change; of the
    ``unchanged`` ones, ``unchanged_output_changed`` (scores held, the answer did not).
    """

    regressions: int
    improvements: int
    changed: int
    unchanged: int
    added: int
    removed: int
    output_changed: int = 0
    unchanged_output_changed: int = 0

    def to_dict(self) -> dict[str, int]:
        """Plain data for the JSON report."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two runs compared: cases and scorers (the new run's in order, then removed), counts."""

    base: EvalReport
    new: EvalReport
    tolerance: float
    cases: tuple[CaseComparison, ...]
    scorers: tuple[ScorerChange, ...]
    summary: ComparisonSummary

    @property
    def regressed(self) -> bool:
        """Whether any case passed in the base run and fails in the new one."""
        return self.summary.regressions > 0

    def of(self, change: CaseChange) -> tuple[CaseComparison, ...]:
        """The cases with that change, in :attr:`cases` order."""
        return tuple(case for case in self.cases if case.change == change)

    def answered_otherwise(self) -> tuple[CaseComparison, ...]:
        """The unchanged cases whose answer changed: same verdict and scores, another output."""
        return tuple(case for case in self.of("unchanged") if case.output_changed)


def difference(base: float | None, new: float | None) -> float | None:
    """``new - base`` rounded to 12 decimals (0.9 - 0.8 reads 0.1), or ``None`` if either is."""
    if base is None or new is None:
        return None
    return round(new - base, 12)


def compare_runs(
    base: EvalRun | EvalReport | str | Path,
    new: EvalRun | EvalReport | str | Path,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Comparison:
    """Compare a new run with a base run, case by case; each a run, a report, or a report file.

    Score deltas at most ``tolerance`` count as unchanged (flips always count). A report file
    (``kp eval -f json``) is read with :func:`~knowledgepulse.evals.report.load_report`, the
    base first.

    Raises:
        ValueError: the tolerance is negative or not finite.
        InputFileError: a report file cannot be opened, or both are standard input (``-``).
        ReportFileError: a file is not a ``kp eval`` JSON report.
    """
    check_tolerance(tolerance)
    check_stdin_once(base, new)
    before = _report(base, "base run")
    after = _report(new, "this run")
    base_keys = {entry.key for entry in before.suite.scorers}
    shared = [entry.key for entry in after.suite.scorers if entry.key in base_keys]
    base_cases, new_cases = _numbered(before), _numbered(after)
    cases = [
        _compare_case(key, base_cases.get(key), case, shared, tolerance)
        for key, case in new_cases.items()
    ]
    cases += [
        _compare_case(key, case, None, shared, tolerance)
        for key, case in base_cases.items()
        if key not in new_cases
    ]
    counts = Counter(case.change for case in cases)
    answered = [case.change for case in cases if case.output_changed]
    summary = ComparisonSummary(
        regressions=counts["regressed"],
        improvements=counts["improved"],
        changed=counts["changed"],
        unchanged=counts["unchanged"],
        added=counts["added"],
        removed=counts["removed"],
        output_changed=len(answered),
        unchanged_output_changed=answered.count("unchanged"),
    )
    return Comparison(
        before, after, tolerance, tuple(cases), _compare_scorers(before, after), summary
    )


def check_tolerance(tolerance: float) -> None:
    """Refuse a tolerance no comparison can use (a ScorerParameterError, a ValueError)."""
    number_of(tolerance, "tolerance", "a finite number of 0 or more", lambda t: 0 <= t < math.inf)


def _report(run: EvalRun | EvalReport | str | Path, name: str) -> EvalReport:
    if isinstance(run, EvalRun):
        return EvalReport.of(run, name)
    return run if isinstance(run, EvalReport) else load_report(run)


def _numbered(report: EvalReport) -> dict[tuple[str, int], ReportCase]:
    # Cases by id and occurrence of the id, in order; those without an id cannot be matched.
    seen: Counter[str] = Counter()
    numbered = {}
    for case in report.cases:
        if case.id is not None:
            seen[case.id] += 1
            numbered[case.id, seen[case.id]] = case
    return numbered


def _compare_case(
    key: tuple[str, int],
    base: ReportCase | None,
    new: ReportCase | None,
    keys: list[str],
    tolerance: float,
) -> CaseComparison:
    if base is None or new is None:
        change: CaseChange = "added" if base is None else "removed"
        return CaseComparison(*key, change, base, new, (), None)
    base_scores = {score.key: score for score in base.scorers}
    new_scores = {score.key: score for score in new.scorers}
    scores = tuple(
        _compare_score(k, base_scores.get(k), new_scores.get(k), tolerance)
        for k in keys
        if k in base_scores or k in new_scores
    )
    weighted = difference(base.weighted_score, new.weighted_score)
    output_changed = base.has_output and new.has_output and not same_json(base.output, new.output)
    if base.passed and not new.passed:
        change = "regressed"
    elif new.passed and not base.passed:
        change = "improved"
    elif (
        any(score.changed for score in scores)
        or base.malformed != new.malformed
        or (base.weighted_score is None) != (new.weighted_score is None)
        or (weighted is not None and abs(weighted) > tolerance)
    ):
        change = "changed"
    else:
        change = "unchanged"
    return CaseComparison(*key, change, base, new, scores, weighted, output_changed)


def same_json(a: JsonValue, b: JsonValue) -> bool:
    """Whether two JSON values are the same document: ``1`` is not ``true``, key order is free."""
    # Python's == takes True for 1 and 1 for 1.0; JSON text tells them apart.
    return a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _compare_score(
    key: str, base: ReportScore | None, new: ReportScore | None, tolerance: float
) -> ScoreDelta:
    delta = difference(base.score if base else None, new.score if new else None)
    flip: Flip | None = None
    if base is not None and new is not None and base.passed != new.passed:
        flip = "regressed" if base.passed else "improved"
    changed = (
        flip is not None
        or (base is None) != (new is None)
        or (base is not None and new is not None and (base.score is None) != (new.score is None))
        or (delta is not None and abs(delta) > tolerance)
    )
    return ScoreDelta(key, base, new, delta, flip, changed)


def _compare_scorers(base: EvalReport, new: EvalReport) -> tuple[ScorerChange, ...]:
    before = {entry.key: entry for entry in base.suite.scorers}
    after = {entry.key: entry for entry in new.suite.scorers}
    changes = []
    for key, entry in after.items():
        old = before.get(key)
        status: ScorerStatus = (
            "added" if old is None else "same" if _spec(old) == _spec(entry) else "changed"
        )
        changes.append(ScorerChange(key, status, old, entry, _mean(base, key), _mean(new, key)))
    changes += [
        ScorerChange(key, "removed", entry, None, _mean(base, key), None)
        for key, entry in before.items()
        if key not in after
    ]
    return tuple(changes)


def _spec(entry: ReportScorer) -> tuple[str, float, float]:
    return entry.type, entry.weight, entry.threshold


def _mean(report: EvalReport, key: str) -> float | None:
    stats = report.summary.scorers.get(key)
    return stats.mean if stats is not None else None


# --- The gate ------------------------------------------------------------------------------
# Against a baseline each failing case stands as a ``regression`` (it passed there), a ``new
# failure`` (no such case, or no id to match by) or an ``old failure``. ``fail_on="regression"``
# fails on the first two, so CI can tell "no worse than main" from "worse"; ``"failure"`` on any
# failing case; ``"never"`` records a run without judging it. An unreadable case file fails every
# mode but ``never``: the run is not all there.

FailOn = Literal["failure", "regression", "never"]
FAIL_ON: tuple[FailOn, ...] = get_args(FailOn)

Verdict = Literal["passed", "failed", "regressed"]
"""What a run comes to under its gate (``kp eval`` exits 0, 1 or 4)."""

Standing = Literal["regression", "new failure", "old failure"]
WORSE: frozenset[Standing] = frozenset({"regression", "new failure"})
"""The standings that are worse than the baseline."""


@dataclass(frozen=True, slots=True)
class Gate:
    """How a run is judged: what fails it, and each failing case's standing against a baseline.

    ``standings``: per case, in order (``None`` for a passing one); empty without a baseline.
    """

    fail_on: FailOn
    standings: tuple[Standing | None, ...] = ()

    @classmethod
    def of(cls, run: EvalRun, comparison: Comparison | None, fail_on: FailOn) -> Gate:
        """The gate of a run, compared with its baseline or not.

        Raises:
            ValueError: ``fail_on="regression"`` without a comparison.
        """
        if comparison is None:
            if fail_on == "regression":
                raise ValueError("failing on regressions needs a baseline to compare with")
            return cls(fail_on)
        # The comparison holds the run's cases with an id, in the run's order, then removed ones.
        matched = iter(case for case in comparison.cases if case.new is not None)
        standings: list[Standing | None] = []
        for result in run.cases:
            compared = next(matched) if result.case_id is not None else None
            if result.passed:
                standings.append(None)
            elif compared is None or compared.base is None:
                standings.append("new failure")
            else:
                standings.append("regression" if compared.base.passed else "old failure")
        return cls(fail_on, tuple(standings))

    @property
    def worse(self) -> int:
        """Cases worse than the baseline: regressions and new failures."""
        return sum(standing in WORSE for standing in self.standings)

    def verdict(self, run: EvalRun) -> Verdict:
        """What ``run`` comes to: ``regressed`` (worse than the baseline), ``failed`` or ``passed``.

        ``fail_on="never"`` always passes. ``"regression"`` fails on a case worse than the
        baseline, or a case file not read in full; old failures pass. ``"failure"`` fails on any
        failing case (``regressed`` when one of them passed in the baseline).
        """
        if self.fail_on == "never":
            return "passed"
        if self.fail_on == "regression":
            if self.worse:
                return "regressed"
            return "failed" if run.summary.unreadable_files else "passed"
        if "regression" in self.standings:
            return "regressed"
        return "passed" if run.passed else "failed"

    def excused(self, index: int) -> bool:
        """Whether the ``index``-th case is a failure the gate expects: an old one, on regressions.

        ``fail_on="never"`` excuses no case: it sets the exit code only, and a report still fails
        every failing case (a baseline recorded with it is the truth, not a pass).
        """
        return self.fail_on == "regression" and self.standing(index) == "old failure"

    def standing(self, index: int) -> Standing | None:
        """The run's ``index``-th case against the baseline, or ``None`` (passed, no baseline)."""
        return self.standings[index] if self.standings else None
