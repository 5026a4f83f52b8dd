"""Pure arithmetic of long-text embedding: windows of word pieces, pooling, and their mean.

all-MiniLM-L6-v2 reads 256 positions at most. A text's word pieces are split into consecutive
windows of at most 254 pieces, each read as ``[CLS] window [SEP]``; the text's embedding is the
mean of the window embeddings weighted by each window's number of pieces, L2-normalised. A text
that fits one window is embedded exactly as the model card does it.

**The cap on windows (default 32: the first 32 windows).** Cost grows with the windows
embedded: a 1 MB trace is about 364,000 pieces (1,435 windows, minutes of model time), and
merely tokenizing 10 MB whole takes 12 s and 2 GB. So at most ``max_windows`` windows of a text
are embedded, and only a prefix of the text long enough for them is tokenized
(:func:`leading_pieces`). 32 leaves 99.6% of the real traces whole and the rest within cosine
0.996 of the whole text's embedding, while bounding the cost of any trace (the study, ``python
bench/bench_value.py --windows-study``, is in ``docs/scoring.md``). ``max_windows=None`` embeds
every window, whatever it costs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.settings import WINDOW_PIECES

WORD_PIECES_MARGIN = 100
"""The most pieces the last word of a cut text can differ by.

BERT's WordPiece reads a word of more than 100 characters as one ``[UNK]``, so a word gives at
most 100 pieces; cutting a text mid-word changes the pieces of that word only.
"""

PREFIX_CHARS_PER_PIECE = 6
"""First guess of characters per word piece when cutting a prefix (measured: 2.7 on tau-bench's
JSON-heavy text, 4.5 on HotpotQA's prose); a prefix that falls short is grown fourfold."""

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class WindowedEmbeddings:
    """Embeddings of texts, with how much of each text they read.

    Attributes:
        vectors: one unit vector per text, (texts, dimensions).
        windows: how many windows of each text were embedded.
        capped: whether each text had more windows than were embedded.
    """

    vectors: NDArray[np.float32]
    windows: tuple[int, ...]
    capped: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Window:
    """One model input: a run of a text's word pieces.

    Attributes:
        text: which text (its index in the batch) the window belongs to.
        pieces: the word-piece ids, without [CLS] and [SEP].
    """

    text: int
    pieces: tuple[int, ...]


def split_windows(
    pieces_per_text: Sequence[Sequence[int]],
    *,
    window_pieces: int = WINDOW_PIECES,
    max_windows: int | None = None,
) -> list[Window]:
    """Every text's pieces cut into consecutive windows, in text order.

    A text with no pieces still gets one (empty) window, so it is embedded as ``[CLS] [SEP]``
    like the model card would. ``max_windows`` keeps only each text's first windows.
    """
    if window_pieces < 1:
        raise ValueError(f"window_pieces must be at least 1, got {window_pieces}")
    if max_windows is not None and max_windows < 1:
        raise ValueError(f"max_windows must be at least 1, got {max_windows}")
    windows: list[Window] = []
    for text, pieces in enumerate(pieces_per_text):
        starts = range(0, max(len(pieces), 1), window_pieces)
        if max_windows is not None:
            starts = starts[:max_windows]
        windows.extend(Window(text, tuple(pieces[s : s + window_pieces])) for s in starts)
    return windows


def replace_unencodable(text: str) -> str:
    r"""``text`` with each lone surrogate replaced by U+FFFD.

    Lone surrogates (from JSON escapes such as ``"\ud800"``) are the only code points a Python
    string can hold that UTF-8 cannot encode, and tokenizers refuse such a string outright.
    """
    return _SURROGATE.sub("\ufffd", text)


def leading_pieces(
    texts: Sequence[str],
    encode: Callable[[list[str]], list[list[int]]],
    *,
    max_windows: int | None,
    window_pieces: int = WINDOW_PIECES,
) -> list[tuple[list[int], bool]]:
    """Each text's word pieces, at most ``max_windows`` windows of them, and whether it had more.

    With a cap, only a prefix of each text is tokenized: long enough to give the pieces the
    windows hold plus :data:`WORD_PIECES_MARGIN`, so the pieces kept are exactly the whole
    text's first ones (only the cut word differs, and it lies beyond them). The prefix starts at
    :data:`PREFIX_CHARS_PER_PIECE` characters a piece and grows fourfold until it is enough or
    is the whole text. Lone surrogates are replaced first (:func:`replace_unencodable`).

    Args:
        texts: the texts.
        encode: word-piece ids of each of a list of texts (no special tokens).
        max_windows: the cap, or ``None`` to tokenize every text whole.
        window_pieces: pieces per window.
    """
    if max_windows is None:
        return [(ids, False) for ids in encode([replace_unencodable(t) for t in texts])]
    kept = max_windows * window_pieces
    enough = kept + WORD_PIECES_MARGIN
    result: list[tuple[list[int], bool]] = [([], False)] * len(texts)
    pending = list(range(len(texts)))
    chars = enough * PREFIX_CHARS_PER_PIECE
    while pending:
        prefixes = [texts[i][:chars] for i in pending]
        encoded = encode([replace_unencodable(prefix) for prefix in prefixes])
        short = []
        for index, prefix, ids in zip(pending, prefixes, encoded, strict=True):
            whole = len(prefix) == len(texts[index])
            if whole or len(ids) > enough:
                result[index] = (ids[:kept], len(ids) > kept)
            else:
                short.append(index)
        pending, chars = short, chars * 4
    return result


def batches_by_length(
    windows: Sequence[Window], *, max_tokens: int, max_batch: int
) -> list[list[int]]:
    """Group windows (by index) into batches of similar length.

    Sorting by length keeps padding small; a batch holds at most ``max_batch`` windows and at
    most ``max_tokens`` positions once padded to its longest window (a single window longer than
    that still gets a batch of its own). The order is deterministic: by length, then index.
    """
    order = sorted(range(len(windows)), key=lambda i: (len(windows[i].pieces), i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        padded = len(windows[index].pieces) + 2
        # Sorted ascending, so this window is the longest of the batch it would join.
        if current and (len(current) + 1 > max_batch or (len(current) + 1) * padded > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def mean_pool(
    hidden: NDArray[np.float32], attention_mask: NDArray[np.int64]
) -> NDArray[np.float32]:
    """Mean of each row's token states over its real (unmasked) tokens, L2-normalised.

    ``hidden`` is (batch, positions, dims), ``attention_mask`` (batch, positions).
    """
    mask = attention_mask.astype(np.float32)[:, :, None]
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    return normalize(summed / counts)


def combine_windows(
    windows: Sequence[Window], embeddings: NDArray[np.float32], texts: int
) -> NDArray[np.float32]:
    """One unit vector per text: its windows' embeddings averaged by piece count, normalised.

    A text with one window gets that window's embedding unchanged.
    """
    dims = embeddings.shape[1]
    totals = np.zeros((texts, dims), dtype=np.float64)
    counts = np.zeros(texts, dtype=np.int64)
    singles: dict[int, int] = {}
    for position, window in enumerate(windows):
        totals[window.text] += embeddings[position] * len(window.pieces)
        counts[window.text] += 1
        singles[window.text] = position
    result = normalize(totals.astype(np.float32))
    for text in np.flatnonzero(counts == 1):
        result[text] = embeddings[singles[int(text)]]
    return result


def normalize(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row divided by its L2 norm (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
