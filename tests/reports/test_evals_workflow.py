"""Every renderer shows how a workflow went: task errors once per case, repeats, durations."""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET
from functools import cache

from rich.console import Console

from knowledgepulse.evals import evaluate
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.reports.evals import to_console, to_markdown
from knowledgepulse.reports.evals_html import to_html
from knowledgepulse.reports.junit import to_junit
from tests.evals.builders import make_suite
from tests.evals.test_evaluate import text_case

SUITE = make_suite(
    {"type": "content-quality", "threshold": 0.9},
    {"type": "response-time", "threshold": 0.5, "params": {"max_acceptable_ms": 5000}},
)
CASES = [
    text_case("fine", "alpha beta gamma delta", "alpha", "beta"),
    text_case("boom", "alpha beta", "alpha"),
    text_case("slow", "alpha beta", "alpha"),
]
WOBBLY = [text_case("wobbly", "alpha beta gamma delta", "alpha", "beta", "gamma", "delta")]


# The slow call waits for this, set once the run is over (not for a time), so the quick calls
# can have a timeout that a loaded machine meets (0.1 s did not, at load 20 on 2 cores).
RELEASE_SLOW = threading.Event()


def scripted(task: TaskInput) -> str:
    """Echoes ``fine``, raises on ``boom``, sleeps past the timeout on ``slow``."""
    if "boom" in str(task.case_id):
        raise ValueError("the model said no")
    if "slow" in str(task.case_id):
        RELEASE_SLOW.wait(30)
    return str(task.input)


def sometimes(task: TaskInput) -> str:
    """Every word on even runs; on odd runs two of four words are lost."""
    return "alpha beta" if task.run % 2 else str(task.input)


@cache
def task_run() -> EvalRun:
    try:
        return evaluate(scripted, CASES, SUITE, timeout=1, retries=1, retry_delay=0.0)
    finally:
        RELEASE_SLOW.set()


@cache
def repeat_run() -> EvalRun:
    return evaluate(sometimes, WOBBLY, SUITE, repeat=3)


def console_text(run: EvalRun) -> str:
    console = Console(width=200, record=True, file=None, color_system=None)
    with console.capture() as capture:
        console.print(to_console(run))
    return capture.get()


def test_console_gives_a_task_error_once_as_the_cases_reason() -> None:
    shown = console_text(task_run())
    at = f"tests/reports/test_evals_workflow.py:{scripted.__code__.co_firstlineno + 3}, in scripted"
    assert shown.count(f"the task raised ValueError: the model said no (at {at}) (2 attempts)") == 1
    assert shown.count("the task timed out: ") == 1
    assert "no score:" not in shown
    assert "no output to score" not in shown
    assert "task: 3 runs, 0 cached, 2 errors (2 timeouts)" not in shown
    assert "task: 3 runs, 0 cached, 2 errors (1 timeout), mean " in shown
    assert "repeat:" not in shown


def test_console_gives_pass_rate_pass_at_k_and_the_summary() -> None:
    shown = console_text(repeat_run())
    assert "passed 2 of 3 runs (66.7%), pass@3 yes" in shown
    assert "repeat: 3 runs per case, pass@3 100.0%, run pass rate 66.7%" in shown
    assert "✓ response-time 1.000 ± 0.000 (n=3)" in shown
    assert "task: 3 runs, 0 cached, 0 errors, mean " in shown


def test_markdown_shows_the_reason_once_and_each_scorers_mean() -> None:
    text = to_markdown(task_run())
    assert text.count("ValueError: the model said no") == 1
    assert text.count("timed out: no answer within") == 1
    assert "no score:" not in text
    assert "no output to score" not in text
    assert "- task: 3 runs, 0 cached, 2 errors (1 timeout)" in text
    repeated = to_markdown(repeat_run())
    assert "- passed 2 of 3 runs (66.7%), pass@3 yes" in repeated
    assert "  - mean 0.833 ± 0.167 over 3 of 3 runs" in repeated
    assert "- passed: response-time 1.000 ± 0.000 (n=3)" in repeated
    assert "- repeat: 3 runs per case, pass@3 100.0%, run pass rate 66.7%" in repeated


def test_junit_task_errors_are_errors_with_the_exception_type_and_durations_are_times() -> None:
    root = ET.fromstring(to_junit(task_run()))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "2")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    boom = cases["boom"].find("error")
    slow = cases["slow"].find("error")
    assert boom is not None
    assert slow is not None
    assert boom.get("type") == "ValueError"
    assert "the model said no" in (boom.get("message") or "")
    assert "attempts: 2" in (boom.text or "")
    assert slow.get("type") == "TimeoutError"
    assert cases["boom"].find("failure") is None
    assert float(cases["fine"].get("time") or "nan") >= 0
    assert cases["slow"].get("time") is None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (properties["task.runs"], properties["task.errors"]) == ("3", "2")


def test_junit_repeat_statistics_are_the_testcases_properties() -> None:
    root = ET.fromstring(to_junit(repeat_run()))
    [case] = root.iter("testcase")
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["repeat.runs"] == "3"
    assert properties["repeat.passed_runs"] == "2"
    assert properties["repeat.pass_at_k"] == "true"
    assert properties["repeat.scorer.content-quality"] == "0.833 ± 0.167 (n=3)"
    assert case.find("failure") is not None


def test_html_shows_the_workflow_in_summary_and_cases() -> None:
    page = to_html(task_run())
    # Once in the matrix (one cell for the case), once in the failing case's section.
    assert page.count("the model said no") == 2
    assert "no output to score" not in page
    assert "task: 3 runs, 0 cached, 2 errors (1 timeout)" in page
    repeated = to_html(repeat_run())
    assert "passed 2 of 3 runs (66.7%), pass@3 yes" in repeated
    assert "mean 0.833 ± 0.167 over 3 of 3 runs" in repeated
    assert "passed: response-time 1.000 ± 0.000 (n=3)" in repeated
    assert "run pass rate 66.7%" in repeated


def test_recorded_outputs_show_no_workflow_lines() -> None:
    run = evaluate(sometimes, WOBBLY, SUITE)
    # A task run once still shows its task line, but never a repeat line.
    assert "repeat:" not in to_markdown(run)
    assert "repeat." not in to_junit(run)
