"""``kp eval`` and ``kp compare``: evaluation runs, and how a run compares with a baseline.

Cases are scored as they are read, problems printed on stderr as found. With ``--task`` the
outputs come from the user's workflow (:func:`knowledgepulse.evals.evaluate`), whose prints go
to stderr, not the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted, printable
from knowledgepulse.cli._console import (
    TaskBar,
    open_output,
    output_console,
    report_format,
    stdout_for_the_report,
)
from knowledgepulse.cli._options import format_option, output_option, refuse_usage
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from knowledgepulse.errors import SuiteError
from knowledgepulse.evals.cases import CaseInput, FileProblem, MalformedCase, fit_cases, iter_cases
from knowledgepulse.evals.compare import (
    DEFAULT_TOLERANCE,
    FAIL_ON,
    Comparison,
    FailOn,
    Gate,
    compare_runs,
)
from knowledgepulse.evals.evaluate import (
    DEFAULT_CACHE_DIR,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    evaluate,
)
from knowledgepulse.evals.report import load_report
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.suite import PRESET_NAMES, Suite, load_suite, preset
from knowledgepulse.evals.tasks import TaskFunction, load_plugin, load_task
from knowledgepulse.records import Problem
from knowledgepulse.records.readers import STDIN, open_source
from knowledgepulse.reports.compare import (
    comparison_line,
    comparison_to_console,
    comparison_to_json,
    comparison_to_markdown,
    with_comparison,
)
from knowledgepulse.reports.evals import (
    json_chunks,
    lost_and_warned,
    suite_table,
    suite_to_json,
    suite_to_markdown,
    summary_line,
    to_console,
    to_markdown,
)
from knowledgepulse.reports.junit import to_junit

Report = Group | Table | str | Iterator[str]
_SUITE_VIEWS: dict[str, Callable[[Suite], Report]] = {
    "table": suite_table,
    "json": suite_to_json,
    "markdown": suite_to_markdown,
}
_COMPARISON_VIEWS: dict[str, Callable[[Comparison], Report]] = {
    "table": comparison_to_console,
    "json": comparison_to_json,
    "markdown": comparison_to_markdown,
}
COMPARE_FORMATS = tuple(_COMPARISON_VIEWS)


tolerance_option = click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Score changes at most this large count as unchanged (verdict flips always count).",
)


FORMATS = ("table", "json", "junit", "markdown", "html")
TASK_SETTINGS = ("concurrency", "timeout", "retries", "repeat", "task_version", "cache_dir")


@click.command("eval")
@click.argument("cases", nargs=-1, metavar="CASES...")
@click.option(
    "-s",
    "--suite",
    "suite_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A suite file (YAML or JSON): the scorers, weights, thresholds and params.",
)
@click.option(
    "-p",
    "--preset",
    "preset_name",
    type=click.Choice(PRESET_NAMES),
    help="A built-in suite from the scorer design guide.",
)
@format_option(
    FORMATS,
    "Output format [default: table on a terminal; else from the --output suffix "
    "(.json, .xml, .md, .html), else json]. html: one self-contained page.",
)
@output_option("Write the report here instead of stdout.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the resolved suite (defaults filled in) and check the cases, without scoring.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A kp eval JSON report of an earlier run: add the comparison with it to the report, "
    "and exit 4 when a case that passed there fails now.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="What makes the exit code non-zero. failure: any failing case; regression (needs "
    "--baseline): only a case that passed in the baseline or is not in it, so old failures "
    "exit 0; never: nothing (to record a baseline) [default: regression with --baseline, "
    "else failure].",
)
@tolerance_option
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="MODULE|FILE.py",
    help="Import a module or .py file that registers custom scorers (repeatable).",
)
@click.option(
    "--task",
    "task_spec",
    metavar="MODULE:FUNCTION",
    help="Call this function (or path/to/file.py:FUNCTION) on each case's input "
    "and score what it returns, instead of the cases' recorded actual outputs.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_CONCURRENCY,
    help=f"With --task: calls in flight at once [default: {DEFAULT_CONCURRENCY}].",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="With --task: the longest one call may take; past it the case is an error, "
    f"so a hung call cannot hang CI [default: {DEFAULT_TIMEOUT_S:g}; 0: no limit].",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=0,
    help="With --task: retries of a call that raised or timed out, with backoff [default: 0].",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    metavar="K",
    help="With --task: call K times per case; report each scorer's mean ± stderr and pass@K.",
)
@click.option(
    "--task-version",
    help="With --task: cache outputs under this version (change it when the task "
    "changes); a rerun then calls only for new inputs.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(DEFAULT_CACHE_DIR),
    help="With --task-version: where outputs are cached [default: .kp-cache/outputs].",
)
@click.option("--no-cache", is_flag=True, help="With --task: neither read nor write the cache.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on stderr but errors.")
@stdout_for_the_report()  # a task's or plugin's prints go to stderr
def eval_command(
    *,
    cases: tuple[str, ...],
    suite_path: Path | None,
    preset_name: str | None,
    output_format: str | None,
    output: Path | None,
    dry_run: bool,
    baseline: Path | None,
    fail_on: FailOn | None,
    tolerance: float,
    plugins: tuple[str, ...],
    task_spec: str | None,
    quiet: bool,
    no_cache: bool,
    **task_settings: Any,
) -> int:
    """Score evaluation CASES (JSON, JSONL or YAML files, or - for stdin) with a suite.

    A case passes when every scorer reaches its threshold. Failing scorers come with a
    diagnosis; malformed cases (an invalid content pattern included) are reported as
    FILE:LINE: PATH: message and count as failed; a part of a file that cannot be read (a
    syntax error) is reported with its line and counted as a file. Warnings (a case id used
    twice) are reported and counted but fail nothing. Exit code 0 when every case passes, 1
    when any fails or is malformed or a file could not be read in full, 2 for usage or suite
    errors (or a --baseline that is not a kp eval JSON report), 4 when a case that passed in
    the --baseline fails now, or (with --fail-on regression, the default with --baseline) a
    case not in it fails; then failures the baseline had too exit 0. --fail-on never exits 0
    whatever the verdicts, to record a baseline: kp eval CASES -s SUITE --fail-on never -o
    base.json.

    With --task, the cases' inputs (instruction, input, pages) go to the task and its outputs
    are scored; a call that raises or times out is that case's error. --plugin loads custom
    scorers first.
    """
    task = _load_task(plugins, task_spec)
    output_format = output_format or report_format(output, FORMATS)
    refuse_usage(
        (
            (suite_path is None) == (preset_name is None),
            "give exactly one of --suite FILE or --preset NAME",
        ),
        (
            baseline is None and bool(_given("tolerance")),
            "--tolerance applies to the comparison with --baseline FILE",
        ),
        (
            not cases and not dry_run,
            "give case files (JSON, JSONL or YAML), or - to read stdin",
        ),
        (
            fail_on == "regression" and baseline is None,
            "--fail-on regression needs --baseline FILE, the run to be no worse than",
        ),
        (
            dry_run and output_format in ("junit", "html"),
            "--dry-run prints the suite; use --format table, json or markdown",
        ),
    )
    if output is not None:
        check_destination(output, what="report")
    _check_readable(cases)
    try:
        suite = load_suite(suite_path) if suite_path is not None else preset(preset_name or "")
    except SuiteError as error:
        _print_suite_error(error)
        return EXIT_USAGE
    # Read before any case runs: a bad baseline should not cost a whole run.
    base = load_report(baseline) if baseline is not None else None
    tally = _Tally()
    inputs = tally.count(fit_cases(iter_cases(cases), suite, before_task=task is not None), quiet)
    if dry_run:
        for _ in inputs:
            pass  # reading validates every case and compiles every pattern
        _write(_SUITE_VIEWS[output_format](suite), output)
        if not quiet and cases:
            _stderr(tally.line())
        return EXIT_FINDINGS if tally.malformed or tally.unreadable else EXIT_OK
    if task is None:
        run = run_suite(suite, inputs)
    else:  # the settings are evaluate's own keywords (TASK_SETTINGS)
        task_settings["timeout"] = task_timeout(task_settings["timeout"])
        task_settings["task_version"] = None if no_cache else task_settings["task_version"]
        with TaskBar() as bar:
            run = evaluate(task, inputs, suite, progress=None if quiet else bar, **task_settings)
        for line in () if quiet else task_failures(run):
            _stderr(line)
    if not run.cases and not run.file_problems and not quiet:
        _stderr("kp: warning: the case files hold no cases")
    comparison = compare_runs(base, run, tolerance=tolerance) if base is not None else None
    gate = Gate.of(run, comparison, fail_on or ("regression" if base is not None else "failure"))
    _write(_run_report(run, output_format, comparison, gate), output)
    # The table ends with the summary already; other formats get it on stderr.
    if not quiet and not (output_format == "table" and output is None):
        _stderr(summary_line(run))
        if comparison is not None:
            _stderr(comparison_line(comparison))
    if not quiet and gate.fail_on == "regression":  # the table does not say it either
        _stderr(_gate_line(gate))
    return _exit_code(run, gate)


def _exit_code(run: EvalRun, gate: Gate) -> int:
    """0, 1 (failures, or files not read in full) or 4 (worse than the baseline)."""
    if gate.fail_on == "never":
        return EXIT_OK
    if gate.fail_on == "regression":
        if gate.worse:
            return EXIT_REGRESSION
        return EXIT_FINDINGS if run.summary.unreadable_files else EXIT_OK
    if "regression" in gate.standings:
        return EXIT_REGRESSION
    return EXIT_OK if run.passed else EXIT_FINDINGS


def _gate_line(gate: Gate) -> str:
    """``--fail-on regression: 1 regression, 0 new failures; 2 old failures do not fail``."""
    count = Counter(gate.standings)
    return (
        f"--fail-on regression: {counted(count['regression'], 'regression')}, "
        f"{counted(count['new failure'], 'new failure')}; "
        f"{counted(count['old failure'], 'old failure')} "
        f"{'does' if count['old failure'] == 1 else 'do'} not fail the run"
    )


def _load_task(plugins: tuple[str, ...], task_spec: str | None) -> TaskFunction | None:
    """Import the plugins and the task first of all, so a bad spec costs nothing (exit 2)."""
    given = _given(*TASK_SETTINGS, "no_cache")
    if task_spec is None and given:
        raise click.UsageError(f"{', '.join(given)} only apply with --task MODULE:FUNCTION")
    for plugin in plugins:
        load_plugin(plugin)
    return load_task(task_spec) if task_spec is not None else None


def _given(*names: str) -> list[str]:
    """The options among ``names`` given on the command line, as ``--name``."""
    context = click.get_current_context()
    return [
        f"--{name.replace('_', '-')}"
        for name in names
        if context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]


def _check_readable(paths: Iterable[str]) -> None:
    """An ``InputFileError`` before any work when a case file cannot be opened."""
    for path in paths:
        if path != STDIN:
            with open_source(path):
                pass


def _stderr(line: str) -> None:
    # Plain text: a case id such as '[bold]' or ':100:' is printed as written.
    click.echo(printable(line), err=True)


def _print_suite_error(error: SuiteError) -> None:
    """Every suite problem on its own line, ``FILE:LINE: PATH: message``, then what it means."""
    for problem in error.problems:
        _stderr(str(problem))
    summary = str(error).split("\n", 1)[0]
    _stderr(f"kp: error: {summary}; no case was run")


@dataclass
class _Tally:
    """What reading the cases found, counted as they stream past (for ``--dry-run``)."""

    cases: int = 0
    malformed: int = 0
    warnings: int = 0
    unreadable: set[str] = field(default_factory=set)

    def count(self, items: Iterable[CaseInput], quiet: bool) -> Iterator[CaseInput]:
        """The items unchanged, each one's problems and warnings printed on stderr as it passes."""
        for item in items:
            shown: tuple[Problem, ...]
            if isinstance(item, FileProblem):
                shown = (item.problem,)
                self.warnings += item.problem.warning
                if not item.problem.warning:
                    self.unreadable.add(item.location.file)
            else:
                problems = item.problems if isinstance(item, MalformedCase) else ()
                shown = (*problems, *item.warnings)
                self.cases += 1
                self.malformed += bool(problems)
                self.warnings += len(item.warnings)
            for problem in () if quiet else shown:
                _stderr(str(problem))
            yield item

    def line(self) -> str:
        """``checked 9 cases: 1 malformed; 2 warnings``."""
        parts = [f"{self.malformed} malformed"] if self.malformed else []
        parts += lost_and_warned(len(self.unreadable), self.warnings)
        return f"checked {counted(self.cases, 'case')}" + (f": {'; '.join(parts)}" if parts else "")


