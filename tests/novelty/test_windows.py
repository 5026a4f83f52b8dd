"""Long-text arithmetic: windows of word pieces, batching by length, pooling, combining."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.novelty.windows import (
    WINDOW_PIECES,
    Window,
    batches_by_length,
    combine_windows,
    mean_pool,
    split_windows,
)


def test_a_window_is_256_positions_with_cls_and_sep() -> None:
    """254 word pieces a window, so [CLS] window [SEP] fills the model's 256 positions."""
    assert WINDOW_PIECES == 254


def test_long_text_is_cut_into_consecutive_windows() -> None:
    """600 pieces: windows of 254, 254 and 92, in order, covering every piece once."""
    pieces = list(range(600))
    windows = split_windows([pieces])
    assert [len(w.pieces) for w in windows] == [254, 254, 92]
    assert [p for w in windows for p in w.pieces] == pieces


def test_empty_text_still_gets_one_window() -> None:
    """A text with no pieces is embedded as [CLS] [SEP], like the model card does."""
    assert split_windows([[], [7]]) == [Window(0, ()), Window(1, (7,))]


def test_max_windows_keeps_each_texts_first_windows() -> None:
    """The optional cap bounds the cost of huge texts, per text."""
    windows = split_windows([list(range(10)), list(range(3))], window_pieces=4, max_windows=2)
    assert [(w.text, w.pieces) for w in windows] == [
        (0, (0, 1, 2, 3)),
        (0, (4, 5, 6, 7)),
        (1, (0, 1, 2)),
    ]


@given(st.lists(st.integers(0, 300), min_size=1, max_size=40), st.integers(16, 2048))
def test_batches_cover_every_window_once_within_the_caps(lengths: list[int], cap: int) -> None:
    """Each window is in exactly one batch; no batch exceeds the caps unless it is one window."""
    windows = [Window(i, tuple(range(n))) for i, n in enumerate(lengths)]
    batches = batches_by_length(windows, max_tokens=cap, max_batch=8)
    assert sorted(i for batch in batches for i in batch) == list(range(len(windows)))
    for batch in batches:
        longest = max(len(windows[i].pieces) for i in batch) + 2
        assert len(batch) <= 8
        assert len(batch) == 1 or len(batch) * longest <= cap


def test_batches_group_similar_lengths() -> None:
    """Sorting by length keeps short windows out of long windows' padding."""
    windows = [Window(i, tuple(range(n))) for i, n in enumerate([200, 3, 180, 5])]
    assert batches_by_length(windows, max_tokens=20, max_batch=8) == [[1, 3], [2], [0]]


def test_mean_pool_ignores_padding_and_normalises() -> None:
    """Padded positions do not count; the result has unit length."""
    hidden = np.array([[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    np.testing.assert_allclose(mean_pool(hidden, mask), [[1.0, 0.0]])


def test_windows_are_averaged_by_their_number_of_pieces() -> None:
    """A text's embedding weighs each window by its pieces, then is normalised again."""
    windows = [Window(0, (1, 2, 3)), Window(0, (4,)), Window(1, (5,))]
    embeddings = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    combined = combine_windows(windows, embeddings, texts=2)
    np.testing.assert_allclose(combined[0], np.array([3.0, 1.0]) / np.sqrt(10), rtol=1e-6)
    np.testing.assert_array_equal(combined[1], embeddings[2])  # one window: unchanged


def test_bad_window_settings_are_rejected() -> None:
    """A window must hold a piece, and a cap must allow one window."""
    with pytest.raises(ValueError, match="window_pieces"):
        split_windows([[1]], window_pieces=0)
    with pytest.raises(ValueError, match="max_windows"):
        split_windows([[1]], max_windows=0)
