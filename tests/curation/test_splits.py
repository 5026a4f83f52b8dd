"""Group assignment for splits: whole groups, shares kept, and the seed alone decides."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.splits import assign_groups

group_sizes = st.dictionaries(
    st.text(min_size=1, max_size=6), st.integers(min_value=1, max_value=9), max_size=60
)
shares = st.sampled_from(
    [
        {"train": 0.8, "test": 0.2},
        {"train": 0.7, "validation": 0.1, "test": 0.2},
        {"train": 0.5, "test": 0.5},
    ]
)


@given(group_sizes, shares, st.integers(min_value=0, max_value=5), st.randoms())
def test_the_same_seed_gives_the_same_parts_whatever_the_groups_order(
    sizes: dict[str, int], fractions: dict[str, float], seed: int, rng: random.Random
) -> None:
    """The assignment depends on the groups, their sizes and the seed, not on their order."""
    keys = list(sizes)
    rng.shuffle(keys)
    shuffled = {key: sizes[key] for key in keys}
    assert assign_groups(sizes, fractions, seed=seed) == assign_groups(
        shuffled, fractions, seed=seed
    )


@given(group_sizes, shares, st.integers(min_value=0, max_value=5))
def test_each_part_is_within_one_group_of_its_share(
    sizes: dict[str, int], fractions: dict[str, float], seed: int
) -> None:
    """Every group has one part asked for, and each part is within the largest group's size."""
    found = assign_groups(sizes, fractions, seed=seed)
    assert found.keys() == sizes.keys()
    assert set(found.values()) <= set(fractions)
    total = sum(sizes.values())
    largest = max(sizes.values(), default=0)
    for part, share in fractions.items():
        held = sum(size for key, size in sizes.items() if found[key] == part)
        assert abs(held - share * total) <= largest


def test_another_seed_gives_another_split() -> None:
    """Two seeds shuffle 200 groups differently."""
    sizes = {f"task-{n}": 1 + n % 3 for n in range(200)}
    shares = {"train": 0.8, "test": 0.2}
    assert assign_groups(sizes, shares, seed=0) != assign_groups(sizes, shares, seed=1)


@pytest.mark.parametrize(
    ("fractions", "says"),
    [
        ({"train": 0.8, "test": 0.3}, "the shares sum to 1, got 1.1"),
        ({"train": 0.7, "test": 0.2}, "the shares sum to 1, got 0.8999"),
        ({"train": 1.2, "test": -0.2}, "each share is in [0, 1]"),
        ({"train": 0.8, "dev": 0.2}, "unknown parts ['dev']"),
    ],
)
def test_shares_that_do_not_make_a_whole_are_refused(
    fractions: dict[str, float], says: str
) -> None:
    """Shares out of [0, 1], summing to more or less than 1, or of an unknown part: ValueError."""
    with pytest.raises(ValueError, match=re.escape(says)):
        assign_groups({"a": 1}, fractions)
