"""Long texts into model inputs and back: windows of word pieces, padded batches, pooling.

The model reads 256 positions: a text's word pieces are cut into windows of 254, each read as
``[CLS] window [SEP]``; its embedding is the windows' mean weighted by their pieces. At most
``max_windows`` windows are embedded and only a prefix long enough for them is tokenized
(``docs/scoring.md`` measures the cap). A chunk is planned into padded batches on the host while a
:class:`BatchRunner` runs the last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.settings import WINDOW_PIECES
from knowledgepulse.records.json_values import SURROGATE

WORD_PIECES_MARGIN = 100
"""The most pieces the last word of a cut text can differ by (WordPiece reads a word of more
than 100 characters as one ``[UNK]``); cutting mid-word changes that word's pieces only."""

PREFIX_CHARS_PER_PIECE = 6
"""First guess of characters per word piece when cutting a prefix (measured: 2.7 to 4.5)."""


@dataclass(frozen=True, slots=True)
class WindowedEmbeddings:
    """One unit vector per text, the windows embedded of each, and whether it had more."""

    vectors: NDArray[np.float32]
    windows: tuple[int, ...]
    capped: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Window:
    """One model input: a run of text number ``text``'s word pieces (without [CLS], [SEP])."""

    text: int
    pieces: tuple[int, ...]


def split_windows(
    pieces_per_text: Sequence[Sequence[int]], *, window_pieces: int = WINDOW_PIECES
) -> list[Window]:
    """Every text's pieces (capped by :func:`leading_pieces`) cut into consecutive windows.

    In text order; a text with no pieces gets one empty window, read as ``[CLS] [SEP]``.
    """
    windows: list[Window] = []
    for text, pieces in enumerate(pieces_per_text):
        starts = range(0, max(len(pieces), 1), window_pieces)
        windows.extend(Window(text, tuple(pieces[s : s + window_pieces])) for s in starts)
    return windows


