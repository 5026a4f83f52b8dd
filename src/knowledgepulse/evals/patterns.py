r"""Content patterns: regular expressions searched (DOTALL) in page content, bounded in time.

Pattern and content are both searched in Unicode's composed form (NFC): a word typed with an
accent as one character (``café``) matches the same word stored as a letter and a combining
mark (``cafe`` + U+0301, macOS file names, some editors), as a reader sees them as one. Nothing
else is folded: full-width digits (U+FF10-FF19) are other characters than ASCII ones; ``\d``
matches the digits of every script.

A catastrophic pattern must not hang a run: each search has the ``regex`` package's CPU-time
``timeout``, and a case's patterns share a wall-clock budget (``case_timeout_ms``), past which
the rest are not searched. ``regex`` unrolls fixed repeats when compiling (``(?:a{1000}){1000}``
takes gigabytes), so a pattern past the bounds below is refused before it is compiled.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import regex
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from knowledgepulse._util.text import PATTERN_TIMEOUT_MS, grapheme_end
from knowledgepulse.evals.models import ContentPatterns, Page

DEFAULT_TIMEOUT_MS = PATTERN_TIMEOUT_MS
DEFAULT_CASE_TIMEOUT_MS = 10_000.0
# Beyond a minute a catastrophic pattern would hold a run for hours (and regex reads a huge
# timeout as none at all).
MAX_TIMEOUT_MS = 60_000.0
MAX_PATTERN_LENGTH = 10_000  # compiling costs about 4 µs a character
# Unrolled units: about 0.03 s, 30 MB while compiling and 15 MB kept (regex 2026.11);
# (?:ab|cd){300000} crashes the interpreter.
MAX_PATTERN_UNITS = 100_000
MAX_GROUP_DEPTH = 100  # regex parses groups recursively; Python's stack overflows near 200
_CACHE_UNITS = 1_000_000
PREVIEW_CHARS = 100
PATTERN_ADVICE = (
    "prefer alternatives ('要約|まとめ|サマリー'), a partial match ('.*after.*') or a repeated "
    "match ('Cart.*Cart.*Cart') over an exact '^...$'"
)

# Anchored to the whole content: ^ or \A at the start (after inline flags), and an unescaped $ or
# \Z / \z at the end; an exact match, which rarely holds once a page has several blocks.
_ANCHORED_START = re.compile(r"^(?:\(\?[a-zA-Z]+\))*(?:\^|\\A)")
_ANCHORED_END = re.compile(r"(?<!\\)(?:\\\\)*(?:\$|\\[Zz])$")


class PatternParams(BaseModel):
    """Parameters of the scorers that search content patterns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ignore_case: StrictBool = Field(
        default=False, description="Match patterns without regard to letter case."
    )
    timeout_ms: float = Field(
        default=DEFAULT_TIMEOUT_MS,
        gt=0,
        strict=True,
        allow_inf_nan=False,
        description="Longest time one pattern may search one page, in ms; past it the pattern "
        "counts as not matched and an issue says it timed out.",
    )
    case_timeout_ms: float | None = Field(
        default=None,
        validate_default=True,
        gt=0,
        strict=True,
        allow_inf_nan=False,
        description="Longest time all the patterns of one case may search together, in ms "
        f"(default: {DEFAULT_CASE_TIMEOUT_MS:g}, or timeout_ms if larger); once it is spent, "
        "the patterns left count as not matched and an issue says so.",
    )

    @field_validator("timeout_ms", "case_timeout_ms")
    @classmethod
    def _bounded(cls, value: float | None, info: ValidationInfo) -> float | None:
        # The bound is what keeps a catastrophic pattern from hanging a run: it cannot be lifted.
        if value is not None and value > MAX_TIMEOUT_MS:
            per = "per pattern and page" if info.field_name == "timeout_ms" else "per case"
            raise ValueError(
                f"at most {MAX_TIMEOUT_MS:g} ms (one minute) {per}; the bound keeps a "
                "catastrophic pattern from hanging the run, so it cannot be switched off"
            )
        if value is None and "timeout_ms" in info.data:  # else timeout_ms's own error says why
            # Filled in, so that a resolved suite (kp eval --dry-run) shows the budget in force.
            return case_budget_ms(info.data["timeout_ms"], None)
        return value

    @model_validator(mode="after")
    def _case_budget_holds_a_pattern(self) -> PatternParams:
        if self.case_timeout_ms is not None and self.case_timeout_ms < self.timeout_ms:
            raise ValueError(
                f"case_timeout_ms ({self.case_timeout_ms:g}) is less than timeout_ms "
                f"({self.timeout_ms:g}), the time of one pattern; raise it, or lower timeout_ms"
            )
        return self


