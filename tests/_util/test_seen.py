"""SeenIds: a compact set of ids for warning about repeats in long runs."""

from __future__ import annotations

import tracemalloc
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util import seen as seen_module
from knowledgepulse._util.seen import SeenIds


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.text(max_size=6), max_size=400), fill=st.sampled_from([1, 2, 3, 8, 256]))
def test_behaves_like_a_set(items: list[str], fill: int) -> None:
    """add() says "seen before" exactly when a Python set would, through every split."""
    seen, reference = SeenIds(bucket_fill=fill), set()
    for item in items:
        assert seen.add(item) == (item in reference)
        reference.add(item)
        assert len(seen) == len(reference)
    assert all(item in seen for item in reference)


@settings(max_examples=50, deadline=None)
@given(items=st.sets(st.text(max_size=8), max_size=200), probes=st.lists(st.text(max_size=8)))
def test_membership_is_that_of_a_set(items: set[str], probes: list[str]) -> None:
    """``in`` answers as a set does, for ids added and ids never added, and for non-strings."""
    seen = SeenIds(bucket_fill=2)
    for item in items:
        seen.add(item)
    for probe in probes:
        assert (probe in seen) == (probe in items)
    assert 3 not in seen


def _fingerprint(digest: int) -> tuple[int, int]:
    # What SeenIds keeps of a digest: its top 10 bits and its low 48.
    return digest >> 54, digest & (2**48 - 1)


@settings(max_examples=100, deadline=None)
@given(
    digests=st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=300),
    fill=st.sampled_from([1, 2, 64]),
)
def test_extreme_digests_find_their_bucket(digests: list[int], fill: int) -> None:
    """Digests at 0, 2**64 - 1 and bucket boundaries are kept and found through every split."""
    edges = [0, 1, 2**63 - 1, 2**63, 2**64 - 1, *(k << 60 for k in range(16))]
    edges += [(k << 54) | (1 << 47) | (k << 32) for k in range(64)]
    edges += [d ^ (1 << 50) for d in digests[:20]]  # the same fingerprint: counted as seen
    by_name = {f"id{i}": d for i, d in enumerate(edges + digests)}
    with mock.patch.object(seen_module, "_digest", by_name.__getitem__):
        seen, reference = SeenIds(bucket_fill=fill), set()
        for name, digest in by_name.items():
            assert seen.add(name) == (_fingerprint(digest) in reference)
            reference.add(_fingerprint(digest))
        assert all(name in seen for name in by_name)
        assert len(seen) == len(reference)


def test_ids_take_about_6_bytes_each_at_the_peak() -> None:
    """100k ids: 6 bytes an id plus the buckets' headers at the peak (a set takes ~100)."""
    ids = [f"kp:trace:synthetic-{i:07d}" for i in range(100_000)]
    tracemalloc.start()
    try:
        seen = SeenIds()
        for item in ids:
            seen.add(item)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(seen) == len(ids)
    assert peak < 6 * len(ids) + 256 * 1024
