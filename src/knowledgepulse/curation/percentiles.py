"""Score percentiles: per-domain summaries, and thresholds given as ``pNN``.

The fixed sharing threshold 0.75 is almost never reached on real traces, so a curator asks for
"the top 10%" instead: ``p90`` is the 90th percentile of the run's own scores (numpy's default
linear interpolation, like a spreadsheet's PERCENTILE.INC), and the traces at or above it pass.

A streaming run's summary comes from :func:`spilled_percentiles`: the scores wait on disk and
only the few that percentiles interpolate between are read back, so memory stays flat over a
million traces, with the numbers of :func:`domain_percentiles` to the last bit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from knowledgepulse._util.spill import SpilledValues
from knowledgepulse.errors import KnowledgePulseError

SUMMARY_PERCENTILES = (10, 25, 50, 75, 90, 99)
_PERCENTILE = re.compile(r"^[pP](\d+(?:\.\d+)?)$")


class ThresholdSpecError(KnowledgePulseError):
    """Raised when a ``--min-score`` is neither a number in [0, 1] nor ``p0``-``p100``."""


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
        """The threshold as a number, given the scores a percentile is taken over.

        With no scores a percentile has nothing to rank, so it resolves to 0 (nothing fails it).
        """
        if self.percentile is None:
            return self.value if self.value is not None else 0.0
        if not scores:
            return 0.0
        return float(np.percentile(np.asarray(scores, dtype=np.float64), self.percentile))

    def __str__(self) -> str:
        if self.percentile is not None:
            return f"p{self.percentile:g}"
        return f"{self.value:g}"


def percentiles(scores: Sequence[float]) -> dict[str, float | int]:
    """``count``, ``min``, ``p10`` ... ``p99`` and ``max`` of a non-empty list of scores."""
    values = np.asarray(scores, dtype=np.float64)
    points = np.percentile(values, SUMMARY_PERCENTILES)
    summary: dict[str, float | int] = {"count": len(values), "min": float(values.min())}
    summary.update({f"p{p}": float(v) for p, v in zip(SUMMARY_PERCENTILES, points, strict=True)})
    summary["max"] = float(values.max())
    return summary


def domain_percentiles(
    scores_by_domain: Mapping[str, Iterable[float]],
) -> dict[str, Any]:
    """``all``: :func:`percentiles` of every score; ``by_domain``: of each domain's, by name.

    ``all`` is ``None`` when there are no scores (nothing to rank).
    """
    by_domain: dict[str, dict[str, float | int]] = {}
    everything: list[float] = []
    for domain in sorted(scores_by_domain):
        scores = list(scores_by_domain[domain])
        if scores:
            by_domain[domain] = percentiles(scores)
            everything += scores
    return {"all": percentiles(everything) if everything else None, "by_domain": by_domain}


def spilled_percentiles(scores: SpilledValues) -> dict[str, Any]:
    """:func:`domain_percentiles` of scores kept by domain in a :class:`SpilledValues`.

    Reads back only the scores each percentile interpolates between (a few passes over the
    spilled file, in bounded memory), and gives the same numbers as :func:`domain_percentiles`
    on the same scores, to the last bit.
    """
    counts: dict[str | None, int] = {None: len(scores)}
    counts |= {domain: count for domain, count in sorted(scores.groups().items()) if count}
    found = scores.order_statistics({group: _ranks(n) for group, n in counts.items() if n})
    by_domain = {
        domain: _summary(n, found[domain]) for domain, n in counts.items() if domain is not None
    }
    everything = _summary(len(scores), found[None]) if len(scores) else None
    return {"all": everything, "by_domain": by_domain}


def percentile_ranks(count: int, percentile: float) -> tuple[int, int, float]:
    """The ranks (0: the smallest) that the ``percentile`` of ``count`` values lies between.

    Returns:
        The rank below, the rank above, and the weight of the value above, exactly as numpy's
        default (linear) method computes them, so :func:`interpolate` gives numpy's result.
    """
    virtual = (count - 1) * (percentile / 100)
    if virtual >= count - 1:  # the largest value: numpy takes it alone (both ranks the last)
        return count - 1, count - 1, 0.0
    below = math.floor(virtual)
    return below, below + 1, virtual - below


def interpolate(below: float, above: float, weight: float) -> float:
    """``below`` + ``weight`` of the way to ``above``, with numpy's rounding.

    From whichever end is nearer, as numpy does, so the result is the same float to the bit.
    """
    step = above - below
    if weight >= 0.5:
        return above - step * (1 - weight)
    return below + step * weight


def _ranks(count: int) -> list[int]:
    ranks = {0, count - 1}
    for percentile in SUMMARY_PERCENTILES:
        below, above, _ = percentile_ranks(count, percentile)
        ranks |= {below, above}
    return sorted(ranks)


def _summary(count: int, at: Mapping[int, float]) -> dict[str, float | int]:
    """:func:`percentiles`' result, from the values at the ranks :func:`_ranks` names."""
    summary: dict[str, float | int] = {"count": count, "min": at[0]}
    for percentile in SUMMARY_PERCENTILES:
        below, above, weight = percentile_ranks(count, percentile)
        summary[f"p{percentile}"] = interpolate(at[below], at[above], weight)
    summary["max"] = at[count - 1]
    return summary
