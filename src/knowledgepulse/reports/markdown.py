"""Evaluation runs as Markdown, for a CI job summary or a pull-request comment.

Text from cases and models is escaped so it cannot turn into Markdown, and passed through
:func:`~knowledgepulse._util.text.printable`.
"""

from __future__ import annotations

import json
import re

from knowledgepulse._util.text import printable
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.evals.suite import Suite
from knowledgepulse.reports.evals import (
    duration,
    number,
    outcome_line,
    percent,
    repeat_line,
    scorer_repeat,
    task_failure,
    workflow_lines,
)

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#~$])")


def escape(text: str) -> str:
    """Text with Markdown's special characters backslash-escaped, newlines shown escaped."""
    return _SPECIAL.sub(r"\\\1", text).replace("\n", "\\n")


def code(text: str) -> str:
    """Inline code that survives backticks in the text."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def to_markdown(run: EvalRun) -> str:
    """The run as Markdown: summary, scorers, failing cases with diagnosis, malformed cases."""
    s = run.summary
    title = run.suite.name or run.suite.source
    lines = [
        f"## Evaluation: {escape(title)}",
        "",
        "| cases | passed | failed | malformed | pass rate | weighted mean "
        "| files not read in full | warnings |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {s.cases} | {s.passed} | {s.failed} | {s.malformed} | {percent(s.pass_rate)} "
        f"| {number(s.weighted_mean)} | {s.unreadable_files} | {s.warnings} |",
        "",
        "| scorer | weight | threshold | mean | ± stderr | n | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in run.suite.scorers:
        stats = s.scorers[entry.key]
        lines.append(
            f"| {escape(entry.label)} | {entry.weight:g} | {entry.threshold:g} "
            f"| {number(stats.mean)} | {number(stats.stderr)} | {stats.n} | {stats.errors} |"
        )
    workflow = workflow_lines(run)
    if workflow:
        lines += ["", *(f"- {escape(line)}" for line in workflow)]
    failing = [r for r in run.cases if not r.passed and not r.malformed]
    malformed = [r for r in run.cases if r.malformed]
    if failing:
        lines += ["", f"### Failing cases ({len(failing)})"]
        for result in failing:
            lines += ["", *_failing_case(result)]
    if malformed:
        lines += ["", f"### Malformed cases ({len(malformed)})", ""]
        for result in malformed:
            name = code(result.case_id) if result.case_id is not None else "(no id)"
            lines.append(f"- {name} at {code(str(result.location))}")
            lines.extend(f"  - {escape(str(problem))}" for problem in result.problems)
    unreadable = [problem for problem in run.file_problems if not problem.warning]
    if unreadable:
        lines += ["", f"### Not read in full ({len(unreadable)})", ""]
        lines.extend(f"- {escape(str(problem))}" for problem in unreadable)
    warnings = run.warnings
    if warnings:
        lines += ["", f"### Warnings ({len(warnings)})", ""]
        lines.extend(f"- {escape(str(problem))}" for problem in warnings)
    if not failing and not malformed and not unreadable and s.cases:
        lines += ["", "Every case passed."]
    return printable("\n".join(lines) + "\n")


def _failing_case(result: CaseResult) -> list[str]:
    head = (
        f"#### {code(result.case_id or '')} ({code(str(result.location))}), "
        f"weighted {number(result.weighted_score)}"
        + (f", {duration(result.duration_ms)}" if result.duration_ms is not None else "")
    )
    lines = [head, ""]
    reason = task_failure(result)
    if reason is not None:
        return [*lines, f"- **{escape(reason)}**: no output, so no scorer ran"]
    repeated = repeat_line(result)
    if repeated is not None:
        lines.append(f"- {escape(repeated)}")
    for outcome in result.failing:
        # A repeated case's diagnosis opens with the mean ± stderr over the runs.
        lines.append(f"- **{escape(outcome.key)}**: {escape(outcome_line(outcome))}")
        lines.extend(f"  - {escape(hint)}" for hint in outcome.diagnosis)
    passed = [o for o in result.outcomes if o.passed]
    if result.repeat is not None and passed:
        shown = ", ".join(f"{o.key} {scorer_repeat(result, o.key)}" for o in passed)
        lines.append(f"- passed: {escape(shown)}")
    return lines


def suite_to_markdown(suite: Suite) -> str:
    """The resolved suite as a Markdown table (``kp eval --dry-run --format markdown``)."""
    lines = [f"## Suite: {escape(suite.name or suite.source)}", ""]
    if suite.description:
        lines += [escape(suite.description), ""]
    lines += ["| scorer | weight | threshold | params |", "|---|---:|---:|---|"]
    for entry in suite.scorers:
        shown = code(json.dumps(entry.params, ensure_ascii=False)) if entry.params else "—"
        lines.append(
            f"| {escape(entry.label)} | {entry.weight:g} | {entry.threshold:g} | {shown} |"
        )
    return printable("\n".join(lines) + "\n")
