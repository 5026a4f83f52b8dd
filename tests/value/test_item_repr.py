"""A scored item and a trace item print short: id, score, where read, task; never the trace."""

from __future__ import annotations

from knowledgepulse.runs import items_of, score
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value.scorer import TraceValueScorer

_ROWS = [
    {
        "task_id": "weather-1",
        "messages": [
            {"role": "user", "content": "What is the weather in Paris? " + "Please. " * 200},
            {"role": "assistant", "content": "Sunny, 21 degrees."},
        ],
    }
]


def test_scored_item_repr_names_id_score_location_and_task() -> None:
    """The repr holds what tells items apart in a list, and not the trace's text."""
    [scored] = score(_ROWS, scorer=TraceValueScorer(embedder=HashingEmbedder()))
    shown = repr(scored)
    assert shown.startswith("ScoredItem(")
    assert repr(scored.breakdown.trace_id) in shown
    assert f"score={scored.breakdown.score:.4f}" in shown
    assert str(scored.location) in shown
    assert "task='weather-1'" in shown
    assert "Please." not in shown
    assert len(shown) < 200


def test_trace_item_repr_names_id_location_and_task() -> None:
    """A trace item's repr is as short, without a score."""
    [item] = [read for read in items_of(_ROWS) if isinstance(read, TraceItem)]
    shown = repr(item)
    assert repr(item.trace.id) in shown
    assert str(item.location) in shown
    assert "task='weather-1'" in shown
    assert "Please." not in shown
    assert len(shown) < 150
