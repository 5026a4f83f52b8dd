"""The static embedder: one vector per word piece, distilled from the bundled MiniLM model.

A text's vector is the mean of its word pieces' rows, unit length: no attention, so it costs
about what tokenizing does. The table is made by ``bench/build_static_embedder.py`` from the
int8 all-MiniLM-L6-v2 kp ships (model2vec's distillation: PCA to 256, SIF weights) with the
mean and the top principal directions of sentence vectors of the public corpora removed
(``docs/novelty.md``). It is stored in model2vec's format (``model.safetensors``: int8 rows and a
scale a row; ``config.json``) and read with ``safetensors``; model2vec's ``StaticModel`` reads it
too (with the bundled ``tokenizer.json`` beside it) and gives the same vectors.
"""

from __future__ import annotations

import functools
import importlib.resources
import itertools
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import positive_int
from knowledgepulse.errors import EmbedderUnavailableError, Location
from knowledgepulse.novelty.calibration import NoveltyCalibration
from knowledgepulse.novelty.minilm import (
    INSTALL_HINT,
    bundled_tokenizer_path,
    digest_model_id,
    file_sha256,
    open_tokenizer,
    optional_module,
)
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, STATIC_BATCH_SIZE, WINDOW_PIECES
from knowledgepulse.novelty.windows import leading_pieces, unit_rows

STATIC_MODEL_DIR = Path(str(importlib.resources.files("knowledgepulse.novelty") / "data/static"))
"""The shipped table: ``model.safetensors`` and ``config.json`` (model2vec's format)."""

STATIC_MODEL_ID = "static-minilm-int8-v1"
"""The shipped table's name, which saved caches record."""

STATIC_MODEL_SHA256 = "494ccff2eed07e11595a9207c458fcd3b02fa3f39d55ebe16f1835f501c84a21"
"""The sha256 of the shipped ``model.safetensors``, printed by the script that builds it."""


