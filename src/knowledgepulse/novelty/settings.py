"""The novelty package's sizes and limits, without numpy (a run without an embedder reads them)."""

from __future__ import annotations

from knowledgepulse.errors import ScorerParameterError, Setting

MODEL_POSITIONS = 256
"""The model card's max_seq_length."""

WINDOW_PIECES = MODEL_POSITIONS - 2
"""Word pieces per window: the rest of the positions are [CLS] and [SEP]."""

EMBEDDERS = ("minilm", "static")
"""The bundled embedders by name (``--embedder``): the MiniLM model, and the static table
distilled from it (:mod:`knowledgepulse.novelty.static`)."""

DEFAULT_EMBEDDER = "static"
"""The embedder a run on a CPU uses unless told otherwise: the static table, tens of times
faster than the model and as good at novelty, its novelty mapped onto the model's scale
(``docs/novelty.md`` measures both). The model (``minilm``) runs when an option only it takes
asks for it: a GPU, a model file, workers (:func:`knowledgepulse.runs.embedder.embedder_kind`)."""

DEFAULT_MAX_WINDOWS = 32
"""Windows embedded per text unless told otherwise (measured: see ``windows``)."""

TERM_DIMENSIONS = 384
"""Buckets of a term vector: the bundled model's dimensions (``docs/novelty.md`` found 384 and
1,024 within 0.003 of each other)."""

_NO_CAP = ("none", "no", "0", "off", "all")


def max_windows_of(value: int | str | None) -> int | None:
    """A window cap as given: a positive count, ``"none"`` (no cap), or ``None`` (the default).

    Raises:
        ScorerParameterError: ``value`` is neither a positive count nor ``"none"``.
    """
    if value is None:
        return DEFAULT_MAX_WINDOWS
    if isinstance(value, str) and value.strip().lower() in _NO_CAP:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ScorerParameterError(
            f"{value!r} is not a number of windows: give ",
            Setting("max_windows"),
            " a positive integer, or 'none' for no cap",
        )
    return count


DEFAULT_BATCH_SIZE = 32
"""Traces given to an embedder per call unless it (its ``batch_size``) or the caller says."""

WORKER_BATCH_SIZE = 64
"""Traces a call per worker process of the ONNX model: a call ends when its slowest batch does,
so it must hold many batches a worker (``bench/bench_embedding.py``)."""

STATIC_BATCH_SIZE = 1024
"""Traces a call for the static embedder: a text costs about what tokenizing it does, so a call
holds many to spread the per-call overhead."""

GPU_BATCH_SIZE = 8192
"""Traces a call for the model on a GPU: tokenizing one chunk overlaps the model's work on the
previous one only within a call, so a call must hold many chunks."""

DEFAULT_MAX_ELEMENTS = 1000
"""Vectors a new cache holds unless told otherwise."""

DEFAULT_DIMENSIONS = 384
"""A new cache's vector length unless told otherwise (all-MiniLM-L6-v2's)."""

MAX_CACHE_BYTES = 4 << 30
"""The most memory an in-memory cache's vectors may take (2.8 million 384-d vectors), so that a
mistyped size or a damaged ``.npz`` cannot exhaust memory; a ring file is bounded by the disk."""


def check_cache_size(max_elements: int, dimensions: int, *, name: str = "max_elements") -> None:
    """Refuse a cache whose vectors would take more than :data:`MAX_CACHE_BYTES`.

    ``name`` is the parameter the caller was given the size as, which the error names.
    """
    if max_elements * dimensions * 4 > MAX_CACHE_BYTES:
        raise ScorerParameterError(
            f"a cache of {max_elements} vectors of {dimensions} dimensions would take "
            f"{max_elements * dimensions * 4 / 2**30:.1f} GiB; the limit is "
            f"{MAX_CACHE_BYTES >> 30} GiB in memory, so give a smaller ",
            Setting(name),
            ", or keep the cache in a ring file (",
            Setting("VectorCache.open"),
            ")",
        )
