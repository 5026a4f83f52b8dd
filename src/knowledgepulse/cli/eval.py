"""``kp eval``: run a suite of scorers over evaluation cases and report the verdicts."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import RenderableType

from knowledgepulse.cli._console import (
    output_console,
    stderr_console,
    stdout_is_terminal,
    write_output,
)
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from knowledgepulse.errors import SuiteError
from knowledgepulse.evals.cases import CaseInput, MalformedCase, iter_cases
from knowledgepulse.evals.presets import PRESET_NAMES, preset
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.suite import Suite, load_suite
from knowledgepulse.reports.evals import (
    suite_table,
    suite_to_json,
    summary_line,
    to_console,
    to_json,
)
from knowledgepulse.reports.junit import to_junit
from knowledgepulse.reports.markdown import suite_to_markdown, to_markdown

FORMATS = ("table", "json", "junit", "markdown")
_SUFFIX_FORMATS = {".json": "json", ".xml": "junit", ".md": "markdown", ".markdown": "markdown"}


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
    "(.json, .xml, .md), else json].",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report here instead of stdout.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the resolved suite (defaults filled in) and check the cases, without scoring.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on stderr but errors.")
def eval_command(
    *,
    cases: tuple[str, ...],
    suite_path: Path | None,
    preset_name: str | None,
    output_format: str | None,
    output: Path | None,
    dry_run: bool,
    quiet: bool,
) -> int:
    """Score evaluation CASES (JSON, JSONL or YAML files, or - for stdin) with a suite.

    A case passes when every scorer reaches its threshold. Failing scorers come with a
    diagnosis; malformed cases are reported as FILE:LINE: PATH: message and count as failed.
    Exit code 0 when every case passes, 1 when any fails or is malformed, 2 for usage or
    suite errors.
    """
    if (suite_path is None) == (preset_name is None):
        raise click.UsageError("give exactly one of --suite FILE or --preset NAME")
    if not cases and not dry_run:
        raise click.UsageError("give case files (JSON, JSONL or YAML), or - to read stdin")
    output_format = output_format or _default_format(output)
    if dry_run and output_format == "junit":
        raise click.UsageError("--dry-run prints the suite; use --format table, json or markdown")
    try:
        suite = load_suite(suite_path) if suite_path is not None else preset(preset_name or "")
    except SuiteError as error:
        _print_suite_error(error)
        return EXIT_USAGE
    inputs = _load_cases(cases, quiet)
    malformed = sum(isinstance(item, MalformedCase) for item in inputs)
    if dry_run:
        _emit_suite(suite, output_format, output)
        return EXIT_FINDINGS if malformed else EXIT_OK
    run = run_suite(suite, inputs)
    renderers = {"json": to_json, "junit": to_junit, "markdown": to_markdown}
    if output_format == "table":
        _print(to_console(run), output)
    else:
        write_output(renderers[output_format](run), output)
    # The table ends with the summary already; other formats get it on stderr.
    if not quiet and not (output_format == "table" and output is None):
        stderr_console().print(summary_line(run), markup=False)
    return EXIT_OK if run.passed else EXIT_FINDINGS


def _default_format(output: Path | None) -> str:
    if output is None:
        return "table" if stdout_is_terminal() else "json"
    return _SUFFIX_FORMATS.get(output.suffix.lower(), "json")


def _print_suite_error(error: SuiteError) -> None:
    """Every suite problem on its own line, ``FILE:LINE: PATH: message``, then what it means."""
    console = stderr_console()
    for problem in error.problems:
        console.print(str(problem), markup=False, highlight=False)
    summary = str(error).split("\n", 1)[0]
    console.print(f"kp: error: {summary}; no case was run", markup=False, highlight=False)


def _load_cases(paths: tuple[str, ...], quiet: bool) -> list[CaseInput]:
    """Every case, printing each malformed one's problems to stderr as it is found."""
    inputs: list[CaseInput] = []
    console = stderr_console()
    for item in iter_cases(paths):
        inputs.append(item)
        if isinstance(item, MalformedCase) and not quiet:
            for problem in item.problems:
                console.print(str(problem), markup=False, highlight=False)
    if not inputs and not quiet and paths:
        console.print("kp: warning: the case files hold no cases", markup=False)
    return inputs


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
