"""Comparing two runs (score deltas, flips, cases added and removed), and the gate CI applies.

Runs are :class:`RunSnapshot` s (of an :class:`EvalRun` or a JSON report), cases matched by id
and occurrence. A *regression* passed in the base run and fails in the new one; an *improvement*
the reverse; *changed* kept its verdict but moved past the tolerance.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Strict, StrictBool, StrictStr, ValidationError

from knowledgepulse.errors import ReportFileError
from knowledgepulse.evals.results import TOLERANCE, EvalRun
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import JsonError, loads
from knowledgepulse.records.readers import ReadError, open_source, read_all

# --- A run as a comparison sees it ---------------------------------------------------------
# Runs in memory and reports on disk are both read as a report: unknown fields ignored, the rest
# strict ("0.5" is no score). A report whose case ids repeat is refused, since cases are matched
# by id; a run in memory numbers a repeated id by occurrence instead (the cases file warned).

_HOW_TO_WRITE = "write one with: kp eval CASES --suite SUITE -f json -o FILE"


@dataclass(frozen=True, slots=True)
class ScorerSpec:
    """One suite entry as a comparison sees it: its key, type, weight and threshold."""

    key: str
    type: str
    weight: float
    threshold: float


@dataclass(frozen=True, slots=True)
class ScoreSnapshot:
    """One scorer's result on one case: the score (``None`` for an error result) and verdict."""

    score: float | None
    passed: bool
    threshold: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CaseSnapshot:
    """One case's verdict and scores; ``occurrence`` counts the cases with its id so far."""

    case_id: str
    occurrence: int
    passed: bool
    malformed: bool
    weighted_score: float | None
    scores: Mapping[str, ScoreSnapshot]

    @property
    def label(self) -> str:
        """The id, with ``#2`` on its second occurrence in the run, ``#3`` on the third..."""
        return self.case_id if self.occurrence == 1 else f"{self.case_id} #{self.occurrence}"


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """What a comparison needs of a run: ``cases`` with an id, in order; the others counted."""

    source: str
    suite_name: str | None
    scorers: tuple[ScorerSpec, ...]
    cases: tuple[CaseSnapshot, ...]
    without_id: int
    pass_rate: float | None
    weighted_mean: float | None
    scorer_means: Mapping[str, float | None]


# A score is a JSON number: "0.5" or true is not one, and would compare as something else.
_Number = Annotated[float, Strict()]


class _Lenient(BaseModel):
    """A report may carry fields newer versions add: they are ignored, not errors."""

    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)


class _SuiteEntry(_Lenient):
    key: StrictStr
    type: StrictStr
    weight: _Number
    threshold: _Number


class _Suite(_Lenient):
    name: StrictStr | None = None
    scorers: list[_SuiteEntry]


class _Stats(_Lenient):
    mean: _Number | None = None


class _Summary(_Lenient):
    pass_rate: _Number | None = None
    weighted_mean: _Number | None = None
    scorers: dict[str, _Stats] = {}


class _Outcome(_Lenient):
    type: StrictStr
    name: StrictStr | None = None
    score: _Number | None
    threshold: _Number
    passed: StrictBool
    error: StrictStr | None = None


class _Case(_Lenient):
    id: StrictStr | None
    passed: StrictBool
    weighted_score: _Number | None = None
    scorers: list[_Outcome]
    error: list[Any] | None = None


class _Report(_Lenient):
    suite: _Suite
    summary: _Summary
    cases: list[_Case]


def run_snapshot(run: EvalRun, source: str = "this run") -> RunSnapshot:
    """The part of a run in memory that a comparison needs."""
    cases = [case.to_dict() for case in run.cases]
    document = {"suite": run.suite.to_dict(), "summary": run.summary.to_dict(), "cases": cases}
    return _snapshot(_Report.model_validate(document), source)


def _snapshot(report: _Report, source: str) -> RunSnapshot:
    # Cases are numbered by occurrence of their id; those without one are only counted.
    seen: Counter[str] = Counter()
    cases = []
    for case in report.cases:
        if case.id is not None:
            seen[case.id] += 1
            scores = {
                o.name or o.type: ScoreSnapshot(o.score, o.passed, o.threshold, o.error)
                for o in case.scorers
            }
            malformed = case.error is not None
            cases.append(
                CaseSnapshot(
                    case.id, seen[case.id], case.passed, malformed, case.weighted_score, scores
                )
            )
    suite, summary = report.suite, report.summary
    return RunSnapshot(
        source=source,
        suite_name=suite.name,
        scorers=tuple(ScorerSpec(e.key, e.type, e.weight, e.threshold) for e in suite.scorers),
        cases=tuple(cases),
        without_id=len(report.cases) - len(cases),
        pass_rate=summary.pass_rate,
        weighted_mean=summary.weighted_mean,
        scorer_means={key: stats.mean for key, stats in summary.scorers.items()},
    )


