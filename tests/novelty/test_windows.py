"""Long-text arithmetic: windows of word pieces, batching by length, pooling, combining."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, WINDOW_PIECES
from knowledgepulse.novelty.windows import (
    PREFIX_CHARS_PER_PIECE,
    WORD_PIECES_MARGIN,
    ChunkPlan,
    Window,
    batches_by_length,
    combine_windows,
    leading_pieces,
    mean_pool,
    replace_unencodable,
    run_chunks,
    split_windows,
    unit_rows,
)


def word_pieces(texts: list[str]) -> list[list[int]]:
    """A WordPiece-like tokenizer: a piece per character of each word, [UNK] past 100 chars.

    Like tokenizers, it refuses text that UTF-8 cannot encode.
    """
    result = []
    for text in texts:
        text.encode("utf-8")
        words = text.split()
        result.append([c for w in words for c in (w.encode() if len(w) <= 100 else [0])])
    return result


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
    """The optional cap bounds the cost of huge texts, per text: the pieces kept, then cut."""
    pieces = leading_pieces(["abcdefghij", "xyz"], word_pieces, max_windows=2, window_pieces=4)
    windows = split_windows([ids for ids, _ in pieces], window_pieces=4)
    assert [(w.text, w.pieces) for w in windows] == [
        (0, tuple(b"abcd")),
        (0, tuple(b"efgh")),
        (1, tuple(b"xyz")),
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


def test_a_batchs_positions_count_cls_and_sep() -> None:
    """Two windows of 8 pieces are 2 x 10 positions padded: 20 hold both, 19 only one each."""
    windows = [Window(i, tuple(range(8))) for i in range(2)]
    assert batches_by_length(windows, max_tokens=20, max_batch=8) == [[0, 1]]
    assert batches_by_length(windows, max_tokens=19, max_batch=8) == [[0], [1]]


def _numbered_plan(chunk: Sequence[str]) -> ChunkPlan:
    """A plan that carries its texts (numbers) as one window's pieces."""
    return ChunkPlan(len(chunk), [Window(0, tuple(map(int, chunk)))], (), [], [])


@given(st.integers(0, 12), st.one_of(st.none(), st.integers(1, 5)), st.booleans())
def test_chunks_hold_every_text_once_in_order(
    texts: int, chunk_texts: int | None, overlap: bool
) -> None:
    """Planned alone or ahead in a thread, each chunk of at most chunk_texts texts runs once."""
    numbers = [str(i) for i in range(texts)]
    chunks = run_chunks(
        numbers,
        _numbered_plan,
        lambda plan: np.array(plan.windows[0].pieces, dtype=np.float32),
        chunk_texts=chunk_texts,
        overlap=overlap,
    )
    assert [n for plan, _ in chunks for n in plan.windows[0].pieces] == list(range(texts))
    assert all(plan.texts <= (chunk_texts or max(texts, 1)) for plan, _ in chunks)
    for plan, found in chunks:
        np.testing.assert_array_equal(found, plan.windows[0].pieces)


