"""Every score is the specification's arithmetic on the raw trace, recomputed apart from kp.

The counts are taken from the JSON as the specification words them, the weights from its table,
the overrides applied in its order; only the cosine to the nearest cached vector is kp's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import RandomEmbedder, step, trace_json
from tests.value.spec_oracle import SPEC_PROFILES, by_hand

KINDS = ("thought", "tool_call", "observation", "error_recovery")
DOMAINS = [*SPEC_PROFILES, "code-review", "Finance", "legal"]


@st.composite
def raw_traces(draw: st.DrawFn, index: int) -> dict[str, Any]:
    """A valid trace as JSON: any mix of step types, tools on any step (``""`` too)."""
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=30))
    tools = st.none() | st.sampled_from(["", "search", "sql", "http"])
    return trace_json(
        trace_id=f"kp:trace:{index}",
        domain=draw(st.sampled_from(DOMAINS)),
        success=draw(st.booleans()),
        confidence=draw(st.sampled_from([0, 1]) | st.floats(0.0, 1.0)),
        step_list=[step(n, kind, "text", draw(tools)) for n, kind in enumerate(kinds)],
    )


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 6).flatmap(lambda n: st.tuples(*(raw_traces(i) for i in range(n)))),
    st.integers(0, 2**32 - 1) | st.none(),
)
def test_every_score_is_the_specs_arithmetic_on_the_raw_trace(
    batch: tuple[dict[str, Any], ...], seed: int | None
) -> None:
    """C, D, O from the steps, N = 1 - cosine clamped (0.5 on an empty cache or without an
    embedder), the spec's weights by exact domain, the overrides in order, the clamp: the
    score agrees within 1e-9 and the same overrides fire."""
    scorer = TraceValueScorer(embedder=None if seed is None else RandomEmbedder(seed))
    for trace, breakdown in zip(batch, scorer.score_many(batch), strict=True):
        similarity = breakdown.novelty.similarity
        novelty = 0.5 if similarity is None else min(1.0, max(0.0, 1.0 - similarity))
        expected = by_hand(trace, novelty)
        assert abs(breakdown.score - expected["score"]) <= 1e-9
        assert [o.name for o in breakdown.overrides] == [name for name, *_ in expected["overrides"]]
        assert abs(breakdown.dimensions.novelty - novelty) <= 1e-9
