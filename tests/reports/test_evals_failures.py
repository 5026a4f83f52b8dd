"""How every view states why a case failed: the same one-line reason, and numbers that differ."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.evals.cases import LoadedCase
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.results import CaseResult, EvalRun, ScorerOutcome
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.scorer import ScoreResult
from knowledgepulse.evals.tasks import TaskRecord
from knowledgepulse.records import Location
from knowledgepulse.reports.compare import comparison_to_markdown
from knowledgepulse.reports.evals import failure_headline, outcome_line
from knowledgepulse.reports.evals_html import to_html
from knowledgepulse.reports.junit import to_junit
from knowledgepulse.testing import failure_message
from tests.evals.builders import make_case, make_suite

NUMBERS = re.compile(r"-?\d+\.\d+")


def timed_run(duration_ms: float, max_ms: float, threshold: float = 1.0) -> EvalRun:
    """One case judged by response-time alone: 1.0 up to ``max_ms``, then less."""
    suite = make_suite(
        {
            "type": "response-time",
            "threshold": threshold,
            "params": {"max_acceptable_ms": max_ms},
        }
    )
    case = make_case([], duration_ms=duration_ms, case_id="slow")
    return run_suite(suite, [LoadedCase(case, Location("cases.jsonl", 1, 0))])


def junit_message(run: EvalRun) -> str:
    """The message of the run's one failing testcase."""
    failure = ET.fromstring(to_junit(run)).find(".//testcase/failure")
    assert failure is not None
    return failure.get("message", "")


def test_a_score_just_below_its_threshold_is_not_shown_as_the_threshold() -> None:
    """0.9999 fails 1.0: the reason reads 0.9999 < 1.0000, never 1.000 < 1.000, in every view."""
    run = timed_run(10_001, 10_000)
    (outcome,) = run.cases[0].failing
    assert outcome_line(outcome) == "score 0.9999 < threshold 1.0000 (margin -0.0001)"
    assert junit_message(run) == "1 scorer below threshold: response-time 0.9999 < 1.0000"
    assert failure_message(run.cases[0]).splitlines()[0] == junit_message(run)
    assert ">0.9999 ✗</td>" in to_html(run)


@given(
    max_ms=st.integers(1, 10**7),
    over=st.integers(1, 10**7),
    threshold=st.one_of(st.just(1.0), st.floats(0.01, 1.0)),
)
def test_every_failing_score_reads_below_its_threshold(
    max_ms: int, over: int, threshold: float
) -> None:
    """Law: whatever the score and threshold, a failing score shows as less than its threshold."""
    run = timed_run(max_ms + min(over, max_ms), max_ms, threshold)
    if run.cases[0].passed:
        return
    (outcome,) = run.cases[0].failing
    score, limit, _margin = (float(n) for n in NUMBERS.findall(outcome_line(outcome)))
    assert score < limit, outcome_line(outcome)
    shown_score, shown_limit = (float(n) for n in NUMBERS.findall(junit_message(run)))
    assert shown_score < shown_limit


def test_a_pass_within_the_tolerance_reads_at_three_decimals() -> None:
    """0.99999999995 reaches 1.0 (the verdict's tolerance): no ten-decimal noise for a pass."""
    run = timed_run(10_000.0000005, 10_000)
    (outcome,) = run.cases[0].outcomes
    assert outcome.passed
    assert outcome_line(outcome) == "score 1.000 >= threshold 1.000 (margin +0.000)"


def test_a_flip_by_a_hair_shows_two_different_scores() -> None:
    """1.0 → 0.9999, pass → fail: the comparison shows the difference it is about."""
    before, after = timed_run(10_000, 10_000), timed_run(10_001, 10_000)
    markdown = comparison_to_markdown(compare_runs(before, after))
    assert "response-time 1.0000 → 0.9999 (-0.0001), pass → fail" in markdown


def failed_task_case(timed_out: bool) -> CaseResult:
    """A case whose task gave no output: every scorer an error result, as the runner makes it."""
    said = "no answer within 1 s" if timed_out else "vector store down"
    record = TaskRecord(
        2,
        error_type="TimeoutError" if timed_out else "RuntimeError",
        error_message=said,
        timed_out=timed_out,
    )
    outcome = ScorerOutcome(
        "response-time", "response-time", None, 1.0, 1.0, ScoreResult.failed("no output")
    )
    return CaseResult("boom", Location("cases.jsonl", 7, 6), (outcome,), task=record)


