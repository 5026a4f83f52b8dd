"""The JSON report of a run: one model, written by ``kp eval -f json`` and read back as itself.

``EvalReport.of(run).model_dump()`` is the document (:mod:`knowledgepulse.reports.evals` writes
it as text); :func:`load_report` reads a file back into an :class:`EvalReport`, which is what a
comparison compares. Fields a newer version adds are ignored, those an older one did not write
have defaults, and the rest is strict (see :class:`~knowledgepulse.evals.results.ReportModel`).
A report names its ``format``; one of a newer format is refused, never read with defaults.
"""

from __future__ import annotations

import math
import operator
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from knowledgepulse.errors import ReportFileError
from knowledgepulse.evals.results import (
    UNSET,
    CaseResult,
    EvalRun,
    RepeatStats,
    ReportModel,
    RunSummary,
    ScorerOutcome,
    absent,
)
from knowledgepulse.evals.suite import Suite
from knowledgepulse.evals.tasks import TaskRecord
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import MAX_NESTING, JsonError, is_numpy, loads
from knowledgepulse.records.readers import ReadError, open_source, read_all

ProblemData = dict[str, Any]
"""A problem as :meth:`~knowledgepulse.errors.Problem.to_dict` gives it."""

_HOW_TO_WRITE = "write one with: kp eval CASES --suite SUITE -f json -o FILE"

REPORT_FORMAT = "knowledgepulse-eval-report/1"
"""The ``format`` a report is written with. A report without one is of this format too: it was
written before reports named it, in the same shape. A change that an older reader would read
wrongly with defaults (a renamed or re-meant field) takes the next number."""


class ReportScorer(ReportModel):
    """One suite entry: its key (``name``, else ``type``), weight, threshold and parameters."""

    key: str
    type: str
    name: str | None = Field(default=None, exclude_if=absent)
    weight: float
    threshold: float
    params: dict[str, Any] = Field(default_factory=dict)


class ReportSuite(ReportModel):
    """The suite of a run as resolved (also what ``kp eval --dry-run`` prints)."""

    name: str | None = None
    description: str | None = None
    source: str = "<suite>"
    scorers: list[ReportScorer]

    @classmethod
    def of(cls, suite: Suite) -> ReportSuite:
        """A resolved suite's entries and where it came from."""
        # A resolved entry has every field, each parameter's default filled in.
        scorers = [ReportScorer.model_validate(e, from_attributes=True) for e in suite.scorers]
        return cls(
            name=suite.name, description=suite.description, source=suite.source, scorers=scorers
        )


class ReportScore(ReportModel):
    """One scorer's result on one case: the score (``None`` for an error result) and verdict.

    ``margin`` is ``score - threshold``; ``diagnosis`` says what to check when it fell below.
    """

    type: str
    name: str | None = Field(default=None, exclude_if=absent)
    score: float | None
    threshold: float
    weight: float = 1.0
    passed: bool
    margin: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    diagnosis: list[str] = Field(default_factory=list)

    @property
    def key(self) -> str:
        """The suite entry's key: ``name``, else ``type``."""
        return self.name or self.type

    @classmethod
    def of(cls, outcome: ScorerOutcome) -> ReportScore:
        """An outcome of a run; details JSON has no type for are written as text."""
        return cls(
            type=outcome.type,
            name=outcome.name,
            score=outcome.score,
            threshold=outcome.threshold,
            weight=outcome.weight,
            passed=outcome.passed,
            margin=outcome.margin,
            details=json_data(dict(outcome.result.details)),
            error=outcome.error,
            diagnosis=list(outcome.diagnosis),
        )


class TaskFailure(ReportModel):
    """What the last attempt of a task call raised: the exception's type and message.

    ``at`` is the line of the user's code it raised from (``wf.py:12, in parse``), when known.
    """

    type: str
    message: str | None
    at: str | None = Field(default=None, exclude_if=absent)


