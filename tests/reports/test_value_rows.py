"""The report row is the breakdown's data with its floats rounded, built in one pass."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Location
from knowledgepulse.reports.value import row, spreadsheet_text, tidy
from knowledgepulse.value.breakdown import NoveltyOrigin, ValueBreakdown, compose
from knowledgepulse.value.dimensions import TraceFeatures
from knowledgepulse.value.profiles import ScoringWeights
from tests.builders import scored_item

# Floats with binary noise (0.1 + 0.2), past one (the slow rounding path), and plain ones.
numbers = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.1 + 0.2, 0.7240000000000001, 1 / 3, 0.1234567890123456789]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)
units = st.floats(min_value=0.0, max_value=1.0)

origins = st.one_of(
    st.builds(NoveltyOrigin, st.just("no_embedder"), reason=st.none() | st.text(max_size=5)),
    st.builds(
        NoveltyOrigin,
        st.just("embedding"),
        nearest_id=st.text(max_size=5),
        similarity=numbers,
        windows=st.integers(0, 40),
        capped=st.booleans(),
        novelty_text=st.just("windows"),
    ),
)

features = st.builds(
    TraceFeatures,
    step_count=st.integers(1, 40),
    unique_step_types=st.integers(1, 4),
    error_recoveries=st.integers(0, 5),
    unique_tools=st.integers(0, 6),
    uses_tools=st.booleans(),
    single_thought=st.booleans(),
    success=st.booleans(),
    # An int confidence (a library user's) must stay an int, as tidy keeps it.
    confidence=units | st.integers(0, 1),
    domain_source=st.sampled_from(["trace", "argument", "metadata", "default"]),
    confidence_source=st.sampled_from(["trace", "argument", "metadata", "default"]),
)


def _weights(values: list[float]) -> ScoringWeights:
    total = sum(values) or 1.0
    return ScoringWeights(*(v / total for v in values))


breakdowns = st.builds(
    lambda f, novelty, origin, weights, threshold: compose(
        trace_id="kp:trace:x",
        domain="coding",
        features=f,
        novelty_value=novelty,
        novelty_origin=origin,
        profile="coding",
        weights=weights,
        threshold=threshold,
    ),
    features,
    units,
    origins,
    st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=4, max_size=4).map(_weights),
    units | st.sampled_from([0, 1]),
)


@settings(max_examples=300, deadline=None)
@given(breakdown=breakdowns)
def test_a_row_is_the_tidied_breakdown_then_its_location(breakdown: ValueBreakdown) -> None:
    """row() rounds as it builds: the same keys, values and types as tidy(to_dict())."""
    expected: dict[str, Any] = {**tidy(breakdown.to_dict()), "file": "t.jsonl", "line": 3}
    got = row(scored_item(breakdown, Location("t.jsonl", 3, 0)))
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # same key order, same int/float types


@given(breakdown=breakdowns)
def test_to_dict_without_rounding_keeps_every_number_exact(breakdown: ValueBreakdown) -> None:
    """The library's to_dict() is unrounded: its numbers are the breakdown's own."""
    data = breakdown.to_dict()
    assert data["score"] == breakdown.score
    assert data["weighted_sum"] == breakdown.weighted_sum
    assert data["dimensions"] == breakdown.dimensions.to_dict()
    assert data["inputs"] == breakdown.inputs
    assert data["nearest_similarity"] == breakdown.novelty.similarity


def test_binary_noise_is_rounded_away_in_a_row() -> None:
    """A weighted sum of 0.7240000000000001 is written 0.724."""
    noisy = compose(
        trace_id="kp:trace:x",
        domain="coding",
        features=TraceFeatures(3, 3, 0, 1, True, False, True, 0.7240000000000001),
        novelty_value=0.5,
        novelty_origin=NoveltyOrigin("no_embedder"),
        profile="default",
        weights=ScoringWeights(0.25, 0.25, 0.25, 0.25),
        threshold=0.75,
    )
    data = row(scored_item(noisy, Location("t.jsonl", 1, 0)))
    assert data["inputs"]["outcome_confidence"]["confidence"] == 0.724
    assert noisy.to_dict()["inputs"]["outcome_confidence"]["confidence"] == 0.7240000000000001


@given(st.text(max_size=12))
def test_a_csv_cell_is_its_text_or_the_text_after_a_quote_and_never_starts_a_formula(
    text: str,
) -> None:
    """The law of ``spreadsheet_text``: nothing is lost, and what starts a formula is quoted."""
    shown = spreadsheet_text(text)
    assert shown in (text, "'" + text)
    if isinstance(shown, str) and shown.startswith(("=", "+", "-", "@", "\t", "\r")):
        assert shown == text
        assert text == "-" or isinstance(float(text), float)  # a number: it starts no formula