def test_a_task_that_raised_is_the_one_reason_in_pytest_as_in_junit() -> None:
    """Not "1 scorer below threshold: response-time: no score": the task gave nothing to score."""
    case = failed_task_case(timed_out=False)
    head = failure_message(case).splitlines()[0]
    assert head == "the task raised RuntimeError: vector store down (2 attempts)"
    assert failure_headline(case) == head


def test_a_timed_out_task_says_it_timed_out_once() -> None:
    """ "the task timed out: no answer within 1 s", not "timed out TimeoutError: ..."."""
    case = failed_task_case(timed_out=True)
    assert failure_headline(case) == "the task timed out: no answer within 1 s (2 attempts)"


def test_a_scorer_without_a_score_is_not_called_below_its_threshold() -> None:
    """An error result has no score to be below anything: the reason names it apart."""
    outcome = ScorerOutcome(
        "citations", "citations", None, 1.0, 1.0, ScoreResult.failed("the scorer raised KeyError")
    )
    case = CaseResult("c", Location("cases.jsonl", 1, 0), (outcome,))
    assert failure_message(case).splitlines()[0] == (
        "1 scorer without a score: citations (the scorer raised KeyError)"
    )


def test_a_junit_failure_is_typed_below_threshold_only_when_every_failing_scorer_scored() -> None:
    """A scorer that raised, or had no durationMs to read, is a NoScore failure in JUnit."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 10}})
    cases = [make_case([], duration_ms=50, case_id="slow"), make_case([], case_id="untimed")]
    located = [LoadedCase(case, Location("a.jsonl", n, n - 1)) for n, case in enumerate(cases, 1)]
    failures = ET.fromstring(to_junit(run_suite(suite, located))).iter("failure")
    assert [failure.get("type") for failure in failures] == ["BelowThreshold", "NoScore"]


def test_a_case_id_used_twice_is_two_junit_testcases_named_as_pytest_names_them() -> None:
    """x and x[2], as the pytest plugin's node ids: a test-report action keyed by name keeps
    both (before, two testcases named x, one of which a report could fold into the other)."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 10}})
    cases = [make_case([], duration_ms=ms, case_id="x") for ms in (5, 50)]
    located = [LoadedCase(case, Location("a.jsonl", n, n - 1)) for n, case in enumerate(cases, 1)]
    other = LoadedCase(make_case([], duration_ms=5, case_id="x"), Location("b.jsonl", 1, 0))
    run = run_suite(suite, [*located, other])
    testcases = ET.fromstring(to_junit(run)).iter("testcase")
    named = [(case.get("classname"), case.get("name")) for case in testcases]
    assert named == [("a.jsonl", "x"), ("a.jsonl", "x[2]"), ("b.jsonl", "x")]


def two_scorer_run(*entries: dict[str, Any]) -> EvalRun:
    """One case of 15 ms judged by the response-time entries given (it fails 'fast')."""
    suite = make_suite(*entries)
    case = make_case([], duration_ms=15, case_id="c")
    return run_suite(suite, [LoadedCase(case, Location("cases.jsonl", 1, 0))])


FAST: dict[str, Any] = {
    "type": "response-time",
    "name": "fast",
    "params": {"max_acceptable_ms": 10},
}
LAX: dict[str, Any] = {
    "type": "response-time",
    "name": "lax",
    "params": {"max_acceptable_ms": 1000},
}


def test_a_case_changed_by_a_scorer_leaving_the_suite_says_which() -> None:
    """Its weighted score moved because 'lax' is gone: the comparison names it, not a dash."""
    comparison = compare_runs(two_scorer_run(FAST, LAX), two_scorer_run(FAST))
    assert (
        comparison_to_markdown(comparison).count(
            "| c | lax 1.000 → absent: no longer in the suite | 0.750 → 0.500 (-0.250) |"
        )
        == 1
    )


def test_a_case_changed_by_the_suite_s_weights_alone_says_so() -> None:
    """No score moved and no scorer came or went: the weights moved the weighted score."""
    comparison = compare_runs(two_scorer_run(FAST, LAX), two_scorer_run({**FAST, "weight": 3}, LAX))
    assert "| c | scores held; the weighted score moved with the suite's weights |" in (
        comparison_to_markdown(comparison)
    )
