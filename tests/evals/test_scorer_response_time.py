"""response-time: full marks up to max_acceptable_ms, then a linear fall to 0 at twice it."""

from __future__ import annotations

import pytest

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.evals.scorer import ScorerError, get_scorer_class
from knowledgepulse.evals.scorers.response_time import (
    ResponseTime,
    ResponseTimeParams,
    response_time_score,
)
from tests.evals.builders import bulk, diagnose, evaluate, make_case, page

PAGES = [page("p1", b1="one")]


def test_default_threshold_is_1() -> None:
    """The guide's example threshold: 1.0."""
    assert get_scorer_class("response-time").default_threshold == 1.0


@pytest.mark.parametrize(
    ("duration", "score"),
    [(0, 1.0), (1999.5, 1.0), (2000, 1.0), (2600, 0.7), (3000, 0.5), (4000, 0.0), (9000, 0.0)],
)
def test_score_formula(duration: float, score: float) -> None:
    """1.0 up to the limit, then max(0, 1 - (duration - max) / max)."""
    assert response_time_score(duration, 2000) == pytest.approx(score)


def test_details_give_time_limit_and_verdict() -> None:
    """Details: responseTimeMs, maxAcceptableMs, passed."""
    result = evaluate("response-time", make_case(PAGES, duration_ms=2600), max_acceptable_ms=2000)
    assert result.score == pytest.approx(0.7)
    assert result.details == {"responseTimeMs": 2600, "maxAcceptableMs": 2000, "passed": False}


def test_missing_duration_is_an_error_result_not_a_number() -> None:
    """No durationMs: score None with a reason saying what to do."""
    scorer = get_scorer_class("response-time").from_params({"max_acceptable_ms": 2000})
    case = make_case(PAGES)
    result = scorer.evaluate(*bulk(case))
    assert result.score is None
    assert result.error is not None
    assert "no actual.durationMs" in result.error
    with pytest.raises(ScorerError, match=r"response-time: the case has no actual\.durationMs"):
        scorer.score(*bulk(case))
    assert scorer.diagnose(result) == []


def test_max_acceptable_ms_has_no_default() -> None:
    """A suite must give max_acceptable_ms; building without it says so."""
    with pytest.raises(ScorerParameterError, match="max_acceptable_ms: required field is missing"):
        get_scorer_class("response-time").from_params({})
    with pytest.raises(ScorerParameterError, match="needs max_acceptable_ms"):
        ResponseTime()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "got 0; expected greater than 0"),
        (-5, "got -5; expected greater than 0"),
        ("2000", 'got "2000"; expected a valid number'),
        (True, "got true; expected a valid number"),
        (float("inf"), "NaN and infinite numbers are not allowed"),
    ],
)
def test_max_acceptable_ms_must_be_a_positive_number(value: object, message: str) -> None:
    """Zero, negative, strings and booleans are rejected with what was found."""
    with pytest.raises(ScorerParameterError) as raised:
        get_scorer_class("response-time").from_params({"max_acceptable_ms": value})
    assert message in str(raised.value)


def test_integer_and_float_limits_are_accepted() -> None:
    """Whole and fractional milliseconds both work."""
    assert ResponseTime(ResponseTimeParams(max_acceptable_ms=2000)).params.max_acceptable_ms == 2000
    scorer = get_scorer_class("response-time").from_params({"max_acceptable_ms": 1.5})
    case = make_case(PAGES, duration_ms=1.5)
    assert scorer.score(*bulk(case)) == 1.0


def test_diagnosis_says_how_far_over() -> None:
    """The diagnosis gives the duration, the excess in ms and percent, and where it reaches 0."""
    case = make_case(PAGES, duration_ms=2600)
    assert diagnose("response-time", case, max_acceptable_ms=2000) == [
        "took 2600 ms, 600 ms (30%) over max_acceptable_ms 2000; the score reaches 0 at 4000 ms"
    ]


def test_diagnosis_is_empty_within_the_limit() -> None:
    """Fast enough: nothing to say."""
    case = make_case(PAGES, duration_ms=10)
    assert diagnose("response-time", case, max_acceptable_ms=2000) == []


def test_the_diagnosis_names_the_suite_parameter_as_the_yaml_spells_it() -> None:
    """A user writes max_acceptable_ms in the suite: the hint names that, not maxAcceptableMs."""
    from knowledgepulse.evals.scorers.response_time import ResponseTime

    assert "max_acceptable_ms" in ResponseTime.diagnosis_check
    assert "maxAcceptableMs" not in ResponseTime.diagnosis_check


@pytest.mark.parametrize("given", [-5, "fast"])
def test_a_duration_that_is_no_number_is_named_in_the_error(given: object) -> None:
    """An output's durationMs that is no number >= 0 is an error naming it, not taken for absent."""
    scorer = get_scorer_class("response-time").from_params({"max_acceptable_ms": 2000})
    result = scorer.evaluate({"durationMs": given}, None, [])
    assert result.score is None
    assert result.error is not None
    assert result.error.startswith(f"actual.durationMs is {given!r}, not a number >= 0; fix it")


def test_a_duration_exactly_at_the_limit_passes() -> None:
    """``durationMs <= max``: at the limit the score is 1 and the details say passed."""
    result = evaluate("response-time", make_case(PAGES, duration_ms=2000), max_acceptable_ms=2000)
    assert result.score == 1.0
    assert result.details == {"responseTimeMs": 2000, "maxAcceptableMs": 2000, "passed": True}
