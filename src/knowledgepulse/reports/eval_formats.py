"""The ``kp eval`` and ``kp compare`` reports by format name: a run, a suite, a comparison.

A report is a rich renderable (the ``table`` format, for people), a text, or its chunks (JSON
as it is written); the shell prints the first through a console and writes the others as they
are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rich.console import Group
from rich.table import Table
from rich.text import Text

from knowledgepulse.evals.compare import Comparison, Gate
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.suite import Suite
from knowledgepulse.reports.compare import (
    comparison_to_console,
    comparison_to_json,
    comparison_to_markdown,
    with_comparison,
)
from knowledgepulse.reports.evals import (
    MARKDOWN_BUDGET,
    json_chunks,
    suite_table,
    suite_to_json,
    suite_to_markdown,
    to_console,
    to_markdown,
)
from knowledgepulse.reports.junit import to_junit

Report = Group | Table | str | Iterator[str]
"""A renderable for a console, a text, or the chunks of one."""

RUN_FORMATS = ("table", "json", "junit", "markdown", "html")
"""The formats of a run's report (html: one self-contained page)."""

SUITE_VIEWS: dict[str, Callable[[Suite], Report]] = {
    "table": suite_table,
    "json": suite_to_json,
    "markdown": suite_to_markdown,
}
"""A resolved suite (``kp eval --dry-run``) in each format it has."""

COMPARISON_VIEWS: dict[str, Callable[[Comparison], Report]] = {
    "table": comparison_to_console,
    "json": comparison_to_json,
    "markdown": comparison_to_markdown,
}
"""A comparison (``kp compare``) in each format it has."""


def run_report(
    run: EvalRun, output_format: str, comparison: Comparison | None = None, gate: Gate | None = None
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
        if comparison is None:
            return to_markdown(run)
        # The comparison (what fails the gate) right after the totals, and half the budget at
        # most, so the failing cases keep room for their diagnoses.
        return to_markdown(run, comparison_to_markdown(comparison, MARKDOWN_BUDGET // 2))
    return to_junit(run, gate)
