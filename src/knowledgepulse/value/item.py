"""A trace item with its score: what every scoring step gives on."""

from __future__ import annotations

from dataclasses import dataclass

from knowledgepulse.records import Location
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value.breakdown import ValueBreakdown, score_text


@dataclass(frozen=True, slots=True, repr=False)
class ScoredItem:
    """A :class:`~knowledgepulse.trace.TraceItem` and its value breakdown.

    Attributes:
        item: the trace as read, with its location, row, task and warnings.
        breakdown: the score and everything that explains it.
    """

    item: TraceItem
    breakdown: ValueBreakdown

    @property
    def trace(self) -> ReasoningTrace:
        """The trace that was scored."""
        return self.item.trace

    @property
    def location(self) -> Location:
        """Where the trace was read from."""
        return self.item.location

    def __repr__(self) -> str:
        # Short, as TraceItem's: the breakdown is one attribute away (``item.breakdown``).
        breakdown, item = self.breakdown, self.item
        return (
            f"ScoredItem({breakdown.trace_id!r}, "
            f"score={score_text(breakdown.score, breakdown.threshold, 4)}, "
            f"shareable={breakdown.shareable}, at={str(item.location)!r}, task={item.task!r})"
        )