class StaticEmbedder:
    """Static word-piece embeddings distilled from all-MiniLM-L6-v2 (unit vectors).

    A text's vector is the normalised mean of its word pieces' rows (``[UNK]`` left out); an
    empty text gets zeros. The same text gives the same vector whatever else is in the call.
    Loaded on first use, in milliseconds; no model runs, so there are no workers or devices.

    Args:
        path: a model2vec folder (``model.safetensors``, ``config.json`` and, unless it uses
            the bundled tokenizer, ``tokenizer.json``); default: the shipped table.
        sha256: ``model.safetensors``'s expected sha256 (default: pinned for the shipped one).

    Raises:
        EmbedderUnavailableError: (from the methods that embed) ``tokenizers`` or
            ``safetensors`` is not installed, or the folder is missing, damaged or not the one
            expected (see :meth:`load`).
    """

    def __init__(self, path: str | Path | None = None, *, sha256: str | None = None) -> None:
        bundled = path is None
        self._folder = STATIC_MODEL_DIR if path is None else Path(path)
        self._sha256 = sha256.lower() if sha256 else (STATIC_MODEL_SHA256 if bundled else None)
        self._model_id: str | None = STATIC_MODEL_ID if bundled else None
        self._lock = threading.Lock()
        self._rows: NDArray[np.int8] | NDArray[np.floating[Any]] | None = None
        self._scale: NDArray[np.float32] | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None

    @property
    def dimensions(self) -> int:
        """The length of every embedding (loads the table)."""
        return int(self._loaded()[0].shape[1])

    @property
    def model_id(self) -> str:
        """The table that makes the vectors, which saved caches record.

        The shipped table's name; for another folder, ``static:`` and the start of its sha256.
        """
        if self._model_id is None:
            path = self._folder / "model.safetensors"
            self._model_id = digest_model_id("static", path, self._sha256, "the table")
        return self._model_id

    @property
    def batch_size(self) -> int:
        """Texts a call should hold: :data:`STATIC_BATCH_SIZE`."""
        return STATIC_BATCH_SIZE

    def novelty_calibration(self, novelty_text: str) -> NoveltyCalibration | None:
        """The map of this table's novelty onto MiniLM's for ``novelty_text``, if it has one.

        The build script fits it on the public corpora and writes it to ``config.json``
        (``novelty_calibration``); a scorer applies it to every novelty it measures, so the
        sharing threshold means what it means with MiniLM. ``None``: no map for that text.

        Raises:
            EmbedderUnavailableError: ``config.json`` is unreadable or its map malformed.
        """
        found = _config(self._folder).get("novelty_calibration")
        try:
            return None if found is None else NoveltyCalibration.from_config(found, novelty_text)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise EmbedderUnavailableError(
                f"{self._folder / 'config.json'}: a malformed novelty_calibration ({error})"
            ) from None

    def load(self) -> None:
        """Read the table and the tokenizer now instead of on first use.

        Raises:
            EmbedderUnavailableError: ``tokenizers`` or ``safetensors`` is missing, or a file is
                missing, damaged or not the one expected; the message says how to fix it.
        """
        self._loaded()

    def close(self) -> None:
        """Nothing to release: the table goes with the object."""

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed each text's word pieces; a (len(texts), dimensions) float32 array.

        At most the pieces the MiniLM embedder's windows hold by default (its
        :data:`~knowledgepulse.novelty.settings.DEFAULT_MAX_WINDOWS` windows of
        :data:`~knowledgepulse.novelty.settings.WINDOW_PIECES`): a text's first ones, the rest
        never tokenized, so that a trace of megabytes costs what its first pieces do.
        """
        return self._embed(texts, max_pieces=DEFAULT_MAX_WINDOWS * WINDOW_PIECES)

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Embed each text's first ``max_pieces`` word pieces, as the MiniLM embedder reads it.

        Raises:
            ScorerParameterError: ``max_pieces`` is not a positive whole number.
        """
        positive_int(max_pieces, "max_pieces")
        return self._embed(texts, max_pieces=max_pieces)

    def _embed(self, texts: Sequence[str], *, max_pieces: int) -> NDArray[np.float32]:
        # Each distinct text once: a text's vector does not depend on the others of the call,
        # and texts recur (a task's runs share their objective).
        distinct = dict.fromkeys(texts)
        if len(distinct) < len(texts):
            found = self._embed(list(distinct), max_pieces=max_pieces)
            row_of = {text: row for row, text in enumerate(distinct)}
            return found[[row_of[text] for text in texts]]
        rows, scale = self._loaded()
        sums = np.zeros((len(texts), rows.shape[1]), dtype=np.float32)
        # A batch at a time: a text's tokenizer output takes some 30 KB, a vector 1 KB.
        for start in range(0, len(texts), STATIC_BATCH_SIZE):
            pieces = leading_pieces(
                texts[start : start + STATIC_BATCH_SIZE],
                self._encode,
                max_windows=1,
                window_pieces=max_pieces,
            )
            # Each text's distinct pieces and their counts, all texts in one np.unique of
            # (text, piece) keys: sorted by text, then by piece, as one np.unique a text gives.
            owner = np.repeat(np.arange(len(pieces)), [len(ids) for ids, _ in pieces])
            found = np.fromiter(
                itertools.chain.from_iterable(ids for ids, _ in pieces), np.intp, len(owner)
            )
            if self._unknown is not None:
                owner, found = owner[found != self._unknown], found[found != self._unknown]
            keys, counts = np.unique(owner * len(rows) + found, return_counts=True)
            ends = np.searchsorted(keys // len(rows), np.arange(1, len(pieces) + 1))
            for row, (begin, end) in enumerate(zip([0, *ends[:-1]], ends, strict=True), start):
                if end > begin:
                    unique = keys[begin:end] % len(rows)
                    # Bounded by the vocabulary: each distinct piece once, weighted by its count.
                    weights = (counts[begin:end] * scale[unique]).astype(np.float32)
                    sums[row] = weights @ rows[unique].astype(np.float32)
        return unit_rows(sums)

    def _encode(self, texts: list[str]) -> list[list[int]]:
        # Without the offsets, which nothing here reads (tokenizers >= 0.21 has the fast form).
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        return [encoding.ids for encoding in encode(texts, add_special_tokens=False)]

    def _loaded(self) -> tuple[NDArray[Any], NDArray[np.float32]]:
        with self._lock:
            if self._rows is None or self._scale is None:
                rows, scale = self._read_table()
                self._tokenizer, self._unknown = self._read_tokenizer(len(rows))
                self._rows, self._scale = rows, scale
            return self._rows, self._scale

    def _read_table(self) -> tuple[NDArray[Any], NDArray[np.float32]]:
        path = self._folder / "model.safetensors"
        if not path.is_file():
            raise EmbedderUnavailableError(f"the static embedder's table {path} does not exist")
        rows, scale = _table(path, self._sha256, _stamp(path))
        if _config(self._folder).get("normalize") is False:
            raise EmbedderUnavailableError(
                f"{self._folder / 'config.json'} says normalize: false; kp compares unit vectors"
            )
        return rows, scale

    def _read_tokenizer(self, rows: int) -> tuple[Any, int | None]:
        path = self._folder / "tokenizer.json"
        path = path if path.is_file() else bundled_tokenizer_path()
        tokenizer = _tokenizer(path, _stamp(path))
        if tokenizer.get_vocab_size() != rows:
            raise EmbedderUnavailableError(
                f"the tokenizer {path} has {tokenizer.get_vocab_size()} pieces but the table "
                f"{rows} rows; they do not belong together"
            )
        return tokenizer, tokenizer.token_to_id("[UNK]")


Stamp = tuple[int, int, int, int] | None
"""A file's device, inode, size and modification time (ns): what changes when it does."""


def _stamp(path: Path) -> Stamp:
    """``path``'s :data:`Stamp`, ``None`` if it cannot be seen: the key its read is cached by."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


# The files are read once a process while they are unchanged (each scorer asks the table's
# config, and each embedder made reads the table), and again once one changes (its stamp).
@functools.lru_cache(maxsize=4)
def _table(
    path: Path, sha256: str | None, stamp: Stamp
) -> tuple[NDArray[Any], NDArray[np.float32]]:
    """The rows and scale of the table at ``path``, checked; read-only: embedders share them."""
    numpy_tensors = optional_module(
        "safetensors.numpy", "the static embedder needs the safetensors package"
    )
    if sha256 is not None and (found := file_sha256(path)) != sha256:
        raise EmbedderUnavailableError(
            f"the table {path} has sha256 {found}, expected {sha256}; it is damaged "
            f"or not the expected one. Reinstall knowledgepulse: {INSTALL_HINT} "
            "--force-reinstall"
        )
    try:
        tensors = numpy_tensors.load_file(str(path))
    except Exception as error:  # safetensors raises its own untyped errors
        raise EmbedderUnavailableError(f"cannot read the table {path}: {error}") from None
    rows = tensors.get("embeddings")
    if rows is None or rows.ndim != 2:
        raise EmbedderUnavailableError(f"{Location(str(path))}: no 2-d 'embeddings' tensor")
    if "mapping" in tensors:
        raise EmbedderUnavailableError(
            f"{Location(str(path))}: a vocabulary-quantized model2vec model, which kp does not read"
        )
    weights = tensors.get("weights")
    scale = np.ones(len(rows), np.float32) if weights is None else weights.astype(np.float32)
    if scale.shape != (len(rows),):
        raise EmbedderUnavailableError(f"{Location(str(path))}: 'weights' is not one number a row")
    rows.flags.writeable = scale.flags.writeable = False
    return rows, scale


@functools.lru_cache(maxsize=4)
def _tokenizer(path: Path, stamp: Stamp) -> Any:
    """The tokenizer at ``path`` (encoding changes nothing in it, so embedders share it)."""
    return open_tokenizer(path, "the static embedder")


def _config(folder: Path) -> Mapping[str, Any]:
    """The folder's ``config.json`` (empty when there is none); not to be changed: it is shared."""
    path = folder / "config.json"
    return _read_config(path, _stamp(path))


@functools.lru_cache(maxsize=4)
def _read_config(path: Path, stamp: Stamp) -> Mapping[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as error:
        raise EmbedderUnavailableError(f"cannot read {path}: {error}") from None
    return found if isinstance(found, dict) else {}
