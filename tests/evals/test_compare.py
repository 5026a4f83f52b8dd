"""Comparing two evaluation runs: flips, deltas, tolerance, added and removed cases, laws."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import ReportFileError
from knowledgepulse.evals.compare import Comparison, compare_runs
from knowledgepulse.evals.report import EvalReport, parse_report
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from tests.evals.builders import make_case, make_suite, page

MAX_MS = 1000.0


def timed_run(
    durations: Mapping[str, float | None], *, threshold: float = 0.5, extra: bool = False
) -> EvalRun:
    """One case per id, scored by response-time only: 1.0 up to 1000 ms, 0.5 at 1500 ms.

    ``None`` gives a case without a duration, which response-time cannot score. ``extra``
    adds an operation-accuracy scorer (1.0 on these cases).
    """
    entries: list[dict[str, Any]] = [
        {"type": "response-time", "threshold": threshold, "params": {"max_acceptable_ms": MAX_MS}}
    ]
    if extra:
        entries.append({"type": "operation-accuracy"})
    suite = make_suite(*entries, name="timed")
    pages = [page("p1", b1="x")]
    cases = [
        make_case(pages, duration_ms=duration, case_id=case_id)
        for case_id, duration in durations.items()
    ]
    return run_suite(suite, cases)


def test_a_case_that_passed_and_now_fails_is_a_regression() -> None:
    """Pass in the base, fail in the new run: regressed, with the scorer's flip and delta."""
    comparison = compare_runs(timed_run({"a": 900, "b": 900}), timed_run({"a": 1900, "b": 900}))
    assert comparison.regressed
    assert comparison.summary.regressions == 1
    assert comparison.summary.unchanged == 1
    (case,) = comparison.of("regressed")
    assert case.label == "a"
    (score,) = case.scores
    assert score.key == "response-time"
    assert score.flip == "regressed"
    assert score.delta == pytest.approx(0.1 - 1.0)
    assert case.weighted_delta == pytest.approx(-0.9)


def test_a_case_that_failed_and_now_passes_is_an_improvement() -> None:
    """Fail in the base, pass in the new run: improved, and no regression."""
    comparison = compare_runs(timed_run({"a": 1900}), timed_run({"a": 100}))
    assert not comparison.regressed
    assert [c.label for c in comparison.of("improved")] == ["a"]
    assert comparison.cases[0].scores[0].flip == "improved"


def test_a_score_that_moved_with_the_verdict_held_is_changed() -> None:
    """1200 ms to 1400 ms scores 0.8 then 0.6: both pass at 0.5, so the case is changed."""
    comparison = compare_runs(timed_run({"a": 1200}), timed_run({"a": 1400}))
    (case,) = comparison.cases
    assert case.change == "changed"
    assert case.scores[0].flip is None
    assert case.scores[0].delta == pytest.approx(-0.2)
    assert case.changed_scores == case.scores


def test_a_delta_within_the_tolerance_counts_as_unchanged() -> None:
    """A change of 0.05 is unchanged under tolerance 0.1 and changed under 0.01."""
    base, new = timed_run({"a": 1200}), timed_run({"a": 1250})
    assert compare_runs(base, new, tolerance=0.1).cases[0].change == "unchanged"
    assert compare_runs(base, new, tolerance=0.01).cases[0].change == "changed"


def test_a_flip_counts_whatever_the_tolerance() -> None:
    """Crossing the threshold by a hair is a regression even under a large tolerance."""
    comparison = compare_runs(
        timed_run({"a": 1500}), timed_run({"a": 1501}), tolerance=0.5
    )  # 0.5 passes, 0.499 fails
    assert comparison.summary.regressions == 1


def test_a_score_that_becomes_an_error_is_a_regression_without_delta() -> None:
    """No duration: response-time cannot score, the case fails, and the delta is None."""
    comparison = compare_runs(timed_run({"a": 100}), timed_run({"a": None}))
    score = comparison.cases[0].scores[0]
    assert comparison.cases[0].change == "regressed"
    assert score.delta is None
    assert score.new is not None
    assert score.new.score is None
    assert score.new.error is not None
    assert score.changed


