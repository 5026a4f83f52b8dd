"""``kp eval``: run a suite of scorers over evaluation cases and report the verdicts.

Cases are scored as they are read, so a long case file is never held in memory; only the
results are kept for the report. Problems are printed on stderr as they are found. The report
destination and the case files are checked before any work, and the report is written
atomically: an interrupted run leaves the previous report, never half of a new one.

With ``--task MODULE:FUNCTION`` the outputs come from calling the workflow on each case's
input (see :func:`knowledgepulse.evals.evaluate`), and ``--plugin`` imports the modules that
register custom scorers; a spec that cannot be loaded is a one-line error (exit 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Group, RenderableType
from rich.text import Text

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted, printable
from knowledgepulse.cli._console import (
    output_console,
    report_format,
    write_output,
)
from knowledgepulse.cli._eval_task import TaskRunner, TaskSettings, task_options
from knowledgepulse.cli._options import output_option
from knowledgepulse.cli._stdout import stdout_for_the_report
from knowledgepulse.cli.compare import tolerance_option
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from knowledgepulse.errors import SuiteError
from knowledgepulse.evals.cases import CaseInput, FileProblem, MalformedCase, fit_cases, iter_cases
from knowledgepulse.evals.compare import Comparison, compare_runs
from knowledgepulse.evals.gate import FAIL_ON, FailOn, Gate
from knowledgepulse.evals.runner import EvalRun
from knowledgepulse.evals.snapshot import load_report
from knowledgepulse.evals.suite import PRESET_NAMES, Suite, load_suite, preset
from knowledgepulse.records import STDIN, Problem
from knowledgepulse.records.readers import open_source
from knowledgepulse.reports.compare import (
    comparison_line,
    comparison_to_console,
    comparison_to_markdown,
    with_comparison,
)
from knowledgepulse.reports.evals import (
    json_chunks,
    lost_and_warned,
    suite_table,
    suite_to_json,
    summary_line,
    to_console,
)
from knowledgepulse.reports.junit import to_junit
from knowledgepulse.reports.markdown import suite_to_markdown, to_markdown

FORMATS = ("table", "json", "junit", "markdown", "html")


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
@click.option(
    "-f",
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    help="Output format [default: table on a terminal; else from the --output suffix "
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
@task_options
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on stderr but errors.")
def eval_command(**options: Any) -> int:
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
    with stdout_for_the_report():  # a task's or plugin's prints go to stderr
        return _eval(**options)


def _eval(
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
    concurrency: int | None,
    timeout: float | None,
    retries: int | None,
    repeat: int | None,
    task_version: str | None,
    cache_dir: Path | None,
    no_cache: bool,
    quiet: bool,
) -> int:
    """``kp eval`` with its options, run while stdout is held for the report."""
    runner = TaskRunner.load(
        plugins,
        task_spec,
        TaskSettings(concurrency, timeout, retries, repeat, task_version, cache_dir, no_cache),
    )
    _check_usage(suite_path is not None, preset_name is not None, bool(cases) or dry_run, baseline)
    if fail_on == "regression" and baseline is None:
        raise click.UsageError(
            "--fail-on regression needs --baseline FILE, the run to be no worse than"
        )
    output_format = output_format or report_format(output, FORMATS)
    if dry_run and output_format in ("junit", "html"):
        raise click.UsageError("--dry-run prints the suite; use --format table, json or markdown")
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
    inputs = tally.count(
        fit_cases(iter_cases(cases), suite, before_task=runner.task is not None), quiet
    )
    if dry_run:
        for _ in inputs:
            pass  # reading validates every case and compiles every pattern
        _emit_suite(suite, output_format, output)
        if not quiet and cases:
            _stderr(tally.line())
        return EXIT_FINDINGS if tally.malformed or tally.unreadable else EXIT_OK
    run = runner.run(suite, inputs, quiet=quiet, report=_stderr)
    if not run.cases and not run.file_problems and not quiet:
        _stderr("kp: warning: the case files hold no cases")
    comparison = compare_runs(base, run, tolerance=tolerance) if base is not None else None
    gate = Gate.of(run, comparison, fail_on or ("regression" if base is not None else "failure"))
    _emit_run(run, output_format, output, comparison, gate)
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


def _check_usage(suite: bool, preset: bool, has_cases: bool, baseline: Path | None) -> None:
    """The combinations of options that cannot work, refused before anything is read."""
    if suite == preset:
        raise click.UsageError("give exactly one of --suite FILE or --preset NAME")
    given = click.get_current_context().get_parameter_source("tolerance")
    if baseline is None and given is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--tolerance applies to the comparison with --baseline FILE")
    if not has_cases:
        raise click.UsageError("give case files (JSON, JSONL or YAML), or - to read stdin")


def _check_readable(paths: Iterable[str]) -> None:
    """Fail before any work when a case file cannot be opened (missing, a directory...).

    Raises:
        InputFileError: naming the file and why.
    """
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
    unreadable: int = 0
    warnings: int = 0

    def count(self, items: Iterable[CaseInput], quiet: bool) -> Iterator[CaseInput]:
        """The items unchanged, each one's problems and warnings printed on stderr as it passes."""
        unreadable_files: set[str] = set()
        for item in items:
            shown: tuple[Problem, ...]
            if isinstance(item, FileProblem):
                shown = (item.problem,)
                if item.problem.warning:
                    self.warnings += 1
                else:
                    unreadable_files.add(item.location.file)
                    self.unreadable = len(unreadable_files)
            else:
                self.cases += 1
                self.warnings += len(item.warnings)
                problems = item.problems if isinstance(item, MalformedCase) else ()
                self.malformed += bool(problems)
                shown = (*problems, *item.warnings)
            if not quiet:
                for problem in shown:
                    _stderr(str(problem))
            yield item

    def line(self) -> str:
        """``checked 9 cases: 1 malformed; 2 warnings``."""
        parts = [f"{self.malformed} malformed"] if self.malformed else []
        parts += lost_and_warned(self.unreadable, self.warnings)
        return f"checked {counted(self.cases, 'case')}" + (f": {'; '.join(parts)}" if parts else "")


def _emit_run(
    run: EvalRun,
    output_format: str,
    output: Path | None,
    comparison: Comparison | None,
    gate: Gate,
) -> None:
    """The run's report; with a baseline, the comparison joins it (JUnit: each case's standing)."""
    if output_format == "table":
        view = to_console(run)
        if comparison is not None:
            view = Group(view, Text(), comparison_to_console(comparison))
        _print(view, output)
    elif output_format == "json":
        chunks = json_chunks(run)
        write_output(chunks if comparison is None else with_comparison(chunks, comparison), output)
    elif output_format == "html":
        from knowledgepulse.reports.evals_html import to_html  # noqa: PLC0415 - only for html

        write_output(to_html(run, comparison), output)
    elif output_format == "markdown":
        extra = "\n" + comparison_to_markdown(comparison) if comparison is not None else ""
        write_output(to_markdown(run) + extra, output)
    else:
        write_output(to_junit(run, gate), output)


def _emit_suite(suite: Suite, output_format: str, output: Path | None) -> None:
    if output_format == "table":
        _print(suite_table(suite), output)
    elif output_format == "markdown":
        write_output(suite_to_markdown(suite), output)
    else:
        write_output(suite_to_json(suite), output)


def _print(renderable: RenderableType, output: Path | None) -> None:
    with output_console(output) as console:
        console.print(renderable)
