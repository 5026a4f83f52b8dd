"""The scorers of the pages' content after the actual operations: what a case asked for.

``content-quality``: the share of expected patterns found, each searched (bounded in time:
:mod:`~knowledgepulse.evals.patterns`) in its page's content, or in a text output as it is
(its issues say ``Output:`` where a page's say ``Page 'X':``). ``operation-result``:
``applicationSuccessRate * 0.6 + contentScore * 0.4``, the share of actual operations that
applied and content-quality's score (with its own params).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from knowledgepulse._util.jsonpath import preview
from knowledgepulse._util.text import closest
from knowledgepulse.evals.models import ActualOutput, Block, ContentPatterns, ExpectedOutput, Page
from knowledgepulse.evals.operations import apply_operations, operation_label
from knowledgepulse.evals.patterns import PatternParams, PatternReport, check_patterns
from knowledgepulse.evals.scorer import (
    BULK_EDIT,
    CasePart,
    Scorer,
    ScoreResult,
    register_scorer,
)

TEXT_OUTPUT = "output"
"""How issues name a text output, where they name a page for bulk-edit output."""


def content_report(
    patterns: ContentPatterns | None, pages: Sequence[Page], params: PatternParams
) -> PatternReport | str:
    """Every pattern checked on its page (the pages after the operations), or why it cannot be."""
    try:
        return check_patterns(patterns, pages, **params.model_dump())
    except ValueError as error:  # a plain list of patterns for several pages
        return str(error)


def _no_pattern_list(expected: Any, patterns: Any) -> str:
    """Why a text case's ``expected`` gives no list of patterns: what is there instead."""
    if isinstance(patterns, Mapping):
        return "expected.contentPatterns is an object (patterns per page, for bulk edits)"
    if isinstance(patterns, list):
        return "expected.contentPatterns holds an item that is not a text"
    if patterns is not None:
        return f"expected.contentPatterns is {preview(patterns)}, not a list"
    if expected is None:
        return "expected is null or missing"
    if not isinstance(expected, Mapping):
        return f"expected is {preview(expected)}, not an object with contentPatterns"
    near = closest("contentPatterns", [str(key) for key in expected])
    return "expected has no contentPatterns" + (f" (it has {near!r}: misspelt?)" if near else "")


def content_lines(details: Mapping[str, Any]) -> list[str]:
    """The content part of a diagnosis: the issues, then advice on too-strict patterns."""
    issues = details["contentIssues"]
    lines = []
    if issues:
        where = (
            "the output text"
            if details.get("searchedIn") == TEXT_OUTPUT
            else "its page's content after the actual operations, blocks joined with newlines"
        )
        lines.append(
            f"{details['matchedPatterns']} of {details['totalPatterns']} content patterns "
            f"matched (each is searched in {where})"
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

    def parts_read(self, actual: Any) -> frozenset[CasePart]:
        """Nothing for a text output; the bulk-edit form of every part for anything else."""
        return frozenset() if isinstance(actual, str) else BULK_EDIT

    def evaluate(
        self, actual: ActualOutput | str, expected: Any, pages: Sequence[Page]
    ) -> ScoreResult:
        """Search each pattern in a text output as it is, or in its page after the operations."""
        if isinstance(actual, str):
            return self._search_text(actual, expected)
        final = apply_operations(pages, actual.operations).pages
        report = content_report(expected.content_patterns, final, self.params)
        if isinstance(report, str):
            return ScoreResult.failed(report)
        return ScoreResult(report.score, report.to_details())

    def _search_text(self, actual: str, expected: Any) -> ScoreResult:
        patterns = expected.get("contentPatterns") if isinstance(expected, Mapping) else None
        texts = [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else None
        if texts is None or texts != patterns:
            return ScoreResult.failed(
                f"the output is a text, and {_no_pattern_list(expected, patterns)}; give "
                "expected: {contentPatterns: [regex, ...]} (an empty list checks nothing)"
            )
        page = Page(id=TEXT_OUTPUT, blocks=[Block(id=TEXT_OUTPUT, type="text", content=actual)])
        report = check_patterns(texts, [page], subject="Output", **self.params.model_dump())
        return ScoreResult(report.score, {**report.to_details(), "searchedIn": TEXT_OUTPUT})

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The content issues, and which patterns look too strict, invalid or too slow."""
        if result.score is None:
            return []
        return content_lines(result.details)


APPLICATION_WEIGHT = 0.6
CONTENT_WEIGHT = 0.4


def application_success_rate(applicable: int, total: int, expected: int) -> float:
    """``applicable / total``; with no actual operations, 1.0 if none were expected, else 0.0."""
    if total == 0:
        return 1.0 if expected == 0 else 0.0
    return applicable / total


def operation_result_score(application_rate: float, content_score: float) -> float:
    """``application_rate * 0.6 + content_score * 0.4``."""
    return application_rate * APPLICATION_WEIGHT + content_score * CONTENT_WEIGHT


@register_scorer("operation-result")
class OperationResult(Scorer):
    """Whether the actual operations apply, and how good the content they produce is."""

    default_threshold = 0.8
    reads = BULK_EDIT
    diagnosis_check = (
        "check inapplicableOperations and contentIssues: could the "
        "operations be applied, and is the resulting content right?"
    )
    Params: ClassVar[type[BaseModel]] = PatternParams
    params: PatternParams

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Apply the actual operations, then check the expected patterns on the result."""
        applied = apply_operations(pages, actual.operations)
        report = content_report(expected.content_patterns, applied.pages, self.params)
        if isinstance(report, str):
            return ScoreResult.failed(report)
        rate = application_success_rate(
            applied.applicable_count, len(applied.outcomes), len(expected.operations)
        )
        details: dict[str, Any] = {
            "applicationSuccessRate": rate,
            "contentScore": report.score,
            "applicableOperations": applied.applicable_count,
            "totalOperations": len(applied.outcomes),
            "inapplicableOperations": [
                {
                    "index": outcome.index,
                    "operation": outcome.operation.to_json(),
                    "reason": str(outcome.reason),
                    "explanation": outcome.explain(),
                }
                for outcome in applied.outcomes
                if outcome.reason is not None
            ],
            **report.to_details(),
        }
        return ScoreResult(operation_result_score(rate, report.score), details)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The operations that could not be applied and why, then the content issues."""
        if result.score is None:
            return []
        details = result.details
        lines = []
        skipped = details["inapplicableOperations"]
        if details["totalOperations"] == 0 and details["applicationSuccessRate"] == 0.0:
            lines.append("the model made no operations, but some were expected")
        if skipped:
            lines.append(
                f"{details['applicableOperations']} of {details['totalOperations']} actual "
                f"operations could be applied (applicationSuccessRate "
                f"{details['applicationSuccessRate']:.3g}, weight {APPLICATION_WEIGHT})"
            )
        for item in skipped:
            label = operation_label("actual", item["index"], item["operation"])
            lines.append(f"{label} not applicable: {item['reason']}: {item['explanation']}")
        content = content_lines(details)
        if content:
            lines.append(f"contentScore {details['contentScore']:.3g} (weight {CONTENT_WEIGHT}):")
            lines.extend(content)
        return lines
