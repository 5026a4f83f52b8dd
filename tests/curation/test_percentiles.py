"""Minimum scores given as numbers or percentiles, and per-domain percentile summaries."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util import order_stats
from knowledgepulse._util.spill import SpilledValues
from knowledgepulse.curation import MinScore, ThresholdSpecError, domain_percentiles
from knowledgepulse.curation.percentiles import (
    interpolate,
    percentile_ranks,
    spilled_percentiles,
)

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


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(scores, min_size=1, max_size=60),
    percentile=st.one_of(st.integers(0, 100), st.floats(min_value=0.0, max_value=100.0)),
)
def test_the_two_ranks_and_their_weight_give_numpys_percentile(
    values: list[float], percentile: float
) -> None:
    """interpolate() between the values percentile_ranks() names is np.percentile, to the bit."""
    ordered = sorted(values)
    below, above, weight = percentile_ranks(len(values), percentile)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN in both, said quietly
        expected = np.percentile(np.asarray(values), [percentile])[0]
    found = interpolate(ordered[below], ordered[above], weight)
    assert found == expected or (np.isnan(expected) and np.isnan(found))


@settings(max_examples=150, deadline=None)
@given(
    by_domain=st.dictionaries(
        st.sampled_from(["qa", "code", "finance", ""]), st.lists(scores, max_size=40), max_size=4
    ),
    chunk=st.sampled_from([1, 5, 64]),
    gather=st.sampled_from([2, 7, 1000]),
)
def test_spilled_percentiles_are_domain_percentiles(
    by_domain: dict[str, list[float]], chunk: int, gather: int
) -> None:
    """The streaming summary equals numpy's on the same scores, whatever the chunking."""
    spilled = SpilledValues(chunk=chunk)
    longest = max((len(v) for v in by_domain.values()), default=0)
    for index in range(longest):  # interleaved, as a run's domains come
        for domain, values in by_domain.items():
            if index < len(values):
                spilled.append(domain, values[index])
    with mock.patch.object(order_stats, "GATHER", gather):
        found = spilled_percentiles(spilled)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = domain_percentiles(by_domain)
    assert _nan_named(found) == _nan_named(expected)


def _nan_named(value: object) -> object:
    # inf - inf is NaN in both; NaN != NaN, so it is compared by name.
    if isinstance(value, dict):
        return {key: _nan_named(item) for key, item in value.items()}
    return "nan" if isinstance(value, float) and np.isnan(value) else value


def test_no_scores_have_no_percentiles() -> None:
    """Nothing spilled: no ``all``, no domains, as domain_percentiles({}) says."""
    assert spilled_percentiles(SpilledValues()) == domain_percentiles({})
