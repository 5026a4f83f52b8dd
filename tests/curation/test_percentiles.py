"""Minimum scores given as numbers or percentiles, and per-domain percentile summaries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation import MinScore, ThresholdSpecError, domain_percentiles

unit = st.floats(min_value=0.0, max_value=1.0)


def test_a_number_and_a_percentile_are_both_accepted() -> None:
    """``0.6`` is a fixed score; ``p90`` the 90th percentile of the scores given."""
    assert MinScore.parse("0.6").resolve([0.1, 0.2]) == 0.6
    assert MinScore.parse("p50").resolve([0.1, 0.2, 0.3]) == pytest.approx(0.2)
    assert str(MinScore.parse("P90")) == "p90"


@pytest.mark.parametrize("text", ["p101", "1.5", "-0.1", "nan", "high", "p"])
def test_anything_else_is_refused_saying_what_is_accepted(text: str) -> None:
    """Out of range or not a number: an error naming both accepted forms."""
    with pytest.raises(ThresholdSpecError, match=r"p0|p90"):
        MinScore.parse(text)


@given(st.lists(unit, min_size=1, max_size=50), st.integers(min_value=0, max_value=100))
def test_at_least_the_top_share_reaches_a_percentile(scores: list[float], p: int) -> None:
    """At least (100 - p)% of the scores reach pNN, and the highest always does."""
    threshold = MinScore.parse(f"p{p}").resolve(scores)
    reaching = sum(score >= threshold for score in scores)
    assert reaching >= 1
    assert reaching >= len(scores) * (100 - p) / 100 - 1


def test_percentiles_per_domain_and_over_all() -> None:
    """Each domain is summarised apart, and all of them together."""
    summary = domain_percentiles({"qa": [0.2, 0.4], "code": [0.9]})
    assert list(summary["by_domain"]) == ["code", "qa"]
    assert summary["by_domain"]["qa"]["p50"] == pytest.approx(0.3)
    assert summary["all"]["count"] == 3
    assert summary["all"]["max"] == 0.9
    assert domain_percentiles({}) == {"all": None, "by_domain": {}}
