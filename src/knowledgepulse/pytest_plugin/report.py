"""The session's evaluation report (``--kp-report``) and its gate against a baseline.

A shell over the library, as ``kp eval`` is: the cases the items ran, in the order they ran, are
one :class:`~knowledgepulse.evals.results.EvalRun`, compared with the ``--kp-baseline`` report by
:func:`~knowledgepulse.evals.compare.compare_runs`, judged by a
:class:`~knowledgepulse.evals.compare.Gate`, and written by
:func:`~knowledgepulse.reports.eval_formats.run_report`, so a report written here is one
``kp eval --baseline`` and ``kp compare`` read, and the other way round.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from knowledgepulse._util.atomic import same_name
from knowledgepulse.errors import NO_VALUE, KnowledgePulseError, Setting
from knowledgepulse.evals.compare import DEFAULT_TOLERANCE, FailOn, Gate, Standing, compare_runs
from knowledgepulse.evals.report import EvalReport, ReportSuite, load_report
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.evals.runner import summarize
from knowledgepulse.evals.suite import Suite
from knowledgepulse.pytest_plugin.keys import REPORT_INI_KEYS, option_of
from knowledgepulse.records import Problem
from knowledgepulse.reports.compare import comparison_line, gate_line
from knowledgepulse.reports.eval_formats import run_report
from knowledgepulse.runs.evaluation import check_settings
from knowledgepulse.runs.write import check_report, text_output

FILE_FORMATS = ("json", "junit", "markdown", "html")
"""``kp eval``'s report formats but ``table``, which is for a terminal (pytest's shows the run)."""

UNDER_XDIST = (
    "--kp-report and --kp-baseline need every case's result in one process, and under "
    "pytest-xdist each worker runs only its share: run the evaluations without -n (-p no:xdist), "
    "or give the report options to kp eval"
)


@dataclass(frozen=True, slots=True)
class Reporting:
    """What the report options ask for, checked before any case runs.

    Attributes:
        output: where the report goes (``None``: a gate without a report).
        output_format: its format, one of :data:`FILE_FORMATS`.
        baseline: the earlier run to compare with, read once, and where it was read from.
        fail_on: what fails a case's test (``kp eval --fail-on``).
        tolerance: score changes at most this large count as unchanged.
        base_verdicts: whether each baseline case passed, by id, in order: a lookup per case.
    """

    output: Path | None
    output_format: str
    baseline: EvalReport | None
    baseline_path: Path | None
    fail_on: FailOn
    tolerance: float | None = None
    base_verdicts: Mapping[str, tuple[bool, ...]] = field(default_factory=dict)

    def standing(self, result: CaseResult, occurrence: int) -> Standing | None:
        """A failing case against the baseline, as :meth:`Gate.of` judges it at the session's end.

        ``occurrence``: the cases with its id run so far, itself included, as the comparison
        numbers them (a case without an id matches none). ``None``: it passed, or no baseline.
        """
        if result.passed or self.baseline is None:
            return None
        case_id = result.case_id
        verdicts = self.base_verdicts.get(case_id, ()) if case_id is not None else ()
        if len(verdicts) < occurrence:
            return "new failure"
        return "regression" if verdicts[occurrence - 1] else "old failure"

    def excused(self, standing: Standing | None) -> str | None:
        """Why a failing case does not fail its test (pytest shows it as xfailed), or ``None``."""
        if self.fail_on == "never":
            return "--kp-fail-on never: the case is recorded, not judged"
        if self.fail_on == "regression" and standing == "old failure":
            return f"old failure: it fails in the baseline {self.baseline_path} too"
        return None


def _verdicts(baseline: EvalReport | None) -> dict[str, tuple[bool, ...]]:
    by_id: dict[str, list[bool]] = {}
    for case in baseline.cases if baseline is not None else ():
        if case.id is not None:
            by_id.setdefault(case.id, []).append(case.passed)
    return {case_id: tuple(verdicts) for case_id, verdicts in by_id.items()}


def from_options(config: pytest.Config) -> Reporting | None:
    """The report options (command line over ini), checked; ``None`` when none is given.

    An ini path is relative to the ini file, as a test path there is.

    Raises:
        pytest.UsageError: options that contradict each other, a report file that cannot be
            written, a baseline that is not a ``kp eval`` JSON report, or pytest-xdist.
    """
    output = _path(config, "kp_report")
    baseline_path = _path(config, "kp_baseline")
    chosen = config.getoption("kp_report_format") or config.getini("kp_report_format") or None
    fail_on = config.getoption("kp_fail_on") or config.getini("kp_fail_on") or None
    tolerance = _tolerance(config)
    if (output, baseline_path, fail_on, tolerance, chosen) == (None,) * 5:
        return None
    spell = _spelling(config)
    if hasattr(config, "workerinput") or config.pluginmanager.has_plugin("dsession"):
        raise pytest.UsageError(UNDER_XDIST)
    if output is not None and (junit := _junit_path(config)) and same_name(output, junit):
        raise pytest.UsageError(
            f"{spell(Setting('output'))} and --junitxml name one file ({output}): the one "
            "written last would replace the other; give each its own file"
        )
    if chosen is not None and chosen not in FILE_FORMATS:
        raise pytest.UsageError(
            f"{spell(Setting('output_format', chosen))}: not a report format; give one of "
            f"{', '.join(FILE_FORMATS)}"
        )
    if chosen is not None and output is None:
        raise pytest.UsageError(
            f"{spell(Setting('output_format'))} names the format of --kp-report FILE: give it"
        )
    output_format = chosen or _by_suffix(output)
    try:
        check_settings(None, baseline_path, fail_on=fail_on, tolerance=tolerance)
        check_report(
            output,
            FILE_FORMATS,
            output_format,
            what="report",
            inputs=[baseline_path] if baseline_path else [],
        )
        baseline = None if baseline_path is None else load_report(baseline_path)
    except KnowledgePulseError as error:
        raise pytest.UsageError(error.message_with(spell)) from None
    gate: FailOn = fail_on or ("regression" if baseline is not None else "failure")
    return Reporting(
        output, output_format, baseline, baseline_path, gate, tolerance, _verdicts(baseline)
    )


def _spelling(config: pytest.Config) -> Callable[[Setting], str]:
    """:func:`option_of`, but a setting the ini file gave is named as written there.

    A bad ``kp_fail_on = regresion`` in ``pytest.ini`` is said so, not as ``--kp-fail-on
    regresion``, which the user would look for on a command line that has none.
    """
    from_ini = {
        setting
        for setting, key in REPORT_INI_KEYS.items()
        if config.getoption(key) is None and config.getini(key)
    }

    def spell(setting: Setting) -> str:
        if setting.name not in from_ini:
            return option_of(setting)
        key = REPORT_INI_KEYS[setting.name]
        return key if setting.value is NO_VALUE else f"{key} = {setting.value}"

    return spell


def _path(config: pytest.Config, name: str) -> Path | None:
    given = config.getoption(name)
    if given:
        return Path(given)
    written = str(config.getini(name))
    if not written:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return base / written


def _junit_path(config: pytest.Config) -> Path | None:
    """The ``--junitxml`` file, as its plugin opens it (``~`` and variables expanded)."""
    given = getattr(config.option, "xmlpath", None)  # absent under -p no:junitxml
    return Path(os.path.expandvars(os.path.expanduser(given))) if given else None


def _tolerance(config: pytest.Config) -> float | None:
    given = config.getoption("kp_tolerance")
    if given is not None:
        return float(given)
    written = config.getini("kp_tolerance")
    if not written:
        return None
    try:
        return float(written)
    except ValueError:
        raise pytest.UsageError(f"kp_tolerance = {written}: give a number >= 0") from None


def _by_suffix(output: Path | None) -> str:
    """As ``kp eval`` picks it: by the suffix (.json, .xml, .md, .html), else JSON."""
    from knowledgepulse.reports.value_formats import suffix_format  # noqa: PLC0415

    return "json" if output is None else suffix_format(output, FILE_FORMATS)


@dataclass
class SessionRun:
    """The cases the session's items ran, in order, for one report: one suite, as a run has."""

    suite: Suite
    results: list[CaseResult] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)
    _seen: Counter[str | None] = field(default_factory=Counter)

    def add(self, result: CaseResult) -> int:
        """Record a case's result; its occurrence among the cases with its id so far."""
        self.results.append(result)
        self._seen[result.case_id] += 1
        return self._seen[result.case_id]

    def run(self) -> EvalRun:
        """The cases as one run, totals included."""
        summary = summarize(self.suite, self.results, self.file_problems)
        return EvalRun(self.suite, tuple(self.results), summary, tuple(self.file_problems))


