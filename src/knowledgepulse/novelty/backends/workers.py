"""The model in N worker processes of one onnxruntime thread each (``--workers N``).

On CPU, N processes x 1 thread beat 1 process x N threads: a process's batch never waits for
another's threads, and nothing is shared but the inputs and outputs. The parent plans the
batches (tokenizing, windowing, grouping by length), so the batches and hence the embeddings are
exactly those of one worker; the workers only run them, each batch on whichever is free.

Workers are started with ``spawn`` (the parent may hold threads that ``fork`` would copy in a
broken state), once, on the first batch, and live until :meth:`WorkerPool.close` or exit.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
import weakref
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.backends.onnx import OnnxModelSettings, OnnxRunner, require_onnxruntime
from knowledgepulse.novelty.chunks import PaddedBatch

# One per worker process: the runner its initializer opened, or why it could not.
_runner: OnnxRunner | None = None
_failure: EmbedderUnavailableError | None = None


def _open_in_worker(settings: OnnxModelSettings) -> None:
    # An exception here would print a traceback and break the pool; keep it for the first batch.
    global _runner, _failure  # noqa: PLW0603 - the worker process's one model
    try:
        _runner = OnnxRunner(settings)
    except EmbedderUnavailableError as error:
        _failure = error


def _run_in_worker(batch: PaddedBatch) -> NDArray[np.float32]:
    if _runner is None:
        raise _failure or EmbedderUnavailableError("the embedding worker has no model")
    return _runner.run(batch)


class WorkerPool:
    """Runs batches on ``workers`` processes, each with its own session of ``threads`` threads.

    Raises:
        EmbedderUnavailableError: (from :meth:`run_batches`) a worker could not open the model,
            or died (killed, out of memory); the message says which.
    """

    def __init__(self, settings: OnnxModelSettings, workers: int) -> None:
        # A worker would find out only after start-up that onnxruntime is missing: say it now.
        require_onnxruntime()
        self._workers = workers
        self._executor: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_open_in_worker,
            initargs=(settings,),
        )
        # Stop the workers before the interpreter tears down the modules the pool needs.
        self._finalizer = weakref.finalize(self, _shut_down, self._executor)

    @property
    def workers(self) -> int:
        """How many processes run batches."""
        return self._workers

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in order; batches run as workers free up."""
        if self._executor is None:
            raise EmbedderUnavailableError("the embedding workers were closed")
        try:
            with _children_ignore_ctrl_c():  # workers are spawned as the batches are submitted
                results = self._executor.map(_run_in_worker, batches)
            return list(results)
        except BrokenProcessPool:
            self.close()
            raise EmbedderUnavailableError(
                "an embedding worker process died (killed, or out of memory); try fewer "
                "--workers or a smaller --batch-size"
            ) from None

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        self._executor = None
        self._finalizer()


@contextlib.contextmanager
def _children_ignore_ctrl_c() -> Iterator[None]:
    """Processes spawned in this block ignore Ctrl-C; this one handles it as before.

    A terminal sends Ctrl-C to the whole process group: a worker still importing numpy or
    loading the model would print some 30 lines of traceback. An ignored signal stays ignored
    across ``exec``, so the workers inherit it; the parent, interrupted, stops them. Only the
    main thread may change a signal's handling; from any other the workers are spawned as is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _shut_down(executor: ProcessPoolExecutor) -> None:
    executor.shutdown(wait=True, cancel_futures=True)