def case_budget_ms(timeout_ms: float, case_timeout_ms: float | None) -> float:
    """``case_timeout_ms``, else the default: 10 s, or one pattern's ``timeout_ms`` if larger."""
    return (
        case_timeout_ms if case_timeout_ms is not None else max(DEFAULT_CASE_TIMEOUT_MS, timeout_ms)
    )


class PatternStatus(StrEnum):
    """How one pattern fared against one page."""

    MATCHED = "matched"
    NOT_FOUND = "not found"
    NO_PAGE = "no such page"
    INVALID = "invalid regex"
    TIMEOUT = "timed out"
    NOT_SEARCHED = "not searched"


@dataclass(frozen=True, slots=True)
class PatternCheck:
    """One pattern checked against one page: the issue (unless matched), advice if anchored."""

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


def check_patterns(
    patterns: ContentPatterns | None,
    pages: Sequence[Page],
    *,
    ignore_case: bool = False,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
    case_timeout_ms: float | None = None,
    subject: str | None = None,
) -> PatternReport:
    """Search every pattern in its page's content, within one case budget (:func:`case_budget_ms`).

    ``subject`` is how issues name what was searched (``Output``), when not a page.

    Raises:
        ValueError: the patterns are a plain list but there is not exactly one page.
    """
    if isinstance(patterns, list):  # the patterns of the only page
        if len(pages) != 1:
            raise ValueError(
                f"contentPatterns is a plain list but the case has {len(pages)} pages; "
                "give {pageId: [patterns]} instead"
            )
        patterns = {pages[0].id: patterns}
    budget_ms = case_budget_ms(timeout_ms, case_timeout_ms)
    deadline = time.monotonic() + budget_ms / 1000  # wall clock, shared by the case's patterns
    contents = {page.id: unicodedata.normalize("NFC", page.content) for page in pages}

    def check(page_id: str, pattern: str) -> PatternCheck:
        label = subject if subject is not None else f"Page '{page_id}'"
        where = f"{label}: Pattern '{pattern}'"
        # A page's content joins its blocks; a text output is one answer, where an exact
        # match fails on any word around it (a trailing full stop), not on other blocks.
        why = (
            "which rarely holds once a page has several blocks"
            if subject is None
            else "so any text around the match (a full stop, a second sentence) fails it"
        )
        warning = (
            f"{where} is anchored to the whole content (^...$), {why}; {PATTERN_ADVICE}"
            if _ANCHORED_START.search(pattern) and _ANCHORED_END.search(pattern)
            else None
        )

        def result(status: PatternStatus, issue: str | None = None) -> PatternCheck:
            return PatternCheck(page_id, pattern, status, issue, warning)

        content = contents.get(page_id)
        if content is None:
            return result(
                PatternStatus.NO_PAGE, f"{where} not matched: there is no page '{page_id}'"
            )
        compiled = compile_pattern(unicodedata.normalize("NFC", pattern), ignore_case)
        if isinstance(compiled, str):
            return result(
                PatternStatus.INVALID,
                f"{where} is not a valid regular expression: {compiled}; counted as not matched",
            )
        allowed = min(timeout_ms, (deadline - time.monotonic()) * 1000)
        if allowed <= 0:
            return result(
                PatternStatus.NOT_SEARCHED,
                f"{where} not searched: the case's patterns used up their {budget_ms:g} ms "
                "(case_timeout_ms); counted as not matched (make the slow patterns simpler)",
            )
        try:
            found = compiled.search(content, timeout=allowed / 1000)
        except TimeoutError:
            return result(
                PatternStatus.TIMEOUT,
                f"{where} timed out after {allowed:g} ms on {len(content)} characters of content;"
                " counted as not matched (avoid nested repetition such as '(a|aa)+')",
            )
        if found is None:
            return result(
                PatternStatus.NOT_FOUND, f"{where} not found in content: '{preview(content)}'"
            )
        return result(PatternStatus.MATCHED)

    by_page = (patterns or {}).items()
    return PatternReport(tuple(check(page, p) for page, items in by_page for p in items))


def compile_pattern(pattern: str, ignore_case: bool) -> regex.Pattern[str] | str:
    """The compiled pattern, or why it is refused.

    DOTALL; with ``ignore_case``, IGNORECASE with full case folding (``ß`` matches ``SS``).
    """
    key = (pattern, ignore_case)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached[0]
    refused = pattern_problem(pattern)
    if refused is not None:
        return refused
    flags = regex.DOTALL | (regex.IGNORECASE | regex.FULLCASE if ignore_case else 0)
    try:
        compiled: regex.Pattern[str] | str = regex.compile(pattern, flags)
    except regex.error as error:
        compiled = str(error)
    except (RecursionError, MemoryError, OverflowError, ValueError) as error:
        # Past the bounds checked above these should not happen; say so rather than crash.
        compiled = f"cannot be compiled ({type(error).__name__}); simplify the pattern"
    _remember(key, compiled)
    return compiled


