"""SeenIds: a compact set of ids for warning about repeats in long runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util.seen import SeenIds


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.text(max_size=6), max_size=300))
def test_behaves_like_a_set(items: list[str]) -> None:
    """add() says "seen before" exactly when a Python set would, through every growth."""
    seen, reference = SeenIds(capacity=1), set()
    for item in items:
        assert seen.add(item) == (item in reference)
        reference.add(item)
    assert len(seen) == len(reference)
    assert all(item in seen for item in reference)
