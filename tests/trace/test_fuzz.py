"""Fuzzing the trace path: whatever a record holds, a run yields traces and problems, never a crash.

Each example mutates a valid trace (a subtree replaced by an arbitrary JSON value, a key
dropped or repeated), writes it as JSON Lines between two valid traces, and runs it through
loading, scoring and every renderer.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.reports.value import (
    CsvWriter,
    JsonLinesWriter,
    JsonWriter,
    RunTally,
)
from knowledgepulse.reports.value_table import to_table
from knowledgepulse.trace import TraceItem, load_traces
from knowledgepulse.value import TraceValueScorer
from knowledgepulse.value.item import ScoredItem
from tests.builders import trace_json
from tests.trace.strategies import mutated_documents


@st.composite
def mutated_traces(draw: st.DrawFn) -> str:
    text = json.dumps(draw(mutated_documents()), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        # A repeated key, which json.dumps cannot write.
        text = text.replace('"task": {', '"task": {"objective": "x", ', 1)
    return text


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(record=mutated_traces())
def test_any_mutated_trace_is_scored_or_reported(tmp_path: Path, record: str) -> None:
    """Loading, scoring and rendering a mutated record raise nothing; its neighbours score."""
    good = json.dumps(trace_json(trace_id="kp:trace:good"))
    path = tmp_path / "fuzz.jsonl"
    path.write_text(f"{good}\n{record}\n{good.replace('good', 'good-2')}\n", "utf-8")
    items = list(load_traces([path]))
    assert all(isinstance(item, TraceItem | Problem) for item in items)
    loaded = [item for item in items if isinstance(item, TraceItem)]
    assert {"kp:trace:good", "kp:trace:good-2"} <= {item.trace.id for item in loaded}
    problems = [item for item in items if isinstance(item, Problem)]
    assert all(str(problem).startswith(f"{path}:2: ") for problem in problems)
    scorer = TraceValueScorer(embedder=None)
    breakdowns = scorer.iter_scores(item.trace for item in loaded)
    results = [
        ScoredItem(item, breakdown) for item, breakdown in zip(loaded, breakdowns, strict=True)
    ]
    assert all(0.0 <= result.breakdown.score <= 1.0 for result in results)
    tally = RunTally(0.75)
    for writer_type in (JsonLinesWriter, JsonWriter, CsvWriter):
        buffer = io.StringIO()
        writer = writer_type(buffer)
        for result in results:
            writer.write(result)
        writer.close(tally, problems)
        buffer.getvalue().encode("utf-8", "backslashreplace")
    to_table(results, 0.75)
