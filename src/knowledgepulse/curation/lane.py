"""A second process that embeds while the first reads: a large corpus on two cores.

Holding a corpus apart (:func:`~knowledgepulse.curation.corpus.score_apart`, ``kp select`` and
``kp dedupe`` on files) reads each trace (parsing, validating, its facts) and embeds it (its
novelty text, word pieces, their sums): with the static embedder about 150 and 265 µs a
trace, both holding the interpreter's lock. Past :data:`LANE_AFTER` traces the batches go, as
JSON, to one worker process; a batch that finds the worker :data:`IN_FLIGHT` batches behind is
embedded where it is instead, so both cores stay busy, and the vectors are taken back in order.

Only the static embedder goes to a worker: its vector of a text depends on nothing else (the
same in any batch and any process, so a run's answer does not depend on which process embedded
what). MiniLM runs on every core already. The worker is forked (Linux only), so it has the
caller's embedder as loaded and starts at once; a spawned one would import the caller's main
module again, which a script without a main guard does not survive.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.processes import exit_with_parent
from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.embedder import Embedder
from knowledgepulse.novelty.representation import NoveltyText, novelty_text
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.trace.models import ReasoningTrace

LANE_AFTER = 20_000
"""Traces read before a worker starts: a smaller corpus saves under a few seconds by it."""
IN_FLIGHT = 4
"""Batches the worker may have waiting before the caller embeds one itself."""

_TOKENIZER_THREADS = "TOKENIZERS_PARALLELISM"
_worker: tuple[Embedder, NoveltyText] | None = None
_SERIALIZER = ReasoningTrace.__pydantic_serializer__


def lane_for(embedder: Embedder | None, text: str, count: int) -> EmbeddingLane | None:
    """A lane for ``count`` traces read so far, where one helps: else ``None``."""
    linux = sys.platform == "linux"  # the cores this process may run on, not the machine's
    helps = linux and count >= LANE_AFTER and len(os.sched_getaffinity(0)) > 1
    return EmbeddingLane(embedder, text) if helps and type(embedder) is StaticEmbedder else None


class EmbeddingLane:
    """Batches of traces embedded in a worker process or here, their vectors in order.

    Args:
        embedder: the embedder, loaded or not (the worker is forked with it).
        text: the novelty text's name (``TraceValueScorer.novelty_text``).
    """

    def __init__(self, embedder: Embedder, text: str) -> None:
        self._embedder, self._text = embedder, novelty_text(text)
        self._pool = ProcessPoolExecutor(
            1,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start,
            initargs=(embedder, text),  # a forked worker has them as they are, not pickled
        )
        # tokenizers turns its threads off in a child forked after they ran, and warns on
        # stderr unless the environment the child copies says so: it says so while forking.
        told = os.environ.get(_TOKENIZER_THREADS)
        os.environ[_TOKENIZER_THREADS] = "false"
        try:
            self._pool.submit(_ready).result()  # the worker is forked here
        finally:
            if told is None:
                del os.environ[_TOKENIZER_THREADS]
            else:
                os.environ[_TOKENIZER_THREADS] = told
        self._waiting: deque[Future[NDArray[np.float32]] | NDArray[np.float32]] = deque()

    def put(self, traces: Sequence[ReasoningTrace]) -> None:
        """Embed ``traces`` (a batch), in the worker unless it is :data:`IN_FLIGHT` behind."""
        futures = [found for found in self._waiting if isinstance(found, Future)]
        if len(futures) >= IN_FLIGHT and not futures[0].done():
            self._waiting.append(self._text.embed(self._embedder, traces).vectors)
            return
        documents = [_SERIALIZER.to_json(trace, by_alias=True) for trace in traces]
        try:
            self._waiting.append(self._pool.submit(_embed, documents))
        except BrokenProcessPool as error:
            raise _stopped(error) from error

    def ready(self, *, wait: bool = False) -> list[NDArray[np.float32]]:
        """The vectors of the batches done, in the order put (``wait``: of every batch)."""
        done: list[NDArray[np.float32]] = []
        while self._waiting:
            first = self._waiting[0]
            if isinstance(first, Future):
                if not wait and not first.done():
                    break
                try:
                    first = first.result()
                except BrokenProcessPool as error:
                    raise _stopped(error) from error
            done.append(first)
            self._waiting.popleft()
        return done

    def close(self) -> None:
        """Stop the worker; batches not taken are dropped."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _stopped(error: BrokenProcessPool) -> EmbedderUnavailableError:
    """The error of a worker that died (killed, out of memory): what a user can do of it."""
    return EmbedderUnavailableError(
        f"the process embedding beside this one stopped ({error}); if memory ran out, "
        "give fewer traces at a time"
    )


def _start(embedder: Embedder, text: str) -> None:
    """In the worker: its embedder; Ctrl-C is the caller's to handle (it stops the worker)."""
    global _worker  # noqa: PLW0603 - the worker process's one embedder
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    _worker = (embedder, novelty_text(text))


def _ready() -> None:
    """In the worker: nothing, once it has started."""


def _embed(documents: list[bytes]) -> NDArray[np.float32]:
    """In the worker: the novelty vectors of traces sent as JSON."""
    assert _worker is not None, "the worker starts with its embedder"
    embedder, text = _worker
    traces = [ReasoningTrace.model_validate_json(document) for document in documents]
    return text.embed(embedder, traces).vectors