def test_cases_added_and_removed_are_listed_after_matching_by_id() -> None:
    """New-run order first, then the removed cases; neither counts as a regression."""
    comparison = compare_runs(
        timed_run({"gone": 100, "kept": 100}), timed_run({"kept": 100, "new": 9000})
    )
    assert [(c.label, c.change) for c in comparison.cases] == [
        ("kept", "unchanged"),
        ("new", "added"),
        ("gone", "removed"),
    ]
    assert (comparison.summary.added, comparison.summary.removed) == (1, 1)
    assert not comparison.regressed


def test_a_repeated_id_in_a_run_is_matched_by_occurrence() -> None:
    """In runs in memory, the second 'a' of one run is compared with the second 'a' of the other."""
    base = with_repeated_id(timed_run({"a": 100, "b": 100}))
    new = with_repeated_id(timed_run({"a": 100, "b": 1900}))
    comparison = compare_runs(base, new)
    assert [(c.label, c.change) for c in comparison.cases] == [
        ("a", "unchanged"),
        ("a #2", "regressed"),
    ]


def with_repeated_id(run: EvalRun) -> EvalRun:
    """The run with its second case's id made the first's ('a'), as a cases file may repeat it."""
    first, second = run.cases
    return dataclasses.replace(run, cases=(first, dataclasses.replace(second, case_id="a")))


def test_a_report_with_a_repeated_case_id_is_refused_with_its_path() -> None:
    """Read from a file, a repeated id is an error naming both cases, never matched silently."""
    document = EvalReport.of(timed_run({"a": 100, "b": 100})).model_dump()
    document["cases"][1]["id"] = "a"
    with pytest.raises(ReportFileError) as caught:
        parse_report(document, "report.json")
    (problem,) = caught.value.problems
    assert (problem.path, problem.location.file) == ("cases[1].id", "report.json")
    assert "also the id of cases[0]" in problem.message


@pytest.mark.parametrize("bad", ["0.5", True, [0.5]])
def test_a_score_that_is_not_a_number_is_refused_with_its_path(bad: Any) -> None:
    """A string score ("0.5") is not read as a number: the report is refused at that path."""
    document = EvalReport.of(timed_run({"a": 100})).model_dump()
    document["cases"][0]["scorers"][0]["score"] = bad
    with pytest.raises(ReportFileError) as caught:
        parse_report(document, "report.json")
    assert [p.path for p in caught.value.problems] == ["cases[0].scorers[0].score"]


def test_scorers_added_removed_and_changed_are_reported() -> None:
    """A scorer only in the new suite is added; a threshold change is 'changed'."""
    comparison = compare_runs(
        timed_run({"a": 100}, threshold=0.5), timed_run({"a": 100}, threshold=0.9, extra=True)
    )
    statuses = {change.key: change.status for change in comparison.scorers}
    assert statuses == {"response-time": "changed", "operation-accuracy": "added"}
    assert [s.key for s in comparison.cases[0].scores] == ["response-time"]
    reverse = compare_runs(timed_run({"a": 100}, extra=True), timed_run({"a": 100}))
    assert {c.key: c.status for c in reverse.scorers}["operation-accuracy"] == "removed"


def test_the_tolerance_must_be_a_finite_non_negative_number() -> None:
    """A negative or NaN tolerance is a ValueError naming the value."""
    run = timed_run({"a": 100})
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="tolerance"):
            compare_runs(run, run, tolerance=bad)


# --- laws over random reports ------------------------------------------------------------------

_IDS = st.sampled_from(["a", "b", "c", "d"]) | st.none()
_SCORE = st.none() | st.floats(0, 1) | st.sampled_from([0.0, 0.5, 1.0])


