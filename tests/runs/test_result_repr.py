"""Every one-call result prints as a line of counts, however many items it holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.runs import decontaminate, dedupe, redact, select, split
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


def traces(copies: int) -> list[dict[str, Any]]:
    """The example traces ``copies`` times, each copy under its own id."""
    documents = [json.loads(line) for line in TRACES.read_text().splitlines()]
    return [
        {**document, "id": f"{document['id']}-{copy}"}
        for copy in range(copies)
        for document in documents
    ]


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


CALLS: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "SelectionResult": lambda data: select(data, budget=3, scorer=scorer()),
    "DedupeResult": lambda data: dedupe(data, scorer=scorer()),
    "SplitResult": lambda data: split(data, test=0.3),
    "DecontaminationResult": lambda data: decontaminate(data, against=data[:2]),
    "Redaction": redact,
}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_a_result_prints_counts_not_items(kind: str) -> None:
    """Its repr names its kind and does not grow with the input (no item, no trace text)."""
    small, large = (repr(CALLS[kind](traces(copies))) for copies in (1, 6))
    assert large.startswith(f"<{kind}: ")
    assert len(large) < 200
    assert len(large) - len(small) < 20  # a few digits more
    assert "kp:trace:" not in large


def test_a_dedupe_result_says_how_it_grouped() -> None:
    """By similarity its threshold; by task how many tasks, and whether they were inferred."""
    data = traces(2)
    assert "(threshold 0.95);" in repr(dedupe(data, scorer=scorer()))
    by_task = repr(dedupe(data, by="task", scorer=scorer()))
    assert "(by task, " in by_task
    assert " tasks (inferred));" in by_task
    assert "threshold" not in by_task
