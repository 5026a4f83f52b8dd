"""Evaluation runs as library calls: a suite over case files, compared with a baseline, judged.

:func:`evaluate_cases` is what ``kp eval`` does: import the scorer plugins and the task, build
the suite, read the baseline, then score every case (or call the task and score its answers),
compare the run with the baseline and judge it by its gate. :func:`check_cases` is ``kp eval
--dry-run``: the same preparation and reading, without scoring. Everything that can be refused
is refused before the first case runs. The results are plain data: the run, the comparison,
the gate and its verdict, and the problems found while reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TypedDict, Unpack

from pydantic import JsonValue

from knowledgepulse._util.settings import one_of, optional_path, path_of, paths_of, wrong_setting
from knowledgepulse._util.text import printable
from knowledgepulse.errors import (
    NO_VALUE,
    InputFileError,
    KnowledgePulseError,
    ParameterConflictError,
    PluginLoadError,
    Setting,
)
from knowledgepulse.evals.cases import (
    CaseInput,
    Cases,
    FileProblem,
    MalformedCase,
    case_inputs,
    fit_cases,
)
from knowledgepulse.evals.compare import (
    DEFAULT_TOLERANCE,
    FAIL_ON,
    Comparison,
    FailOn,
    Gate,
    Verdict,
    check_tolerance,
    compare_runs,
)
from knowledgepulse.evals.evaluate import (
    DEFAULT_CACHE_DIR,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    TaskProgress,
    evaluate,
)
from knowledgepulse.evals.report import EvalReport, load_report
from knowledgepulse.evals.results import (
    ERROR_LIMIT,
    UNSET,
    CaseResult,
    EvalRun,
    Given,
    ScorerOutcome,
)
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.scorer import details_diagnosis
from knowledgepulse.evals.suite import Suite, load_suite, preset, suite_from_dict
from knowledgepulse.evals.tasks import (
    TaskFunction,
    TaskRecord,
    check_options,
    check_task,
    load_plugin,
    load_task,
)
from knowledgepulse.records import Problem
from knowledgepulse.records.readers import check_openable, check_stdin_once
from knowledgepulse.runs.read import OnProblem, secret_free
from knowledgepulse.trace.models import PrivacyLevel

Baseline = EvalRun | EvalReport | str | Path
"""An earlier run to compare with: the run, its report, or its ``kp eval -f json`` file."""
SuiteSpec = Suite | Mapping[str, object] | str | Path
"""A suite: built, data shaped like a suite file (``{"scorers": [...]}``), or its file."""


@dataclass(frozen=True, slots=True)
class EvalOutcome:
    """What :func:`evaluate_cases` found: the run, how it compares, and what it comes to.

    Attributes:
        run: every case's verdict and the totals.
        comparison: the run against the baseline, or ``None`` without one.
        gate: what fails the run, and each failing case's standing against the baseline.
        problems: what reading the cases found (malformed cases, parts of files that cannot
            be read, warnings), in the order found.
    """

    run: EvalRun
    comparison: Comparison | None
    gate: Gate
    problems: tuple[Problem, ...] = ()
    allow_empty: bool = False

    @property
    def empty(self) -> bool:
        """Whether the case files held no case (and every file was read)."""
        return not self.run.cases and not self.run.file_problems

    @property
    def suite(self) -> Suite:
        """The suite the cases were judged by."""
        return self.run.suite

    @property
    def verdict(self) -> Verdict:
        """``passed``, ``failed`` or ``regressed`` (worse than the baseline), by the gate.

        A run over no case fails unless ``allow_empty``: a gate over nothing (a glob that
        matched no file, an emptied case file) is a mistake, not a pass.
        """
        if self.empty and not self.allow_empty:
            return "failed"
        return self.gate.verdict(self.run)

    @property
    def passed(self) -> bool:
        """Whether the gate lets the run pass (``kp eval`` exits 0)."""
        return self.verdict == "passed"

    @property
    def report(self) -> EvalReport:
        """The run as its JSON report holds it (``kp eval -f json``)."""
        return EvalReport.of(self.run)

    @property
    def task_failures(self) -> tuple[Problem, ...]:
        """Each task call that gave no output (after its retries), located at its case."""
        return tuple(
            Problem(
                result.location,
                "",
                f"case {result.case_id!r}{f' (run {number})' if result.runs else ''}: "
                f"{_one_line(one.task)}",
            )
            for result in self.run.cases
            for number, one in enumerate(result.runs or (result,), start=1)
            if one.task is not None and one.task.failed
        )


def _one_line(record: TaskRecord) -> str:
    """A failed call's error for a stderr line: its message on one line, cut as views cut it.

    The JSON report keeps the message whole; a 300,000-character one (an HTTP error's body)
    would otherwise bury every other line of the run.
    """
    return printable(record.reason(ERROR_LIMIT) or "", one_line=True)


@dataclass(frozen=True, slots=True)
class CaseCheck:
    """What :func:`check_cases` found: the suite as resolved, and what reading the cases found.

    Attributes:
        suite: the suite, every default filled in.
        cases: the cases read (malformed ones included).
        malformed: the cases that are malformed, or miss what the suite reads.
        unreadable_files: the files that could not be read in full.
        warnings: warnings (a case id used twice, say), which fail nothing.
        problems: every problem and warning, in the order found.
    """

    suite: Suite
    cases: int
    malformed: int
    unreadable_files: int
    warnings: int
    problems: tuple[Problem, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether every case is well-formed and every file was read in full."""
        return not self.malformed and not self.unreadable_files


def load_evaluation(
    *,
    suite: SuiteSpec | None = None,
    preset: str | None = None,
    task: TaskFunction | str | None = None,
    plugins: Iterable[str] = (),
) -> tuple[Suite, TaskFunction | None]:
    """The suite and the task of an evaluation: the plugins imported first, then the task.

    Args:
        suite: a suite, data shaped like a suite file, or the path of one (YAML or JSON).
        preset: instead of ``suite``, a built-in suite's name (``standard``, say).
        task: the workflow under test, or the ``module:function`` (or
            ``path/to/file.py:function``) that names it; ``None``: score recorded outputs.
        plugins: modules or ``.py`` files to import first, registering their scorers.

    Raises:
        ParameterConflictError: neither or both of ``suite`` and ``preset``.
        PluginLoadError: a plugin or the task cannot be imported.
        SettingTypeError: ``task`` cannot be called with the one ``TaskInput``.
        InputFileError: the suite file cannot be read.
        SuiteError: the suite has errors, each located.
        UnknownPresetError: no preset has that name.
    """
    _plugins(suite, preset, plugins)  # first of all, so a bad name costs nothing
    loaded = _task(task)
    return _suite(suite, preset), loaded


def evaluate_cases(
    cases: Cases,
    *,
    suite: SuiteSpec | None = None,
    preset: str | None = None,
    task: TaskFunction | str | None = None,
    plugins: Iterable[str] = (),
    baseline: Baseline | None = None,
    fail_on: FailOn | None = None,
    tolerance: float | None = None,
    concurrency: int | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    retries: int | None = None,
    repeat: int | None = None,
    task_version: str | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    progress: Callable[[TaskProgress], object] | None = None,
    on_problem: OnProblem | None = None,
    allow_empty: bool = False,
    redact: bool = False,
) -> EvalOutcome:
    """Judge ``cases`` with a suite, compare the run with a baseline, and apply the gate.

    Without a task each case's recorded output is scored as it is read; with one, each case's
    input goes to the task (:func:`~knowledgepulse.evals.evaluate`) and its answer is scored. A
    malformed case fails; a part of a file that cannot be read is a problem, the rest is read.

    Args:
        cases: case files (a path or a list of paths; ``-`` is stdin), or cases (dicts, say).
        suite: a suite, data shaped like a suite file, or the path of one.
        preset: instead of ``suite``, a built-in suite's name.
        task: the workflow under test, or the ``module:function`` that names it.
        plugins: modules or ``.py`` files to import first, registering their scorers.
        baseline: an earlier run to compare with (see :data:`Baseline`), read before any case.
        fail_on: what fails the run: ``failure`` (any failing case), ``regression`` (a case
            worse than the baseline: it passed there, or is not in it) or ``never``; by default
            ``regression`` with a baseline, else ``failure``.
        tolerance: with a baseline, score changes at most this large count as unchanged
            (default: ``DEFAULT_TOLERANCE``).
        concurrency: with a task, calls in flight at once (default: ``DEFAULT_CONCURRENCY``).
        timeout: the seconds one call of your code may take: a task's call, or one of your
            scorers on one case (``None``: no limit); past it that case is an error.
        retries: with a task, retries of a call that raised or timed out (default: 0).
        repeat: with a task, calls per case (means, standard errors and pass@K above 1;
            default: 1).
        task_version: with a task, cache its outputs under this version.
        cache_dir: with a task version, where outputs are cached (``None``: nowhere).
        progress: with a task, told how far the calls are.
        on_problem: told each problem and warning found while reading, as it is found.
        allow_empty: let a run over no case pass (by default its verdict is ``failed``).
        redact: clean what is reported of personal data too (e-mails, phone numbers, cards,
            IBANs, addresses...: the ``aggregated`` level, :func:`report_level`), not only of
            secrets: outputs, expectations, details, diagnoses, errors and problems. The
            scorers still judge the raw output.

    Raises:
        ParameterConflictError: settings that contradict each other (:func:`check_settings`).
        ScorerParameterError: out-of-range settings.
        PluginLoadError: a plugin or the task cannot be imported.
        SettingTypeError: ``task`` is neither a function nor a spec, or cannot be called with
            the one ``TaskInput`` (before any case is read).
        InputFileError: a case file, the suite file or the baseline cannot be opened, or ``-``
            (standard input) is given twice among them.
        SuiteError: the suite has errors, each located.
        ReportFileError: the baseline is not a ``kp eval`` JSON report.
        OutputError: the output cache cannot be written (before any call).
    """
    check_settings(
        task,
        baseline,
        fail_on=fail_on,
        tolerance=tolerance,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        repeat=repeat,
        task_version=task_version,
        cache_dir=cache_dir,
    )
    level = report_level(redact)
    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    concurrency = DEFAULT_CONCURRENCY if concurrency is None else concurrency
    resolved, loaded, base = _prepare(
        cases, suite=suite, preset=preset, task=task, plugins=plugins, baseline=baseline
    )
    found: list[Problem] = []
    inputs = _read(cases, resolved, loaded, found, on_problem, level=level)
    if loaded is None:
        run = run_suite(resolved, inputs, timeout=timeout)
    else:
        run = evaluate(
            loaded,
            inputs,
            resolved,
            concurrency=concurrency,
            timeout=timeout,
            retries=0 if retries is None else retries,
            repeat=1 if repeat is None else repeat,
            task_version=task_version,
            cache_dir=cache_dir,
            progress=progress,
            # The report never shows a secret: the cache on disk (kept by CI) must not hold one.
            cacheable=lambda output: _secret_free_json(output, level) == output,
        )
    run = _secret_free_run(run, level)
    if loaded is not None:
        _tell_answer_warnings(run, found, on_problem)
    comparison = compare_runs(base, run, tolerance=tolerance) if base is not None else None
    gate = Gate.of(run, comparison, fail_on or ("regression" if base is not None else "failure"))
    return EvalOutcome(run, comparison, gate, tuple(found), allow_empty)


class RunSettings(TypedDict, total=False):
    """The settings of an evaluation run, as :func:`evaluate_cases` takes them."""

    fail_on: FailOn | None
    tolerance: float | None
    concurrency: int | None
    timeout: float | None
    retries: int | None
    repeat: int | None
    task_version: str | None
    cache_dir: str | Path | None
    redact: bool


def report_level(redact: bool) -> PrivacyLevel:
    """The level a run's reports and messages are cleaned at: ``redact`` as ``kp eval --redact``.

    ``private`` (secrets only) by default; ``aggregated`` (personal identifiers too) with
    ``redact``, as another command's messages are with ``--redact`` (``messages_level``): a
    report is pasted in pull requests and kept as a CI artefact.
    """
    return "aggregated" if redact else "private"


_TASK_CALLS = ("concurrency", "retries", "repeat", "task_version")
"""The settings of a task's calls, besides ``cache_dir``, in order (``None``: not given)."""


def check_settings(task: object, baseline: object, **settings: Unpack[RunSettings]) -> None:
    """Refuse a run's settings that contradict each other, naming them (a dry run's too).

    Raises:
        ParameterConflictError: settings of a task's calls without a ``task``; a ``cache_dir``
            without a ``task_version``; ``tolerance`` or ``fail_on='regression'`` without a
            ``baseline``.
        ScorerParameterError: out-of-range settings, an unknown ``fail_on``.
        SettingTypeError: a ``cache_dir`` that is not a path.
    """
    named = [Setting(name) for name in _TASK_CALLS if settings.get(name) is not None]
    cache_dir = settings.get("cache_dir", DEFAULT_CACHE_DIR)
    optional_path(cache_dir, "cache_dir", "a folder's path, a str or a Path")
    a_dir = cache_dir is not None and Path(cache_dir) != DEFAULT_CACHE_DIR
    if not (baseline is None or isinstance(baseline, EvalRun | EvalReport)):
        allowed = "an EvalRun, an EvalReport, or a kp eval JSON report's path, a str or a Path"
        path_of(baseline, "baseline", allowed)
    if cache_dir is None or a_dir:
        named.append(Setting("cache_dir", NO_VALUE if a_dir else None))
    if task is None and named:
        listed = [part for setting in named for part in (", ", setting)][1:]
        verb = " only applies with " if len(named) == 1 else " only apply with "
        raise ParameterConflictError(*listed, verb, Setting("task", "MODULE:FUNCTION"))
    if a_dir and settings.get("task_version") is None:
        version = Setting("task_version")
        raise ParameterConflictError(
            Setting("cache_dir"), " holds the outputs cached under ", version, ": give ", version
        )
    if (tolerance := settings.get("tolerance")) is not None:
        if baseline is None:
            raise ParameterConflictError(
                Setting("tolerance"),
                " applies to the comparison with ",
                Setting("baseline", "FILE"),
            )
        check_tolerance(tolerance)
    fail_on = settings.get("fail_on")
    if fail_on is not None:  # a typo was read as 'failure'
        one_of(fail_on, "fail_on", FAIL_ON)
    if fail_on == "regression" and baseline is None:
        raise ParameterConflictError(
            Setting("fail_on", "regression"),
            " needs ",
            Setting("baseline", "FILE"),
            ", the run to be no worse than",
        )
    concurrency, retries, repeat = (
        settings.get("concurrency"),
        settings.get("retries"),
        settings.get("repeat"),
    )
    check_options(
        DEFAULT_CONCURRENCY if concurrency is None else concurrency,
        settings.get("timeout"),
        0 if retries is None else retries,
        0,
        1 if repeat is None else repeat,
    )


def check_cases(
    cases: Cases,
    *,
    suite: SuiteSpec | None = None,
    preset: str | None = None,
    task: TaskFunction | str | None = None,
    plugins: Iterable[str] = (),
    baseline: Baseline | None = None,
    on_problem: OnProblem | None = None,
    **settings: Unpack[RunSettings],
) -> CaseCheck:
    """Prepare an evaluation as :func:`evaluate_cases` does and read its cases, scoring none.

    Every case is validated and every content pattern compiled; with a task, what only its
    answers will hold is not asked of the cases. The arguments are :func:`evaluate_cases`'s:
    ``settings``, those of the run, are checked as it checks them, and left unused.

    Raises:
        ParameterConflictError, ScorerParameterError, PluginLoadError, InputFileError, SuiteError,
            ReportFileError: as :func:`evaluate_cases` raises them, before its first case.
    """
    check_settings(task, baseline, **settings)
    resolved, loaded, _ = _prepare(
        cases, suite=suite, preset=preset, task=task, plugins=plugins, baseline=baseline
    )
    found: list[Problem] = []
    read = malformed = 0
    unreadable: set[str] = set()
    level = report_level(settings.get("redact", False))
    for item in _read(cases, resolved, loaded, found, on_problem, level=level):
        if isinstance(item, FileProblem):
            if not item.problem.warning:
                unreadable.add(item.location.file)
        else:
            read += 1
            malformed += isinstance(item, MalformedCase) and bool(item.problems)
    warnings = sum(problem.warning for problem in found)
    shown = _secret_free_suite(resolved, level)
    return CaseCheck(shown, read, malformed, len(unreadable), warnings, tuple(found))


def _plugins(suite: object, preset: str | None, plugins: Iterable[str]) -> None:
    if (suite is None) == (preset is None):
        raise ParameterConflictError(
            "give exactly one of ", Setting("suite", "FILE"), " or ", Setting("preset", "NAME")
        )
    # One plugin given alone is one, not one a character ('s', 'u'... "no module named 's'").
    allowed = "a module or a .py file (a str), or a list of them"
    for plugin in paths_of(plugins, "plugins", allowed):
        load_plugin(str(plugin))


def _task(task: TaskFunction | str | None) -> TaskFunction | None:
    if task is not None and not isinstance(task, str) and not callable(task):
        raise wrong_setting("task", task, "a function or 'module:function'", wrong_type=True)
    if isinstance(task, str):
        return load_task(task)
    if task is not None:
        check_task(task)
    return task


def _suite(suite: SuiteSpec | None, name: str | None) -> Suite:
    if isinstance(suite, Suite):
        return suite
    if isinstance(suite, Mapping):
        return suite_from_dict(suite)
    if suite is not None and not isinstance(suite, str | Path):
        # load_suite's own refusal would name its parameter, path, and only the file.
        raise wrong_setting(
            "suite",
            suite,
            "a suite file's path, a Suite, or data shaped like a suite file: "
            "{'scorers': [...]} (a list of scorers goes under 'scorers')",
            wrong_type=True,
        )
    return load_suite(suite) if suite is not None else preset(name or "")


def _prepare(
    cases: Cases,
    *,
    suite: SuiteSpec | None,
    preset: str | None,
    task: TaskFunction | str | None,
    plugins: Iterable[str],
    baseline: Baseline | None,
) -> tuple[Suite, TaskFunction | None, EvalRun | EvalReport | None]:
    """The task, then the suite and the baseline, each case file checked to open in between.

    A task that cannot be imported, a case file that cannot be opened and a suite's errors are
    raised together, so one run shows all there is to fix: the suite's error first (its
    problems are the most), each other's message a note on it (:pep:`678`). The plugins come
    first and alone: a suite naming a scorer of a plugin that failed fails because of it.
    """
    _plugins(suite, preset, plugins)
    failures: list[KnowledgePulseError] = []
    loaded = None
    try:
        loaded = _task(task)
    except PluginLoadError as error:
        failures.append(error)
    paths = (
        [cases]
        if isinstance(cases, str | Path)
        else cases
        if isinstance(cases, list | tuple)
        else []
    )
    checks = [partial(check_stdin_once, paths, baseline)]  # stdin is read once
    checks += [partial(check_openable, path) for path in paths if isinstance(path, str | Path)]
    for check in checks:
        try:
            check()
        except InputFileError as error:
            failures.append(error)
    try:
        resolved = _suite(suite, preset)
    except KnowledgePulseError as error:
        failures.insert(0, error)
    if failures:
        first, *others = failures
        for other in others:
            first.add_note(str(other))
        raise first
    # Read before any case runs: a bad baseline should not cost a whole run.
    base = load_report(baseline) if isinstance(baseline, str | Path) else baseline
    return resolved, loaded, base


def secret_free_case(item: CaseInput, level: PrivacyLevel = "private") -> CaseInput:
    """The case with what its problems' messages quote cleaned at ``level``, as a trace's are.

    A refused value is quoted (``got "ghp_..."``), and the messages go to stderr, CI logs and
    every report: ``private`` redacts secrets (an e-mail address is kept), ``aggregated``
    personal identifiers too (:func:`report_level`).
    """
    clean = partial(secret_free, level=level)
    if isinstance(item, FileProblem):
        return FileProblem(clean(item.problem))
    warnings = tuple(map(clean, item.warnings))
    if isinstance(item, MalformedCase):
        return replace(item, problems=tuple(map(clean, item.problems)), warnings=warnings)
    return replace(item, warnings=warnings) if item.warnings else item


def secret_free_result(result: CaseResult, level: PrivacyLevel = "private") -> CaseResult:
    """A case's result with every text it reports cleaned at ``level``: secrets, by default.

    ``aggregated`` (:func:`report_level`) cleans personal identifiers too (e-mails, phone
    numbers, cards...): a workflow's answer may hold a customer's.

    Its problems and warnings (the suite fits a case, and a task's output, again), its task's
    error and its scorers' errors (a task's exception may quote a key: ``?api_key=...``), and
    its output and expectation (a workflow may echo a key it was given), and each scorer's
    details and diagnosis (which may quote them), every text in them.
    """
    task = result.task
    if task is not None and task.error_message:
        task = replace(task, error_message=_secret_free_text(task.error_message, level))
    outcomes = tuple(_secret_free_outcome(outcome, level) for outcome in result.outcomes)
    problem = partial(secret_free, level=level)
    return replace(
        result,
        outcomes=outcomes,
        problems=tuple(map(problem, result.problems)),
        warnings=tuple(map(problem, result.warnings)),
        runs=tuple(secret_free_result(one, level) for one in result.runs),
        task=task,
        output=_secret_free_given(result.output, level),
        expected=_secret_free_given(result.expected, level),
    )


def _secret_free_outcome(outcome: ScorerOutcome, level: PrivacyLevel) -> ScorerOutcome:
    # A scorer's details and diagnosis may quote the output: every report shows them, as it
    # shows the error. The default diagnosis is made again from the cleaned details: cut at 300
    # characters first, a secret cut in two (a JWT without its signature) is no longer found.
    error = outcome.result.error
    cleaned = replace(
        outcome.result,
        details=_secret_free_object(outcome.result.details, level),
        error=None if error is None else _secret_free_text(error, level),
    )
    diagnosis = tuple(_secret_free_text(line, level) for line in outcome.diagnosis)
    if diagnosis and _is_default_diagnosis(outcome):
        diagnosis = tuple(details_diagnosis(cleaned))
    return replace(outcome, result=cleaned, diagnosis=diagnosis)


def _is_default_diagnosis(outcome: ScorerOutcome) -> bool:
    # Details JSON cannot write (an integer past 4,300 digits) cannot be shown at all.
    try:
        return outcome.diagnosis == tuple(details_diagnosis(outcome.result))
    except ValueError:
        return False


def _secret_free_text(text: str, level: PrivacyLevel) -> str:
    from knowledgepulse.redact import clean_text  # noqa: PLC0415 - the rules load here

    return clean_text(text, level).text


def _secret_free_given(value: Given, level: PrivacyLevel) -> Given:
    return value if value is UNSET else _secret_free_json(value, level)


def _secret_free_json(value: JsonValue, level: PrivacyLevel) -> JsonValue:
    # Every text in a JSON value, keys too (a workflow may answer {"sk-...": ...}).
    if isinstance(value, str):
        return _secret_free_text(value, level)
    if isinstance(value, list | tuple):  # a scorer's details may hold a tuple
        return [_secret_free_json(item, level) for item in value]
    if isinstance(value, dict):
        return _secret_free_object(value, level)
    return value


def _secret_free_object(value: Mapping[str, Any], level: PrivacyLevel) -> dict[str, JsonValue]:
    # A scorer's details may have keys JSON has not (a tuple): the report writes them as text.
    return {
        _secret_free_text(k, level) if isinstance(k, str) else k: _secret_free_json(v, level)
        for k, v in value.items()
    }


def _secret_free_run(run: EvalRun, level: PrivacyLevel) -> EvalRun:
    return replace(
        run,
        suite=_secret_free_suite(run.suite, level),
        cases=tuple(secret_free_result(result, level) for result in run.cases),
        file_problems=tuple(secret_free(problem, level) for problem in run.file_problems),
    )


def _secret_free_suite(suite: Suite, level: PrivacyLevel) -> Suite:
    # A judge's parameters may hold its API key: the report and --dry-run show them.
    scorers = (replace(e, params=_secret_free_object(e.params, level)) for e in suite.scorers)
    return replace(suite, scorers=tuple(scorers))


def _tell_answer_warnings(run: EvalRun, found: list[Problem], on_problem: OnProblem | None) -> None:
    """Keep and tell what the task's answers were warned of (a misspelt operation type).

    As the reading's warnings are, but after the calls: each answer is checked as it comes.
    """
    told = set(found)
    for warning in (warning for result in run.cases for warning in result.warnings):
        if warning not in told:
            told.add(warning)
            found.append(warning)
            if on_problem is not None:
                on_problem(warning)


def _read(
    cases: Cases,
    suite: Suite,
    task: TaskFunction | None,
    found: list[Problem],
    on_problem: OnProblem | None,
    *,
    level: PrivacyLevel,
) -> Iterator[CaseInput]:
    """The cases fitted to the suite, as read; each one's problems and warnings kept and told."""
    for read in fit_cases(case_inputs(cases), suite, before_task=task is not None):
        item = secret_free_case(read, level)
        if isinstance(item, FileProblem):
            problems: tuple[Problem, ...] = (item.problem,)
        else:
            malformed = item.problems if isinstance(item, MalformedCase) else ()
            problems = (*malformed, *item.warnings)
        found.extend(problems)
        if on_problem is not None:
            for problem in problems:
                on_problem(problem)
        yield item
