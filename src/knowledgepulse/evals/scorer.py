"""The scorer interface: one aspect of quality, a score in [0, 1], and the details behind it.

A scorer implements one method, :meth:`Scorer.evaluate`, which returns the score and its
details from a single computation; the guide's ``score(actual, expected)`` and
``details(actual, expected)`` are derived from it. The case's original pages are the third
argument, for scorers (anti-hallucination, content quality) that need them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse._util.pydantic_errors import describe
from knowledgepulse.errors import KnowledgePulseError, ScorerParameterError
from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Page


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """What a scorer says about one case.

    Attributes:
        score: in [0, 1], or ``None`` when the scorer could not compute (then ``error`` says why;
            the case counts as failed and the score is left out of the weighted average).
        details: plain JSON-able data explaining the score.
        error: why no score could be computed, or ``None``.
    """

    score: float | None
    details: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def failed(cls, reason: str, details: Mapping[str, Any] | None = None) -> ScoreResult:
        """A result that says the scorer could not compute, and why."""
        return cls(score=None, details=dict(details or {}), error=reason)


class NoParams(BaseModel):
    """Parameters of a scorer that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ScorerError(KnowledgePulseError):
    """Raised by :meth:`Scorer.score` when the scorer could not compute a score."""


class Scorer(ABC):
    """Base class of every scorer, built-in or user-defined.

    Subclasses set ``type_name`` (the name used in suites, given by :func:`register_scorer`),
    ``default_threshold``, and ``Params`` (a pydantic model with ``extra="forbid"``; its fields
    are the scorer's YAML ``params``), and implement :meth:`evaluate`.
    """

    type_name: ClassVar[str] = ""
    default_threshold: ClassVar[float] = 1.0
    Params: ClassVar[type[BaseModel]] = NoParams
    diagnosis_check: ClassVar[str | None] = None
    """What to check first when a score falls below its threshold (the guide's ``check``);
    reports put it before the lines of :meth:`diagnose`."""

    def __init__(self, params: BaseModel | None = None) -> None:
        self.params = params if params is not None else self.Params()

    @classmethod
    def from_params(cls, raw: Mapping[str, Any] | None = None) -> Self:
        """Build the scorer from YAML-style parameters, validated by ``Params``.

        Raises:
            ScorerParameterError: naming each bad parameter, what it holds and what was expected.
        """
        try:
            params = cls.Params.model_validate(dict(raw or {}))
        except ValidationError as error:
            reasons = "; ".join(
                f"{format_path(tuple(item['loc']))}: {describe(item)}" for item in error.errors()
            )
            raise ScorerParameterError(f"{cls.type_name or cls.__name__}: {reasons}") from None
        return cls(params)

    @abstractmethod
    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Score one case: the actual output against the expected one, given the original pages."""

    def score(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page] = ()
    ) -> float:
        """The score alone, in [0, 1] (the guide's interface).

        Raises:
            ScorerError: the scorer could not compute; the message says why.
        """
        result = self.evaluate(actual, expected, pages)
        if result.score is None:
            raise ScorerError(f"{self.type_name}: {result.error}")
        return result.score

    def details(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page] = ()
    ) -> Mapping[str, Any]:
        """The details that explain the score, for debugging (the guide's interface)."""
        return self.evaluate(actual, expected, pages).details

    def diagnose(self, result: ScoreResult) -> list[str]:
        """What to check when this scorer falls below its threshold, one line each.

        The built-in scorers follow the guide's diagnosis flow; a custom scorer overrides this to
        give its own hint. The default says nothing beyond the details.
        """
        return []