class ReportTask(ReportModel):
    """How the task call of one case (one run) went: 0 ``attempts`` when ``cached``."""

    attempts: int
    cached: bool
    timed_out: bool
    error: TaskFailure | None

    @classmethod
    def of(cls, record: TaskRecord) -> ReportTask:
        """A task record of a run."""
        error = record.error_type
        failure = (
            TaskFailure(type=error, message=record.error_message, at=record.error_at)
            if error
            else None
        )
        return cls(
            attempts=record.attempts,
            cached=record.cached,
            timed_out=record.timed_out,
            error=failure,
        )


class ReportCase(ReportModel):
    """One case's verdict: where it was read, each scorer's result, or why it is malformed.

    ``error`` holds a malformed case's problems (``None`` for a valid case). A case a task
    answered has ``duration_ms`` and ``task``; a repeated one the means over its ``runs`` and
    their ``repeat`` statistics, and no ``task``. ``output`` is what was scored (a task's
    answer, or the case's ``actual``) and ``expected`` the case's expectation, both in full (a
    repeated case's outputs are in its ``runs``). Each is written only when the case has one, so
    ``null`` is an answer (``has_output``) and a missing field is none; an older report, without
    them, reads ``None`` and ``has_output`` false.
    """

    id: str | None
    file: str = ""
    line: int | None = None
    passed: bool
    weighted_score: float | None = None
    scorers: list[ReportScore]
    error: list[ProblemData] | None = None
    warnings: list[ProblemData] = Field(default_factory=list)
    duration_ms: float | None = Field(default=None, exclude_if=absent)
    task: ReportTask | None = Field(default=None, exclude_if=absent)
    repeat: RepeatStats | None = Field(default=None, exclude_if=absent)
    runs: list[ReportCase] = Field(default_factory=list, exclude_if=operator.not_)
    output: JsonValue = None
    expected: JsonValue = None

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Whether a case has an output is whether the field was given: null is an answer.
        document: dict[str, Any] = handler(self)
        for name in ("output", "expected"):
            if name not in self.model_fields_set:
                document.pop(name, None)
        return document

    @property
    def has_output(self) -> bool:
        """Whether the case has an ``output`` (``null`` included; a repeated case has none)."""
        return "output" in self.model_fields_set

    @property
    def has_expected(self) -> bool:
        """Whether the case has an ``expected`` value (``null`` included)."""
        return "expected" in self.model_fields_set

    @property
    def malformed(self) -> bool:
        """Whether the case is malformed (it never passes)."""
        return self.error is not None

    @classmethod
    def of(cls, result: CaseResult) -> ReportCase:
        """A case result of a run."""
        return cls(
            id=result.case_id,
            file=result.location.file,
            line=result.location.line,
            passed=result.passed,
            weighted_score=result.weighted_score,
            scorers=[ReportScore.of(outcome) for outcome in result.outcomes],
            error=[p.to_dict() for p in result.problems] if result.problems else None,
            warnings=[p.to_dict() for p in result.warnings],
            duration_ms=result.duration_ms,
            task=ReportTask.of(result.task) if result.task is not None else None,
            repeat=result.repeat,
            runs=[cls.of(run) for run in result.runs],
            **{
                name: value
                for name, value in (("output", result.output), ("expected", result.expected))
                if value is not UNSET
            },
        )


class EvalReport(ReportModel):
    """A run as its JSON report holds it: the suite, the totals, file problems and each case.

    ``source`` names the report in a comparison (the file it was read from, or ``this run``);
    it is not written.
    """

    format: str = REPORT_FORMAT
    suite: ReportSuite
    summary: RunSummary
    problems: list[ProblemData] = Field(default_factory=list)
    cases: list[ReportCase]
    source: str = Field(default="this run", exclude=True)

    @property
    def without_id(self) -> int:
        """The cases without an id (malformed ones), which a comparison cannot match."""
        return sum(case.id is None for case in self.cases)

    @classmethod
    def of(cls, run: EvalRun, source: str = "this run") -> EvalReport:
        """The report of a run in memory (``source`` names it in a comparison)."""
        return cls(
            format=REPORT_FORMAT,  # given, so set: this kp wrote it (see model_fields_set)
            suite=ReportSuite.of(run.suite),
            summary=run.summary,
            problems=[problem.to_dict() for problem in run.file_problems],
            cases=[ReportCase.of(result) for result in run.cases],
            source=source,
        )


