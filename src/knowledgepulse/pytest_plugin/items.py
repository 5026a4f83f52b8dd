"""The pytest plugin's collectors and items: one item per evaluation case.

A failing case fails with its diagnosis, never a traceback; so do a malformed case and each part
of a file that cannot be read. A case is scored when its item runs (``-k`` and ``--collect-only``
score nothing), through ``run_suite`` or ``evaluate`` as ``kp eval`` does.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from knowledgepulse._util.text import printable, unique
from knowledgepulse.errors import KnowledgePulseError, SuiteError
from knowledgepulse.evals.cases import CaseInput, FileProblem, LoadedCase, MalformedCase, iter_cases
from knowledgepulse.evals.evaluate import evaluate
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.evals.runner import run_suite, summarize
from knowledgepulse.evals.suite import Suite
from knowledgepulse.pytest_plugin.eval_file import EvalSpec, load_eval_file
from knowledgepulse.pytest_plugin.keys import (
    MARKER,
    OPTIONS_KEY,
    REPORTING_KEY,
    RUN_KEY,
    TALLIES_KEY,
    EvalWarning,
    option_of,
)
from knowledgepulse.records import Location, Problem
from knowledgepulse.records.readers import format_from_name
from knowledgepulse.reports.evals import number, summary_line

if TYPE_CHECKING:  # pytest exports no public name for a failure's representation
    from _pytest._code.code import TerminalRepr, TracebackStyle
from knowledgepulse.runs.evaluation import (
    load_evaluation,
    report_level,
    secret_free_case,
    secret_free_result,
)
from knowledgepulse.testing import failure_message


def from_options(
    suite_path: str | None,
    preset_name: str | None,
    task: str | None,
    plugins: Iterable[str] = (),
    *,
    redact: bool = False,
) -> EvalSpec:
    """What ``--kp-suite FILE`` (or ``--kp-preset``), ``--kp-task``, ``--kp-*`` ask for.

    Raises:
        pytest.UsageError: a plugin, the suite or the task cannot be used.
    """
    try:
        suite, loaded = load_evaluation(
            suite=suite_path, preset=preset_name, task=task, plugins=plugins
        )
    except SuiteError as error:
        message = error.message_with(option_of)
        raise pytest.UsageError(f"{message}\nfix the suite; no case was run") from None
    except KnowledgePulseError as error:
        raise pytest.UsageError(error.message_with(option_of)) from None
    return EvalSpec("--kp-suite", suite, (), task=loaded, redact=redact)


def case_file(parent: pytest.Collector, path: Path) -> CaseFile | None:
    """A collector for a case file named with ``--kp-suite``; ``None`` for other files."""
    return CaseFile.from_parent(parent, path=path) if format_from_name(path.name) else None


def summary_lines(tallies: dict[str, Tally]) -> Iterator[str]:
    """Two lines per evaluation: the run's summary line, then each scorer's mean."""
    for source, tally in tallies.items():
        summary = summarize(tally.suite, tally.results, tally.file_problems)
        run = EvalRun(tally.suite, tuple(tally.results), summary, tuple(tally.file_problems))
        yield printable(f"{Location(source)}: {summary_line(run)}")
        means = ", ".join(f"{key} {number(s.mean)}" for key, s in summary.scorers.items())
        yield printable(f"  scorer means: {means}")


class EvalFile(pytest.File):
    """An evaluation file: its suite and case files, one item per case."""

    def collect(self) -> Iterator[pytest.Item]:
        """Every case of the case files; a bad evaluation file or suite fails collection."""
        try:
            spec = load_eval_file(_shown(self.path))
        except SuiteError as error:
            lines = [str(problem) for problem in error.problems]
            summary = str(error).split("\n", 1)[0]
            raise self.CollectError("\n".join([*lines, f"{summary}; no case was run"])) from None
        except KnowledgePulseError as error:
            raise self.CollectError(str(error)) from None
        if self.config.getoption("kp_redact"):  # the session's CI log is shared as a whole
            spec = replace(spec, redact=True)
        return _items(self, spec, iter_cases(spec.case_files))


class CaseFile(pytest.File):
    """A case file named on the command line with ``--kp-suite``: one item per case."""

    def collect(self) -> Iterator[pytest.Item]:
        """Every case of the file, judged by the ``--kp-suite`` suite."""
        shown = _shown(self.path)
        spec = replace(self.config.stash[OPTIONS_KEY], source=shown, case_files=(shown,))
        return _items(self, spec, iter_cases(shown))


class CaseItem(pytest.Item):
    """One case judged by a suite (or a malformed case, or a part of a file that is lost)."""

    def __init__(self, *, entry: CaseInput, spec: EvalSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker(MARKER)
        self.entry = entry
        self.spec = spec
        location = entry.location
        self._where = (Path(location.file).absolute(), location.line)
        # Not the bare name: pytest shows a '.' in a domain that ends the node id as '::'.
        lost = isinstance(entry, FileProblem)
        self._domain = f"{location}, not read in full" if lost else f"case {self.name}"

    def runtest(self) -> None:
        """Score the case; fail with its diagnosis when it does not pass."""
        entry = self.entry
        tally = self.config.stash.setdefault(TALLIES_KEY, {}).setdefault(
            self.spec.source, Tally(self.spec.suite)
        )
        session_run = self.config.stash.get(RUN_KEY, None)
        if isinstance(entry, FileProblem):
            tally.file_problems.append(entry.problem)
            if session_run is not None:
                session_run.file_problems.append(entry.problem)
            pytest.fail(
                "the file cannot be read past this point; the cases after it were not run\n"
                f"{entry.problem}",
                pytrace=False,
            )
        _warn_all(entry.warnings)
        result = judge(self.spec, entry)
        tally.results.append(result)
        occurrence = session_run.add(result) if session_run is not None else 0
        self.user_properties.extend(_properties(result))
        # Checking the case against the suite can warn too (an expected block the pages lack).
        _warn_all(result.warnings[len(entry.warnings) :])
        if result.passed:
            return
        message = failure_message(result)
        if session_run is not None:  # a report or a gate: judged as kp eval --fail-on judges it
            reporting = self.config.stash[REPORTING_KEY]
            standing = reporting.standing(result, occurrence)
            if (excuse := reporting.excused(standing)) is not None:
                pytest.xfail(f"{excuse}; {message.split(chr(10), 1)[0]}")
            if standing is not None:
                message = f"{standing} against the baseline: {message}"
        pytest.fail(message, pytrace=False)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        """pytest's, with the crash message cut to the failure's first line, the verdict.

        That message is what ``-rf`` and a JUnit ``message`` show: left whole, a CI summary
        printed the whole diagnosis, and JUnit cut it after ~500 characters mid-case. The full
        text (the terminal's, the JUnit element's) is unchanged.
        """
        shown = super().repr_failure(excinfo, style)
        # Read by attribute, not by pytest's private class: a pytest that moves it still runs.
        crash = getattr(shown, "reprcrash", None)
        failed = isinstance(excinfo.value, pytest.fail.Exception)
        if failed and crash is not None and "\n" in crash.message:
            cast(Any, shown).reprcrash = replace(crash, message=crash.message.split("\n")[0])
        return shown

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The case's own file and line, so pytest points at the case, not at the plugin."""
        path, line = self._where
        return path, None if line is None else line - 1, self._domain