def one_suite(suites: list[tuple[str, Suite]]) -> Suite | None:
    """The one suite the collected evaluations share (as resolved), or ``None`` for none.

    Raises:
        pytest.UsageError: they use different suites, which one report cannot hold.
    """
    by_suite: dict[str, list[str]] = {}
    for source, suite in suites:
        by_suite.setdefault(ReportSuite.of(suite).model_dump_json(), []).append(source)
    if len(by_suite) > 1:
        sources = ", ".join(sorted({s for names in by_suite.values() for s in names}))
        raise pytest.UsageError(
            f"--kp-report and --kp-baseline judge one suite's run, and the evaluations collected "
            f"({sources}) use {len(by_suite)} different suites: select one evaluation's cases "
            "(give its file as an argument, or -k), or run each in its own pytest session"
        )
    return suites[0][1] if suites else None


def finish(reporting: Reporting, session: SessionRun | None) -> Iterator[str]:
    """Compare the run with the baseline, write its report; the lines that say what came of it."""
    if session is None or not (session.results or session.file_problems):
        if reporting.output is not None:
            yield f"no evaluation case ran: no report written to {reporting.output}"
        return
    run = session.run()
    comparison = None
    if reporting.baseline is not None:
        tolerance = DEFAULT_TOLERANCE if reporting.tolerance is None else reporting.tolerance
        comparison = compare_runs(reporting.baseline, run, tolerance=tolerance)
    gate = Gate.of(run, comparison, reporting.fail_on)
    if reporting.output is not None:
        report = run_report(run, reporting.output_format, comparison, gate)
        with text_output(reporting.output) as stream:
            # Never a table: FILE_FORMATS leaves it out, so the report is text or its chunks.
            stream.writelines([report] if isinstance(report, str) else cast(Iterator[str], report))
        yield f"report ({reporting.output_format}) written to {reporting.output}"
    if comparison is not None:
        yield comparison_line(comparison)
    if said := gate_line(gate, run.summary, option="--kp-fail-on"):
        yield said
