"""Content patterns: regular expressions searched in page content, bounded in time.

Patterns come from suite and case files, content from a model, so a pattern that backtracks
catastrophically on long content must not hang a run: matching uses the ``regex`` package's
``timeout``, and a timeout is reported as an issue on that pattern (counted as not matched).
Patterns are *searched* (not full-matched) with DOTALL, so ``.`` matches the newlines that join
blocks and a pattern can span blocks; IGNORECASE is optional. Each pattern is compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

import regex

from knowledgepulse.evals.models import ContentPatterns, Page

DEFAULT_TIMEOUT_MS = 1000.0
PREVIEW_CHARS = 100
PATTERN_ADVICE = (
    "prefer alternatives ('要約|まとめ|サマリー'), a partial match ('.*after.*') or a repeated "
    "match ('Cart.*Cart.*Cart') over an exact '^...$'"
)

# ^ or \A at the start (after inline flags), and an unescaped $ or \Z / \z at the end.
_ANCHORED_START = re.compile(r"^(?:\(\?[a-zA-Z]+\))*(?:\^|\\A)")
_ANCHORED_END = re.compile(r"(?<!\\)(?:\\\\)*(?:\$|\\[Zz])$")


class PatternStatus(StrEnum):
    """How one pattern fared against one page."""

    MATCHED = "matched"
    NOT_FOUND = "not found"
    NO_PAGE = "no such page"
    INVALID = "invalid regex"
    TIMEOUT = "timed out"


@dataclass(frozen=True, slots=True)
class PatternCheck:
    """One pattern checked against one page's content.

    Attributes:
        page_id: the page the pattern is for.
        pattern: the regular expression as written.
        status: matched, not found, no such page, invalid, or timed out.
        issue: the content issue to report, or ``None`` when it matched.
        warning: advice on a pattern that is likely too strict (anchored), or ``None``.
    """

    page_id: str
    pattern: str
    status: PatternStatus
    issue: str | None = None
    warning: str | None = None

    @property
    def matched(self) -> bool:
        """Whether the pattern was found."""
        return self.status is PatternStatus.MATCHED


@dataclass(frozen=True, slots=True)
class PatternReport:
    """Every pattern of a case checked against the final pages, in the order given."""

    checks: tuple[PatternCheck, ...]

    @property
    def matched(self) -> int:
        """How many patterns were found."""
        return sum(check.matched for check in self.checks)

    @property
    def total(self) -> int:
        """How many patterns there are."""
        return len(self.checks)

    @property
    def score(self) -> float:
        """``matched / total``; 1.0 when there are no patterns (nothing was asked for)."""
        return self.matched / self.total if self.checks else 1.0

    def to_details(self) -> dict[str, Any]:
        """The content-quality details: counts, issues and warnings, as plain data."""
        return {
            "matchedPatterns": self.matched,
            "totalPatterns": self.total,
            "contentIssues": [c.issue for c in self.checks if c.issue is not None],
            "patternWarnings": [c.warning for c in self.checks if c.warning is not None],
        }


def patterns_by_page(
    patterns: ContentPatterns | None, pages: Sequence[Page]
) -> dict[str, list[str]]:
    """The patterns per page id, in the order given.

    Raises:
        ValueError: the patterns are a plain list but there is not exactly one page.
    """
    if patterns is None:
        return {}
    if isinstance(patterns, Mapping):
        return {page_id: list(items) for page_id, items in patterns.items()}
    if len(pages) != 1:
        raise ValueError(
            f"contentPatterns is a plain list but the case has {len(pages)} pages; "
            "give {pageId: [patterns]} instead"
        )
    return {pages[0].id: list(patterns)} if patterns else {}


def check_patterns(
    patterns: ContentPatterns | None,
    pages: Sequence[Page],
    *,
    ignore_case: bool = False,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> PatternReport:
    """Search every pattern in its page's content (``pages`` are the pages after the operations).

    Raises:
        ValueError: the patterns are a plain list but there is not exactly one page.
    """
    contents = {page.id: page.content for page in pages}
    checks = [
        check_pattern(
            page_id, pattern, contents.get(page_id), ignore_case=ignore_case, timeout_ms=timeout_ms
        )
        for page_id, items in patterns_by_page(patterns, pages).items()
        for pattern in items
    ]
    return PatternReport(tuple(checks))


def check_pattern(
    page_id: str,
    pattern: str,
    content: str | None,
    *,
    ignore_case: bool = False,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> PatternCheck:
    """Search one pattern in one page's content (``None``: the page does not exist)."""
    where = f"Page '{page_id}': Pattern '{pattern}'"
    warning = (
        f"{where} is anchored to the whole content (^...$), which rarely holds once a "
        f"page has several blocks; {PATTERN_ADVICE}"
        if is_anchored(pattern)
        else None
    )

    def result(status: PatternStatus, issue: str | None = None) -> PatternCheck:
        return PatternCheck(page_id, pattern, status, issue, warning)

    if content is None:
        return result(PatternStatus.NO_PAGE, f"{where} not matched: there is no page '{page_id}'")
    compiled = compile_pattern(pattern, ignore_case)
    if isinstance(compiled, str):
        return result(
            PatternStatus.INVALID,
            f"{where} is not a valid regular expression: {compiled}; counted as not matched",
        )
    try:
        found = compiled.search(content, timeout=timeout_ms / 1000)
    except TimeoutError:
        return result(
            PatternStatus.TIMEOUT,
            f"{where} timed out after {timeout_ms:g} ms on {len(content)} characters of content;"
            " counted as not matched (avoid nested repetition such as '(a|aa)+')",
        )
    if found is None:
        return result(
            PatternStatus.NOT_FOUND, f"{where} not found in content: '{preview(content)}'"
        )
    return result(PatternStatus.MATCHED)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, ignore_case: bool) -> regex.Pattern[str] | str:
    """The compiled pattern (DOTALL, optionally IGNORECASE), or why it is not a valid regex."""
    flags = regex.DOTALL | (regex.IGNORECASE if ignore_case else 0)
    try:
        return regex.compile(pattern, flags)
    except regex.error as error:
        return str(error)


def is_anchored(pattern: str) -> bool:
    """Whether a pattern is anchored at both ends (``^...$``): an exact whole-content match."""
    return bool(_ANCHORED_START.search(pattern) and _ANCHORED_END.search(pattern))


def preview(content: str, limit: int = PREVIEW_CHARS) -> str:
    """Content cut to a readable length, newlines shown escaped, ``...`` when cut."""
    cut = content if len(content) <= limit else content[:limit] + "..."
    return cut.replace("\n", "\\n")