def _warn_all(found: Sequence[Problem]) -> None:
    try:
        for warning in found:
            _warn(warning)
    except EvalWarning as warning:  # promoted to an error with -W error
        pytest.fail(str(warning), pytrace=False)


def judge(spec: EvalSpec, entry: LoadedCase | MalformedCase) -> CaseResult:
    """One case's result: its recorded output scored, or its task called and the answer scored."""
    if spec.task is None:
        run = run_suite(spec.suite, [entry], timeout=spec.timeout)
    else:
        run = evaluate(
            spec.task,
            [entry],
            spec.suite,
            timeout=spec.timeout,
            retries=spec.retries,
            repeat=spec.repeat,
            cache_dir=None,
        )
    # Its messages go to CI logs: no secret, and with redact no personal data.
    return secret_free_result(run.cases[0], report_level(spec.redact))


@dataclass
class Tally:
    """What the items of one evaluation ran, for the summary at the end of the session."""

    suite: Suite
    results: list[CaseResult] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)


def _items(
    parent: pytest.File, spec: EvalSpec, inputs: Iterable[CaseInput]
) -> Iterator[pytest.Item]:
    """One item per case and per part of a file that cannot be read, named uniquely."""
    names: set[str] = set()
    try:
        for read in inputs:
            entry = secret_free_case(read, report_level(spec.redact))
            if isinstance(entry, FileProblem) and entry.problem.warning:
                _warn(entry.problem)
                continue
            name = unique(_name(entry), names)
            # Spelt out: pytest 9 builds an item's id from its name as one part, but reads the
            # ids --lf and --ff keep (and ones given as arguments) at each '::' and '[', so an id
            # left to it (`twice[2]`, `a::b`) never matched its cached self and --lf skipped it.
            nodeid = f"{parent.nodeid}::{name}"
            yield CaseItem.from_parent(parent, name=name, nodeid=nodeid, entry=entry, spec=spec)
    except EvalWarning as warning:  # -W error made a warning an exception: the file fails
        raise parent.CollectError(str(warning)) from None
    if not names:  # as kp eval exits 1: a gate over nothing is a mistake, not a pass
        files = ", ".join(spec.case_files)
        raise parent.CollectError(
            f"{Location(spec.source)}: the case files ({files}) hold no case, so nothing would be "
            "checked; "
            "add cases, or leave the evaluation out"
        )


def _name(entry: CaseInput) -> str:
    location = entry.location
    where = Path(location.file).name + (
        f":{location.line}" if location.line is not None else f"[{location.index}]"
    )
    if isinstance(entry, FileProblem):
        return f"(not read in full) {where}"
    case_id = entry.case.id if isinstance(entry, LoadedCase) else entry.case_id
    # As the reports show an id: a line break would split pytest's lines, an escape be obeyed.
    return printable(case_id, one_line=True) if case_id is not None else f"(no id) {where}"


def _properties(result: CaseResult) -> list[tuple[str, object]]:
    """Scores as test properties (JUnit ``<properties>``): the weighted score and each scorer's."""
    if result.malformed:
        return []
    scores = [("kp.weighted_score", result.weighted_score)]
    scores += [(f"kp.score.{o.key}", o.score) for o in result.outcomes]
    return [(name, "null" if score is None else score) for name, score in scores]


def _warn(problem: Problem) -> None:
    """A located warning, which pytest shows at the case file's line."""
    message = f"{problem.path}: {problem.message}" if problem.path else problem.message
    warnings.warn_explicit(
        EvalWarning(message), EvalWarning, problem.location.file, problem.location.line or 0
    )


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is inside it, as messages show it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
