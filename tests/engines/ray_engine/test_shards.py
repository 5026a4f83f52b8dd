"""How a call's texts are cut into one contiguous run per actor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.engines.ray_engine import contiguous_shards


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60), st.integers(1, 9))
def test_shards_cover_every_item_once_in_order(weights: list[int], parts: int) -> None:
    """The runs, put one after the other, are exactly the items' positions."""
    shards = contiguous_shards(weights, parts)
    assert [i for shard in shards for i in shard] == list(range(len(weights)))


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60), st.integers(1, 9))
def test_shards_are_never_empty_and_as_many_as_can_be(weights: list[int], parts: int) -> None:
    """Every actor gets work when there are enough items, and none gets an empty run."""
    shards = contiguous_shards(weights, parts)
    assert len(shards) == min(parts, len(weights))
    assert all(len(shard) > 0 for shard in shards)


def test_shards_balance_the_weight() -> None:
    """Equal items split evenly; one heavy item gets a run of its own."""
    assert [len(s) for s in contiguous_shards([1] * 8, 2)] == [4, 4]
    assert [len(s) for s in contiguous_shards([100, 1, 1, 1], 2)] == [1, 3]
