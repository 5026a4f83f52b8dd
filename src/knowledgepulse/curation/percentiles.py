"""Distributions a curator reads: score percentiles, thresholds given as ``pNN``, similarities.

``p90`` is the 90th percentile of the run's own scores (numpy's linear interpolation, like a
spreadsheet's PERCENTILE.INC): the fixed threshold 0.75 is seldom reached on real traces. The
histogram of each trace's cosine with its nearest other trace lets a user pick
``--max-similarity`` from their own data: the share at or above S is the most it can reject.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from knowledgepulse.errors import ScorerParameterError

SUMMARY_PERCENTILES = (10, 25, 50, 75, 90, 99)
BIN_WIDTH = 0.05
LIMITS = (0.8, 0.85, 0.9, 0.95, 0.99)
"""The similarity limits whose reach is counted (``at_or_above``)."""
_PERCENTILE = re.compile(r"^[pP](\d+(?:\.\d+)?)$")


class ThresholdSpecError(ScorerParameterError):
    """Raised when a minimum score is neither a number in [0, 1] nor ``p0``-``p100``.

    A ``ValueError`` and a setting's error, as every other bad setting of a call.
    """


@dataclass(frozen=True, slots=True)
class MinScore:
    """A minimum score: a fixed number, or a percentile of the scores it will be applied to.

    Attributes:
        value: the fixed threshold, when ``percentile`` is ``None``.
        percentile: the percentile (0-100) of the scores, when given as ``pNN``.
    """

    value: float | None = None
    percentile: float | None = None

    @classmethod
    def parse(cls, text: str) -> MinScore:
        """``0.6`` (a score) or ``p90`` (a percentile of the run's scores).

        Raises:
            ThresholdSpecError: anything else, with what is accepted.
        """
        match = _PERCENTILE.match(text.strip())
        if match:
            percentile = float(match.group(1))
            if percentile > 100:
                raise ThresholdSpecError(f"{text!r}: a percentile runs from p0 to p100")
            return cls(percentile=percentile)
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0.0 <= value <= 1.0:  # also refuses nan
            raise ThresholdSpecError(
                f"{text!r} is not a minimum score; give a number in [0, 1] (0.6) "
                "or a percentile of the scores (p90)"
            )
        return cls(value=value)

    def resolve(self, scores: Sequence[float]) -> float:
        """The threshold as a number, given the scores (with none, a percentile is 0)."""
        if self.percentile is None or not scores:
            return self.value or 0.0
        return float(np.percentile(np.asarray(scores, dtype=np.float64), self.percentile))

    def __str__(self) -> str:
        return f"{self.value:g}" if self.percentile is None else f"p{self.percentile:g}"


def percentiles(scores: ArrayLike) -> dict[str, float | int]:
    """``count``, ``min``, ``p10``...``p99`` and ``max`` of a non-empty list or array of scores."""
    values = np.asarray(scores, dtype=np.float64)
    points = np.percentile(values, SUMMARY_PERCENTILES)
    return {
        "count": len(values),
        "min": float(values.min()),
        **{f"p{p}": float(v) for p, v in zip(SUMMARY_PERCENTILES, points, strict=True)},
        "max": float(values.max()),
    }


def domain_percentiles(scores_by_domain: Mapping[str, Iterable[float]]) -> dict[str, Any]:
    """``all``: :func:`percentiles` of every score; ``by_domain``: of each domain's, by name.

    ``all`` is ``None`` when there are no scores (nothing to rank).
    """
    arrays = {
        domain: np.fromiter(scores_by_domain[domain], dtype=np.float64)
        for domain in sorted(scores_by_domain)
    }
    by_domain = {domain: percentiles(scores) for domain, scores in arrays.items() if len(scores)}
    everything = np.concatenate([np.empty(0), *arrays.values()])
    return {"all": percentiles(everything) if len(everything) else None, "by_domain": by_domain}


@dataclass(frozen=True, slots=True)
class SimilarityHistogram:
    """Nearest-neighbour cosines summarised.

    ``summary``: their :func:`percentiles`; ``bins``: ``(low, high, count)`` of each bin
    (``low <= s < high``; the last holds its ``high`` too); ``at_or_above``: how many reach
    each of :data:`LIMITS`.
    """

    summary: dict[str, float | int]
    bins: tuple[tuple[float, float, int], ...]
    at_or_above: tuple[tuple[float, int], ...]


def similarity_histogram(similarities: Sequence[float]) -> SimilarityHistogram | None:
    """The histogram of ``similarities`` (cosines in [-1, 1]); ``None`` when there are none."""
    values = np.asarray([s for s in similarities if math.isfinite(s)], dtype=np.float64)
    if not len(values):
        return None
    values = np.clip(values, -1.0, 1.0)
    # Bin k holds [k * width, (k + 1) * width); rounded first, so 0.95 / 0.05 is 19, not 18.99.
    steps = np.floor(np.round(values / BIN_WIDTH, 9)).astype(np.int64)
    top = round(1.0 / BIN_WIDTH) - 1  # 1.0 itself goes in the last bin, [0.95, 1.0]
    steps = np.minimum(steps, top)
    lowest = int(steps.min())
    counts = np.bincount(steps - lowest, minlength=top - lowest + 1)
    bins = tuple(
        (round((lowest + i) * BIN_WIDTH, 2), round((lowest + i + 1) * BIN_WIDTH, 2), int(n))
        for i, n in enumerate(counts)
    )
    reach = tuple((limit, int((values >= limit).sum())) for limit in LIMITS)
    return SimilarityHistogram(percentiles(values), bins, reach)
