"""assert_passes: silent on a pass, an AssertionError carrying the diagnosis on anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from knowledgepulse.evals import evaluate_case, preset, run_suite
from knowledgepulse.evals.cases import FileProblem, MalformedCase
from knowledgepulse.evals.models import Case
from knowledgepulse.records import Location, Problem
from knowledgepulse.runs import evaluate_cases
from knowledgepulse.testing import assert_passes, failure_message
from tests.evals.builders import cases, make_case, op, page

STRICT = preset("strict")


def renamed(content: str) -> Case:
    """A one-block rename case whose actual update writes ``content``."""
    return make_case(
        [page("p", b1="Your Cart")],
        actual=[op("update", "b1", content=content)],
        expected=[op("update", "b1")],
        patterns=["Basket"],
        case_id="rename",
    )


def test_a_passing_case_passes_silently() -> None:
    """Every scorer at or above its threshold: nothing is raised."""
    assert_passes(evaluate_case(STRICT, renamed("Your Basket")))


def test_a_failing_case_raises_with_each_failing_scorer_and_its_diagnosis() -> None:
    """The first line names the failing scorers; the diagnosis follows, as the table shows it."""
    result = evaluate_case(STRICT, renamed("Your Cart"), Location("cases.yaml", 7))
    with pytest.raises(AssertionError) as raised:
        assert_passes(result)
    message = str(raised.value)
    assert message == failure_message(result)
    first, *rest = message.splitlines()
    assert first == "1 scorer below threshold: content-quality 0.000 < 0.800"
    assert rest[0] == "FAIL rename  cases.yaml:7  weighted 0.800"
    assert any("Pattern 'Basket' not found in content: 'Your Cart'" in line for line in rest)
    assert any(line.strip().startswith("✓ operation-accuracy 1.000") for line in rest)
    assert "  output:" in rest
    assert "  expected:" in rest


def test_a_run_raises_with_its_summary_every_failing_case_and_the_lost_files() -> None:
    """A malformed case and a file cut short fail the run; passing cases are not listed."""
    malformed = MalformedCase(
        Location("cases.jsonl", 3, 2),
        (Problem(Location("cases.jsonl", 3, 2), "actual", "required field is missing"),),
        "broken",
    )
    lost = FileProblem(Problem(Location("more.yaml", 9), "", "invalid YAML: cut short"))
    good = renamed("Your Basket").model_copy(update={"id": "good"})
    run = run_suite(STRICT, [good, renamed("Your Cart"), malformed, lost])
    with pytest.raises(AssertionError) as raised:
        assert_passes(run)
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("1 of 3 cases passed (33.3%); 1 malformed; 1 file could not")
    assert "FAIL rename  <cases>[1]  weighted 0.800" in lines
    assert "MALFORMED broken  cases.jsonl:3" in lines
    assert "    cases.jsonl:3: actual: required field is missing" in lines
    assert lines[-2:] == ["Not read in full", "  more.yaml:9: invalid YAML: cut short"]
    assert not any("good" in line for line in lines)


def test_a_run_of_no_cases_fails_since_it_checks_nothing() -> None:
    """An empty run is not a pass: a test over no cases would always be green."""
    with pytest.raises(AssertionError, match="no cases"):
        assert_passes(run_suite(STRICT, []))


def test_a_run_where_every_case_passed_passes() -> None:
    """Nothing is raised when every case passed and every file was read."""
    assert_passes(run_suite(STRICT, [renamed("Your Basket")]))


def test_anything_but_a_result_is_a_type_error() -> None:
    """A score or a case is not something to assert on; the message says what is."""
    with pytest.raises(TypeError, match="takes a CaseResult or an EvalRun, got Case"):
        assert_passes(renamed("Your Basket"))  # type: ignore[arg-type]


def test_an_evaluation_outcome_is_refused_saying_what_to_pass() -> None:
    """evaluate_cases' outcome is not a run; the TypeError says to pass its .run."""
    outcome = evaluate_cases([], preset="strict")
    with pytest.raises(TypeError, match=r"got EvalOutcome; pass its \.run"):
        assert_passes(outcome)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_assert_passes_raises_exactly_when_the_case_failed(case: Case) -> None:
    """For any case, it raises iff the verdict is a fail, naming exactly the failing scorers."""
    result = evaluate_case(STRICT, case)
    if result.passed:
        assert_passes(result)
        return
    with pytest.raises(AssertionError) as raised:
        assert_passes(result)
    first = str(raised.value).splitlines()[0]
    keys = [outcome.key for outcome in result.outcomes]
    named = [key for key in keys if f"{key} " in first or f"{key}:" in first]
    assert named == [outcome.key for outcome in result.failing]
