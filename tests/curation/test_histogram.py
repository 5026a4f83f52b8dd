"""The nearest-neighbour similarity histogram: bins, percentiles, what each limit reaches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.percentiles import LIMITS, similarity_histogram
from knowledgepulse.reports.curation import render_similarity_histogram

cosine = st.floats(min_value=-1.0, max_value=1.0)
cosines = st.lists(cosine, min_size=1, max_size=50)


@given(cosines)
def test_every_similarity_falls_in_one_bin_of_width_0_05_up_to_1(values: list[float]) -> None:
    """The bins count each value once, end at 1, and are 0.05 wide."""
    histogram = similarity_histogram(values)
    assert histogram is not None
    assert sum(count for _, _, count in histogram.bins) == len(values)
    assert histogram.bins[-1][1] == 1.0
    assert all(abs(high - low - 0.05) < 1e-9 for low, high, _ in histogram.bins)
    assert histogram.bins[0][0] <= min(values) + 1e-9
    assert histogram.summary["count"] == len(values)


def test_at_or_above_counts_the_traces_each_limit_reaches() -> None:
    """0.96 and 1.0 reach 0.95; only 1.0 reaches 0.99."""
    histogram = similarity_histogram([0.5, 0.82, 0.96, 1.0])
    assert histogram is not None
    reach = dict(histogram.at_or_above)
    assert tuple(reach) == LIMITS
    assert (reach[0.8], reach[0.95], reach[0.99]) == (3, 2, 1)


@given(st.lists(st.one_of(cosine, st.sampled_from(LIMITS)), min_size=1))
def test_each_limit_counts_the_similarities_that_reach_it(values: list[float]) -> None:
    """A similarity exactly at a limit reaches it; every limit counts, not only 0.8 and 0.95."""
    histogram = similarity_histogram(values)
    assert histogram is not None
    assert histogram.at_or_above == tuple(
        (limit, sum(value >= limit for value in values)) for limit in LIMITS
    )


def test_no_similarities_render_as_a_sentence() -> None:
    """With nothing embedded the histogram says so instead of failing."""
    assert similarity_histogram([]) is None
    assert "fewer than two traces" in render_similarity_histogram(None)


def test_the_rendering_shows_percentiles_bars_and_limits() -> None:
    """Each bin is a line with its count; the median and the limits are printed."""
    text = render_similarity_histogram(similarity_histogram([0.91, 0.92, 0.97]))
    assert "p50 0.920" in text
    assert " 0.90-0.95       2 " in text
    assert "0.95: 1 (33%)" in text


def test_the_rendering_writes_counts_past_a_thousand_with_separators() -> None:
    """Counts read as the summary lines write them: "2,000 traces", not "2000 traces"."""
    text = render_similarity_histogram(similarity_histogram([0.91] * 1500 + [0.97] * 500))
    assert "(2,000 traces)" in text
    assert " 0.90-0.95   1,500 " in text
    assert "0.95: 500 (25%)" in text
