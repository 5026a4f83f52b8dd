"""Custom scorers for summaries, loaded with ``kp eval --plugin path/to/summary_scorers.py``.

Both read a plain-text output (a scorer gets the case's JSON as it is unless it sets ``reads``
to ask for bulk-edit operations), so the cases' ``actual`` is the summary itself. ``word-limit``
needs only the output and implements ``evaluate``; ``numbers-grounded`` also reads the case's
input, so it implements ``score_case``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from knowledgepulse.evals import CaseContext, Scorer, ScoreResult, register_scorer

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class WordLimitParams(BaseModel):
    """Parameters of ``word-limit``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_words: int = Field(gt=0, description="The most words a summary may have.")


@register_scorer("word-limit")
class WordLimit(Scorer):
    """1.0 up to ``max_words`` words, then less, reaching 0 at twice the limit."""

    default_threshold = 1.0
    Params: ClassVar[type[BaseModel]] = WordLimitParams
    params: WordLimitParams

    def evaluate(self, actual: Any, expected: Any, pages: Any) -> ScoreResult:
        """Count the summary's words (split on white space)."""
        if not isinstance(actual, str):
            return ScoreResult.failed(f"the output is {type(actual).__name__}, not a text")
        words, limit = len(actual.split()), self.params.max_words
        score = 1.0 if words <= limit else max(0.0, 1 - (words - limit) / limit)
        return ScoreResult(score, {"words": words, "maxWords": limit})

    def diagnose(self, result: ScoreResult) -> list[str]:
        """How far over the limit the summary is."""
        if result.score is None:
            return []
        return [f"{result.details['words']} words, limit {result.details['maxWords']}"]


@register_scorer("numbers-grounded")
class NumbersGrounded(Scorer):
    """The share of the numbers in the summary that appear in the input: none may be invented."""

    default_threshold = 1.0

    def score_case(self, context: CaseContext) -> ScoreResult:
        """Find every number of the summary in the case's input text (and its pages)."""
        case = context.case
        if not isinstance(case.actual, str):
            return ScoreResult.failed(f"the output is {type(case.actual).__name__}, not a text")
        texts = [case.input if isinstance(case.input, str) else ""]
        source = "\n".join([*texts, *(page.content for page in case.pages)])
        known = set(NUMBER.findall(source))
        numbers = NUMBER.findall(case.actual)
        invented = [number for number in numbers if number not in known]
        score = 1.0 if not numbers else 1 - len(invented) / len(numbers)
        return ScoreResult(score, {"numbers": numbers, "invented": invented})

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The invented numbers."""
        invented = result.details.get("invented") or []
        return [f"not in the input: {', '.join(invented)}"] if invented else []
