"""A call's texts planned into padded batches, chunk by chunk, and the batches' embeddings.

A batch (:class:`PaddedBatch`) is the windows as the model reads them; a backend
(:class:`BatchRunner`, :mod:`knowledgepulse.novelty.backends`) only runs such batches.

A chunk's plan (word pieces, 254-piece windows, batches by length, padding) is all the host's
work before the model. A large call can be cut into chunks and the next chunk planned in a
background thread while the model runs the current one (the tokenizer, onnxruntime, worker
processes and CUDA all release the GIL). The chunks are the same with or without that overlap,
so the vectors are too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.windows import (
    Window,
    WindowedEmbeddings,
    batches_by_length,
    combine_windows,
    leading_pieces,
    split_windows,
)


@dataclass(frozen=True, slots=True)
class PaddedBatch:
    """Windows as ``[CLS] pieces [SEP]`` rows, zero-padded to the longest.

    Attributes:
        input_ids: (windows, positions) int64.
        attention_mask: (windows, positions) int64, 1 on the real positions.
    """

    input_ids: NDArray[np.int64]
    attention_mask: NDArray[np.int64]


def pad_batch(windows: Sequence[Sequence[int]], special: tuple[int, int]) -> PaddedBatch:
    """The model's inputs for ``windows`` (word-piece ids without [CLS]/[SEP])."""
    cls_id, sep_id = special
    length = max(len(pieces) for pieces in windows) + 2
    input_ids = np.zeros((len(windows), length), dtype=np.int64)
    attention_mask = np.zeros((len(windows), length), dtype=np.int64)
    for row, pieces in enumerate(windows):
        input_ids[row, : len(pieces) + 2] = [cls_id, *pieces, sep_id]
        attention_mask[row, : len(pieces) + 2] = 1
    return PaddedBatch(input_ids, attention_mask)


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
    """A chunk's model inputs, planned on the host.

    Attributes:
        texts: how many texts the chunk holds.
        windows: their windows, in text order.
        capped: whether each text had more windows than were kept.
        batches: the windows (by index) of each model call.
        padded: each model call's inputs.
    """

    texts: int
    windows: list[Window]
    capped: tuple[bool, ...]
    batches: list[list[int]]
    padded: list[PaddedBatch]


@dataclass(frozen=True, slots=True)
class Planner:
    """How texts become batches: the tokenizer's ``encode``, the special ids, the budgets."""

    encode: Callable[[list[str]], list[list[int]]]
    special: tuple[int, int]
    max_batch_tokens: int
    max_batch_windows: int

    def plan(
        self, texts: Sequence[str], *, window_pieces: int, max_windows: int | None
    ) -> ChunkPlan:
        """Tokenize (a prefix of) each text, cut its windows, group and pad them."""
        pieces = leading_pieces(
            texts, self.encode, max_windows=max_windows, window_pieces=window_pieces
        )
        windows = split_windows(
            [ids for ids, _ in pieces], window_pieces=window_pieces, max_windows=max_windows
        )
        batches = batches_by_length(
            windows, max_tokens=self.max_batch_tokens, max_batch=self.max_batch_windows
        )
        padded = [pad_batch([windows[i].pieces for i in batch], self.special) for batch in batches]
        return ChunkPlan(len(texts), windows, tuple(c for _, c in pieces), batches, padded)


def window_embeddings(
    chunk: ChunkPlan, runner: BatchRunner, dimensions: int
) -> NDArray[np.float32]:
    """The chunk's window embeddings, (windows, dimensions), in window order."""
    embeddings = np.zeros((len(chunk.windows), dimensions), dtype=np.float32)
    for batch, vectors in zip(chunk.batches, runner.run_batches(chunk.padded), strict=True):
        embeddings[batch] = vectors
    return embeddings


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
    if not overlap or len(chunks) == 1:
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
    vectors = [combine_windows(chunk.windows, found, chunk.texts) for chunk, found in results]
    counts: list[int] = []
    capped: list[bool] = []
    for chunk, _ in results:
        windows = np.bincount([w.text for w in chunk.windows], minlength=chunk.texts)
        counts.extend(int(count) for count in windows)
        capped.extend(chunk.capped)
    if not vectors:
        return WindowedEmbeddings(np.zeros((0, dimensions), dtype=np.float32), (), ())
    return WindowedEmbeddings(np.concatenate(vectors), tuple(counts), tuple(capped))