def test_mean_pool_ignores_padding_and_normalises() -> None:
    """Padded positions do not count; the result has unit length."""
    hidden = np.array([[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    np.testing.assert_allclose(mean_pool(hidden, mask), [[1.0, 0.0]])


def test_unit_rows_keep_a_zero_row_zero() -> None:
    """A zero row stays zero (no NaN); others, a subnormal one too, get unit length."""
    tiny = np.float32(1e-40)
    rows = unit_rows(np.array([[0.0, 0.0], [3.0, 4.0], [tiny, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(rows, [[0.0, 0.0], [0.6, 0.8], [1.0, 0.0]], rtol=1e-6)


def test_windows_are_averaged_by_their_number_of_pieces() -> None:
    """A text's embedding weighs each window by its pieces, then is normalised again."""
    windows = [Window(0, (1, 2, 3)), Window(0, (4,)), Window(1, (5,))]
    embeddings = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    combined = combine_windows(windows, embeddings, texts=2)
    np.testing.assert_allclose(combined[0], np.array([3.0, 1.0]) / np.sqrt(10), rtol=1e-6)
    np.testing.assert_array_equal(combined[1], embeddings[2])  # one window: unchanged


def test_the_default_cap_is_32_windows() -> None:
    """The measured default (docs/scoring.md) stays what was measured."""
    assert DEFAULT_MAX_WINDOWS == 32


texts_of_words = st.text(alphabet="ab \n", max_size=4000) | st.builds(
    lambda words, gaps: "".join(w + " " * g for w, g in zip(words, gaps, strict=False)),
    st.lists(st.text(alphabet="xyz", min_size=1, max_size=150), max_size=60),
    st.lists(st.integers(0, 200), max_size=60),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts_of_words, min_size=1, max_size=4), st.integers(1, 3), st.integers(1, 40))
def test_a_capped_prefix_gives_exactly_the_whole_texts_first_pieces(
    texts: list[str], max_windows: int, window_pieces: int
) -> None:
    """Tokenizing a prefix keeps the very pieces (and capped flag) tokenizing everything gives."""
    kept = max_windows * window_pieces
    expected = [(ids[:kept], len(ids) > kept) for ids in word_pieces(texts)]
    found = leading_pieces(texts, word_pieces, max_windows=max_windows, window_pieces=window_pieces)
    assert found == expected


def test_only_a_bounded_prefix_of_a_huge_text_is_tokenized() -> None:
    """With a cap, a 20-million-character text is never handed to the tokenizer whole."""
    seen: list[int] = []

    def recording(texts: list[str]) -> list[list[int]]:
        seen.extend(len(text) for text in texts)
        return word_pieces(texts)

    ((ids, capped),) = leading_pieces(["word " * 4_000_000], recording, max_windows=2)
    assert len(ids) == 2 * WINDOW_PIECES
    assert capped
    assert max(seen) < 50 * (2 * WINDOW_PIECES + WORD_PIECES_MARGIN)


def test_a_prefix_cut_before_a_space_reads_one_piece_more_than_it_keeps() -> None:
    """Words: one prefix, ending before a space, of (kept + 1) pieces' characters at most."""
    seen: list[str] = []

    def recording(texts: list[str]) -> list[list[int]]:
        seen.extend(texts)
        return word_pieces(texts)

    text = "refund order 42 " * 2000
    ((ids, capped),) = leading_pieces([text], recording, max_windows=1)
    assert (ids, capped) == (word_pieces([text])[0][:WINDOW_PIECES], True)
    (prefix,) = seen
    assert len(prefix) <= (WINDOW_PIECES + 1) * PREFIX_CHARS_PER_PIECE
    assert text[len(prefix)] == " "


def test_a_sparse_text_grows_its_prefix_until_the_windows_are_full() -> None:
    """Mostly whitespace: the first prefix falls short, a longer one is read, nothing is lost."""
    text = ("w" + " " * 99) * 1000
    ((ids, capped),) = leading_pieces([text], word_pieces, max_windows=1)
    assert ids == word_pieces([text])[0][:WINDOW_PIECES]
    assert capped


def test_without_a_cap_every_piece_is_kept() -> None:
    """max_windows=None tokenizes the whole text and never says capped."""
    text = "abc " * 1000
    assert leading_pieces([text], word_pieces, max_windows=None) == [
        (word_pieces([text])[0], False)
    ]


def test_lone_surrogates_are_read_as_replacement_characters() -> None:
    """A lone surrogate (which UTF-8 cannot encode) becomes U+FFFD before tokenizing."""
    assert replace_unencodable("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert replace_unencodable("ok \U0001f600") == "ok \U0001f600"  # a real pair is kept
    for cap in (None, 1):
        ((ids, _),) = leading_pieces(["bad \ud83d text"], word_pieces, max_windows=cap)
        assert ids == word_pieces(["bad \ufffd text"])[0]
