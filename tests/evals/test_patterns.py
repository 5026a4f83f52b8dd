"""Bounded regex matching of content patterns."""

from __future__ import annotations

import time
import unicodedata
from typing import Any, Literal

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.evals import patterns as patterns_module
from knowledgepulse.evals.models import ContentPatterns, Page
from knowledgepulse.evals.patterns import (
    MAX_PATTERN_LENGTH,
    PatternCheck,
    PatternParams,
    PatternStatus,
    check_patterns,
    compile_pattern,
    pattern_cost,
    pattern_problem,
    preview,
)
from tests.evals.builders import page
from tests.text_laws import CLUSTERED, assert_grapheme_prefix

PAGE = Page.model_validate(page("p1", b1="Add to Cart", b2="Your cart is empty"))


def check_pattern(pattern: str, content: str = PAGE.content, **options: Any) -> PatternCheck:
    """One pattern searched in a page 'p1' holding ``content``."""
    one = Page.model_validate(page("p1", b1=content))
    return check_patterns([pattern], [one], **options).checks[0]


def _check(
    pattern: str, content: str = PAGE.content, *, ignore_case: bool = False
) -> PatternStatus:
    return check_pattern(pattern, content, ignore_case=ignore_case).status


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


@pytest.mark.parametrize(
    ("pattern", "content"), [("STRASSE", "Straße"), ("straße", "STRASSE"), ("ﬁle", "FILE")]
)
def test_ignore_case_folds_fully(pattern: str, content: str) -> None:
    """A letter whose other case is two letters (ß and SS, the ligature ﬁ) matches them."""
    assert _check(pattern, content) is PatternStatus.NOT_FOUND
    assert _check(pattern, content, ignore_case=True) is PatternStatus.MATCHED


def test_not_found_issue_names_page_pattern_and_content() -> None:
    """The issue follows the guide: Page 'X': Pattern 'Y' not found in content: 'Z'."""
    check = check_pattern("Basket", PAGE.content)
    assert check.issue == (
        "Page 'p1': Pattern 'Basket' not found in content: 'Add to Cart\\nYour cart is empty'"
    )


def test_long_content_is_cut_in_the_issue() -> None:
    """Content longer than 100 characters is cut and ends with '...'."""
    check = check_pattern("zzz", "x" * 500)
    assert check.issue is not None
    assert check.issue.endswith("'" + "x" * 100 + "...'")


def test_preview_keeps_short_content_and_escapes_newlines() -> None:
    """Short content is shown whole, one line."""
    assert preview("a\nb") == "a\\nb"
    assert preview("abc", limit=2) == "ab..."


def test_invalid_regex_counts_as_not_matched_and_says_why() -> None:
    """An invalid regex is an issue naming the regex error, not an exception."""
    check = check_pattern("(unclosed", PAGE.content)
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
    check = check_pattern("(a|aa)+$", "a" * 40 + "b", timeout_ms=20)
    assert check.status is PatternStatus.TIMEOUT
    assert check.issue is not None
    assert "timed out after 20 ms" in check.issue
    assert "counted as not matched" in check.issue


def test_a_cases_patterns_share_one_time_budget() -> None:
    """24 catastrophic patterns cost one case budget, not 24 timeouts; the rest are not searched.

    Without the budget the searches alone take 24 x 500 ms = 12 s; the bound is half that, in
    CPU time: the regex package's timeout counts CPU time, so on a loaded machine one 500 ms
    search took 5 s of wall clock (and a wall-clock bound failed).
    """
    slow = [f"(a|aa)+${'' if n == 0 else '|z' * n}" for n in range(24)]
    pages = [Page.model_validate(page("p1", b1="a" * 40 + "b"))]
    started = time.process_time()
    report = check_patterns({"p1": slow}, pages, timeout_ms=500, case_timeout_ms=600)
    assert time.process_time() - started < 6
    statuses = [check.status for check in report.checks]
    assert PatternStatus.TIMEOUT in statuses
    assert statuses.count(PatternStatus.NOT_SEARCHED) >= 20
    (unsearched, *_) = [c for c in report.checks if c.status is PatternStatus.NOT_SEARCHED]
    assert unsearched.issue is not None
    assert "used up their 600 ms (case_timeout_ms)" in unsearched.issue
    assert report.matched == 0


