"""Evaluation runs as JUnit XML: a ``<testcase>`` per case, ``classname`` its file, ``name`` its id.

A failing case is a ``<failure>``; a malformed one, a task that raised and a file not read in full
an ``<error>``. Against a baseline a failure says how it stands; an old failure that
``--fail-on regression`` excuses is ``<skipped>``, so the report fails exactly the cases that fail
the run. ``--fail-on never`` sets the exit code only: a failing case is still a failure. No
timestamps, no durations over recorded outputs: equal runs, equal bytes; all text is printable,
so the XML stays well-formed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from knowledgepulse._util.text import printable, unique
from knowledgepulse.evals.compare import Gate
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.records import Problem
from knowledgepulse.reports.evals import (
    answer_lines,
    failure_headline,
    number,
    outcome_line,
    scorer_repeat,
    task_failure,
)

_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def to_junit(run: EvalRun, gate: Gate | None = None) -> str:
    """The run as a JUnit XML document; with a ``gate``, each failure says how it stands."""
    summary = run.summary
    name = run.suite.name or run.suite.source
    root = ET.Element("testsuites", {"name": "kp eval"})
    suite = ET.SubElement(root, "testsuite", {"name": name})
    shown = [("suite.source", run.suite.source)]
    if run.suite.description:
        shown.append(("suite.description", run.suite.description))
    shown += [
        (f"scorer.{e.key}", f"type={e.type} weight={e.weight:g} threshold={e.threshold:g}")
        for e in run.suite.scorers
    ]
    shown += [
        ("pass_rate", number(summary.pass_rate, 4)),
        ("weighted_mean", number(summary.weighted_mean, 4)),
        ("warnings", str(summary.warnings)),
    ]
    if summary.unscored:  # cases weighted_mean leaves out
        shown.append(("unscored", str(summary.unscored)))
    if gate is not None:
        shown.append(("fail_on", gate.fail_on))
        if gate.standings:
            shown.append(("baseline.worse", str(gate.worse)))
    if (t := summary.task) is not None:
        for key in ("runs", "cached", "errors", "timeouts", "mean_duration_ms", "max_duration_ms"):
            value = getattr(t, key)
            shown.append((f"task.{key}", number(value, 1) if key.endswith("_ms") else str(value)))
    if (r := summary.repeat) is not None:
        shown += [
            ("repeat.runs_per_case", str(r.runs_per_case)),
            ("repeat.pass_at_k", number(r.pass_at_k, 4)),
            ("repeat.run_pass_rate", number(r.run_pass_rate, 4)),
        ]
    _properties(suite, shown)
    for problem in (problem for problem in run.file_problems if not problem.warning):
        where = problem.location
        named = {"classname": where.file, "name": f"(not read in full) {where}"}
        error = {"message": f"cannot be read at {where}", "type": "UnreadableFile"}
        ET.SubElement(ET.SubElement(suite, "testcase", named), "error", error).text = str(problem)
    names: dict[str, set[str]] = {}  # per file, an id used twice is two tests, as pytest: x, x[2]
    suite.extend(_testcase(result, gate, index, names) for index, result in enumerate(run.cases))
    _warnings(suite, [problem for problem in run.file_problems if problem.warning])
    counts = _counts(suite)
    root.attrib.update(counts)
    suite.attrib.update(counts)
    _printable(root)
    ET.indent(root)
    return _XML_DECLARATION + ET.tostring(root, encoding="unicode") + "\n"


def _counts(suite: ET.Element) -> dict[str, str]:
    """The testsuite's totals, counted from its testcases (so they cannot disagree)."""
    cases = suite.findall("testcase")
    totals = {"tests": str(len(cases))}
    for total, kind in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        totals[total] = str(sum(case.find(kind) is not None for case in cases))
    return totals


def _warnings(parent: ET.Element, warnings: list[Problem]) -> None:
    if warnings:
        ET.SubElement(parent, "system-err").text = "\n".join(str(w) for w in warnings)


def _printable(element: ET.Element) -> None:
    # XML 1.0 has no way to write most control characters, even escaped.
    for node in element.iter():
        node.attrib.update({key: printable(value) for key, value in node.attrib.items()})
        if node.text:
            node.text = printable(node.text)


def _properties(parent: ET.Element, shown: list[tuple[str, str]]) -> None:
    properties = ET.SubElement(parent, "properties")
    for name, value in shown:
        ET.SubElement(properties, "property", {"name": name, "value": value})


def _testcase(
    result: CaseResult, gate: Gate | None, index: int, names: dict[str, set[str]]
) -> ET.Element:
    case_id = result.case_id if result.case_id is not None else f"(no id) {result.location}"
    file = result.location.file
    attributes = {"classname": file, "name": unique(case_id, names.setdefault(file, set()))}
    if result.duration_ms is not None:
        attributes["time"] = f"{result.duration_ms / 1000:.3f}"
    testcase = ET.Element("testcase", attributes)
    if (stats := result.repeat) is not None:
        shown = [
            ("repeat.runs", str(stats.runs)),
            ("repeat.passed_runs", str(stats.passed_runs)),
            ("repeat.pass_rate", number(stats.pass_rate, 4)),
            ("repeat.pass_at_k", "true" if stats.pass_at_k else "false"),
        ]
        shown += [
            (f"repeat.scorer.{key}", scorer_repeat(result, key) or "") for key in stats.scorers
        ]
        _properties(testcase, shown)
    if (verdict := _verdict(result, case_id)) is not None:
        tag, message, kind, text = verdict
        if gate is not None and (standing := gate.standing(index)) is not None:
            message = f"{standing}: {message}"
        # Known failures are skipped, as pytest writes xfail: CI shows them but fails nothing.
        if gate is not None and gate.excused(index):
            tag = "skipped"
        ET.SubElement(testcase, tag, {"message": message, "type": kind}).text = text
    _warnings(testcase, list(result.warnings))
    return testcase


def _verdict(result: CaseResult, case_id: str) -> tuple[str, str, str, str] | None:
    """Why the case fails (``failure`` or ``error``, message, type, text), or None if it passes."""
    head = f"{result.location}: case '{case_id}'"
    if result.malformed:
        problems = "\n".join(str(problem) for problem in result.problems)
        return "error", f"malformed case at {result.location}", "MalformedCase", problems
    reason = task_failure(result)
    if reason is not None and result.task is not None:
        said = f"{head}\n{reason}\nattempts: {result.task.attempts}; no output, so no scorer ran"
        return "error", reason, result.task.error_type or "TaskError", said
    if not (failing := result.failing):
        return None
    lines = [head]
    for outcome in failing:
        lines.append(f"{outcome.label}: {outcome_line(outcome)}")
        lines.extend(f"  {hint}" for hint in outcome.diagnosis)
    for label, shown in answer_lines(result):
        # Split at newlines only: splitlines() would also drop \x0b, \x0c, \x85, \u2028.
        lines += [f"{label}:", *(f"  {line}" for line in shown.split("\n"))]
    # A scorer that gave no score (it raised, or the case lacks what it reads) is not below its
    # threshold: CI tools show the type as the failure's class, so it must not say so.
    below = all(outcome.score is not None for outcome in failing)
    kind = "BelowThreshold" if below else "NoScore"
    # The message is what pytest's -rf shows for the same case under the plugin.
    return "failure", failure_headline(result) or "", kind, "\n".join(lines)
