"""The gate: each failing case's standing against a baseline, and what fails the run."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.evals.compare import Gate, compare_runs
from tests.evals.test_compare import timed_run

# response-time at threshold 0.5: 900 ms passes, 1900 ms fails.
PASS, FAIL = 900.0, 1900.0


def test_each_failing_case_stands_as_regression_new_or_old() -> None:
    """Passed before: regression; not in the baseline: new failure; failed before: old."""
    base = timed_run({"was-fine": PASS, "was-failing": FAIL, "fixed": FAIL})
    new = timed_run({"was-fine": FAIL, "was-failing": FAIL, "fixed": PASS, "added": FAIL})
    gate = Gate.of(new, compare_runs(base, new), "regression")
    assert gate.standings == ("regression", "old failure", None, "new failure")
    assert gate.worse == 2
    assert [gate.excused(i) for i in range(4)] == [False, True, False, False]


def test_a_case_without_an_id_that_fails_is_a_new_failure() -> None:
    """It cannot be matched, so it cannot be excused."""
    base = timed_run({"a": PASS})
    run = timed_run({"a": PASS, "b": FAIL})
    new = replace(run, cases=(run.cases[0], replace(run.cases[1], case_id=None)))
    assert Gate.of(new, compare_runs(base, new), "regression").standings == (None, "new failure")


def test_failure_and_never_excuse_no_case() -> None:
    """--fail-on failure excuses no failing case; never passes the run but excuses none either."""
    base = timed_run({"a": FAIL})
    new = timed_run({"a": FAIL})
    comparison = compare_runs(base, new)
    assert not Gate.of(new, comparison, "failure").excused(0)
    assert not Gate.of(new, comparison, "never").excused(0)
    assert not Gate.of(new, None, "never").excused(0)
    assert Gate.of(new, comparison, "never").verdict(new) == "passed"
    assert Gate.of(new, None, "failure").standings == ()


def test_failing_on_regressions_needs_a_baseline() -> None:
    """Without a comparison there is nothing to be worse than."""
    with pytest.raises(ValueError, match="needs a baseline"):
        Gate.of(timed_run({"a": PASS}), None, "regression")


@settings(max_examples=40, deadline=None)
@given(durations=st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([PASS, FAIL])))
def test_a_run_is_never_worse_than_itself(durations: dict[str, float]) -> None:
    """Against itself every failure is old: the regression gate passes whatever fails."""
    run = timed_run(durations)
    gate = Gate.of(run, compare_runs(run, run), "regression")
    assert gate.worse == 0
    assert all(gate.excused(i) for i, case in enumerate(run.cases) if not case.passed)


def test_the_verdict_of_each_mode_against_a_baseline() -> None:
    """A regression: regressed in both modes; an old failure alone: failed on failure only."""
    base = timed_run({"was-fine": PASS, "was-failing": FAIL})
    worse = timed_run({"was-fine": FAIL, "was-failing": FAIL})
    same = timed_run({"was-fine": PASS, "was-failing": FAIL})
    verdicts = {
        (name, mode): Gate.of(run, compare_runs(base, run), mode).verdict(run)
        for name, run in (("worse", worse), ("same", same))
        for mode in ("regression", "failure", "never")
    }
    assert verdicts == {
        ("worse", "regression"): "regressed",
        ("worse", "failure"): "regressed",
        ("worse", "never"): "passed",
        ("same", "regression"): "passed",
        ("same", "failure"): "failed",
        ("same", "never"): "passed",
    }


def test_a_file_not_read_in_full_fails_the_regression_gate() -> None:
    """The run is not all there: no old failure excuses that."""
    run = timed_run({"a": PASS})
    lost = replace(run, summary=run.summary.model_copy(update={"unreadable_files": 1}))
    assert Gate.of(lost, compare_runs(run, lost), "regression").verdict(lost) == "failed"


@settings(max_examples=40, deadline=None)
@given(durations=st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([PASS, FAIL])))
def test_without_a_baseline_the_verdict_is_whether_every_case_passed(
    durations: dict[str, float],
) -> None:
    """--fail-on failure alone: passed exactly when the run passed; never: always passed."""
    run = timed_run(durations)
    assert Gate.of(run, None, "failure").verdict(run) == ("passed" if run.passed else "failed")
    assert Gate.of(run, None, "never").verdict(run) == "passed"