def test_the_case_budget_defaults_to_ten_seconds_or_one_patterns_timeout() -> None:
    """Unset, a case's patterns share 10 s, or timeout_ms when that is larger; never less."""
    assert PatternParams().case_timeout_ms == 10_000
    assert PatternParams(timeout_ms=60_000).case_timeout_ms == 60_000
    assert PatternParams(case_timeout_ms=2_000).case_timeout_ms == 2_000
    with pytest.raises(ValueError, match="case_timeout_ms"):
        PatternParams(timeout_ms=5_000, case_timeout_ms=1_000)
    with pytest.raises(ValueError, match="at most 60000 ms"):
        PatternParams(case_timeout_ms=60_001)


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
    (check,) = check_patterns([pattern], [PAGE]).checks
    assert (check.warning is not None) is anchored


def test_anchored_pattern_gets_a_warning_with_the_guides_advice() -> None:
    """The warning suggests alternatives, partial and repeated matches instead."""
    report = check_patterns(["^Add to Cart$"], [PAGE])
    (warning,) = report.to_details()["patternWarnings"]
    assert warning.startswith("Page 'p1': Pattern '^Add to Cart$' is anchored")
    assert "要約|まとめ|サマリー" in warning
    assert "Cart.*Cart.*Cart" in warning


def test_an_anchored_pattern_on_a_text_output_is_not_told_about_blocks() -> None:
    """A text output has no blocks: the warning gives the reason that holds for a text."""
    report = check_patterns(["^positive$"], [PAGE], subject="Output")
    (warning,) = report.to_details()["patternWarnings"]
    assert warning.startswith("Output: Pattern '^positive$' is anchored")
    assert "block" not in warning
    assert "any text around the match" in warning


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
    assert [c.page_id for c in check_patterns(["a", "b"], [PAGE]).checks] == ["p1", "p1"]


def test_list_patterns_with_several_pages_are_rejected() -> None:
    """A plain list cannot say which of several pages it is for."""
    other = Page.model_validate(page("p2"))
    with pytest.raises(ValueError, match=r"plain list but the case has 2 pages"):
        check_patterns(["a"], [PAGE, other])


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


# --- bounded compiling -----------------------------------------------------------------------


def test_a_compile_bomb_is_refused_before_compiling() -> None:
    """``(?:(?:a{1000}){1000}){100}b`` took 10 GB to compile; now it is refused at once.

    (The bound on the time leaves a loaded machine room; compiling it takes far longer.)
    """
    started = time.perf_counter()
    refused = compile_pattern("(?:(?:a{1000}){1000}){100}b", False)
    assert time.perf_counter() - started < 3
    assert isinstance(refused, str)
    assert refused.startswith("the pattern's repeats unroll to 100,300,301 units when compiled")
    check = check_pattern("(?:(?:a{1000}){1000}){100}b", "aaa")
    assert check.status is PatternStatus.INVALID


def test_a_repeat_that_crashes_the_interpreter_is_refused() -> None:
    """``(?:ab|cd){300000}`` makes regex's compiler overflow the C stack; it is over the bound."""
    assert pattern_problem("(?:ab|cd){300000}") is not None


@pytest.mark.parametrize(
    ("pattern", "start"),
    [
        ("(" * 500 + "a" + ")" * 500, "groups nested 500 deep, more than the 100 allowed"),
        ("a" * (MAX_PATTERN_LENGTH + 1), f"the pattern has {MAX_PATTERN_LENGTH + 1:,} characters"),
        ("a{4294967296}", "the pattern's repeats unroll to"),
    ],
)
def test_patterns_past_a_bound_are_refused_with_why(pattern: str, start: str) -> None:
    """Deep groups (a RecursionError in regex's parser), length, and huge counts are refused."""
    refused = compile_pattern(pattern, False)
    assert isinstance(refused, str)
    assert refused.startswith(start)


