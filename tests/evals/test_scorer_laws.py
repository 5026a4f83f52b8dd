"""Laws every built-in scorer obeys on any valid case."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from knowledgepulse.errors import CaseValidationError
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.scorer import CaseContext, ScorerError, get_scorer_class
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
    """At 1.0 a diagnosis flags no fault, only advice: strict patterns, extra operations (which
    nothing asks for, or of a type no scorer knows: a misspelt ``replace``)."""
    scorer = get_scorer_class(name).from_params(BUILT_INS[name])
    result = scorer.evaluate(*bulk(case))
    if result.score == 1.0:
        for line in scorer.diagnose(result):
            assert line.startswith("too strict?") or ": unexpected; " in line


@pytest.mark.parametrize("name", sorted(BUILT_INS))
@settings(max_examples=40)
@given(case=cases())
def test_the_guides_interface_reads_json_as_the_runner_does(name: str, case: Case) -> None:
    """score/details on a case file's JSON give what the runner gives on the case."""
    scorer = get_scorer_class(name).from_params(BUILT_INS[name])
    data = case.model_dump(mode="json", by_alias=True, exclude_unset=True)
    result = scorer.score_case(CaseContext.of(case))
    parts = (data["actual"], data["expected"], data["pages"])
    assert scorer.details(*parts) == result.details
    if result.score is None:
        with pytest.raises(ScorerError):
            scorer.score(*parts)
    else:
        assert scorer.score(*parts) == result.score == scorer.score(*bulk(case))


def test_the_guides_interface_scores_a_text_output() -> None:
    """content-quality's score() on a text and its patterns, as a text case is scored."""
    scorer = get_scorer_class("content-quality").from_params({})
    assert scorer.score("a Basket", {"contentPatterns": ["Basket", "Cart"]}) == 0.5


def test_the_guides_interface_names_what_it_cannot_read() -> None:
    """JSON that is no bulk-edit output is a CaseValidationError at its path, no AttributeError."""
    scorer = get_scorer_class("operation-accuracy").from_params({})
    with pytest.raises(CaseValidationError) as raised:
        scorer.score({"operations": [{"type": 1}]}, {}, [{"id": "p"}])
    assert [(p.path, p.message) for p in raised.value.problems] == [
        ("actual.operations[0].type", "got 1; expected a valid string"),
        ("pages[0].blocks", "required field is missing"),
    ]
