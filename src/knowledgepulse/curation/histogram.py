"""The distribution of nearest-neighbour similarities: what ``--max-similarity`` would cut.

Each trace's cosine with its most similar other trace of the corpus (corpus novelty's
``1 - N``) says how far it is from being someone's near-duplicate. Their percentiles and a
histogram in bins of 0.05 let a user pick a similarity limit from their own data rather than
from a default: the share of traces at or above S is the most that ``--max-similarity S``
can reject (each rejected trace has a selected one at S or above; the best of a pair stays).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knowledgepulse.curation.percentiles import percentiles

BIN_WIDTH = 0.05
LIMITS = (0.8, 0.85, 0.9, 0.95, 0.99)
"""The similarity limits whose reach is counted (``at_or_above``)."""


@dataclass(frozen=True, slots=True)
class SimilarityHistogram:
    """Nearest-neighbour cosines summarised.

    Attributes:
        summary: ``count``, ``min``, ``p10``...``p99``, ``max`` (see
            :func:`~knowledgepulse.curation.percentiles`).
        bins: ``(low, high, count)`` of each bin, lowest first; a bin holds ``low <= s < high``
            and the last one holds its ``high`` too.
        at_or_above: for each of :data:`LIMITS`, how many similarities reach it.
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
