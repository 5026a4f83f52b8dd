"""The four dimension formulas, on hand-computed traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.trace.text import whole_text
from knowledgepulse.value.dimensions import (
    TraceFeatures,
    complexity,
    novelty,
    outcome_confidence,
    tool_diversity,
    without_noise,
)
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import make_trace, step, steps

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"


def features(**kwargs: object) -> TraceFeatures:
    return TraceFeatures.of(make_trace(**kwargs))


def test_worked_example_complexity() -> None:
    """thought, tool_call, observation: 3/4*0.5 + 0 + 3/20*0.2 = 0.405."""
    assert complexity(features()) == pytest.approx(0.405)


def test_error_recovery_adds_a_flat_point_three() -> None:
    """Any error_recovery step adds 0.3, however many there are."""
    one = features(step_list=steps("thought", "error_recovery"))
    three = features(
        step_list=steps("thought", "error_recovery", "error_recovery", "error_recovery")
    )
    assert complexity(one) == pytest.approx(2 / 4 * 0.5 + 0.3 + 2 / 20 * 0.2)
    assert complexity(three) == pytest.approx(2 / 4 * 0.5 + 0.3 + 4 / 20 * 0.2)


def test_step_factor_is_capped_at_twenty_steps() -> None:
    """Past 20 steps the step-count factor stays at 0.2 (the seeds' table, not the TS formula)."""
    twenty = features(step_list=steps(*["thought"] * 20))
    forty = features(step_list=steps(*["thought"] * 40))
    assert complexity(twenty) == complexity(forty) == pytest.approx(1 / 4 * 0.5 + 0.2)


def test_complexity_reaches_one_at_most() -> None:
    """All four types, a recovery and 20+ steps give 0.5 + 0.3 + 0.2 = 1.0, not more."""
    kinds = ["thought", "tool_call", "observation", "error_recovery"] * 6
    assert complexity(features(step_list=steps(*kinds))) == pytest.approx(1.0)


def test_tools_count_on_any_step_type() -> None:
    """uniqueTools counts tool names on every step that carries one, whatever its type."""
    f = features(
        step_list=[
            step(0, "thought", tool="a"),
            step(1, "observation", tool="b"),
            step(2, "tool_call", tool="a"),
        ]
    )
    assert f.unique_tools == 2
    assert tool_diversity(f) == pytest.approx(min(1.0, 2 / 3 * 3))


def test_an_empty_tool_name_is_a_tool_name_like_any_other() -> None:
    """``""`` counts as one distinct tool for uniqueTools, as the reference schema has it."""
    f = features(
        step_list=[
            step(0, "tool_call", tool=""),
            step(1, "tool_call", tool="search"),
            step(2, "tool_call", tool=""),
        ]
    )
    assert (f.unique_tools, f.uses_tools) == (2, True)
    only_empty = features(step_list=[step(0, "tool_call", tool=""), step(1, "observation")])
    assert (only_empty.unique_tools, only_empty.uses_tools) == (1, True)
    assert tool_diversity(only_empty) == 1.0  # min(1, 1/2 * 3)


def test_tool_diversity_of_a_long_single_tool_trace() -> None:
    """One tool over 12 steps: 1/12*3 = 0.25."""
    f = features(step_list=steps(*[("tool_call", "search")] * 12))
    assert tool_diversity(f) == pytest.approx(0.25)


def test_no_tools_means_zero_diversity() -> None:
    """A trace without tools has D = 0."""
    assert tool_diversity(features(step_list=steps("thought", "thought"))) == 0.0


@pytest.mark.parametrize(
    ("success", "confidence", "expected"), [(True, 0.8, 0.8), (False, 0.8, 0.24), (False, 0.0, 0.0)]
)
def test_outcome_confidence_keeps_thirty_percent_on_failure(
    success: bool, confidence: float, expected: float
) -> None:
    """O = confidence, times 0.3 when the task failed."""
    assert outcome_confidence(features(success=success, confidence=confidence)) == pytest.approx(
        expected
    )


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [(-0.4, 1.0), (0.0, 1.0), (0.25, 0.75), (1.0, 0.0), (1.0000001, 0.0)],
)
def test_novelty_is_one_minus_similarity_clamped(similarity: float, expected: float) -> None:
    """N = 1 - cos, clamped to [0, 1]: a negative cosine gives 1, not more."""
    assert novelty(similarity) == pytest.approx(expected)


@given(st.floats(min_value=-1.5, max_value=1.5, allow_nan=False))
def test_novelty_is_always_a_proportion(similarity: float) -> None:
    """Whatever cosine the cache returns, N stays in [0, 1]."""
    assert 0.0 <= novelty(similarity) <= 1.0


def test_whole_text_joins_objective_and_every_step() -> None:
    """The embedded text is the objective, a space, and the step contents joined by spaces."""
    trace = make_trace(
        objective="Goal",
        step_list=[
            step(0, "thought", "a"),
            step(1, "tool_call", None, "t"),
            step(2, "observation", "c"),
        ],
    )
    assert whole_text(trace) == "Goal a  c"


@given(st.floats(0.0, 1.0))
def test_without_noise_moves_a_value_by_less_than_5e_13_and_is_stable(value: float) -> None:
    """Rounding away binary noise changes no score that matters, and once is enough."""
    clean = without_noise(value)
    assert abs(clean - value) <= 5e-13
    assert without_noise(clean) == clean
    assert clean == round(value, 12)


def test_the_readme_example_scores_a_clean_0_724() -> None:
    """0.2*0.425 + 0.25*0.5 + 0.1*1.0 + 0.45*0.92 is 0.724 where a user reads it, not
    0.7240000000000001: the score, the breakdown's repr and to_dict, evaluate_value."""
    trace = json.loads((EXAMPLES / "finance-tsmc.json").read_text())
    breakdown = TraceValueScorer(embedder=None).score(trace)
    assert repr(breakdown.score) == "0.724"
    assert "0.7240000000000001" not in repr(breakdown)
    assert breakdown.to_dict()["score"] == breakdown.to_dict()["weighted_sum"] == 0.724
    one_tool_in_five = features(step_list=[step(n, "tool_call", "x", "search") for n in range(5)])
    assert tool_diversity(one_tool_in_five) == 0.6  # 1/5*3, not 0.6000000000000001
