"""content-quality: expected patterns searched in the pages after the actual operations."""

from __future__ import annotations

import json

import pytest

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.scorer import get_scorer_class
from tests.evals.builders import diagnose, evaluate, make_case, op, page

PAGES = [page("p1", b1="Add to Cart", b2="Your Cart is empty")]


def test_default_threshold_is_0_6() -> None:
    """The guide's threshold: 60%."""
    assert get_scorer_class("content-quality").default_threshold == 0.6


def test_patterns_are_checked_after_the_actual_operations(cart_case: Case) -> None:
    """'Basket.*Basket' is only in the edited pages, and it spans two blocks."""
    result = evaluate("content-quality", cart_case)
    assert result.score == 1.0
    assert result.details == {
        "matchedPatterns": 2,
        "totalPatterns": 2,
        "contentIssues": [],
        "patternWarnings": [],
    }


def test_score_is_matched_over_total() -> None:
    """Three of five patterns found: 0.6."""
    case = make_case(PAGES, patterns=["Cart", "Add", "empty", "Basket", "Checkout"])
    assert evaluate("content-quality", case).score == 0.6


def test_unmatched_pattern_issue_shows_page_pattern_and_content() -> None:
    """The issue is the guide's line, with the page content after the operations."""
    case = make_case(PAGES, actual=[op("delete", "b2")], patterns=["empty"])
    result = evaluate("content-quality", case)
    assert result.details["contentIssues"] == [
        "Page 'p1': Pattern 'empty' not found in content: 'Add to Cart'"
    ]


def test_ignore_case_is_a_parameter() -> None:
    """'cart' is found only with ignore_case."""
    case = make_case(PAGES, patterns=["add to cart"])
    assert evaluate("content-quality", case).score == 0.0
    assert evaluate("content-quality", case, ignore_case=True).score == 1.0


def test_patterns_per_page_in_a_multi_page_case() -> None:
    """Each page's patterns are searched in that page only; a missing page counts as unmatched."""
    pages = [page("p1", b1="Cart"), page("p2", b1="Basket")]
    case = make_case(pages, patterns={"p1": ["Cart", "Basket"], "p2": ["Basket"], "p3": ["x"]})
    result = evaluate("content-quality", case)
    assert (result.details["matchedPatterns"], result.details["totalPatterns"]) == (2, 4)
    assert result.details["contentIssues"][1] == (
        "Page 'p3': Pattern 'x' not matched: there is no page 'p3'"
    )


def test_invalid_regex_counts_and_is_not_matched() -> None:
    """An invalid regex lowers the score and says why."""
    result = evaluate("content-quality", make_case(PAGES, patterns=["Cart", "[unclosed"]))
    assert result.score == 0.5
    assert "not a valid regular expression" in result.details["contentIssues"][0]


def test_timeout_is_an_issue_on_that_pattern() -> None:
    """A catastrophic pattern times out (timeout_ms) as unmatched; the other patterns still run."""
    pages = [page("p1", b1="a" * 40 + "b")]
    case = make_case(pages, patterns=["(a|aa)+$", "b"])
    result = evaluate("content-quality", case, timeout_ms=20)
    assert result.score == 0.5
    assert "timed out after 20 ms" in result.details["contentIssues"][0]


def test_anchored_pattern_is_warned_even_when_it_matches() -> None:
    """'^...$' gets a warning in patternWarnings whatever the outcome."""
    case = make_case([page("p1", b1="Checkout")], patterns=["^Checkout$"])
    result = evaluate("content-quality", case)
    assert result.score == 1.0
    assert len(result.details["patternWarnings"]) == 1


def test_no_patterns_scores_one() -> None:
    """Nothing asked for: 1.0."""
    assert evaluate("content-quality", make_case(PAGES)).score == 1.0


def test_list_patterns_with_several_pages_is_an_error_result() -> None:
    """Called directly with a list for several pages, the scorer says it cannot score."""
    scorer = get_scorer_class("content-quality").from_params({})
    pages = [Page.model_validate(page("p1")), Page.model_validate(page("p2"))]
    expected = ExpectedOutput.model_validate({"contentPatterns": ["x"]})
    result = scorer.evaluate(ActualOutput(), expected, pages)
    assert result.score is None
    assert result.error is not None
    assert "{pageId: [patterns]}" in result.error
    assert scorer.diagnose(result) == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ignore_case": "yes"}, 'ignore_case: got "yes"; expected a valid boolean'),
        ({"timeout_ms": 0}, "timeout_ms: got 0; expected greater than 0"),
        ({"ignorecase": True}, "ignorecase: unknown field"),
    ],
)
def test_bad_parameters_are_rejected(params: dict[str, object], message: str) -> None:
    """Parameters are validated: wrong types, out of range and unknown names."""
    with pytest.raises(ScorerParameterError, match="content-quality: ") as raised:
        get_scorer_class("content-quality").from_params(params)
    assert message in str(raised.value)


def test_japanese_patterns_and_content() -> None:
    """The guide's Japanese patterns work on Japanese content."""
    pages = [page("p1", b1="第1章 カート", b2="本文")]
    case = make_case(
        pages,
        actual=[
            op("insert", "b1", content="まとめ: バスケット"),
            op("update", "b1", content="第1章 バスケット"),
        ],
        patterns=["要約|まとめ|サマリー", "バスケット.*バスケット", "カート"],
    )
    result = evaluate("content-quality", case)
    assert result.details["matchedPatterns"] == 2
    assert result.details["contentIssues"] == [
        "Page 'p1': Pattern 'カート' not found in content: "
        "'第1章 バスケット\\nまとめ: バスケット\\n本文'"
    ]
    assert json.loads(json.dumps(result.details, ensure_ascii=False)) == result.details


def test_diagnosis_gives_issues_and_strictness_warnings() -> None:
    """The diagnosis lists each issue and flags anchored patterns as possibly too strict."""
    case = make_case(PAGES, patterns=["^Add to Cart$", "Cart"])
    lines = diagnose("content-quality", case)
    assert lines[0].startswith("1 of 2 content patterns matched")
    assert lines[1].startswith("Page 'p1': Pattern '^Add to Cart$' not found in content")
    assert lines[2].startswith("too strict? Page 'p1': Pattern '^Add to Cart$' is anchored")


def test_diagnosis_is_empty_when_everything_matched(cart_case: Case) -> None:
    """Nothing to fix, nothing said."""
    assert diagnose("content-quality", cart_case) == []
