"""``content-quality``: do the pages, after the actual operations, contain what was asked for.

Each pattern is a regular expression searched (not full-matched) in its page's content after the
actual operations are applied; ``.`` matches the newlines between blocks. Matching is bounded in
time (see :mod:`knowledgepulse.evals.patterns`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Page
from knowledgepulse.evals.operations import apply_operations
from knowledgepulse.evals.patterns import PatternReport, check_patterns
from knowledgepulse.evals.registry import register_scorer
from knowledgepulse.evals.scorer import Scorer, ScoreResult
from knowledgepulse.evals.scorers._common import PatternParams


def content_report(
    actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page], params: PatternParams
) -> PatternReport:
    """Apply the actual operations and check every expected pattern on the result.

    Raises:
        ValueError: the patterns are a plain list but the case has several pages.
    """
    final = apply_operations(pages, actual.operations).pages
    return check_patterns(
        expected.content_patterns,
        final,
        ignore_case=params.ignore_case,
        timeout_ms=params.timeout_ms,
    )


def content_lines(details: Mapping[str, Any]) -> list[str]:
    """The content part of a diagnosis: the issues, then advice on too-strict patterns."""
    issues = details["contentIssues"]
    lines = []
    if issues:
        lines.append(
            f"{details['matchedPatterns']} of {details['totalPatterns']} content patterns "
            "matched (each is searched in its page's content after the actual operations, "
            "blocks joined with newlines)"
        )
    lines.extend(issues)
    lines.extend(f"too strict? {warning}" for warning in details["patternWarnings"])
    return lines


@register_scorer("content-quality")
class ContentQuality(Scorer):
    """The share of expected content patterns found in the edited pages."""

    default_threshold = 0.6
    diagnosis_check = (
        "check contentIssues: is a pattern too strict, is it a valid regular expression?"
    )
    Params: ClassVar[type[BaseModel]] = PatternParams
    params: PatternParams

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Search each pattern in its page's content after the actual operations."""
        try:
            report = content_report(actual, expected, pages, self.params)
        except ValueError as error:
            return ScoreResult.failed(str(error))
        return ScoreResult(report.score, report.to_details())

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The content issues, and which patterns look too strict, invalid or too slow."""
        if result.score is None:
            return []
        return content_lines(result.details)
