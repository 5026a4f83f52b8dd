"""operation-result: applicationSuccessRate * 0.6 + contentScore * 0.4."""

from __future__ import annotations

import math

import pytest

from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.scorer import get_scorer_class
from knowledgepulse.evals.scorers.content import (
    application_success_rate,
    operation_result_score,
)
from tests.evals.builders import diagnose, evaluate, make_case, op, page

PAGES = [page("p1", b1="Add to Cart", b2="Your Cart is empty")]


def test_default_threshold_is_0_8() -> None:
    """The guide's threshold: 80%."""
    assert get_scorer_class("operation-result").default_threshold == 0.8


def test_all_applied_and_all_patterns_found_scores_one(cart_case: Case) -> None:
    """Everything applies and every pattern is found: 1.0."""
    result = evaluate("operation-result", cart_case)
    assert result.score == 1.0
    assert result.details["applicationSuccessRate"] == 1.0
    assert result.details["contentScore"] == 1.0


def test_fourteen_of_fifteen_applied_and_three_of_five_patterns() -> None:
    """The spec's tolerance example: 14/15 * 0.6 + 0.6 * 0.4 is 0.8 up to rounding."""
    updates = [op("update", "b1", content=f"Basket {n}") for n in range(14)]
    case = make_case(
        PAGES,
        actual=[*updates, op("update", "b9", content="x")],
        patterns=["Basket 13", "empty", "Cart is", "Add", "nothing"],
    )
    result = evaluate("operation-result", case)
    assert result.details["applicationSuccessRate"] == 14 / 15
    assert result.details["contentScore"] == 0.6
    assert result.score is not None
    assert math.isclose(result.score, 0.8, rel_tol=0, abs_tol=1e-9)


def test_formula_weights_application_and_content() -> None:
    """The pure formula: 0.6 for applying, 0.4 for content."""
    assert operation_result_score(1.0, 0.0) == 0.6
    assert operation_result_score(0.0, 1.0) == 0.4
    assert operation_result_score(0.5, 0.5) == 0.5


@pytest.mark.parametrize(
    ("applicable", "total", "expected", "rate"),
    [(0, 0, 0, 1.0), (0, 0, 3, 0.0), (2, 4, 0, 0.5), (3, 3, 1, 1.0)],
)
def test_application_success_rate(applicable: int, total: int, expected: int, rate: float) -> None:
    """applicable / total; with no actual operations, 1.0 only if none were expected."""
    assert application_success_rate(applicable, total, expected) == rate


def test_no_actual_operations_but_some_expected() -> None:
    """The model did nothing although edits were expected: rate 0, content still counts."""
    case = make_case(PAGES, expected=[op("delete", "b1")], patterns=["Cart"])
    result = evaluate("operation-result", case)
    assert result.details["applicationSuccessRate"] == 0.0
    assert result.score == 0.4
    assert diagnose("operation-result", case) == [
        "the model made no operations, but some were expected"
    ]


def test_no_operations_at_all_scores_on_content_and_full_application() -> None:
    """Nothing expected and nothing done: rate 1.0."""
    result = evaluate("operation-result", make_case(PAGES, patterns=["Basket"]))
    assert result.score == 0.6


def test_inapplicable_operations_are_listed_with_reasons() -> None:
    """Each skipped operation is named with its index, reason and explanation."""
    case = make_case(
        PAGES,
        actual=[
            op("delete", "b1"),
            op("update", "b1", content="x"),
            op("rewrite", "b2", content="y"),
            op("insert", "b2"),
        ],
    )
    result = evaluate("operation-result", case)
    assert result.details["applicableOperations"] == 1
    assert result.details["totalOperations"] == 4
    assert [(i["index"], i["reason"]) for i in result.details["inapplicableOperations"]] == [
        (1, "target deleted by an earlier operation"),
        (2, "unknown type"),
        (3, "insert or update without content"),
    ]
    assert result.score == pytest.approx(0.25 * 0.6 + 0.4)


def test_has_its_own_ignore_case() -> None:
    """ignore_case is a parameter of operation-result itself."""
    case = make_case(PAGES, patterns=["add to cart"])
    assert evaluate("operation-result", case).details["contentScore"] == 0.0
    assert evaluate("operation-result", case, ignore_case=True).details["contentScore"] == 1.0


def test_list_patterns_with_several_pages_is_an_error_result() -> None:
    """A plain pattern list with several pages cannot be scored: an error result, not a number."""
    scorer = get_scorer_class("operation-result").from_params({})
    pages = [Page.model_validate(page("p1")), Page.model_validate(page("p2"))]
    expected = ExpectedOutput.model_validate({"contentPatterns": ["x"]})
    result = scorer.evaluate(ActualOutput(), expected, pages)
    assert result.score is None
    assert result.error is not None


def test_diagnosis_names_skipped_operations_then_content() -> None:
    """Skipped operations with why, then the content part."""
    case = make_case(
        PAGES,
        actual=[op("update", "b7", content="x"), op("update", "b1", content="Add to Basket")],
        patterns=["Basket", "Checkout"],
    )
    assert diagnose("operation-result", case) == [
        "1 of 2 actual operations could be applied (applicationSuccessRate 0.5, weight 0.6)",
        "actual.operations[0] (update block 'b7') not applicable: target does not resolve: "
        "block 'b7' is not on page 'p1'",
        "contentScore 0.5 (weight 0.4):",
        "1 of 2 content patterns matched (each is searched in its page's content after the "
        "actual operations, blocks joined with newlines)",
        "Page 'p1': Pattern 'Checkout' not found in content: 'Add to Basket\\nYour Cart is empty'",
    ]


def test_diagnosis_of_operations_that_all_fail_to_apply_does_not_say_none_were_made() -> None:
    """A rate of 0 from skipped operations names them; 'made no operations' is for none made."""
    case = make_case(PAGES, actual=[op("update", "b7", content="x")], patterns=["Cart"])
    assert diagnose("operation-result", case) == [
        "0 of 1 actual operations could be applied (applicationSuccessRate 0, weight 0.6)",
        "actual.operations[0] (update block 'b7') not applicable: target does not resolve: "
        "block 'b7' is not on page 'p1'",
    ]