def _run_report(
    run: EvalRun, output_format: str, comparison: Comparison | None, gate: Gate
) -> Report:
    """The run's report; with a baseline, the comparison joins it (JUnit: each case's standing)."""
    if output_format == "table":
        if comparison is None:
            return to_console(run)
        return Group(to_console(run), Text(), comparison_to_console(comparison))
    if output_format == "json":
        chunks = json_chunks(run)
        return chunks if comparison is None else with_comparison(chunks, comparison)
    if output_format == "html":
        from knowledgepulse.reports.evals_html import to_html  # noqa: PLC0415 - only for html

        return to_html(run, comparison)
    if output_format == "markdown":
        extra = "\n" + comparison_to_markdown(comparison) if comparison is not None else ""
        return to_markdown(run) + extra
    return to_junit(run, gate)


def _write(report: Report, output: Path | None) -> None:
    """A table through a console (for people), text or its chunks as they are."""
    if isinstance(report, Group | Table):
        with output_console(output) as console:
            console.print(report)
    else:
        with open_output(output) as stream:
            stream.writelines([report] if isinstance(report, str) else report)


def task_timeout(given: float | None) -> float | None:
    """``--timeout`` as ``evaluate`` takes it: the default when not given, ``None`` for 0."""
    if given is None:
        return DEFAULT_TIMEOUT_S
    return given or None


