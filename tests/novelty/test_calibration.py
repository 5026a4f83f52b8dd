"""The novelty calibration: a monotone map of [0, 1] onto itself, read from a table's config."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.novelty.calibration import NoveltyCalibration

KNOTS = ((0.0, 0.0), (0.2, 0.1), (0.5, 0.3), (0.9, 0.8), (1.0, 1.0))
UNIT = st.floats(0.0, 1.0)


def test_the_map_goes_through_its_knots_and_straight_between_them() -> None:
    """Each knot maps to its pair; halfway between two knots maps halfway between their pairs."""
    calibration = NoveltyCalibration(KNOTS, onto="ref")
    for x, y in KNOTS:
        assert calibration(x) == pytest.approx(y)
    assert calibration(0.35) == pytest.approx(0.2)


@given(UNIT, UNIT)
def test_the_map_keeps_the_order_of_novelties_within_the_unit_interval(a: float, b: float) -> None:
    """A lower novelty never maps above a higher one, and every value stays in [0, 1]."""
    calibration = NoveltyCalibration(KNOTS, onto="ref")
    low, high = sorted((a, b))
    assert 0.0 <= calibration(low) <= calibration(high) <= 1.0


@pytest.mark.parametrize(
    "knots",
    [
        ((0.0, 0.0), (0.5, 0.6), (0.5, 0.7), (1.0, 1.0)),  # a repeated novelty
        ((0.0, 0.0), (0.5, 0.6), (0.7, 0.4), (1.0, 1.0)),  # a falling reference
        ((0.0, 0.1), (1.0, 1.0)),  # not from (0, 0)
        ((0.0, 0.0), (0.5, 0.6)),  # not to (1, 1)
        ((0.0, 0.0),),  # one knot
        (),  # none
    ],
)
def test_knots_that_would_not_make_a_monotone_map_of_the_unit_interval_are_refused(
    knots: tuple[tuple[float, float], ...],
) -> None:
    """Knots must rise from (0, 0) to (1, 1)."""
    with pytest.raises(ValueError, match="calibration"):
        NoveltyCalibration(knots, onto="ref")


def test_a_config_entry_gives_the_map_of_its_novelty_text_only() -> None:
    """The entry's knots for the text asked for; ``None`` for a text it has none for."""
    entry = {"onto": "ref", "knots": {"objective-actions-terms": [[0, 0], [0.5, 0.25], [1, 1]]}}
    calibration = NoveltyCalibration.from_config(entry, "objective-actions-terms")
    assert calibration == NoveltyCalibration(((0.0, 0.0), (0.5, 0.25), (1.0, 1.0)), onto="ref")
    assert NoveltyCalibration.from_config(entry, "windows") is None


@given(UNIT)
def test_the_inverse_is_the_least_novelty_the_map_takes_to_a_reference_novelty(
    reference: float,
) -> None:
    """Mapping the inverse gives the reference novelty back: a threshold keeps its meaning."""
    calibration = NoveltyCalibration(KNOTS, onto="ref")
    own = calibration.inverse(reference)
    assert 0.0 <= own <= 1.0
    assert calibration(own) == pytest.approx(reference, abs=1e-12)


@given(UNIT)
def test_two_knots_from_0_0_to_1_1_make_the_identity(novelty: float) -> None:
    """The least calibration there is, one straight line, is accepted and changes nothing."""
    identity = NoveltyCalibration(((0.0, 0.0), (1.0, 1.0)), onto="ref")
    assert identity(novelty) == pytest.approx(novelty, abs=1e-15)
    assert identity.inverse(novelty) == pytest.approx(novelty, abs=1e-15)


@given(st.floats(-3.0, 3.0))
def test_the_inverse_of_a_reference_outside_the_unit_interval_is_that_of_its_nearest_end(
    reference: float,
) -> None:
    """``1 - cosine`` of a negative or above-1 cosine gives a novelty in [0, 1], the end's."""
    calibration = NoveltyCalibration(KNOTS, onto="ref")
    own = calibration.inverse(reference)
    assert 0.0 <= own <= 1.0
    assert own == calibration.inverse(min(max(reference, 0.0), 1.0))


def test_a_flat_stretch_is_accepted_and_its_inverse_is_its_least_novelty() -> None:
    """Reference novelty may stay level over a stretch; the inverse then gives its start."""
    flat = NoveltyCalibration(((0.0, 0.0), (0.4, 0.5), (0.6, 0.5), (1.0, 1.0)), onto="ref")
    assert flat(0.5) == pytest.approx(0.5)
    assert flat.inverse(0.5) == pytest.approx(0.4)
