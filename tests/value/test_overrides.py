"""The three rule overrides, their order and precedence."""

from __future__ import annotations

import pytest

from knowledgepulse.value.dimensions import TraceFeatures, apply_overrides


def features(
    *,
    step_count: int = 3,
    error_recoveries: int = 0,
    unique_tools: int = 2,
    uses_tools: bool = True,
    single_thought: bool = False,
    success: bool = True,
) -> TraceFeatures:
    return TraceFeatures(
        step_count=step_count,
        unique_step_types=3,
        error_recoveries=error_recoveries,
        unique_tools=unique_tools,
        uses_tools=uses_tools,
        single_thought=single_thought,
        success=success,
        confidence=1.0,
    )


def test_no_override_when_no_condition_holds() -> None:
    """A trace with two tools, no recoveries and several steps keeps its weighted sum."""
    assert apply_overrides(0.63, features()) == (0.63, ())


def test_single_thought_sets_the_score_to_point_one() -> None:
    """One thought step: 0.1 whatever the weighted sum."""
    score, fired = apply_overrides(
        0.9, features(step_count=1, single_thought=True, uses_tools=False, unique_tools=0)
    )
    assert score == 0.1
    assert [(o.name, o.before, o.after) for o in fired] == [("single_thought", 0.9, 0.1)]


def test_single_thought_then_low_diversity_applies_on_top() -> None:
    """Rule 1 first, then rule 3 on its result: a single thought carrying one tool ends at 0.0."""
    score, fired = apply_overrides(0.7, features(step_count=1, single_thought=True, unique_tools=1))
    assert score == pytest.approx(0.0)
    assert [o.name for o in fired] == ["single_thought", "low_tool_diversity"]
    assert fired[1].before == 0.1


@pytest.mark.parametrize(("recoveries", "fires"), [(2, False), (3, True)])
def test_recovery_bonus_needs_more_than_two(recoveries: int, fires: bool) -> None:
    """More than 2 error recoveries (the seeds' code), not 2 or more (the Japanese table)."""
    score, fired = apply_overrides(0.5, features(error_recoveries=recoveries))
    assert (score == pytest.approx(0.6)) is fires
    assert ("error_recovery_bonus" in [o.name for o in fired]) is fires


def test_recovery_bonus_needs_success() -> None:
    """A failed trace gets no bonus however many recoveries it has."""
    assert apply_overrides(0.5, features(error_recoveries=5, success=False)) == (0.5, ())


def test_recovery_bonus_is_capped_at_one_and_still_recorded() -> None:
    """0.95 + 0.1 is 1.0; the override is listed with before and after."""
    score, fired = apply_overrides(0.95, features(error_recoveries=3))
    assert score == 1.0
    assert (fired[0].before, fired[0].after) == (0.95, 1.0)


def test_low_diversity_penalty_is_floored_at_zero() -> None:
    """0.05 - 0.1 is 0.0, not negative."""
    score, _ = apply_overrides(0.05, features(unique_tools=1))
    assert score == 0.0


def test_low_diversity_needs_a_tool() -> None:
    """A trace without tools is not penalised for low tool diversity."""
    assert apply_overrides(0.5, features(unique_tools=0, uses_tools=False)) == (0.5, ())


def test_bonus_and_penalty_apply_in_order() -> None:
    """Rule 2 then rule 3: 0.95 -> 1.0 (capped) -> 0.9."""
    score, fired = apply_overrides(0.95, features(error_recoveries=4, unique_tools=1))
    assert score == pytest.approx(0.9)
    assert [(o.name, o.before, o.after) for o in fired] == [
        ("error_recovery_bonus", 0.95, 1.0),
        ("low_tool_diversity", 1.0, pytest.approx(0.9)),
    ]
