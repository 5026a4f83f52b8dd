"""SpilledValues: values by group on disk, and their exact order statistics in bounded memory."""

from __future__ import annotations

import tempfile
import tracemalloc
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util import order_stats
from knowledgepulse._util.spill import SpilledValues

# Few distinct values and few groups, so ties, equal neighbours and empty groups are common.
_values = st.one_of(
    st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, float("inf"), -float("inf")]),
    st.floats(allow_nan=False),
    st.floats(min_value=0.5, max_value=0.5000000000001),
)
_rows = st.lists(st.tuples(st.sampled_from(["qa", "code", ""]), _values), max_size=120)


def _spilled(rows: list[tuple[str, float]], chunk: int) -> SpilledValues:
    spilled = SpilledValues(chunk=chunk)
    for group, value in rows:
        spilled.append(group, value)
    return spilled


def _all_ranks(rows: list[tuple[str, float]]) -> dict[str | None, list[int]]:
    wanted: dict[str | None, list[int]] = {None: list(range(len(rows)))}
    for group in {group for group, _ in rows}:
        wanted[group] = list(range(sum(g == group for g, _ in rows)))
    return wanted


@settings(max_examples=150, deadline=None)
@given(rows=_rows, chunk=st.sampled_from([1, 3, 7, 64]), gather=st.sampled_from([1, 2, 5, 1000]))
def test_every_rank_is_that_of_a_sorted_list(
    rows: list[tuple[str, float]], chunk: int, gather: int
) -> None:
    """Each group's value at each rank is the sorted list's, however the values are chunked."""
    spilled = _spilled(rows, chunk)
    with mock.patch.object(order_stats, "GATHER", gather):
        found = spilled.order_statistics(_all_ranks(rows))
    assert found[None] == dict(enumerate(sorted(value for _, value in rows)))
    for group in {group for group, _ in rows}:
        expected = sorted(value for g, value in rows if g == group)
        assert found[group] == dict(enumerate(expected))
    assert len(spilled) == len(rows)
    assert sum(spilled.groups().values()) == len(rows)


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=300),
    ranks=st.lists(st.integers(min_value=0, max_value=299), max_size=6),
)
def test_a_few_ranks_of_a_big_group_are_found_by_narrowing(
    values: list[float], ranks: list[int]
) -> None:
    """Ranks of a group too big to read whole are found by counting in buckets, exactly."""
    spilled = _spilled([("x", value) for value in values], chunk=16)
    wanted = [rank % len(values) for rank in ranks]
    with mock.patch.object(order_stats, "GATHER", 4):
        found = spilled.order_statistics({"x": wanted})
    ordered = sorted(values)
    assert found["x"] == {rank: ordered[rank] for rank in wanted}


def test_many_small_groups_are_read_together() -> None:
    """Ten thousand groups of a few values each: one pass picks them all, each exactly."""
    rng = np.random.default_rng(7)
    spilled = SpilledValues(chunk=4096)
    expected: dict[str | None, list[float]] = {}
    for index, value in enumerate(rng.random(50_000).tolist()):
        name = f"g{index % 10_000}"
        spilled.append(name, value)
        expected.setdefault(name, []).append(value)
    found = spilled.order_statistics({group: [0, 4] for group in expected})
    for group, values in expected.items():
        assert found[group] == {0: min(values), 4: max(values)}


def test_values_past_a_chunk_go_to_a_file_and_memory_stays_flat() -> None:
    """A million values: the selection's memory is that of a few chunks, not of the values."""
    spilled = SpilledValues()
    rng = np.random.default_rng(3)
    values = rng.random(1_000_000)
    for index, value in enumerate(values.tolist()):
        spilled.append("abc"[index % 3], value)
    tracemalloc.start()
    try:
        found = spilled.order_statistics({None: [0, 500_000, 999_999], "a": [1000]})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ordered = np.sort(values)
    assert found[None] == {0: ordered[0], 500_000: ordered[500_000], 999_999: ordered[-1]}
    assert found["a"] == {1000: np.sort(values[::3])[1000]}
    assert peak < 4 * 2**20  # the values themselves are 8 MB


def test_without_a_temporary_file_the_chunks_stay_in_memory() -> None:
    """A $TMPDIR that cannot take a file does not stop the run; the answers are the same."""
    with mock.patch.object(tempfile, "TemporaryFile", side_effect=OSError("read-only")):
        spilled = _spilled([("a", float(v)) for v in range(100, 0, -1)], chunk=8)
    assert spilled.order_statistics({"a": [0, 50, 99]}) == {"a": {0: 1.0, 50: 51.0, 99: 100.0}}


def test_appending_after_a_selection_goes_on() -> None:
    """A selection lends no buffer: values can still be added after it, and are counted."""
    spilled = _spilled([("a", 0.5), ("a", 0.25)], chunk=4)
    assert spilled.order_statistics({"a": [0]}) == {"a": {0: 0.25}}
    spilled.append("a", 0.1)
    assert spilled.order_statistics({"a": [0], None: [2]}) == {"a": {0: 0.1}, None: {2: 0.5}}


@pytest.mark.parametrize(
    ("wanted", "message"),
    [({"a": [2]}, "has 2 values"), ({"b": [0]}, "has 0 values"), ({None: [-1]}, "has 2")],
)
def test_a_rank_the_group_lacks_is_an_index_error(wanted: Any, message: str) -> None:
    """Asking for a rank past the group's values says how many it has."""
    with pytest.raises(IndexError, match=message):
        _spilled([("a", 0.5), ("a", 0.25)], chunk=4).order_statistics(wanted)


def test_nan_is_refused() -> None:
    """NaN has no rank, so it is refused as it comes, not at the end of the run."""
    with pytest.raises(ValueError, match="NaN"):
        SpilledValues().append("a", float("nan"))


def test_a_full_disk_brings_the_chunks_back_to_memory() -> None:
    """A write that fails mid-run (no space left) loses nothing: the chunks move to memory."""
    spilled = _spilled([("a", float(v)) for v in range(20)], chunk=4)
    real = spilled._file
    assert real is not None
    with mock.patch.object(real, "write", side_effect=OSError(28, "No space left on device")):
        for value in range(20, 40):
            spilled.append("a", float(value))
    assert spilled._file is None
    assert spilled.order_statistics({"a": [0, 19, 20, 39]}) == {
        "a": {0: 0.0, 19: 19.0, 20: 20.0, 39: 39.0}
    }
