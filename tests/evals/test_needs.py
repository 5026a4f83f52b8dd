"""Any kind of case: the bulk-edit form is checked only for the scorers that read it."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from knowledgepulse.evals.cases import LoadedCase, MalformedCase, load_cases
from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.scorer import CasePart, Scorer, ScoreResult, register_scorer
from knowledgepulse.evals.suite import Suite
from tests.evals.builders import make_suite, op, page

BULK = {
    "pages": [page("p1", b1="Cart")],
    "actual": {"operations": [op("update", "b1", content="Basket")]},
    "expected": {"operations": [op("update", "b1")], "contentPatterns": ["Basket"]},
}


@pytest.fixture
def json_scorers(isolated_registry: None) -> None:
    """``exact-answer`` reads any JSON; ``expected-ops`` reads only ``expected`` in bulk form."""

    @register_scorer("exact-answer")
    class ExactAnswer(Scorer):
        reads: ClassVar[frozenset[CasePart]] = frozenset()

        def evaluate(self, actual: Any, expected: Any, pages: Sequence[Page]) -> ScoreResult:
            return ScoreResult(1.0 if actual == expected else 0.0, {"actual": actual})

    @register_scorer("expected-ops")
    class ExpectedOps(Scorer):
        reads: ClassVar[frozenset[CasePart]] = frozenset({"expected"})

        def evaluate(self, actual: Any, expected: Any, pages: Sequence[Page]) -> ScoreResult:
            assert isinstance(expected, ExpectedOutput)
            assert not isinstance(actual, ActualOutput)
            return ScoreResult(1.0, {"expected": len(expected.operations)})


def write_jsonl(path: Path, *cases: dict[str, Any]) -> str:
    path.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases))
    return str(path)


def problems(suite: Suite, path: str) -> list[str]:
    [result] = run_suite(suite, load_cases(path)).cases
    return [str(problem) for problem in result.problems]


@pytest.mark.usefixtures("json_scorers")
@pytest.mark.parametrize("answer", ["42", 42, [1, "two"], {"any": ["thing"]}, None, True])
def test_a_json_scorer_takes_any_output_and_needs_no_pages(answer: Any) -> None:
    """Text, number, list, object, null: a scorer reading no bulk-edit part scores them all."""
    suite = make_suite({"type": "exact-answer"})
    [result] = run_suite(suite, [_case(actual=answer, expected=answer)]).cases
    assert result.passed
    assert result.outcomes[0].result.details == {"actual": answer}


@pytest.mark.usefixtures("json_scorers")
def test_a_mixed_suite_says_which_case_lacks_what_and_for_whom(tmp_path: Path) -> None:
    """FILE:LINE: PATH: message (needed by ...): only the scorers that read the part are named."""
    path = write_jsonl(
        tmp_path / "cases.jsonl",
        {"id": "fine", **BULK},
        {"id": "text", "pages": BULK["pages"], "actual": "Basket", "expected": BULK["expected"]},
    )
    suite = make_suite({"type": "exact-answer"}, {"type": "operation-accuracy"})
    fine, text = run_suite(suite, load_cases(path)).cases
    assert not fine.malformed
    assert [str(p) for p in text.problems] == [
        f'{path}:2: actual: got "Basket"; expected a JSON object (needed by operation-accuracy)'
    ]


def test_a_scorer_that_declares_nothing_reads_any_json(
    tmp_path: Path, isolated_registry: None
) -> None:
    """No ``reads``: ``{"text": ...}`` against ``{"keywords": [...]}`` is scored, not malformed."""

    @register_scorer("keywords-found")
    class KeywordsFound(Scorer):
        def evaluate(self, actual: Any, expected: Any, pages: Sequence[Page]) -> ScoreResult:
            found = [k for k in expected["keywords"] if k in actual["text"]]
            return ScoreResult(len(found) / len(expected["keywords"]), {"found": found})

    path = write_jsonl(
        tmp_path / "cases.jsonl",
        {"id": "c", "actual": {"text": "two-year warranty"}, "expected": {"keywords": ["two"]}},
    )
    [result] = run_suite(make_suite({"type": "keywords-found"}), load_cases(path)).cases
    assert not result.problems
    assert result.passed
    assert result.outcomes[0].result.details == {"found": ["two"]}


@pytest.mark.usefixtures("json_scorers")
def test_a_scorer_reading_only_expected_in_bulk_form_leaves_actual_alone(tmp_path: Path) -> None:
    """reads={'expected'}: the expectation is checked (and typed), the output is any JSON."""
    suite = make_suite({"type": "expected-ops"})
    good = _case(actual="anything", expected={"operations": [op("delete", "b1")]})
    assert run_suite(suite, [good]).cases[0].outcomes[0].result.details == {"expected": 1}
    path = write_jsonl(
        tmp_path / "c.jsonl", {"id": "c", "actual": 1, "expected": {"operations": "all"}}
    )
    assert problems(suite, path) == [
        f'{path}:1: expected.operations: got "all"; expected a valid list'
    ]


def test_a_bulk_only_suite_keeps_its_messages_without_a_needed_by(tmp_path: Path) -> None:
    """When every scorer reads the part, naming them all would add nothing."""
    path = write_jsonl(tmp_path / "c.jsonl", {"id": "c", **BULK, "actual": "text"})
    assert problems(make_suite({"type": "operation-accuracy"}), path) == [
        f'{path}:1: actual: got "text"; expected a JSON object'
    ]


def test_yaml_needs_problems_point_at_their_own_line(tmp_path: Path) -> None:
    """A problem found against the suite names the line of the bad key, as load problems do."""
    path = tmp_path / "cases.yaml"
    path.write_text(
        textwrap.dedent(
            """
            - id: c1
              pages:
                - id: p1
                  blocks: [{id: b1, type: p, content: Cart}]
              actual:
                operations:
                  - {type: insert, targetBlockId: b1, position: inside}
              expected: {}
            """
        ).lstrip()
    )
    assert problems(make_suite({"type": "anti-hallucination"}), str(path)) == [
        f"{path}:7: actual.operations[0].position: got \"inside\"; expected 'before' or 'after'"
    ]


@pytest.mark.usefixtures("json_scorers")
def test_scoring_recorded_outputs_needs_an_actual_in_every_case(tmp_path: Path) -> None:
    """A case without actual has nothing to score (null is an output); the message says so."""
    path = write_jsonl(tmp_path / "c.jsonl", {"id": "c", "expected": 1})
    [message] = problems(make_suite({"type": "exact-answer"}), path)
    assert message.startswith(f"{path}:1: actual: required field is missing; record")
    assert message.endswith("or give a task that produces it (kp eval --task)")
    assert run_suite(make_suite({"type": "exact-answer"}), [_case(actual=None)]).passed


def test_a_case_without_actual_is_told_only_that_for_a_scorer_of_texts(tmp_path: Path) -> None:
    """content-quality needs pages only for edit operations: no output, no pages demanded."""
    path = write_jsonl(
        tmp_path / "c.jsonl", {"id": "c", "input": "x", "expected": {"contentPatterns": ["y"]}}
    )
    [message] = problems(make_suite({"type": "content-quality"}), path)
    assert message.startswith(f"{path}:1: actual: required field is missing; record")
    found = problems(make_suite({"type": "content-quality"}, {"type": "operation-accuracy"}), path)
    assert found[1] == f"{path}:1: pages: required field is missing (needed by operation-accuracy)"


def test_the_fit_check_also_guards_evaluate_case() -> None:
    """evaluate_case (the pytest plugin's path) reports a case the suite cannot read."""
    result = evaluate_case(make_suite({"type": "operation-accuracy"}), _case(actual="x"))
    assert result.malformed
    assert result.outcomes == ()


# --- content-quality on a text -----------------------------------------------------------------


def test_content_quality_searches_a_text_output_as_it_is() -> None:
    """A string output: the expected patterns are searched in it; no pages needed."""
    suite = make_suite({"type": "content-quality", "params": {"ignore_case": True}})
    case = _case(actual="Refunds take 10 days.", expected={"contentPatterns": ["refund", "30"]})
    [result] = run_suite(suite, [case]).cases
    [outcome] = result.outcomes
    assert outcome.score == 0.5
    assert outcome.result.details["contentIssues"] == [
        "Output: Pattern '30' not found in content: 'Refunds take 10 days.'"
    ]
    assert "each is searched in the output text" in outcome.diagnosis[1]


def test_content_quality_ignores_the_keys_other_scorers_read() -> None:
    """In a text case, expected may hold more than the patterns."""
    suite = make_suite({"type": "content-quality"})
    case = _case(actual="a b", expected={"contentPatterns": ["a"], "maxWords": 3})
    assert run_suite(suite, [case]).passed


@pytest.mark.parametrize(
    "expected", [None, {"contentPatterns": {"p1": ["a"]}}, {"patterns": ["a"]}, "a"]
)
def test_content_quality_on_a_text_without_a_pattern_list_cannot_score(expected: Any) -> None:
    """No list of patterns for a text: an error result saying what to give, never a 1.0."""
    [result] = run_suite(make_suite({"type": "content-quality"}), [_case("x", expected)]).cases
    [outcome] = result.outcomes
    assert outcome.score is None
    assert "give expected: {contentPatterns: [regex, ...]}" in str(outcome.error)


@pytest.mark.parametrize(
    ("expected", "reason"),
    [
        (None, "expected is null or missing"),
        ({}, "expected has no contentPatterns;"),
        ({"contentPattern": ["a"]}, "no contentPatterns (it has 'contentPattern': misspelt?)"),
        ({"contentPatterns": {"p1": ["a"]}}, "contentPatterns is an object (patterns per page"),
        ({"contentPatterns": ["a", 5]}, "contentPatterns holds an item that is not a text"),
        ({"contentPatterns": "a"}, 'contentPatterns is "a", not a list'),
        ("a", 'expected is "a", not an object with contentPatterns'),
    ],
)
def test_content_quality_on_a_text_says_what_expected_holds_instead(
    expected: Any, reason: str
) -> None:
    """The error result names what is there in place of a pattern list (a misspelt key too)."""
    [result] = run_suite(make_suite({"type": "content-quality"}), [_case("x", expected)]).cases
    [outcome] = result.outcomes
    assert "the output is a text, and " in str(outcome.error)
    assert reason in str(outcome.error)


def test_an_invalid_pattern_in_any_expectation_is_malformed_when_read(tmp_path: Path) -> None:
    """Patterns are compiled when the case is read, whatever the output's kind."""
    path = write_jsonl(
        tmp_path / "c.jsonl", {"id": "c", "actual": "x", "expected": {"contentPatterns": ["("]}}
    )
    [malformed] = load_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert malformed.problems[0].path == "expected.contentPatterns[0]"


@pytest.mark.parametrize(
    ("answer", "told"),
    [
        (
            {"answer": "30 days", "n": 1},
            "an object with keys answer, n (its text is under 'answer'?)",
        ),
        (42, "a number"),
        (None, "null"),
    ],
)
def test_content_quality_says_which_outputs_it_reads_and_how_to_score_this_one(
    tmp_path: Path, answer: Any, told: str
) -> None:
    """An agent's object answer: one problem naming its text key and the ways out, no 'remove'."""
    case = {"id": "c", "actual": answer, "expected": {"contentPatterns": [], "tools": ["x"]}}
    path = write_jsonl(tmp_path / "c.jsonl", case)
    [problem] = problems(make_suite({"type": "content-quality"}), path)
    assert problem == (
        f"{path}:1: actual: content-quality reads a text output, or bulk-edit operations "
        f"{{operations, durationMs}} on pages; this output is {told}: make the task return the "
        "text, or score this output with a scorer of your own (kp eval --plugin)"
    )


def test_a_bulk_edit_scorer_beside_content_quality_still_says_what_it_needs(tmp_path: Path) -> None:
    """Only the scorer of texts gets the one problem; operation-accuracy's are as before."""
    path = write_jsonl(tmp_path / "c.jsonl", {"id": "c", "actual": {"answer": "x"}, "expected": {}})
    suite = make_suite({"type": "content-quality"}, {"type": "operation-accuracy"})
    found = problems(suite, path)
    assert found[0].startswith(f"{path}:1: actual: content-quality reads a text output")
    assert f"{path}:1: pages: required field is missing (needed by operation-accuracy)" in found


def test_content_quality_on_bulk_edit_output_still_needs_pages(tmp_path: Path) -> None:
    """An object output is read as operations: then the pages are needed, and said so."""
    path = write_jsonl(
        tmp_path / "c.jsonl", {"id": "c", "actual": {"operations": []}, "expected": {}}
    )
    assert problems(make_suite({"type": "content-quality"}), path) == [
        f"{path}:1: pages: required field is missing"
    ]


def test_response_time_reads_any_output_with_a_duration() -> None:
    """durationMs in an object output is enough; a text output has none to read."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 100}})
    timed, text = run_suite(
        suite, [_case(actual={"answer": 1, "durationMs": 50}), _case(actual="x", case_id="t")]
    ).cases
    assert timed.passed
    assert text.outcomes[0].error == (
        "the case has no actual.durationMs; record how long the workflow took in ms, or leave "
        "response-time out of the suite"
    )
    [bad] = run_suite(suite, [_case(actual={"durationMs": "fast"})]).cases
    assert str(bad.outcomes[0].error).startswith("actual.durationMs is 'fast', not a number")


def test_a_bad_duration_names_the_scorers_that_judge_it_as_the_suite_names_them(
    tmp_path: Path,
) -> None:
    """A bad actual.durationMs is needed by the response-time entries, not operation-accuracy."""
    timers = [
        {"type": "response-time", "name": name, "params": {"max_acceptable_ms": limit}}
        for name, limit in (("fast", 100), ("slow", 5000))
    ]
    suite = make_suite({"type": "operation-accuracy"}, *timers)
    operations = [op("update", "b1", content="Basket")]
    bad = {**BULK, "id": "c", "actual": {"operations": operations, "durationMs": "soon"}}
    path = write_jsonl(tmp_path / "c.jsonl", bad)
    assert problems(suite, path) == [
        f'{path}:1: actual.durationMs: got "soon"; expected a valid number (needed by fast, slow)'
    ]
    [missing] = run_suite(suite, [Case.model_validate({**BULK, "id": "m"})]).cases
    assert [outcome.error for outcome in missing.outcomes[1:]] == [
        f"the case has no actual.durationMs; record how long the workflow took in ms, or leave "
        f"{name} out of the suite"
        for name in ("fast", "slow")
    ]


def test_loaded_text_cases_are_valid_without_a_suite(tmp_path: Path) -> None:
    """Reading alone accepts any JSON output: the suite decides what it needs."""
    path = write_jsonl(tmp_path / "c.jsonl", {"id": "c", "input": "q", "actual": ["a"]})
    [loaded] = load_cases(path)
    assert isinstance(loaded, LoadedCase)
    assert loaded.case.actual == ["a"]


def _case(actual: Any = "x", expected: Any = None, *, case_id: str = "c") -> Case:
    return Case.model_validate({"id": case_id, "actual": actual, "expected": expected})
