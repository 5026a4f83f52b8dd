"""A monotone map of one embedder's novelty onto another's scale, so thresholds keep their meaning.

The static embedder separates new tasks from repeats as well as MiniLM does, but on its own
scale (tau-bench median novelty of new tasks / repeats 0.73 / 0.36 against MiniLM's 0.47 / 0.21),
so the same sharing threshold would share other traces. Its table ships a map fitted on the
public corpora by ``bench/build_static_embedder.py``: the same quantiles of both embedders'
novelty, joined by straight lines (``docs/novelty.md``). No numpy: a scorer applies it per trace.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any


@dataclass(frozen=True, slots=True)
class NoveltyCalibration:
    """Novelty on an embedder's own scale mapped, piecewise linearly, onto a reference's.

    Attributes:
        knots: ``(novelty, reference novelty)`` pairs from ``(0, 0)`` to ``(1, 1)``, the first
            strictly increasing, the second never decreasing: the map is monotone, so the
            order of traces by novelty (and every AUC) is kept.
        onto: the reference embedder's model id (the breakdown's explanation names it).
    """

    knots: tuple[tuple[float, float], ...]
    onto: str

    def __post_init__(self) -> None:
        xs = [x for x, _ in self.knots]
        ys = [y for _, y in self.knots]
        if len(self.knots) < 2 or self.knots[0] != (0.0, 0.0) or self.knots[-1] != (1.0, 1.0):
            raise ValueError("a novelty calibration runs from (0, 0) to (1, 1)")
        if any(b <= a for a, b in pairwise(xs)) or any(b < a for a, b in pairwise(ys)):
            raise ValueError("a novelty calibration's knots must increase")

    def __call__(self, novelty: float) -> float:
        """``novelty`` (in [0, 1]) on the reference's scale."""
        at = min(max(bisect_right([x for x, _ in self.knots], novelty), 1), len(self.knots) - 1)
        (x0, y0), (x1, y1) = self.knots[at - 1], self.knots[at]
        return y0 + (y1 - y0) * (novelty - x0) / (x1 - x0)

    def inverse(self, reference: float) -> float:
        """The least novelty on this embedder's scale that the map takes to ``reference``.

        What a threshold set on the reference's scale (a cosine of MiniLM's: ``1 - novelty``)
        is on this embedder's own, so that it keeps its meaning.
        """
        reference = min(max(reference, 0.0), 1.0)
        at = min(max(bisect_left([y for _, y in self.knots], reference), 1), len(self.knots) - 1)
        (x0, y0), (x1, y1) = self.knots[at - 1], self.knots[at]
        return x0 if y1 == y0 else x0 + (x1 - x0) * (reference - y0) / (y1 - y0)

    @classmethod
    def from_config(cls, found: Mapping[str, Any], novelty_text: str) -> NoveltyCalibration | None:
        """The calibration for ``novelty_text`` in a table's ``novelty_calibration`` entry.

        ``None`` when there is none for that text (it stays on the embedder's own scale).

        Raises:
            ValueError: the entry is malformed.
        """
        knots: Sequence[Sequence[float]] | None = found.get("knots", {}).get(novelty_text)
        if knots is None:
            return None
        return cls(tuple((float(x), float(y)) for x, y in knots), onto=str(found["onto"]))
