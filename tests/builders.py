"""Builders for traces in tests: a valid trace by default, every part overridable."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from knowledgepulse.records import Location, Record
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.item import ScoredItem


def step(
    step_id: int, kind: str, content: str | None = None, tool: str | None = None
) -> dict[str, Any]:
    """One step as JSON."""
    data: dict[str, Any] = {"step_id": step_id, "type": kind}
    if content is not None:
        data["content"] = content
    if tool is not None:
        data["tool"] = {"name": tool}
    return data


def steps(*kinds_and_tools: str | tuple[str, str]) -> list[dict[str, Any]]:
    """Steps from kinds, or (kind, tool) pairs, numbered from 0."""
    built = []
    for number, spec in enumerate(kinds_and_tools):
        kind, tool = spec if isinstance(spec, tuple) else (spec, None)
        built.append(step(number, kind, f"step {number}: {kind}", tool))
    return built


def trace_json(
    *,
    trace_id: str = "kp:trace:test-1",
    domain: str = "testing",
    success: bool = True,
    confidence: float = 1.0,
    objective: str = "Find the cheapest flight from Lisbon to Oslo",
    step_list: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid trace as parsed JSON: the spec's worked example unless told otherwise."""
    data: dict[str, Any] = {
        "@context": "https://openknowledgepulse.org/schema/v1",
        "@type": "ReasoningTrace",
        "id": trace_id,
        "metadata": {
            "created_at": "2026-01-31T12:00:00Z",
            "task_domain": domain,
            "success": success,
            "quality_score": 0.0,
            "visibility": "network",
            "privacy_level": "aggregated",
        },
        "task": {"objective": objective},
        "steps": copy.deepcopy(step_list)
        if step_list is not None
        else steps("thought", ("tool_call", "search"), "observation"),
        "outcome": {"result_summary": "done", "confidence": confidence},
    }
    data.update(extra)
    return data


def curation_traces() -> list[dict[str, Any]]:
    """Two copies of a flight search (near-duplicates) and two code tasks: select's fixture."""
    return [
        trace_json(trace_id="kp:trace:flight-a", objective="cheapest flight Lisbon Oslo"),
        trace_json(trace_id="kp:trace:flight-b", objective="cheapest flight Lisbon Oslo"),
        trace_json(
            trace_id="kp:trace:code-1",
            domain="code",
            objective="fix the flaky payment test in the integration suite",
            confidence=0.5,
        ),
        trace_json(
            trace_id="kp:trace:code-2",
            domain="code",
            objective="rename the logger module and update every import",
            confidence=0.6,
        ),
    ]


def make_trace(**kwargs: Any) -> ReasoningTrace:
    """A validated trace (see :func:`trace_json` for the arguments)."""
    return ReasoningTrace.model_validate(trace_json(**kwargs))


@functools.cache
def _default_trace() -> ReasoningTrace:
    return make_trace()


def scored_item(breakdown: ValueBreakdown, location: Location | None = None) -> ScoredItem:
    """``breakdown`` as a scored item read at ``location`` (its trace: :func:`make_trace`'s)."""
    record = Record(location or Location("t.jsonl", 1, 0), trace_json())
    return ScoredItem(TraceItem(record, _default_trace()), breakdown)


def assert_scored_alike(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Equal breakdowns, numbers within 1e-6; the nearest trace may be another of a near tie.

    Which neighbour a scan names among near-equal ones is pinned in tests/novelty/test_search.py.
    """
    assert len(got) == len(want)
    for one, other in zip(got, want, strict=True):
        flat_one, flat_other = flatten(one), flatten(other)
        assert flat_one.keys() == flat_other.keys()
        for key, value in flat_one.items():
            if isinstance(value, float) and isinstance(flat_other[key], float):
                assert value == pytest.approx(flat_other[key], abs=1e-6), key
            elif not key.endswith("nearest_trace"):
                assert value == flat_other[key], key


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as one dict of dotted paths."""
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return {k: v for key, item in items for k, v in flatten(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def without_nulls(value: Any) -> Any:
    """``value`` without null keys, at any depth, and an object left empty as null.

    A row as Parquet gives it back, where its struct's keys that the row lacked are null and an
    empty object is null, compared with the row written.
    """
    if isinstance(value, dict):
        kept = {key: without_nulls(inner) for key, inner in value.items()}
        return {key: inner for key, inner in kept.items() if inner is not None} or None
    if isinstance(value, list):
        return [without_nulls(inner) for inner in value]
    return value


class RandomEmbedder:
    """Vectors pointing anywhere (a seeded normal draw), so that cosines may be negative."""

    dimensions = 8
    model_id = "random"

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._rng.normal(size=(len(texts), self.dimensions)).astype(np.float32)