def load_report(path: str | Path) -> RunSnapshot:
    """Read a ``kp eval -f json`` report back (``-`` reads standard input; ``.gz`` works too).

    Raises:
        InputFileError: the file cannot be opened.
        ReportFileError: the file is not a ``kp eval`` JSON report; each problem says where.
    """
    with open_source(path) as source:
        name = source.name
        try:
            data = read_all(source.stream)
        except ReadError as error:  # a truncated .gz
            summary = f"{name} cannot be read in full; {_HOW_TO_WRITE}"
            raise ReportFileError(summary, [Problem(Location(name), "", str(error))]) from None
    try:
        document, _ = loads(data)
    except (JsonError, UnicodeDecodeError) as error:
        if isinstance(error, JsonError):
            problem = Problem(Location(name, error.line), error.path, error.message)
        else:
            line = data.count(b"\n", 0, error.start) + 1
            byte = error.object[error.start]
            message = f"not UTF-8 text: byte 0x{byte:02x} ({error.reason}); save it as UTF-8"
            problem = Problem(Location(name, line), "", message)
        summary = f"{name} is not a kp eval JSON report; {_HOW_TO_WRITE}"
        raise ReportFileError(summary, [problem]) from None
    return report_snapshot(document, name)


def report_snapshot(document: Any, source: str) -> RunSnapshot:
    """A snapshot of a ``kp eval`` JSON report already parsed (``source`` names it in errors).

    Raises:
        ReportFileError: the document is not a ``kp eval`` JSON report.
    """
    summary = f"{source} is not a kp eval JSON report; {_HOW_TO_WRITE}"
    if not isinstance(document, dict):
        found = "a list" if isinstance(document, list) else f"a JSON {type(document).__name__}"
        problem = Problem(
            Location(source), "", f"got {found}; expected an object with suite, summary and cases"
        )
        raise ReportFileError(summary, [problem])
    try:
        report = _Report.model_validate(document)
    except ValidationError as error:
        raise ReportFileError(
            summary, Record(Location(source), document).problems_from(error)
        ) from None
    first: dict[str, int] = {}
    repeated = [
        Problem(
            Location(source),
            f"cases[{index}].id",
            f"{case.id!r} is also the id of cases[{first[case.id]}]; a comparison matches cases by "
            "id, so give each case in the cases file its own id",
        )
        for index, case in enumerate(report.cases)
        if case.id is not None and first.setdefault(case.id, index) != index
    ]
    if repeated:
        raise ReportFileError(f"{source}: case ids repeat; cases are matched by id", repeated)
    return _snapshot(report, source)


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
    base: ScoreSnapshot | None
    new: ScoreSnapshot | None
    delta: float | None
    flip: Flip | None
    changed: bool


@dataclass(frozen=True, slots=True)
class CaseComparison:
    """One case, base against new (``None`` on the side it was added to or removed from).

    ``label`` is its id (``#n`` for a repeated id); ``scores`` are those of the scorers both
    suites have, in the new suite's order.
    """

    label: str
    change: CaseChange
    base: CaseSnapshot | None
    new: CaseSnapshot | None
    scores: tuple[ScoreDelta, ...]
    weighted_delta: float | None

    @property
    def changed_scores(self) -> tuple[ScoreDelta, ...]:
        """The scores that flipped, moved beyond the tolerance, or appeared or vanished."""
        return tuple(score for score in self.scores if score.changed)


@dataclass(frozen=True, slots=True)
class ScorerChange:
    """One suite entry, base against new, and its mean score in each run."""

    key: str
    status: ScorerStatus
    base: ScorerSpec | None
    new: ScorerSpec | None
    base_mean: float | None
    new_mean: float | None

    @property
    def mean_delta(self) -> float | None:
        """``new_mean - base_mean`` when both exist."""
        return difference(self.base_mean, self.new_mean)


