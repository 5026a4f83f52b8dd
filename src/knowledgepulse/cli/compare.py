"""``kp compare``: compare two ``kp eval`` JSON reports and say what regressed.

Both reports are read and checked before anything is written; the comparison is written
atomically. Exit code 4 (a regression) when a case that passed in the base report fails in the
new one, so CI can tell "worse than before" from "still failing" (``kp eval``'s 1).
"""

from __future__ import annotations

from pathlib import Path

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import printable
from knowledgepulse.cli._console import (
    output_console,
    report_format,
    write_output,
)
from knowledgepulse.cli._options import output_option
from knowledgepulse.cli.main import EXIT_OK, EXIT_REGRESSION
from knowledgepulse.evals.compare import DEFAULT_TOLERANCE, Comparison, compare_runs
from knowledgepulse.evals.snapshot import load_report
from knowledgepulse.reports.compare import (
    comparison_line,
    comparison_to_console,
    comparison_to_json,
    comparison_to_markdown,
)

FORMATS = ("table", "json", "markdown")


tolerance_option = click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Score changes at most this large count as unchanged (verdict flips always count).",
)


@click.command("compare")
@click.argument("base", metavar="BASE.json", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("new", metavar="NEW.json", type=click.Path(dir_okay=False, path_type=Path))
@tolerance_option
@click.option(
    "-f",
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    help="Output format [default: table on a terminal; else from the --output suffix "
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
    output_format = output_format or report_format(output, FORMATS)
    if output is not None:
        check_destination(output, what="comparison")
    comparison = compare_runs(load_report(base), load_report(new), tolerance=tolerance)
    emit_comparison(comparison, output_format, output)
    if not quiet and not (output_format == "table" and output is None):
        click.echo(printable(comparison_line(comparison)), err=True)
    return EXIT_REGRESSION if comparison.regressed else EXIT_OK


def emit_comparison(comparison: Comparison, output_format: str, output: Path | None) -> None:
    """Write the comparison in a format (table, json or markdown) to stdout or ``output``."""
    if output_format == "table":
        with output_console(output) as console:
            console.print(comparison_to_console(comparison))
    elif output_format == "markdown":
        write_output(comparison_to_markdown(comparison), output)
    else:
        write_output(comparison_to_json(comparison), output)
