"""``response-time``: the guide's custom-scorer example; full marks up to a limit, then less.

The score falls linearly from 1 at ``max_acceptable_ms`` (no default) to 0 at twice it. The
duration is the output's own ``durationMs``, else the task's measured time; any output will do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.evals.models import ActualOutput, Page
from knowledgepulse.evals.scorer import (
    CaseContext,
    Scorer,
    ScoreResult,
    recorded_duration,
    register_scorer,
)


class ResponseTimeParams(BaseModel):
    """Parameters of ``response-time``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_acceptable_ms: float = Field(
        gt=0,
        strict=True,
        allow_inf_nan=False,
        description="The longest acceptable duration in ms (> 0); no default, a suite gives it.",
    )


def response_time_score(duration_ms: float, max_acceptable_ms: float) -> float:
    """1.0 up to the limit, then ``max(0, 1 - (duration - max) / max)``."""
    if duration_ms <= max_acceptable_ms:
        return 1.0
    return max(0.0, 1 - (duration_ms - max_acceptable_ms) / max_acceptable_ms)


@register_scorer("response-time")
class ResponseTime(Scorer):
    """Whether the workflow answered within ``max_acceptable_ms``."""

    default_threshold = 1.0
    reads_duration = True
    # Where the time came from is not in the details the spec names: the check names both.
    diagnosis_check = (
        "check the answer's durationMs, else the task's time kp measured, against "
        "max_acceptable_ms (a suite parameter)"
    )
    Params: ClassVar[type[BaseModel]] = ResponseTimeParams
    params: ResponseTimeParams

    def __init__(self, params: BaseModel | None = None) -> None:
        if params is None:
            # Unlike other scorers there is no sensible default limit: say so at construction.
            raise ScorerParameterError(
                "response-time needs max_acceptable_ms; build it with "
                "ResponseTime.from_params({'max_acceptable_ms': 2000}) or "
                "ResponseTime(ResponseTimeParams(max_acceptable_ms=2000))"
            )
        super().__init__(params)

    def evaluate(
        self, actual: ActualOutput | JsonValue, expected: Any, pages: Sequence[Page]
    ) -> ScoreResult:
        """Compare the output's ``durationMs`` with the limit; an error result when it has none."""
        if isinstance(actual, ActualOutput):
            return self._judge(actual.duration_ms, None, None)
        given = actual.get("durationMs") if isinstance(actual, Mapping) else None
        return self._judge(recorded_duration(actual), given, None)

    def score_case(self, context: CaseContext) -> ScoreResult:
        """Compare how long the output took with the limit; an error result when unknown."""
        actual = context.case.actual
        given = actual.get("durationMs") if isinstance(actual, Mapping) else None
        return self._judge(context.duration_ms, given, context.scorer_key)

    def _judge(self, duration: float | None, given: Any, key: str | None) -> ScoreResult:
        limit = self.params.max_acceptable_ms
        if duration is None:
            # Named as the suite names it: of two response-time entries (fast, slow), which one.
            name = key or self.type_name
            reason = (
                f"actual.durationMs is {given!r}, not a number >= 0; fix it"
                if given is not None
                else "the case has no actual.durationMs; record how long the workflow took in ms"
            )
            return ScoreResult.failed(
                f"{reason}, or leave {name} out of the suite", {"maxAcceptableMs": limit}
            )
        details = {
            "responseTimeMs": duration,
            "maxAcceptableMs": limit,
            "passed": duration <= limit,
        }
        return ScoreResult(response_time_score(duration, limit), details)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """How far over the limit the workflow was."""
        if result.score is None or result.details["passed"]:
            return []
        duration = result.details["responseTimeMs"]
        limit = result.details["maxAcceptableMs"]
        over = duration - limit
        return [
            f"took {duration:g} ms, {over:g} ms ({over / limit:.0%}) over max_acceptable_ms "
            f"{limit:g}; the score reaches 0 at {2 * limit:g} ms"
        ]
