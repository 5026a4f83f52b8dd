"""The explanation of a score: every number that went into it, as data and as text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from knowledgepulse._util.text import counted
from knowledgepulse.value.dimensions import (
    FAILED_OUTCOME_FACTOR,
    STEP_COUNT_CAP,
    STEP_TYPES,
    AppliedOverride,
    Dimensions,
    Rounding,
    TraceFeatures,
    apply_overrides,
    complexity,
    outcome_confidence,
    tool_diversity,
    unrounded,
    without_noise,
)
from knowledgepulse.value.dimensions import novelty as novelty_of_similarity
from knowledgepulse.value.profiles import ScoringWeights, weight_text

NoveltySource = Literal["embedding", "empty_cache", "no_embedder"]


def _numbers(data: Mapping[str, Any], rounding: Rounding) -> dict[str, Any]:
    """A flat mapping with ``rounding`` applied to its floats."""
    return {key: rounding(value) if type(value) is float else value for key, value in data.items()}


@dataclass(frozen=True, slots=True)
class NoveltyOrigin:
    """Where the novelty value came from.

    Attributes:
        source: ``embedding`` (compared with the cache), ``empty_cache`` (nothing to compare
            with: 0.5) or ``no_embedder`` (no embedder available: 0.5).
        nearest_id: with an embedding, the id of the most similar trace in the cache.
        similarity: with an embedding, the cosine similarity to that trace.
        reason: with ``no_embedder``, why there is none.
        windows: how many 254-piece windows of the text were embedded (``None``: not said).
        capped: whether the text had more windows than the embedder's ``max_windows``.
        novelty_text: the representation the trace's vector was made with.
        calibrated_onto: with an embedding, the model onto whose novelty scale ``1 - cosine``
            was mapped (the static table's calibration), or ``None`` when it was not.
        only_itself: with ``empty_cache``, whether the cache held the trace's own vector (its
            id: a trace rescored against a cache it was added to) and no other trace's.
    """

    source: NoveltySource
    nearest_id: str | None = None
    similarity: float | None = None
    reason: str | None = None
    windows: int | None = None
    capped: bool | None = None
    novelty_text: str | None = None
    calibrated_onto: str | None = None
    only_itself: bool = False

    def to_dict(self, *, rounding: Rounding = unrounded) -> dict[str, Any]:
        """The novelty's inputs by name (the similarity through ``rounding``).

        With an embedding, ``unmapped_novelty`` is ``1 - similarity`` clamped to [0, 1] and
        ``mapped_onto`` the model onto whose scale it was mapped (``None``: it is the novelty),
        so a row's novelty can be followed from its cosine as ``explain()`` follows it.
        """
        similarity = self.similarity
        unmapped = None if similarity is None else rounding(novelty_of_similarity(similarity))
        return {
            "source": self.source,
            "nearest_trace": self.nearest_id,
            "similarity": None if similarity is None else rounding(similarity),
            "unmapped_novelty": unmapped,
            "mapped_onto": self.calibrated_onto,
            "windows_embedded": self.windows,
            "capped": self.capped,
            "novelty_text": self.novelty_text,
        }


@dataclass(frozen=True, slots=True)
class ValueBreakdown:
    """A trace's value score and everything that explains it.

    Attributes:
        trace_id: the trace's ``id``.
        domain: its ``metadata.task_domain``.
        profile: the weight profile used (``default`` when no profile matches the domain).
        weights: that profile's weights.
        dimensions: the four dimension values.
        weighted_sum: ``C*wC + N*wN + D*wD + O*wO``, before the overrides.
        overrides: each override that fired, in order, with the score before and after.
        score: the final score in [0, 1].
        novelty: where the novelty value came from.
        threshold: the sharing threshold the scorer applies.
        features: the counts the other three dimensions and the overrides were computed from.
    """

    trace_id: str
    domain: str
    profile: str
    weights: ScoringWeights
    dimensions: Dimensions
    weighted_sum: float
    overrides: tuple[AppliedOverride, ...]
    score: float
    novelty: NoveltyOrigin
    threshold: float
    features: TraceFeatures

    @property
    def shareable(self) -> bool:
        """Whether the score reaches the sharing threshold."""
        return self.score >= self.threshold

    @property
    def contributions(self) -> Dimensions:
        """Each dimension times its weight: the four terms of the weighted sum."""
        pairs = zip(self.dimensions.as_tuple(), self.weights.as_tuple(), strict=True)
        return Dimensions(*(value * weight for value, weight in pairs))

    @property
    def inputs(self) -> dict[str, dict[str, Any]]:
        """What each dimension was computed from, by dimension (the formulas' operands)."""
        return self._inputs(unrounded)

    def _inputs(self, rounding: Rounding) -> dict[str, dict[str, Any]]:
        f = self.features
        return {
            "complexity": {
                "step_types": f.unique_step_types,
                "step_types_possible": STEP_TYPES,
                "error_recoveries": f.error_recoveries,
                "steps": f.step_count,
                "steps_counted": min(f.step_count, STEP_COUNT_CAP),
                "step_cap": STEP_COUNT_CAP,
            },
            "novelty": self.novelty.to_dict(rounding=rounding),
            "tool_diversity": {"distinct_tools": f.unique_tools, "steps": f.step_count},
            "outcome_confidence": {
                "confidence": rounding(f.confidence),
                "confidence_source": f.confidence_source,
                "success": f.success,
                "success_factor": rounding(1.0 if f.success else FAILED_OUTCOME_FACTOR),
            },
        }

    def to_dict(self, *, rounding: Rounding = unrounded) -> dict[str, Any]:
        """Plain JSON-able data, keys in a fixed order (the CLI's JSON rows).

        ``rounding`` is applied to every number that can be fractional (the reports round away
        binary noise); it must leave anything but a ``float`` as it is.
        """
        similarity = self.novelty.similarity
        return {
            "id": self.trace_id,
            "score": rounding(self.score),
            "shareable": self.shareable,
            "threshold": rounding(self.threshold),
            "domain": self.domain,
            "profile": self.profile,
            "dimensions": self.dimensions.to_dict(rounding=rounding),
            "weights": self.weights.to_dict(rounding=rounding),
            "weighted_sum": rounding(self.weighted_sum),
            "overrides": [override.name for override in self.overrides],
            "override_effects": [_numbers(o.to_dict(), rounding) for o in self.overrides],
            "novelty_source": self.novelty.source,
            "nearest_trace": self.novelty.nearest_id,
            "nearest_similarity": None if similarity is None else rounding(similarity),
            "domain_source": self.features.domain_source,
            "inputs": self._inputs(rounding),
        }

    def explain(self) -> str:
        """The breakdown as lines of text a person can check by hand."""
        f = self.features
        words = {
            "complexity": _complexity_words(f),
            "novelty": _novelty_words(self.novelty, self.dimensions.novelty),
            "tool diversity": f"{counted(f.unique_tools, 'distinct tool')} over "
            f"{counted(f.step_count, 'step')}: min(1, {f.unique_tools}/{max(1, f.step_count)} x 3)",
            "outcome confidence": _outcome_words(f),
        }
        lines = [
            f"{self.trace_id}: score {score_text(self.score, self.threshold, 4)} "
            f"({'reaches' if self.shareable else 'below'} the sharing threshold {self.threshold})",
            f"  profile {self.profile!r} (domain {self.domain!r}{_ORIGIN_WORDS[f.domain_source]})",
        ]
        d, w, c = self.dimensions, self.weights, self.contributions
        numbers = zip(d.as_tuple(), w.as_tuple(), c.as_tuple(), strict=True)
        for (label, text), (value, weight, term) in zip(words.items(), numbers, strict=True):
            lines += [
                f"  {label:<18} {value:.4f} x {weight_text(weight)} = {term:.4f}",
                f"    {text}",
            ]
        # The sum and each override's result say on which side of the threshold they fall as the
        # score does (the last of them is the score).
        lines.append(f"  weighted sum {score_text(self.weighted_sum, self.threshold, 4)}")
        lines += [
            f"  override {o.name}: {score_text(o.before, self.threshold, 4)} -> "
            f"{score_text(o.after, self.threshold, 4)} ({o.reason})"
            for o in self.overrides
        ]
        return "\n".join(lines)


def score_text(score: float, threshold: float, decimals: int) -> str:
    """``score`` to ``decimals`` places, or more where fewer would cross the sharing threshold.

    Rounded, 0.74996 would read ``0.750`` beside "below the sharing threshold 0.75"; it is
    written ``0.74996``, the fewest places that put it on its own side of the threshold.
    """
    reaches = score >= threshold
    for places in range(decimals, 18):
        text = f"{score:.{places}f}"
        if (float(text) >= threshold) == reaches:
            return text
    return repr(score)


def _complexity_words(f: TraceFeatures) -> str:
    kept = min(f.step_count, STEP_COUNT_CAP)
    n = f.error_recoveries
    recovery = (
        f"{n} error recover{'y' if n == 1 else 'ies'}: +0.3" if n else "no error recovery: +0"
    )
    return (
        f"{f.unique_step_types} of {STEP_TYPES} step types: {f.unique_step_types}/{STEP_TYPES} "
        f"x 0.5 = {f.unique_step_types / STEP_TYPES * 0.5:.4f}; {recovery}; "
        f"{counted(f.step_count, 'step')} (counted up to {STEP_COUNT_CAP}): "
        f"{kept}/{STEP_COUNT_CAP} x 0.2 = {kept / STEP_COUNT_CAP * 0.2:.4f}"
    )


def _novelty_words(origin: NoveltyOrigin, value: float) -> str:
    if origin.source == "embedding":
        # The numbers in between, so that the dimension's value can be checked by hand.
        similarity = origin.similarity or 0.0
        words = (
            f"most similar: {origin.nearest_id} at cosine {similarity:.4f}; "
            f"novelty = 1 - cosine, clamped to [0, 1] = {novelty_of_similarity(similarity):.4f}"
        )
        if origin.calibrated_onto:
            words += f", mapped onto {origin.calibrated_onto}'s novelty scale: {value:.4f}"
    elif origin.source == "empty_cache" and origin.only_itself:
        # A trace is never compared with its own vector, so the cache is not empty but useless.
        words = (
            "no other trace in the cache, only this trace's own vector: "
            "nothing to compare with, so 0.5"
        )
    elif origin.source == "empty_cache":
        words = "empty cache: nothing to compare with, so 0.5"
    else:
        return f"no embedder, so 0.5{': ' + origin.reason if origin.reason else ''}"
    if origin.capped:
        words += (
            f"; capped: only the text's first {counted(origin.windows or 0, 'window')} "
            "embedded (max_windows)"
        )
    elif origin.windows is not None:
        words += f"; {counted(origin.windows, 'window')} of the text embedded"
    return words


_ORIGIN_WORDS = {
    "trace": "",
    "argument": ", as given",
    "metadata": ", from the run's metadata",
    "default": ", the default: the source records none",
}


def _outcome_words(f: TraceFeatures) -> str:
    factor, verb = ("1.0", "succeeded") if f.success else (FAILED_OUTCOME_FACTOR, "failed")
    origin = _ORIGIN_WORDS[f.confidence_source].removeprefix(", ")
    # Where the confidence came from follows the arithmetic, so as not to split it.
    return f"confidence {f.confidence:.4f} x {factor} ({verb})" + (
        f"; the confidence is {origin}" if origin else ""
    )


def compose(
    *,
    trace_id: str,
    domain: str,
    features: TraceFeatures,
    novelty_value: float,
    novelty_origin: NoveltyOrigin,
    profile: str,
    weights: ScoringWeights,
    threshold: float,
) -> ValueBreakdown:
    """Join the dimensions into the score: weighted sum, overrides in order, clamp to [0, 1]."""
    dimensions = Dimensions(
        complexity(features), novelty_value, tool_diversity(features), outcome_confidence(features)
    )
    weighted_sum = without_noise(
        dimensions.complexity * weights.complexity
        + dimensions.novelty * weights.novelty
        + dimensions.tool_diversity * weights.tool_diversity
        + dimensions.outcome_confidence * weights.outcome_confidence
    )
    score, overrides = apply_overrides(weighted_sum, features)
    return ValueBreakdown(
        trace_id=trace_id,
        domain=domain,
        profile=profile,
        weights=weights,
        dimensions=dimensions,
        weighted_sum=weighted_sum,
        overrides=overrides,
        score=min(1.0, max(0.0, score)),
        novelty=novelty_origin,
        threshold=threshold,
        features=features,
    )