_cache: OrderedDict[tuple[str, bool], tuple[regex.Pattern[str] | str, int]] = OrderedDict()
_cached_units = 0


def _remember(key: tuple[str, bool], compiled: regex.Pattern[str] | str) -> None:
    # Weighed by cost, not counted: a thousand patterns near the bound would keep 15 GB.
    global _cached_units  # noqa: PLW0603 - one process-wide cache, like functools' caches
    units = max(1, pattern_cost(key[0])[0])
    _cache[key] = (compiled, units)
    _cached_units += units
    while _cached_units > _CACHE_UNITS and len(_cache) > 1:
        _, (_, dropped) = _cache.popitem(last=False)
        _cached_units -= dropped


def pattern_problem(pattern: str) -> str | None:
    """Why a pattern is refused before compiling (too long, too deep, unrolls too far), or None."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return (
            f"the pattern has {len(pattern):,} characters, more than the {MAX_PATTERN_LENGTH:,} "
            "allowed; split it into several patterns"
        )
    units, depth = pattern_cost(pattern)
    if depth > MAX_GROUP_DEPTH:
        return (
            f"groups nested {depth} deep, more than the {MAX_GROUP_DEPTH} allowed; "
            "flatten the pattern"
        )
    if units > MAX_PATTERN_UNITS:
        shown = f"{units:,}" if units < 10**15 else "more than 10^15"
        return (
            f"the pattern's repeats unroll to {shown} units when compiled, more than the "
            f"{MAX_PATTERN_UNITS:,} allowed; lower the repeat counts, or nest fewer repeats "
            "(nested counts multiply: '(?:a{100}){100}' is 10,000 units)"
        )
    return None


_COUNT = re.compile(r"\{(\d*)(,(\d*))?\}")
_BRACED_ESCAPES = frozenset("xuUNpPg")


def _repeat_count(pattern: str, position: int) -> re.Match[str] | None:
    # '{}' and '{x}' are literal text to regex; '{,5}' is a count from 0.
    count = _COUNT.match(pattern, position)
    return count if count is not None and (count.group(1) or count.group(2)) else None


def pattern_cost(pattern: str) -> tuple[int, int]:
    """What a pattern unrolls to when compiled, in units, and how deep its groups nest.

    A unit is a character; ``{m}`` or ``{m,n}`` multiplies what it repeats by ``m`` (``regex``
    unrolls the minimum); nested repeats multiply. It errs high, never low.
    """
    frames = [[0, 0]]  # per open group: units so far, units of the last atom
    depth = deepest = 0
    position = 0
    end = len(pattern)

    def atom(units: int) -> None:
        frames[-1][0] += units
        frames[-1][1] = units

    while position < end:
        char = pattern[position]
        if char == "\\":
            after = position + 2
            if (
                pattern[position + 1 : position + 2] in _BRACED_ESCAPES
                and pattern[after : after + 1] == "{"
            ):
                close = pattern.find("}", after)
                after = end if close < 0 else close + 1
            atom(after - position)
            position = after
        elif char == "[":
            after = position + 1
            after += pattern[after : after + 1] == "^"
            after += pattern[after : after + 1] == "]"  # a leading ] is literal
            while after < end and pattern[after] != "]":
                after += 2 if pattern[after] == "\\" else 1
            after = min(after + 1, end)
            atom(after - position)
            position = after
        elif char == "(":
            frames.append([0, 0])
            depth += 1
            deepest = max(deepest, depth)
            position += 1
        elif char == ")" and len(frames) > 1:
            units = frames.pop()[0] + 2
            depth -= 1
            atom(units)
            position += 1
        elif char == "{" and (count := _repeat_count(pattern, position)) is not None:
            digits = count.group(1)
            # regex refuses counts past 2**32 itself; no need to read a longer one exactly.
            least = int(digits) if 0 < len(digits) <= 10 else (0 if not digits else 10**10)
            if least > 1:
                frames[-1][0] += frames[-1][1] * (least - 1)
                frames[-1][1] *= least
            position = count.end()
        elif char in "*+?":
            position += 1
        else:
            atom(1)
            position += 1
    while len(frames) > 1:
        frames[-2][0] += frames.pop()[0]
    return frames[0][0], deepest


def preview(content: str, limit: int = PREVIEW_CHARS) -> str:
    """Content cut to a readable length, newlines shown escaped, ``...`` when cut."""
    cut = content if len(content) <= limit else content[: grapheme_end(content, limit)] + "..."
    return cut.replace("\n", "\\n")
