"""Evaluation runs as JUnit XML, which CI systems show as test results.

One ``<testcase>`` per case (``classname`` its file, ``name`` its id): a failing case is a
``<failure>`` that names each failing scorer with its diagnosis, a malformed case or a task that
raised is an ``<error>``, and so is each part of a file that could not be read, so CI never
counts a broken file as nothing. Against a baseline, a failing case's message begins with how
it stands (``regression:``, ``new failure:``, ``old failure:``), and with ``--fail-on
regression`` an old failure is ``<skipped>`` (as pytest writes an expected failure), so the
report fails exactly the cases that fail the run. No timestamps, and no durations over recorded
outputs: equal runs, equal bytes. Every text goes through
:func:`~knowledgepulse._util.text.printable`, so the document stays well-formed XML whatever
the cases hold.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from knowledgepulse._util.text import printable
from knowledgepulse.evals.compare import Gate, Standing
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.records import Problem
from knowledgepulse.reports.evals import number, outcome_line, scorer_repeat, task_failure

_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def to_junit(run: EvalRun, gate: Gate | None = None) -> str:
    """The run as a JUnit XML document; with a ``gate``, each failure says how it stands."""
    summary = run.summary
    name = run.suite.name or run.suite.source
    unreadable = [problem for problem in run.file_problems if not problem.warning]
    root = ET.Element("testsuites", {"name": "kp eval"})
    suite = ET.SubElement(root, "testsuite", {"name": name})
    properties = ET.SubElement(suite, "properties")
    _property(properties, "suite.source", run.suite.source)
    if run.suite.description:
        _property(properties, "suite.description", run.suite.description)
    for entry in run.suite.scorers:
        _property(
            properties,
            f"scorer.{entry.key}",
            f"type={entry.type} weight={entry.weight:g} threshold={entry.threshold:g}",
        )
    _property(properties, "pass_rate", number(summary.pass_rate, 4))
    _property(properties, "weighted_mean", number(summary.weighted_mean, 4))
    _property(properties, "warnings", str(summary.warnings))
    if gate is not None:
        _property(properties, "fail_on", gate.fail_on)
        if gate.standings:
            _property(properties, "baseline.worse", str(gate.worse))
    if summary.task is not None:
        t = summary.task
        _property(properties, "task.runs", str(t.runs))
        _property(properties, "task.cached", str(t.cached))
        _property(properties, "task.errors", str(t.errors))
        _property(properties, "task.timeouts", str(t.timeouts))
        _property(properties, "task.mean_duration_ms", number(t.mean_duration_ms, 1))
        _property(properties, "task.max_duration_ms", number(t.max_duration_ms, 1))
    if summary.repeat is not None:
        r = summary.repeat
        _property(properties, "repeat.runs_per_case", str(r.runs_per_case))
        _property(properties, "repeat.pass_at_k", number(r.pass_at_k, 4))
        _property(properties, "repeat.run_pass_rate", number(r.run_pass_rate, 4))
    for problem in unreadable:
        testcase = ET.SubElement(
            suite,
            "testcase",
            {"classname": problem.location.file, "name": f"(not read in full) {problem.location}"},
        )
        error = ET.SubElement(
            testcase,
            "error",
            {"message": f"cannot be read at {problem.location}", "type": "UnreadableFile"},
        )
        error.text = str(problem)
    for index, result in enumerate(run.cases):
        testcase = _testcase(result)
        if gate is not None:
            _stand(testcase, gate.standing(index), excused=gate.excused(index))
        suite.append(testcase)
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
    counted = {kind: sum(case.find(kind) is not None for case in cases) for kind in _VERDICTS}
    return {
        "tests": str(len(cases)),
        "failures": str(counted["failure"]),
        "errors": str(counted["error"]),
        "skipped": str(counted["skipped"]),
    }


_VERDICTS = ("failure", "error", "skipped")


def _stand(testcase: ET.Element, standing: Standing | None, *, excused: bool) -> None:
    """Say how a failing case stands against the baseline; an excused one becomes skipped."""
    verdict = testcase.find("failure")
    if verdict is None:
        verdict = testcase.find("error")
    if verdict is None:
        return
    if standing is not None:
        verdict.set("message", f"{standing}: {verdict.get('message', '')}")
    if excused:
        # Known failures are skipped, as pytest writes xfail: CI shows them but fails nothing.
        verdict.tag = "skipped"


def _warnings(parent: ET.Element, warnings: list[Problem]) -> None:
    if warnings:
        ET.SubElement(parent, "system-err").text = "\n".join(str(w) for w in warnings)


def _printable(element: ET.Element) -> None:
    # XML 1.0 has no way to write most control characters, even escaped.
    for node in element.iter():
        node.attrib.update({key: printable(value) for key, value in node.attrib.items()})
        if node.text:
            node.text = printable(node.text)


def _property(parent: ET.Element, name: str, value: str) -> None:
    ET.SubElement(parent, "property", {"name": name, "value": value})


def _testcase(result: CaseResult) -> ET.Element:
    case_id = result.case_id if result.case_id is not None else f"(no id) {result.location}"
    attributes = {"classname": result.location.file, "name": case_id}
    if result.duration_ms is not None:
        attributes["time"] = f"{result.duration_ms / 1000:.3f}"
    testcase = ET.Element("testcase", attributes)
    _repeat_properties(testcase, result)
    _verdict(testcase, result, case_id)
    _warnings(testcase, list(result.warnings))
    return testcase


def _verdict(testcase: ET.Element, result: CaseResult, case_id: str) -> None:
    """The case's ``<error>`` or ``<failure>``, if it has one."""
    if result.malformed:
        error = ET.SubElement(
            testcase,
            "error",
            {"message": f"malformed case at {result.location}", "type": "MalformedCase"},
        )
        error.text = "\n".join(str(problem) for problem in result.problems)
        return
    reason = task_failure(result)
    if reason is not None and result.task is not None:
        error = ET.SubElement(
            testcase, "error", {"message": reason, "type": result.task.error_type or "TaskError"}
        )
        error.text = (
            f"{result.location}: case '{case_id}'\n{reason}\n"
            f"attempts: {result.task.attempts}; no output, so no scorer ran"
        )
        return
    failing = result.failing
    if not failing:
        return
    message = "; ".join(
        f"{o.key}: {number(o.score)} < {number(o.threshold)}"
        if o.score is not None
        else f"{o.key}: no score"
        for o in failing
    )
    summary = f"{len(failing)} scorer(s) below threshold: {message}"
    failure = ET.SubElement(testcase, "failure", {"message": summary, "type": "BelowThreshold"})
    lines = [f"{result.location}: case '{case_id}'"]
    for outcome in failing:
        lines.append(f"{outcome.label}: {outcome_line(outcome)}")
        lines.extend(f"  {hint}" for hint in outcome.diagnosis)
    failure.text = "\n".join(lines)


def _repeat_properties(testcase: ET.Element, result: CaseResult) -> None:
    stats = result.repeat
    if stats is None:
        return
    properties = ET.SubElement(testcase, "properties")
    _property(properties, "repeat.runs", str(stats.runs))
    _property(properties, "repeat.passed_runs", str(stats.passed_runs))
    _property(properties, "repeat.pass_rate", number(stats.pass_rate, 4))
    _property(properties, "repeat.pass_at_k", "true" if stats.pass_at_k else "false")
    for key in stats.scorers:
        _property(properties, f"repeat.scorer.{key}", scorer_repeat(result, key) or "")
