"""Leave-one-out nearest neighbours, checked against a plain double loop."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.corpus import leave_one_out_nearest
from tests.curation.strategies import Pool, pools


@given(pools(), st.sampled_from([1, 8, 1 << 20]))
def test_matches_a_brute_force_loop_whatever_the_block_size(pool: Pool, block_bytes: int) -> None:
    """The nearest other-id row and its cosine are those a double loop finds."""
    keys = [c.key for c in pool.candidates]
    nearest, similarity = leave_one_out_nearest(pool.vectors, keys, block_bytes=block_bytes)
    v = pool.vectors.astype(np.float64)
    for i, key in enumerate(keys):
        others = [j for j, other in enumerate(keys) if other != key]
        if not others:
            assert nearest[i] == -1
            assert math.isnan(similarity[i])
            continue
        best = max(float(v[i] @ v[j]) for j in others)
        assert abs(similarity[i] - best) < 1e-6
        assert keys[nearest[i]] != key
        assert abs(float(v[i] @ v[nearest[i]]) - best) < 1e-6


def test_a_second_copy_of_the_same_id_is_not_another_trace() -> None:
    """Two rows with one id never match each other, however similar."""
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    nearest, similarity = leave_one_out_nearest(vectors, ["kp:trace:a", "kp:trace:a", "kp:trace:b"])
    assert list(nearest) == [2, 2, 0]
    assert np.allclose(similarity, [0.6, 0.6, 0.6])


def test_ties_go_to_the_smallest_id() -> None:
    """Two equally similar neighbours: the one with the smaller id is named."""
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    nearest, _ = leave_one_out_nearest(vectors, ["kp:trace:q", "kp:trace:z", "kp:trace:m"])
    assert nearest[1] == 2
    assert nearest[2] == 1
