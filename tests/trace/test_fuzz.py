"""Fuzzing the trace path: whatever a record holds, a run yields traces and problems, never a crash.

Each example mutates a valid trace (a subtree replaced by an arbitrary JSON value, a key
dropped or repeated), writes it as JSON Lines between two valid traces, and runs it through
loading, scoring and every renderer.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.reports.value import (
    CsvWriter,
    JsonLinesWriter,
    JsonWriter,
    RunTally,
    ScoredTrace,
)
from knowledgepulse.reports.value_table import to_table
from knowledgepulse.trace import LoadedTrace, load_traces
from knowledgepulse.value import TraceValueScorer
from tests.builders import trace_json

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["", "thought", "kp:trace:x", "2026-11-23T08:00:00Z", "\u2028", "[b]:1:"])
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)


def _paths(value: Any, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [loc]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*loc, index))
    return found


@st.composite
def mutated_traces(draw: st.DrawFn) -> str:
    document = trace_json(trace_id="kp:trace:fuzz")
    locs = [loc for loc in _paths(document) if loc]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        loc = draw(st.sampled_from(locs))
        parent: Any = document
        try:
            for key in loc[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(loc[-1], None)
            else:
                parent[loc[-1]] = draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
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
    assert all(isinstance(item, LoadedTrace | Problem) for item in items)
    loaded = [item for item in items if isinstance(item, LoadedTrace)]
    assert {"kp:trace:good", "kp:trace:good-2"} <= {item.trace.id for item in loaded}
    problems = [item for item in items if isinstance(item, Problem)]
    assert all(str(problem).startswith(f"{path}:2: ") for problem in problems)
    scorer = TraceValueScorer(embedder=None)
    results = [
        ScoredTrace(breakdown, item.record.location)
        for item, breakdown in zip(loaded, scorer.iter_scores(i.trace for i in loaded), strict=True)
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