def task_failures(run: EvalRun) -> Iterator[str]:
    """``FILE:LINE: case 'x': the task raised ...`` for each run whose task gave no output."""
    for result in run.cases:
        for number, one in enumerate(result.runs or (result,), start=1):
            if one.task is not None and one.task.failed:
                which = f" (run {number})" if result.runs else ""
                yield (
                    f"{result.location}: case {result.case_id!r}{which}: the task raised "
                    f"{one.task.error}"
                )


@click.command("compare")
@click.argument("base", metavar="BASE.json", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("new", metavar="NEW.json", type=click.Path(dir_okay=False, path_type=Path))
@tolerance_option
@format_option(
    COMPARE_FORMATS,
    "Output format [default: table on a terminal; else from the --output suffix "
    "(.json, .md), else json]. markdown suits a pull-request comment.",
)
@output_option("Write the comparison here instead of stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on stderr but errors.")
def compare_command(
    *,
    base: Path,
    new: Path,
    tolerance: float,
    output_format: str | None,
    output: Path | None,
    quiet: bool,
) -> int:
    """Compare two kp eval JSON reports: BASE.json (the baseline) and NEW.json.

    Per case and scorer: the score change and pass/fail flips; cases added and removed; how
    many cases regressed (passed in BASE, fail in NEW), improved, changed their scores only, or
    held. Cases are matched by id. Write the reports with kp eval CASES --suite SUITE -f json
    -o FILE. Exit code 0 when no case regressed, 4 when one did, 2 for usage errors or a file
    that is not a kp eval JSON report.
    """
    output_format = output_format or report_format(output, COMPARE_FORMATS)
    if output is not None:
        check_destination(output, what="comparison")
    comparison = compare_runs(load_report(base), load_report(new), tolerance=tolerance)
    _write(_COMPARISON_VIEWS[output_format](comparison), output)
    if not quiet and not (output_format == "table" and output is None):
        _stderr(comparison_line(comparison))
    return EXIT_REGRESSION if comparison.regressed else EXIT_OK