@dataclass(frozen=True, slots=True)
class ComparisonSummary:
    """How many cases regressed, improved, changed, held, were added, removed (CaseChange order)."""

    regressions: int
    improvements: int
    changed: int
    unchanged: int
    added: int
    removed: int

    def to_dict(self) -> dict[str, int]:
        """Plain data for the JSON report."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two runs compared: cases and scorers (the new run's in order, then removed), counts."""

    base: RunSnapshot
    new: RunSnapshot
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


def difference(base: float | None, new: float | None) -> float | None:
    """``new - base`` rounded to 12 decimals (0.9 - 0.8 reads 0.1), or ``None`` if either is."""
    if base is None or new is None:
        return None
    return round(new - base, 12)


def compare_runs(
    base: EvalRun | RunSnapshot,
    new: EvalRun | RunSnapshot,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Comparison:
    """Compare a new run with a base run (or snapshot: :func:`load_report`), case by case.

    Score deltas at most ``tolerance`` count as unchanged (flips always count).

    Raises:
        ValueError: the tolerance is negative or not finite.
    """
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    before = run_snapshot(base, "base run") if isinstance(base, EvalRun) else base
    after = run_snapshot(new) if isinstance(new, EvalRun) else new
    base_keys = {spec.key for spec in before.scorers}
    shared = [spec.key for spec in after.scorers if spec.key in base_keys]
    base_cases = {(c.case_id, c.occurrence): c for c in before.cases}
    new_ids = {(c.case_id, c.occurrence) for c in after.cases}
    cases = [
        _compare_case(base_cases.get((c.case_id, c.occurrence)), c, shared, tolerance)
        for c in after.cases
    ]
    cases += [
        _compare_case(c, None, shared, tolerance)
        for c in before.cases
        if (c.case_id, c.occurrence) not in new_ids
    ]
    counts = Counter(case.change for case in cases)
    summary = ComparisonSummary(*(counts[change] for change in get_args(CaseChange)))
    return Comparison(
        before, after, tolerance, tuple(cases), _compare_scorers(before, after), summary
    )


def _compare_case(
    base: CaseSnapshot | None, new: CaseSnapshot | None, keys: list[str], tolerance: float
) -> CaseComparison:
    if base is None or new is None:
        case = new if base is None else base
        assert case is not None  # one side is always there
        return CaseComparison(
            case.label, "added" if base is None else "removed", base, new, (), None
        )
    scores = tuple(
        _compare_score(key, base.scores.get(key), new.scores.get(key), tolerance)
        for key in keys
        if key in base.scores or key in new.scores
    )
    weighted = difference(base.weighted_score, new.weighted_score)
    change: CaseChange
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
    return CaseComparison(new.label, change, base, new, scores, weighted)


def _compare_score(
    key: str, base: ScoreSnapshot | None, new: ScoreSnapshot | None, tolerance: float
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


def _compare_scorers(base: RunSnapshot, new: RunSnapshot) -> tuple[ScorerChange, ...]:
    before = {spec.key: spec for spec in base.scorers}
    after = {spec.key: spec for spec in new.scorers}
    changes = []
    for key, spec in after.items():
        old = before.get(key)
        status: ScorerStatus = "added" if old is None else "same" if old == spec else "changed"
        changes.append(
            ScorerChange(
                key, status, old, spec, base.scorer_means.get(key), new.scorer_means.get(key)
            )
        )
    changes += [
        ScorerChange(key, "removed", spec, None, base.scorer_means.get(key), None)
        for key, spec in before.items()
        if key not in after
    ]
    return tuple(changes)


# --- The gate ------------------------------------------------------------------------------
# Against a baseline each failing case stands as a ``regression`` (it passed there), a ``new
# failure`` (no such case, or no id to match by) or an ``old failure``. ``fail_on="regression"``
# fails on the first two, so CI can tell "no worse than main" from "worse"; ``"failure"`` on any
# failing case; ``"never"`` records a run without judging it. An unreadable case file fails every
# mode but ``never``: the run is not all there.

FailOn = Literal["failure", "regression", "never"]
FAIL_ON: tuple[FailOn, ...] = get_args(FailOn)

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

    def excused(self, index: int) -> bool:
        """Whether the run's ``index``-th case fails but does not fail the run."""
        if self.fail_on == "never":
            return True
        return self.fail_on == "regression" and self.standing(index) == "old failure"

    def standing(self, index: int) -> Standing | None:
        """The run's ``index``-th case against the baseline, or ``None`` (passed, no baseline)."""
        return self.standings[index] if self.standings else None