@pytest.mark.parametrize(
    ("pattern", "units"),
    [
        ("abc", 3),
        ("a{1000}", 1000),
        ("(?:ab){10}", 50),
        ("(?:a{10}){10}", 130),
        ("a{0,1000}", 1),
        ("(?:a{1,1000}){1000}", 4000),
        (r"\{1000}", 7),
        ("[{1000}]{3}", 24),
        (r"\p{L}{3}", 15),
        ("a{}", 3),
    ],
)
def test_pattern_cost_counts_what_the_compiler_unrolls(pattern: str, units: int) -> None:
    """A fixed minimum repeat multiplies what it repeats; literal braces, optional counts don't."""
    assert pattern_cost(pattern)[0] == units


def test_patterns_near_the_bound_still_compile() -> None:
    """Ordinary heavy patterns are well inside the bound."""
    for pattern in (
        r"\d{4}-\d{2}-\d{2}",
        "(要約|まとめ|サマリー).*30日",
        "(?:[^\\n]{0,500}\\n){3}",
    ):
        assert not isinstance(compile_pattern(pattern, False), str)


def test_the_compiled_cache_is_bounded_by_cost_not_count() -> None:
    """Thirty patterns near the bound do not all stay cached (each keeps ~15 MB)."""
    for i in range(30):
        compile_pattern(f"(?:a{{1000}}){{40}}{i}", False)
    assert patterns_module._cached_units <= patterns_module._CACHE_UNITS


_REGEX_PIECES = st.sampled_from(
    [
        "a",
        "(",
        ")",
        "(?:",
        "[",
        "]",
        "^",
        "\\",
        "{",
        "}",
        ",",
        "9",
        "99999",
        "*",
        "+",
        "?",
        "|",
        ".",
        "\\p{L}",
        "(?i)",
        "(?P<n>",
        "(?=",
        "\\1",
        "\x00",
        "\ud800",
        "{2,}",
        "{,3}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_REGEX_PIECES, max_size=30).map("".join) | st.text(max_size=60))
def test_compiling_any_text_gives_a_pattern_or_a_reason(pattern: str) -> None:
    """Whatever a case file holds, compiling it never raises (and stays within the bounds)."""
    compiled = compile_pattern(pattern, False)
    assert isinstance(compiled, str) or compiled.pattern == pattern


_ACCENTED = st.text(
    st.sampled_from("aenAEN \u00e9\u00fc\u00f1\u00c5\u1e69\u0301\u0308\u0323\u0303\u304c\u30d1"),
    min_size=1,
)


_FORMS: tuple[Literal["NFC", "NFD"], ...] = ("NFC", "NFD")


@given(_ACCENTED, st.sampled_from(_FORMS), st.sampled_from(_FORMS))
def test_a_literal_pattern_matches_its_text_composed_or_decomposed(
    text: str, pattern_form: Literal["NFC", "NFD"], content_form: Literal["NFC", "NFD"]
) -> None:
    """A pattern matches the same text whether either is written in NFC or NFD."""
    pattern = regex.escape(unicodedata.normalize(pattern_form, text))
    content = unicodedata.normalize(content_form, f"before {text} after")
    assert _check(pattern, content) is PatternStatus.MATCHED


def test_full_width_digits_are_found_by_backslash_d_not_by_ascii_digits() -> None:
    """``\\d`` finds full-width digits; a literal ASCII number does not (nothing but NFC folds)."""
    full_width = "returns within \uff13\uff10 days"
    assert _check(r"\d+ days", full_width) is PatternStatus.MATCHED
    assert _check("30 days", full_width) is PatternStatus.NOT_FOUND


@given(CLUSTERED, st.integers(min_value=1, max_value=40))
def test_a_preview_keeps_whole_graphemes(text: str, limit: int) -> None:
    """Content shown in an issue is cut between graphemes (no half emoji, no lone accent)."""
    shown = preview(text, limit).removesuffix("...").replace("\\n", "\n")
    assert_grapheme_prefix(shown, text)