def replace_unencodable(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (tokenizers refuse what UTF-8 cannot encode)."""
    return SURROGATE.sub("\ufffd", text)


def leading_pieces(
    texts: Sequence[str],
    encode: Callable[[list[str]], list[list[int]]],
    *,
    max_windows: int | None,
    window_pieces: int = WINDOW_PIECES,
) -> list[tuple[list[int], bool]]:
    """Each text's word pieces, at most ``max_windows`` windows of them, and whether it had more.

    With a cap, only a prefix of each text is tokenized, grown fourfold until it gives more
    pieces than the windows hold or is the whole text. A prefix that ends before a space (the
    word pieces of the text before it are the same whatever follows) needs one piece more; one
    cut mid-word (no space in its second half) :data:`WORD_PIECES_MARGIN` more. So the pieces
    kept are exactly the whole text's first ones. ``encode`` gives each text's word-piece ids.
    """
    if max_windows is None:
        return [(ids, False) for ids in encode([replace_unencodable(t) for t in texts])]
    kept = max_windows * window_pieces
    result: list[tuple[list[int], bool]] = [([], False)] * len(texts)
    pending = list(range(len(texts)))
    chars = (kept + 1) * PREFIX_CHARS_PER_PIECE
    while pending:
        prefixes = [_prefix(texts[i], chars) for i in pending]
        encoded = encode([replace_unencodable(prefix) for prefix in prefixes])
        short = []
        for index, prefix, ids in zip(pending, prefixes, encoded, strict=True):
            text = texts[index]
            whole = len(prefix) == len(text)
            enough = kept if whole or text[len(prefix)] == " " else kept + WORD_PIECES_MARGIN
            if whole or len(ids) > enough:
                result[index] = (ids[:kept], len(ids) > kept)
            else:
                short.append(index)
        pending, chars = short, chars * 4
    return result


def _prefix(text: str, chars: int) -> str:
    """At most ``chars`` of ``text``'s first characters: up to its last space in their second half.

    Before a space, the prefix's word pieces are the text's first ones.
    """
    if len(text) <= chars:
        return text
    space = text.rfind(" ", chars // 2, chars + 1)
    return text[: space if space > 0 else chars]


def batches_by_length(
    windows: Sequence[Window], *, max_tokens: int, max_batch: int
) -> list[list[int]]:
    """Group windows (by index) into batches of similar length, so padding stays small.

    A batch holds at most ``max_batch`` windows and ``max_tokens`` positions once padded (a
    longer window gets a batch of its own). The order is by length, then index.
    """
    order = sorted(range(len(windows)), key=lambda i: (len(windows[i].pieces), i))
    batches: list[list[int]] = [[]]
    for index in order:
        current, padded = batches[-1], len(windows[index].pieces) + 2
        # Sorted ascending, so this window is the longest of the batch it would join.
        if current and (len(current) + 1 > max_batch or (len(current) + 1) * padded > max_tokens):
            batches.append(current := [])
        current.append(index)
    return [batch for batch in batches if batch]


def mean_pool(
    hidden: NDArray[np.float32], attention_mask: NDArray[np.int64]
) -> NDArray[np.float32]:
    """Mean of each row's token states (batch, positions, dims) over its real tokens, unit."""
    mask = attention_mask.astype(np.float32)[:, :, None]
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    return unit_rows(summed / counts)


def combine_windows(
    windows: Sequence[Window], embeddings: NDArray[np.float32], texts: int
) -> NDArray[np.float32]:
    """One unit vector per text: its windows' embeddings averaged by piece count.

    A text of one window gets that window's embedding unchanged.
    """
    owner = np.array([window.text for window in windows], dtype=np.intp)
    pieces = np.array([len(window.pieces) for window in windows], dtype=np.float32)
    totals = np.zeros((texts, embeddings.shape[1]), dtype=np.float64)
    np.add.at(totals, owner, embeddings * pieces[:, None])
    result = unit_rows(totals.astype(np.float32))
    single = np.bincount(owner, minlength=texts)[owner] == 1
    result[owner[single]] = embeddings[single]
    return result


def unit_rows(matrix: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """Each row scaled to unit length (zero rows stay zero); in float64, for subnormal rows.

    A finite row whose squares overflow or underflow float64 (numbers near 1e200 or 1e-170) is
    first divided by its largest number, so it keeps its direction rather than becoming zero.
    """
    wide = np.asarray(matrix, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):  # such rows are mended below
        norms = np.linalg.norm(wide, axis=1, keepdims=True)
    out_of_range = ~np.isfinite(norms) | (norms == 0.0)
    if out_of_range.any():  # rare: zero rows, or sizes past float64's squares
        peaks = np.where(out_of_range, np.abs(wide).max(axis=1, keepdims=True), 1.0)
        wide = wide / np.where(peaks == 0.0, 1.0, peaks)
        norms = np.linalg.norm(wide, axis=1, keepdims=True)
    return (wide / np.where(norms == 0.0, 1.0, norms)).astype(np.float32)


@dataclass(frozen=True, slots=True)
class PaddedBatch:
    """Windows as ``[CLS] pieces [SEP]`` rows, zero-padded to the longest: (windows, positions)."""

    input_ids: NDArray[np.int64]
    attention_mask: NDArray[np.int64]


def pad_batch(windows: Sequence[Sequence[int]], special: tuple[int, int]) -> PaddedBatch:
    """The model's inputs for ``windows`` (word-piece ids without [CLS]/[SEP])."""
    lengths = np.array([len(pieces) + 2 for pieces in windows])
    input_ids = np.zeros((len(windows), lengths.max()), dtype=np.int64)
    for row, pieces in enumerate(windows):
        input_ids[row, : lengths[row]] = [special[0], *pieces, special[1]]
    attention_mask = np.arange(input_ids.shape[1]) < lengths[:, None]
    return PaddedBatch(input_ids, attention_mask.astype(np.int64))


class BatchRunner(Protocol):
    """Runs the model on padded batches: one (windows, dimensions) unit-vector array each."""

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in the batches' order."""
        ...

    def close(self) -> None:
        """Release what the runner holds (processes, device memory); idempotent."""
        ...


@dataclass(frozen=True, slots=True)
class ChunkPlan:
    """A chunk of texts planned on the host: windows, caps, each model call's windows, inputs."""

    texts: int
    windows: list[Window]
    capped: tuple[bool, ...]
    batches: list[list[int]]
    padded: list[PaddedBatch]


def run_chunks(
    texts: Sequence[str],
    plan: Callable[[Sequence[str]], ChunkPlan],
    run: Callable[[ChunkPlan], NDArray[np.float32]],
    *,
    chunk_texts: int | None,
    overlap: bool,
) -> list[tuple[ChunkPlan, NDArray[np.float32]]]:
    """Each chunk of ``chunk_texts`` texts (``None``: one chunk) with its window embeddings.

    With ``overlap``, the next chunk is planned in a background thread while the current runs.
    """
    size = chunk_texts or max(len(texts), 1)
    chunks = [texts[start : start + size] for start in range(0, len(texts), size)]
    if not overlap or len(chunks) <= 1:  # no texts: no chunk, nothing to plan ahead
        return [(chunk, run(chunk)) for chunk in map(plan, chunks)]
    results: list[tuple[ChunkPlan, NDArray[np.float32]]] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kp-tokenize") as host:
        pending: Future[ChunkPlan] = host.submit(plan, chunks[0])
        for following in [*chunks[1:], None]:
            current = pending.result()
            if following is not None:
                pending = host.submit(plan, following)
            results.append((current, run(current)))
    return results


def text_embeddings(
    results: Sequence[tuple[ChunkPlan, NDArray[np.float32]]], dimensions: int
) -> WindowedEmbeddings:
    """Each text's embedding (its windows averaged by length), windows read and whether capped."""
    if not results:
        return WindowedEmbeddings(np.zeros((0, dimensions), dtype=np.float32), (), ())
    return WindowedEmbeddings(
        np.concatenate(
            [combine_windows(plan.windows, found, plan.texts) for plan, found in results]
        ),
        tuple(
            int(count)
            for plan, _ in results
            for count in np.bincount([w.text for w in plan.windows], minlength=plan.texts)
        ),
        tuple(capped for plan, _ in results for capped in plan.capped),
    )
