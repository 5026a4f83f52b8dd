"""``operation-result``: could the actual operations be applied, and is the result right.

``score = applicationSuccessRate * 0.6 + contentScore * 0.4``: the share of actual operations
that were applicable, and content-quality's score of the pages after them (own params).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Page
from knowledgepulse.evals.operations import apply_operations, operation_label
from knowledgepulse.evals.patterns import PatternParams
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult, register_scorer
from knowledgepulse.evals.scorers.content_quality import content_lines, content_report

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
