"""Bounded regex matching of content patterns."""

from __future__ import annotations

import pytest

from knowledgepulse.evals.models import ContentPatterns, Page
from knowledgepulse.evals.patterns import (
    PatternStatus,
    check_pattern,
    check_patterns,
    compile_pattern,
    is_anchored,
    patterns_by_page,
    preview,
)
from tests.evals.builders import page

PAGE = Page.model_validate(page("p1", b1="Add to Cart", b2="Your cart is empty"))


def _check(
    pattern: str, content: str = PAGE.content, *, ignore_case: bool = False
) -> PatternStatus:
    return check_pattern("p1", pattern, content, ignore_case=ignore_case).status


def test_pattern_is_searched_not_full_matched() -> None:
    """A pattern found anywhere in the content matches."""
    assert _check("Cart") is PatternStatus.MATCHED


def test_dot_matches_newline_so_a_pattern_spans_blocks() -> None:
    """'.' matches the newline joining two blocks."""
    assert _check("Cart.Your") is PatternStatus.MATCHED
    assert _check("Cart.*cart") is PatternStatus.MATCHED


def test_case_matters_unless_ignore_case() -> None:
    """Patterns are case-sensitive by default; ignore_case relaxes that."""
    assert _check("Cart.*Cart") is PatternStatus.NOT_FOUND
    assert _check("Cart.*Cart", ignore_case=True) is PatternStatus.MATCHED


def test_not_found_issue_names_page_pattern_and_content() -> None:
    """The issue follows the guide: Page 'X': Pattern 'Y' not found in content: 'Z'."""
    check = check_pattern("p1", "Basket", PAGE.content)
    assert check.issue == (
        "Page 'p1': Pattern 'Basket' not found in content: 'Add to Cart\\nYour cart is empty'"
    )


def test_long_content_is_cut_in_the_issue() -> None:
    """Content longer than 100 characters is cut and ends with '...'."""
    check = check_pattern("p1", "zzz", "x" * 500)
    assert check.issue is not None
    assert check.issue.endswith("'" + "x" * 100 + "...'")


def test_preview_keeps_short_content_and_escapes_newlines() -> None:
    """Short content is shown whole, one line."""
    assert preview("a\nb") == "a\\nb"
    assert preview("abc", limit=2) == "ab..."


def test_invalid_regex_counts_as_not_matched_and_says_why() -> None:
    """An invalid regex is an issue naming the regex error, not an exception."""
    check = check_pattern("p1", "(unclosed", PAGE.content)
    assert check.status is PatternStatus.INVALID
    assert check.issue is not None
    assert "not a valid regular expression" in check.issue
    assert "missing )" in check.issue


def test_pattern_for_missing_page_is_counted_and_not_matched() -> None:
    """A pattern for a page that does not exist is an issue that says so."""
    report = check_patterns({"nope": ["Cart"]}, [PAGE])
    assert (report.matched, report.total) == (0, 1)
    assert report.checks[0].status is PatternStatus.NO_PAGE
    assert report.to_details()["contentIssues"] == [
        "Page 'nope': Pattern 'Cart' not matched: there is no page 'nope'"
    ]


def test_catastrophic_backtracking_times_out_as_an_issue() -> None:
    """A pattern that backtracks exponentially stops at the timeout and is reported."""
    # The regex package optimises the textbook (a+)+$; (a|aa)+$ still explodes on it.
    check = check_pattern("p1", "(a|aa)+$", "a" * 40 + "b", timeout_ms=20)
    assert check.status is PatternStatus.TIMEOUT
    assert check.issue is not None
    assert "timed out after 20 ms" in check.issue
    assert "counted as not matched" in check.issue


def test_textbook_nested_quantifier_is_answered_without_timeout() -> None:
    """(a+)+$ on 'a'*40+'b' is answered (not found), not timed out, by the regex engine."""
    assert _check("(a+)+$", "a" * 40 + "b") is PatternStatus.NOT_FOUND


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [
        ("^完全に一致するテキスト$", True),
        (r"\A.*\Z", True),
        ("(?i)^cart$", True),
        ("^Cart", False),
        ("Cart$", False),
        (r"^price \$", False),
        ("要約|まとめ|サマリー", False),
    ],
)
def test_anchored_whole_content_patterns_are_detected(pattern: str, anchored: bool) -> None:
    """^...$ (or \\A...\\Z) is anchored; a single anchor or an escaped $ is not."""
    assert is_anchored(pattern) is anchored


def test_anchored_pattern_gets_a_warning_with_the_guides_advice() -> None:
    """The warning suggests alternatives, partial and repeated matches instead."""
    report = check_patterns(["^Add to Cart$"], [PAGE])
    (warning,) = report.to_details()["patternWarnings"]
    assert warning.startswith("Page 'p1': Pattern '^Add to Cart$' is anchored")
    assert "要約|まとめ|サマリー" in warning
    assert "Cart.*Cart.*Cart" in warning


def test_japanese_alternatives_match() -> None:
    """The guide's alternatives pattern finds any one of its words."""
    content = "第1章\nまとめ: カートをバスケットに変更"
    assert _check("要約|まとめ|サマリー", content) is PatternStatus.MATCHED
    assert _check(".*バスケット.*", content) is PatternStatus.MATCHED


def test_compiled_patterns_are_cached() -> None:
    """The same pattern and flags compile once."""
    assert compile_pattern("Cart+", False) is compile_pattern("Cart+", False)
    assert compile_pattern("Cart+", False) is not compile_pattern("Cart+", True)


def test_list_patterns_apply_to_the_only_page() -> None:
    """A plain list is for the one page of a single-page case."""
    assert patterns_by_page(["a"], [PAGE]) == {"p1": ["a"]}


def test_list_patterns_with_several_pages_are_rejected() -> None:
    """A plain list cannot say which of several pages it is for."""
    other = Page.model_validate(page("p2"))
    with pytest.raises(ValueError, match=r"plain list but the case has 2 pages"):
        patterns_by_page(["a"], [PAGE, other])


def test_no_patterns_score_one() -> None:
    """No patterns (absent, empty list, empty mapping) score 1.0 with nothing counted."""
    nothing: list[ContentPatterns | None] = [None, [], {}]
    for patterns in nothing:
        report = check_patterns(patterns, [PAGE])
        assert (report.score, report.total) == (1.0, 0)


def test_report_score_is_matched_over_total() -> None:
    """The report's score is the share of patterns found."""
    report = check_patterns(["Cart", "cart", "Basket", "("], [PAGE])
    assert report.score == 0.5
