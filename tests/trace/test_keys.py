"""Misspelt keys: an unknown key close to a known key of its object is a warning; it is kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.trace import ReasoningTrace, TraceItem, load_traces
from knowledgepulse.trace.load import _TRACE, has_unknown_keys, misspelt_keys
from tests.builders import trace_json


def test_a_misspelt_tool_names_its_path_and_the_known_key() -> None:
    """steps[1].tols is taken for steps[1].tool; the path names the step."""
    document = trace_json()
    document["steps"][1]["tols"] = document["steps"][1].pop("tool")
    assert misspelt_keys(document) == [("steps[1].tols", "tool")]


def test_misspellings_are_found_at_every_level_in_document_order() -> None:
    """Top level, metadata, a tool's own keys, the knowledge graph's entities: each is checked."""
    document = trace_json(
        knowledge_graph_delta={"entities": [{"name": "a", "tpye": "b"}], "relationships": []},
    )
    document["context"] = document.pop("@context")
    document["metadata"]["sucess"] = True
    document["steps"][1]["tool"]["nmae"] = "x"
    document["steps"][0]["stepId"] = 0
    assert misspelt_keys(document) == [
        ("metadata.sucess", "success"),
        ("steps[0].stepId", "step_id"),
        ("steps[1].tool.nmae", "name"),
        ("knowledge_graph_delta.entities[0].tpye", "type"),
        ("context", "@context"),
    ]


def test_unknown_keys_far_from_every_known_key_are_not_warned_about() -> None:
    """JSON-LD grows: a producer's own keys, and short keys near a two-letter one, are fine."""
    document = trace_json(producer="x", kind="y", x_trace={"tols": 1}, ref="z")
    document["steps"][0]["annotations"] = ["a"]
    assert misspelt_keys(document) == []


@given(st.dictionaries(st.text("z0123456789", min_size=3, max_size=12), st.integers(), max_size=5))
def test_a_key_sharing_no_character_with_a_known_key_is_silent(extra: dict[str, int]) -> None:
    """Three or more characters, none in any known key: three edits at least, never a warning."""
    document = trace_json()
    document.update(extra)
    document["steps"][0].update(extra)
    assert misspelt_keys(document) == []


def _objects(value: Any, shape: Any) -> Iterator[Any]:
    """Every object of a document that a model reads, with the shapes load.py derived."""
    yield value
    for key, inner in shape.nested.items():
        item = value.get(key)
        for child in item if isinstance(item, list) else [item] if item is not None else []:
            yield from _objects(child, inner)


def test_the_fast_check_sees_an_unknown_key_in_every_nested_model() -> None:
    """has_unknown_keys, written out by hand, misses no model: each object gets a key in turn."""
    document = trace_json(
        knowledge_graph_delta={
            "entities": [{"name": "a", "type": "b"}],
            "relationships": [{"fact": "f", "valid_from": "2026"}],
        }
    )
    assert not has_unknown_keys(ReasoningTrace.model_validate(document))
    count = 0
    for target in _objects(document, _TRACE):
        target["zz_extra"] = 1
        assert has_unknown_keys(ReasoningTrace.model_validate(document)), target
        del target["zz_extra"]
        count += 1
    assert count == 11  # the trace, metadata, task, 3 steps, 1 tool, outcome, delta, 2 items


def test_a_record_that_is_no_trace_gets_no_hints() -> None:
    """Neither the trace's @context nor its @type: another kind of record; its tags are no task."""
    assert misspelt_keys({"id": "run-1", "name": "agent", "tags": ["x"], "context": {}}) == []


def test_loading_warns_at_the_line_and_still_loads_the_trace(tmp_path: Path) -> None:
    """load_traces yields FILE:LINE: steps[1].tols: ... did you mean 'tool'? then the trace."""
    document = trace_json()
    document["steps"][1]["tols"] = document["steps"][1].pop("tool")
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(trace_json(trace_id="kp:trace:a")) + "\n" + json.dumps(document))
    items = list(load_traces([path]))
    warnings = [i for i in items if isinstance(i, Problem)]
    assert [str(w) for w in warnings] == [
        f"{path}:2: warning: steps[1].tols: unknown key, kept but not read: did you mean 'tool'?"
    ]
    assert all(w.warning for w in warnings)
    assert len([i for i in items if isinstance(i, TraceItem)]) == 2


def test_an_invalid_record_gets_the_hint_beside_its_errors(tmp_path: Path) -> None:
    """metdata for metadata: the missing field is an error, and the warning says why."""
    document = trace_json()
    document["metdata"] = document.pop("metadata")
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(document))
    problems = [str(i) for i in load_traces([path])]
    assert problems[0].endswith("metdata: unknown key, kept but not read: did you mean 'metadata'?")
    assert any("metadata" in p and "warning" not in p for p in problems[1:])
