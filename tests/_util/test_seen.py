"""SeenIds: a set of ids in about 8 bytes each, for warning about repeats in long runs."""

from __future__ import annotations

import tracemalloc
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util import seen as seen_module
from knowledgepulse._util.seen import SeenIds


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.text(max_size=6), max_size=400), batch=st.sampled_from([1, 2, 3, 64]))
def test_behaves_like_a_set(items: list[str], batch: int) -> None:
    """add() says "seen before" exactly when a Python set would, through every merge."""
    with mock.patch.object(seen_module, "_BATCH", batch):
        seen, reference = SeenIds(), set()
        for item in items:
            assert seen.add(item) == (item in reference)
            reference.add(item)
            assert len(seen) == len(reference)
    assert all(item in seen for item in reference)


@settings(max_examples=50, deadline=None)
@given(items=st.sets(st.text(max_size=8), max_size=200), probes=st.lists(st.text(max_size=8)))
def test_membership_is_that_of_a_set(items: set[str], probes: list[str]) -> None:
    """``in`` answers as a set does, for ids added and ids never added, and for non-strings."""
    with mock.patch.object(seen_module, "_BATCH", 7):
        seen = SeenIds()
        for item in items:
            seen.add(item)
    for probe in probes:
        assert (probe in seen) == (probe in items)
    assert 3 not in seen


def test_ids_take_about_8_bytes_each_past_the_newest_batch() -> None:
    """300k ids: 8 bytes an id, plus the newest batch's set (a set of all takes ~85 an id)."""
    ids = [f"kp:trace:synthetic-{i:07d}" for i in range(300_000)]
    tracemalloc.start()
    try:
        seen = SeenIds()
        for item in ids:
            seen.add(item)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(seen) == len(ids)
    assert held < 8 * len(ids) + 6 * 2**20
