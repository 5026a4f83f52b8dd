"""The two kinds of embedding actor: one serving :class:`RayEmbedder`, one for ``map_batches``.

Both are plain classes (Ray makes them actors at run time), each holding one embedder built by
its :class:`~knowledgepulse.engines.ray_engine.factory.EmbedderFactory` when the actor starts
and kept for the actor's life, so no call pays for loading the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.engines.ray_engine.factory import EmbedderFactory
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    dimensions_of,
    model_id_of,
)
from knowledgepulse.novelty.representation import LeadingEmbedder, novelty_text
from knowledgepulse.novelty.windows import WindowedEmbeddings
from knowledgepulse.records import Location, Record
from knowledgepulse.trace.load import LoadedTrace, validate_record

TRACE_COLUMN = "trace"
"""The column :func:`~knowledgepulse.engines.ray_engine.score_dataset` reads a trace from."""

# The columns the embedding stage gives the driver (prefixed: they never clash with the user's).
ID = "_kp_id"
TRACE_JSON = "_kp_trace"
VECTOR = "_kp_vector"
WINDOWS = "_kp_windows"
CAPPED = "_kp_capped"
PROBLEMS = "_kp_problems"
KEY = "_kp_key"


class EmbedWorker:
    """Serves one embedder's calls for a :class:`~knowledgepulse.engines.ray_engine.RayEmbedder`.

    Args:
        factory: makes the embedder, once, in the actor.
    """

    def __init__(self, factory: EmbedderFactory) -> None:
        self._embedder: Embedder = factory()

    def describe(self) -> tuple[int | None, str, int | None]:
        """Load the model now, and say its ``dimensions``, ``model_id`` and ``max_windows``.

        Raises:
            EmbedderUnavailableError: the model cannot be loaded on this node.
        """
        load = getattr(self._embedder, "load", None)
        if callable(load):
            load()
        max_windows = getattr(self._embedder, "max_windows", None)
        return (
            dimensions_of(self._embedder),
            model_id_of(self._embedder),
            max_windows if isinstance(max_windows, int) else None,
        )

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The embedder's ``embed_batch``."""
        return np.asarray(self._embedder.embed_batch(texts), dtype=np.float32)

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """The embedder's ``embed_windowed``; without one, its vectors and no window counts."""
        if isinstance(self._embedder, WindowedEmbedder):
            return self._embedder.embed_windowed(texts)
        # Empty counts: the scorer then reports no windows, as it does for a plain embedder.
        return WindowedEmbeddings(self.embed_batch(texts), (), ())

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """The embedder's ``embed_leading``; without one, ``embed_batch`` (as the scorer does)."""
        if isinstance(self._embedder, LeadingEmbedder):
            return np.asarray(self._embedder.embed_leading(texts, max_pieces), dtype=np.float32)
        return self.embed_batch(texts)


class TraceBatchEmbedder:
    """A ``map_batches`` actor: validates each row's trace and embeds the valid ones.

    It gives, for every input row in its order, the trace id, the trace as JSON, its novelty
    vector (zeros for a bad row), the windows read (-1: not known), whether it was capped (-1:
    not known) and the row's problems as JSON (``""``: none), plus the ``order_by`` value.

    Args:
        factory: makes the embedder, once, in the actor.
        novelty_text: the name of the representation (the driver's scorer's).
        column: the column holding the trace (a JSON string or a struct); a row without it is
            read as the trace itself.
        order_by: a column to carry to the driver (not part of the trace).
    """

    def __init__(
        self, factory: EmbedderFactory, novelty_text_name: str, column: str, order_by: str | None
    ) -> None:
        self._embedder: Embedder = factory()
        self._text = novelty_text(novelty_text_name)
        self._column = column
        self._order_by = order_by

    def __call__(self, batch: Any) -> dict[str, NDArray[Any]]:
        """Embed one ``pyarrow.Table`` batch; see the class docstring for the columns."""
        rows: list[dict[str, Any]] = batch.to_pylist()
        size = len(rows)
        ids = np.full(size, "", dtype=object)
        texts = np.full(size, "", dtype=object)
        problems = np.full(size, "", dtype=object)
        windows = np.full(size, -1, dtype=np.int32)
        capped = np.full(size, -1, dtype=np.int8)
        valid: list[LoadedTrace] = []
        positions: list[int] = []
        for position, row in enumerate(rows):
            value, problem = self._trace_value(row)
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                ids[position] = value["id"]
            if problem is not None:
                problems[position] = json.dumps([["", problem]])
                continue
            result = validate_record(Record(Location("row"), value))
            if isinstance(result, LoadedTrace):
                valid.append(result)
                positions.append(position)
                texts[position] = json.dumps(value, ensure_ascii=False, default=_plain)
            else:
                problems[position] = json.dumps([[item.path, item.message] for item in result])
        represented = self._text.embed(self._embedder, [loaded.trace for loaded in valid])
        # A batch of bad rows only still gives vectors of the usual width: Ray joins blocks
        # into one tensor column, which needs one shape.
        declared = dimensions_of(self._embedder)
        width = (
            represented.vectors.shape[-1]
            if valid and represented.vectors.ndim == 2
            else self._text.dimensions(declared or 0)
        )
        vectors = np.zeros((size, width), dtype=np.float32)
        if valid:
            vectors[positions] = represented.vectors
        if represented.windows is not None and represented.capped is not None:
            windows[positions] = represented.windows
            capped[positions] = represented.capped
        columns: dict[str, NDArray[Any]] = {
            ID: ids,
            TRACE_JSON: texts,
            VECTOR: vectors,
            WINDOWS: windows,
            CAPPED: capped,
            PROBLEMS: problems,
        }
        if self._order_by is not None:
            columns[KEY] = np.asarray(batch.column(self._order_by).to_pylist(), dtype=object)
        return columns

    def _trace_value(self, row: dict[str, Any]) -> tuple[Any, str | None]:
        """The row's trace as parsed JSON, or the reason there is none."""
        if self._column not in row:
            return {key: value for key, value in row.items() if key != self._order_by}, None
        value = row[self._column]
        if isinstance(value, bytes | bytearray):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError as error:
                return None, f"the {self._column!r} column is not UTF-8: {error}"
        if isinstance(value, str):
            try:
                return json.loads(value), None
            except json.JSONDecodeError as error:
                return None, f"the {self._column!r} column is not JSON: {error}"
        if value is None:
            return None, f"the {self._column!r} column is null"
        return value, None


def _plain(value: Any) -> Any:
    """What ``json.dumps`` cannot write, as Arrow gives it: a timestamp or date, a NumPy value."""
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return isoformat()
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")