def load_report(path: str | Path) -> EvalReport:
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
            summary = f"{Location(name)} cannot be read in full; {_HOW_TO_WRITE}"
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
        summary = f"{Location(name)} is not a kp eval JSON report; {_HOW_TO_WRITE}"
        raise ReportFileError(summary, [problem]) from None
    return parse_report(document, name)


def parse_report(document: Any, source: str) -> EvalReport:
    """A ``kp eval`` JSON report already parsed (``source`` names it, in errors too).

    Raises:
        ReportFileError: the document is not a ``kp eval`` JSON report, or its case ids repeat
            (a comparison matches cases by id).
    """
    summary = f"{Location(source)} is not a kp eval JSON report; {_HOW_TO_WRITE}"
    if not isinstance(document, dict):
        found = "a list" if isinstance(document, list) else f"a JSON {type(document).__name__}"
        problem = Problem(
            Location(source), "", f"got {found}; expected an object with suite, summary and cases"
        )
        raise ReportFileError(summary, [problem])
    _check_format(document.get("format", REPORT_FORMAT), source)
    try:
        report = EvalReport.model_validate({**document, "source": source})
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
        raise ReportFileError(
            f"{Location(source)}: case ids repeat; cases are matched by id", repeated
        )
    return report


def _check_format(written: object, source: str) -> None:
    """Refuse a report of another format: a newer one's fields may mean what this one's do not."""
    if written == REPORT_FORMAT:
        return
    family, _, number = REPORT_FORMAT.rpartition("/")
    theirs = written.rpartition("/") if isinstance(written, str) else ("", "", "")
    if theirs[0] == family and theirs[2].isdecimal() and int(theirs[2]) > int(number):
        message = (
            f"{written!r} was written by a newer knowledgepulse; this one reads {REPORT_FORMAT!r}"
        )
        summary = (
            f"{Location(source)}: a newer knowledgepulse wrote this report: upgrade "
            "knowledgepulse (pip install -U knowledgepulse) to compare with it, or write the "
            "baseline again with this one: kp eval CASES --suite SUITE -f json -o FILE"
        )
    else:
        message = f"got {written!r}; a kp eval report's format is {REPORT_FORMAT!r}"
        summary = f"{Location(source)} is not a kp eval JSON report; {_HOW_TO_WRITE}"
    raise ReportFileError(summary, [Problem(Location(source), "format", message)])


REFERS_TO_ITSELF = "(a reference to a value that holds it)"
NESTED_TOO_DEEP = f"(nested deeper than {MAX_NESTING} levels)"


def json_data(value: Any, _within: tuple[int, ...] = ()) -> Any:
    """``value`` as JSON data: what JSON has no type for is written as text.

    NaN and infinity, integers too long to print, non-string keys and other objects: a scorer's
    details may hold anything. A dict or list inside itself is written :data:`REFERS_TO_ITSELF`,
    one nested past ``MAX_NESTING`` levels :data:`NESTED_TOO_DEEP`. A NumPy scalar or array
    (``np.mean`` gives a ``float64``, ``np.sum`` of ints an ``int64``) is the number or list it
    holds, as a task's answer is, not its text (``"3"``, ``"[1 2]"``).
    """
    if is_numpy(value):
        return json_data(value.tolist(), _within)
    if isinstance(value, dict | list | tuple):
        if id(value) in _within:
            return REFERS_TO_ITSELF
        if len(_within) >= MAX_NESTING:
            return NESTED_TOO_DEEP
        _within = (*_within, id(value))  # the containers holding the children: a cycle's mark
    if isinstance(value, dict):
        return {_key(key, _within): json_data(child, _within) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [json_data(child, _within) for child in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:  # past sys.get_int_max_str_digits()
            return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    return value if value is None or isinstance(value, str | int) else _text(value)


def _key(key: Any, within: tuple[int, ...]) -> str:
    return key if isinstance(key, str) else _text(json_data(key, within))


def _text(value: Any) -> str:
    try:
        return str(value)
    except (ValueError, RecursionError):  # an integer too long to print, a frozenset too deep
        return type(value).__name__
