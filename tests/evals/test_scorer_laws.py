"""Laws every built-in scorer obeys on any valid case."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from knowledgepulse.evals.models import Case
from knowledgepulse.evals.scorer import get_scorer_class
from tests.evals.builders import actual_of, bulk, cases

BUILT_INS: dict[str, dict[str, Any]] = {
    "operation-accuracy": {},
    "target-block-precision": {},
    "content-quality": {},
    "operation-result": {"ignore_case": True},
    "anti-hallucination": {},
    "response-time": {"max_acceptable_ms": 3000},
}


@pytest.mark.parametrize("name", sorted(BUILT_INS))
@settings(max_examples=60)
@given(case=cases())
def test_every_score_is_in_unit_interval(name: str, case: Case) -> None:
    """Any valid case scores in [0, 1], or (response-time without durationMs) says why not."""
    scorer = get_scorer_class(name).from_params(BUILT_INS[name])
    result = scorer.evaluate(*bulk(case))
    if result.score is None:
        assert name == "response-time"
        assert actual_of(case).duration_ms is None
        assert result.error
    else:
        assert 0.0 <= result.score <= 1.0
        assert result.error is None


@pytest.mark.parametrize("name", sorted(BUILT_INS))
@settings(max_examples=30)
@given(case=cases())
def test_details_are_json_and_deterministic(name: str, case: Case) -> None:
    """Details are plain JSON and the same inputs give byte-identical details and diagnoses."""
    scorer = get_scorer_class(name).from_params(BUILT_INS[name])
    first = scorer.evaluate(*bulk(case))
    again = scorer.evaluate(*bulk(case))
    text = json.dumps(first.details, ensure_ascii=False)
    assert text == json.dumps(again.details, ensure_ascii=False)
    assert json.loads(text) == first.details
    lines = scorer.diagnose(first)
    assert lines == scorer.diagnose(again)
    assert all(isinstance(line, str) and line for line in lines)


@pytest.mark.parametrize("name", sorted(set(BUILT_INS) - {"response-time"}))
@settings(max_examples=40)
@given(case=cases())
def test_a_perfect_score_needs_no_diagnosis(name: str, case: Case) -> None:
    """At 1.0 a diagnosis flags no fault, only advice: strict patterns, extra operations."""
    scorer = get_scorer_class(name).from_params(BUILT_INS[name])
    result = scorer.evaluate(*bulk(case))
    if result.score == 1.0:
        for line in scorer.diagnose(result):
            assert line.startswith("too strict?") or ": unexpected; nothing asks for it" in line
