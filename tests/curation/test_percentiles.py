"""Minimum scores given as numbers or percentiles, and per-domain percentile summaries."""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.curation.percentiles import MinScore, ThresholdSpecError, domain_percentiles

unit = st.floats(min_value=0.0, max_value=1.0)
# Scores as reports print them (12 decimals), ties, and any float at all (the law is numpy's).
scores = st.one_of(
    unit.map(lambda score: round(score, 12)),
    st.sampled_from([0.0, 0.25, 0.5, 0.7240000000000001, 1.0]),
    st.floats(allow_nan=False),
)


def test_a_number_and_a_percentile_are_both_accepted() -> None:
    """``0.6`` is a fixed score; ``p90`` the 90th percentile of the scores given."""
    assert MinScore.parse("0.6").resolve([0.1, 0.2]) == 0.6
    assert MinScore.parse("p50").resolve([0.1, 0.2, 0.3]) == pytest.approx(0.2)
    assert str(MinScore.parse("P90")) == "p90"


def test_the_ends_p0_and_p100_are_the_lowest_and_highest_score_and_no_scores_give_0() -> None:
    """p0 and p100 are accepted (the range's ends); with no scores a percentile resolves to 0."""
    scores = [0.4, 0.1, 0.3]
    assert MinScore.parse("p0").resolve(scores) == min(scores)
    assert MinScore.parse("p100").resolve(scores) == max(scores)
    assert MinScore.parse("p90").resolve([]) == 0.0


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


@settings(max_examples=150, deadline=None)
@given(
    by_domain=st.dictionaries(
        st.sampled_from(["qa", "code", "finance", ""]), st.lists(scores, max_size=40), max_size=4
    )
)
def test_domain_percentiles_are_numpys_on_each_domain_and_on_all(
    by_domain: dict[str, list[float]],
) -> None:
    """Each summary is np.percentile of its scores, to the bit, however they are held."""
    held = {domain: array("d", values) for domain, values in by_domain.items()}
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN in both, said quietly
        found = domain_percentiles(held)
        every = [v for domain in sorted(by_domain) for v in by_domain[domain]]
        expected_all = np.percentile(np.asarray(every), [10, 25, 50, 75, 90, 99]) if every else None
        expected_p50 = {d: np.percentile(np.asarray(v), 50) for d, v in by_domain.items() if v}
    assert sorted(found["by_domain"]) == sorted(expected_p50)
    for domain, p50 in expected_p50.items():
        assert _nan_named(found["by_domain"][domain]["p50"]) == _nan_named(float(p50))
        assert found["by_domain"][domain]["count"] == len(by_domain[domain])
    if expected_all is None:
        assert found["all"] is None
    else:
        assert _nan_named([found["all"][f"p{p}"] for p in (10, 25, 50, 75, 90, 99)]) == _nan_named(
            [float(v) for v in expected_all]
        )


def _nan_named(value: object) -> object:
    # inf - inf is NaN in both; NaN != NaN, so it is compared by name.
    if isinstance(value, list):
        return [_nan_named(item) for item in value]
    return "nan" if isinstance(value, float) and np.isnan(value) else value
