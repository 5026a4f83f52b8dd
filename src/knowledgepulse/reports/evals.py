"""Evaluation runs rendered as JSON and as a rich console view, and resolved suites for dry runs.

The run itself is plain data (:class:`~knowledgepulse.evals.runner.EvalRun`); each renderer is a
function of it, testable without a terminal. JSON keeps input order and full float precision and
holds no clock readings, so equal inputs give byte-identical output. The console view puts the
failing cases first, each with its failing scorers and their diagnosis, then the passing ones,
then the summary.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from knowledgepulse.evals.runner import CaseResult, EvalRun, ScorerOutcome
from knowledgepulse.evals.suite import Suite

DASH = "—"


def run_to_dict(run: EvalRun) -> dict[str, Any]:
    """The run as one JSON object: ``suite``, ``summary`` and ``cases`` (input order)."""
    return {
        "suite": run.suite.to_dict(),
        "summary": run.summary.to_dict(),
        "cases": [result.to_dict() for result in run.cases],
    }


def to_json(run: EvalRun) -> str:
    """The run as an indented JSON document (see :func:`run_to_dict`)."""
    return _dumps(run_to_dict(run))


def suite_to_json(suite: Suite) -> str:
    """The resolved suite as an indented JSON document (``kp eval --dry-run``)."""
    return _dumps(suite.to_dict())


def _dumps(document: Any) -> str:
    # A custom scorer's details may hold values JSON has no type for; show them as text.
    return json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"


def number(value: float | None, digits: int = 3) -> str:
    """A score for people: fixed digits, or a dash for "no value"."""
    return DASH if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    """A rate for people: ``42.9%``, or a dash."""
    return DASH if value is None else f"{value:.1%}"


def outcome_line(outcome: ScorerOutcome) -> str:
    """``score 0.500 < threshold 0.800 (margin -0.300)``, or the error when there is no score."""
    if outcome.score is None:
        return f"no score: {outcome.error}"
    relation = ">=" if outcome.passed else "<"
    margin = outcome.margin if outcome.margin is not None else 0.0
    return (
        f"score {number(outcome.score)} {relation} threshold {number(outcome.threshold)} "
        f"(margin {margin:+.3f})"
    )


def summary_line(run: EvalRun) -> str:
    """One line for people: how many passed, failed and were malformed; the weighted mean."""
    s = run.summary
    if s.cases == 0:
        return "no cases to evaluate"
    parts = [f"{s.passed} of {s.cases} case{'s' if s.cases != 1 else ''} passed"]
    if s.pass_rate is not None:
        parts[0] += f" ({percent(s.pass_rate)})"
    if s.malformed:
        parts.append(f"{s.malformed} malformed")
    parts.append(f"weighted mean {number(s.weighted_mean)}")
    return "; ".join(parts)


def to_console(run: EvalRun) -> Group:
    """The console view: failing cases with their diagnosis, passing cases, then the summary."""
    failing = [result for result in run.cases if not result.passed]
    passing = [result for result in run.cases if result.passed]
    parts: list[RenderableType] = []
    for result in failing:
        parts.extend(_failing_case(result))
        parts.append(Text())
    if passing:
        parts.append(_passing_table(passing))
        parts.append(Text())
    parts.append(summary_table(run))
    parts.append(Text(summary_line(run), style="bold"))
    return Group(*parts)


def _case_head(label: str, style: str, result: CaseResult) -> Text:
    head = Text()
    head.append(f"{label} ", style=f"bold {style}")
    head.append(result.case_id if result.case_id is not None else "(no id)", style="bold")
    head.append(f"  {result.location!s}", style="dim")
    if not result.malformed:
        head.append(f"  weighted {number(result.weighted_score)}")
    return head


def _failing_case(result: CaseResult) -> list[RenderableType]:
    if result.malformed:
        lines: list[RenderableType] = [_case_head("MALFORMED", "magenta", result)]
        lines.extend(_indented(Text(str(problem)), 4) for problem in result.problems)
        return lines
    lines = [_case_head("FAIL", "red", result)]
    for outcome in result.failing:
        line = Text("✗ ", style="red")
        line.append(outcome.key, style="bold")
        line.append(f"  {outcome_line(outcome)}")
        lines.append(_indented(line, 2))
        lines.extend(_indented(Text(hint, style="yellow"), 6) for hint in outcome.diagnosis)
    passed = [o for o in result.outcomes if o.passed]
    if passed:
        scores = ", ".join(f"{o.key} {number(o.score)}" for o in passed)
        lines.append(_indented(Text(f"✓ {scores}", style="dim"), 2))
    return lines


def _indented(text: Text, width: int) -> Padding:
    """Text that wraps under its own first character, not under the case's heading."""
    return Padding(text, (0, 0, 0, width))


def _passing_table(passing: list[CaseResult]) -> Table:
    table = Table(title="Passing cases", title_justify="left", header_style="bold", show_edge=False)
    table.add_column("case", no_wrap=True)
    table.add_column("where", style="dim", no_wrap=True)
    table.add_column("weighted", justify="right")
    for result in passing:
        table.add_row(
            Text(result.case_id or ""),
            str(result.location),
            Text(number(result.weighted_score), style="bold"),
        )
    return table


def summary_table(run: EvalRun) -> Table:
    """Each scorer's weight, threshold, mean ± standard error and counts over the run."""
    title = f"Suite {run.suite.name or run.suite.source}"
    table = Table(title=title, title_justify="left", header_style="bold", show_edge=False)
    named = any(entry.name is not None for entry in run.suite.scorers)
    columns = ("scorer", *(("type",) if named else ()), "weight", "threshold", "mean")
    for column in (*columns, "± stderr", "n", "errors"):
        left = column in ("scorer", "type")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for entry in run.suite.scorers:
        stats = run.summary.scorers[entry.key]
        table.add_row(
            entry.key,
            *((entry.type,) if named else ()),
            f"{entry.weight:g}",
            f"{entry.threshold:g}",
            number(stats.mean),
            number(stats.stderr),
            str(stats.n),
            str(stats.errors),
        )
    return table


def suite_table(suite: Suite) -> Table:
    """The resolved suite for people (``kp eval --dry-run``): every scorer and its parameters."""
    title = f"Suite {suite.name or suite.source}" + (
        f": {suite.description}" if suite.description else ""
    )
    table = Table(title=title, title_justify="left", header_style="bold", show_edge=False)
    table.add_column("scorer", no_wrap=True)
    for column in ("weight", "threshold"):
        table.add_column(column, justify="right")
    table.add_column("params")
    for entry in suite.scorers:
        table.add_row(
            entry.label,
            f"{entry.weight:g}",
            f"{entry.threshold:g}",
            Text(json.dumps(entry.params, ensure_ascii=False) if entry.params else DASH),
        )
    return table
