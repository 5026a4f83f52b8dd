"""A run as a comparison sees it: from an :class:`EvalRun` in memory or a JSON report on disk.

Both are read as a report: unknown fields ignored, the rest strict (``"0.5"`` is no score). A
report whose case ids repeat is refused, since cases are matched by id; a run in memory numbers
a repeated id by occurrence instead (the cases file warned about it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Strict, StrictBool, StrictStr, ValidationError

from knowledgepulse.errors import ReportFileError
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import JsonError, loads
from knowledgepulse.records.readers import ReadError, open_source, read_all

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


def _repeated_ids(cases: Iterable[_Case], source: str) -> list[Problem]:
    first: dict[str, int] = {}
    problems = []
    for index, case in enumerate(cases):
        if case.id is None:
            continue
        if case.id in first:
            message = (
                f"{case.id!r} is also the id of cases[{first[case.id]}]; a comparison matches "
                "cases by id, so give each case in the cases file its own id"
            )
            problems.append(Problem(Location(source), f"cases[{index}].id", message))
        else:
            first[case.id] = index
    return problems


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
    repeated = _repeated_ids(report.cases, source)
    if repeated:
        raise ReportFileError(f"{source}: case ids repeat; cases are matched by id", repeated)
    return _snapshot(report, source)