@st.composite
def reports(draw: st.DrawFn) -> EvalReport:
    """A random ``kp eval`` JSON report, read back: scores err, cases are malformed."""
    keys = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), unique=True, min_size=1))
    suite = {
        "scorers": [
            {"key": key, "type": key, "weight": 1.0, "threshold": draw(st.floats(0, 1))}
            for key in keys
        ]
    }
    cases = []
    ids = draw(st.lists(_IDS, max_size=6, unique_by=lambda i: i or object()))
    for case_id in ids:
        malformed = draw(st.booleans())
        outcomes = (
            []
            if malformed
            else [
                {
                    "type": key,
                    "score": draw(_SCORE),
                    "threshold": 0.5,
                    "passed": draw(st.booleans()),
                }
                for key in keys
                if draw(st.booleans())
            ]
        )
        cases.append(
            {
                "id": case_id,
                "passed": not malformed and draw(st.booleans()),
                "weighted_score": None if malformed else draw(_SCORE),
                "scorers": outcomes,
                "error": [{"message": "broken"}] if malformed else None,
            }
        )
    document = {"suite": suite, "summary": {"pass_rate": draw(_SCORE)}, "cases": cases}
    return parse_report(document, "report.json")


def _counts(comparison: Comparison) -> dict[str, int]:
    return comparison.summary.to_dict()


@settings(max_examples=150)
@given(run=reports(), tolerance=st.sampled_from([0.0, 1e-9, 0.1]))
def test_comparing_a_run_with_itself_changes_nothing(run: EvalReport, tolerance: float) -> None:
    """Every matched case is unchanged, nothing regressed, nothing was added or removed."""
    comparison = compare_runs(run, run, tolerance=tolerance)
    assert all(case.change == "unchanged" for case in comparison.cases)
    assert comparison.summary.unchanged == len(run.cases) - run.without_id
    assert comparison.summary.output_changed == 0
    assert all(not score.changed for case in comparison.cases for score in case.scores)
    assert all(change.status == "same" for change in comparison.scorers)


@settings(max_examples=150)
@given(base=reports(), new=reports(), tolerance=st.sampled_from([0.0, 0.1]))
def test_swapping_base_and_new_swaps_regressions_and_improvements(
    base: EvalReport, new: EvalReport, tolerance: float
) -> None:
    """Regressions become improvements, added becomes removed; changes and deltas mirror."""
    forward = _counts(compare_runs(base, new, tolerance=tolerance))
    backward = _counts(compare_runs(new, base, tolerance=tolerance))
    swaps = {"regressions": "improvements", "improvements": "regressions", "added": "removed"}
    swaps |= {"removed": "added", "changed": "changed", "unchanged": "unchanged"}
    swaps |= {name: name for name in ("output_changed", "unchanged_output_changed")}
    assert {swaps[name]: count for name, count in forward.items()} == backward
    there = {c.label: c for c in compare_runs(base, new, tolerance=tolerance).cases}
    back = {c.label: c for c in compare_runs(new, base, tolerance=tolerance).cases}
    for label, case in there.items():
        if case.change in ("added", "removed"):
            continue
        deltas = {s.key: s.delta for s in case.scores}
        mirrored = {s.key: None if s.delta is None else -s.delta for s in back[label].scores}
        assert deltas == pytest.approx(mirrored)


@settings(max_examples=100)
@given(base=reports(), new=reports())
def test_every_case_is_counted_once(base: EvalReport, new: EvalReport) -> None:
    """The counts add up to the cases of both runs matched by id and occurrence."""
    comparison = compare_runs(base, new)
    keys = {c.id for c in (*base.cases, *new.cases) if c.id is not None}  # unique in a report
    assert sum(_counts(comparison).values()) == len(keys) == len(comparison.cases)


@settings(max_examples=100)
@given(base=reports(), new=reports(), low=st.floats(0, 0.5), high=st.floats(0.5, 1))
def test_a_larger_tolerance_never_finds_more_changes(
    base: EvalReport, new: EvalReport, low: float, high: float
) -> None:
    """Raising the tolerance moves cases from changed to unchanged only; flips stay."""
    strict = compare_runs(base, new, tolerance=low)
    loose = compare_runs(base, new, tolerance=high)
    assert {c.label for c in loose.of("changed")} <= {c.label for c in strict.of("changed")}
    for name in ("regressions", "improvements", "added", "removed"):
        assert _counts(loose)[name] == _counts(strict)[name]
