"""Hypothesis strategies for trace documents: valid ones, and valid ones mutated at random."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.builders import trace_json

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(
        [
            "",
            "thought",
            "error_recovery",
            "kp:trace:x",
            "2026-11-23T08:00:00Z",
            "2026-02-30T08:00:00Z",
            "2026-11-23t08:00:00+01:00",
            "2026-11-23T08:00:00.1234567Z",
            "\u2028",
            "[b]:1:",
        ]
    )
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)


def json_paths(value: Any, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside a JSON document, the document's own (``()``) first."""
    found = [loc]
    if isinstance(value, dict):
        for key, item in value.items():
            found += json_paths(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += json_paths(item, (*loc, index))
    return found


@st.composite
def mutated_documents(draw: st.DrawFn, trace_id: str = "kp:trace:fuzz") -> dict[str, Any]:
    """A valid trace with one to three values replaced by arbitrary JSON or keys dropped."""
    document = trace_json(trace_id=trace_id)
    locs = [loc for loc in json_paths(document) if loc]
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
    return document


@st.composite
def nearly_valid_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A valid trace with a leaf or two changed, or a key added: valid as often as not."""
    document = trace_json(trace_id="kp:trace:near")
    document["steps"][1]["input"] = {"query": "Lisbon", "when": [1, 2.5]}
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        locs = json_paths(document)
        loc = draw(st.sampled_from(locs))
        parent: Any = document
        for key in loc[:-1]:
            parent = parent[key]
        target = parent[loc[-1]] if loc else document
        if isinstance(target, dict) and draw(st.booleans()):
            # An unknown key, which the models keep as an extra.
            target[draw(st.sampled_from(["source", "note", "type", "context", "x"]))] = draw(
                json_values
            )
        elif loc and not isinstance(target, dict | list):
            parent[loc[-1]] = draw(json_leaves)
    return document
