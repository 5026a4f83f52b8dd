"""The embedding actors, and the recipes (factories) they build their embedders from.

Two kinds of actor: one serving :class:`RayEmbedder`, one for ``map_batches``. Both are plain
classes (Ray makes them actors at run time), each holding one embedder built by its
:class:`EmbedderFactory` when the actor starts and kept for the actor's life, so no call pays
for loading the model. An actor cannot receive a loaded model (an onnxruntime session does not
pickle, and each actor wants its own), so it receives a picklable recipe.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.novelty.devices import resolve_device
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    dimensions_of,
    embedder_for,
    model_id_of,
)
from knowledgepulse.novelty.representation import LeadingEmbedder, novelty_text
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS
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
ROW = "_kp_row"


@runtime_checkable
class RowConverter(Protocol):
    """A picklable callable that makes the trace of each row of a batch (a dataset of rows).

    It is given a batch's rows (dicts) and gives, for each in order, the trace document, or
    ``None`` and the row's problems as ``(path, message)`` pairs.
    """

    def __call__(
        self, rows: list[dict[str, Any]]
    ) -> list[tuple[dict[str, Any] | None, list[tuple[str, str]]]]:
        """Each row's trace document, or ``None`` and why there is none."""
        ...


@runtime_checkable
class EmbedderFactory(Protocol):
    """A picklable callable that makes an :class:`~knowledgepulse.novelty.Embedder`.

    Each actor calls it once. Any module-level function or a dataclass such as
    :class:`MiniLMFactory` will do; a lambda will not (it does not pickle by reference).
    """

    def __call__(self) -> Embedder:
        """A new embedder (it may load its model lazily, on first use)."""
        ...


@runtime_checkable
class NamesItsModel(Protocol):
    """A factory that can name its model on a machine that cannot run it (the driver).

    The driver's scorer needs an embedder only for its model id and dimensions (the cache
    records them); when the factory's own embedder needs what only the actors have (a GPU),
    this gives one of the same model that any machine can make. It is never run.
    """

    def naming_embedder(self) -> Embedder:
        """An embedder of the same model id and dimensions, not loaded."""
        ...


@dataclass(frozen=True, slots=True)
class MiniLMFactory:
    """Makes the bundled all-MiniLM-L6-v2 embedder (or another ONNX model) in each actor.

    Attributes:
        model_path: an ONNX model to use instead of the bundled one; it must exist at this path
            on every node of the cluster.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
        threads: onnxruntime threads per actor. One: N actors x 1 thread beat one process x N
            threads on CPU (measured for issue 9), and Ray gives each actor one CPU.
    """

    model_path: str | None = None
    max_windows: int | None = DEFAULT_MAX_WINDOWS
    threads: int = 1

    def __call__(self) -> Embedder:
        """A new, not yet loaded :class:`~knowledgepulse.novelty.MiniLMEmbedder`."""
        from knowledgepulse.novelty.minilm import MiniLMEmbedder  # noqa: PLC0415

        return MiniLMEmbedder(self.model_path, threads=self.threads, max_windows=self.max_windows)


@dataclass(frozen=True, slots=True)
class DeviceFactory:
    """Makes the embedder for a device in each actor (``kp score --engine ray --device``).

    ``cuda`` gives the fp16 PyTorch model (the ``gpu`` extra must be installed on the nodes):
    give the actors ``num_gpus`` so that Ray gives each its own GPU, which it then sees as
    ``cuda``. ``cpu`` (and ``auto`` on an actor without a GPU) is :class:`MiniLMFactory`'s.

    Attributes:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``, resolved on the actor's node.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
    """

    device: str = "cuda"
    max_windows: int | None = DEFAULT_MAX_WINDOWS

    def __call__(self) -> Embedder:
        """A new embedder for the device (its model loads on first use).

        Ray hides the GPUs from an actor that reserved none, so ``auto`` there is the CPU:
        the bundled model on one thread, as :class:`MiniLMFactory` makes it.
        """
        device = resolve_device(self.device)
        if device == "cpu":
            return MiniLMFactory(max_windows=self.max_windows)()
        return embedder_for(device, max_windows=self.max_windows)

    def naming_embedder(self) -> Embedder:
        """The bundled CPU model, not loaded: the GPU model's id and dimensions, on any machine.

        The fp16 PyTorch model shares the bundled model's id (the same weights), so a cache
        made with either is the other's.
        """
        return MiniLMFactory(max_windows=self.max_windows)()


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
        convert: makes each row's trace (rows in a conversation format); the row itself then
            goes to the driver too, pickled, so that its values come back exactly as read.
    """

    def __init__(
        self,
        factory: EmbedderFactory,
        novelty_text_name: str,
        column: str,
        order_by: str | None,
        convert: RowConverter | None = None,
    ) -> None:
        self._embedder: Embedder = factory()
        self._text = novelty_text(novelty_text_name)
        self._column = column
        self._order_by = order_by
        self._convert = convert

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
        converted = self._convert(rows) if self._convert is not None else None
        for position, row in enumerate(rows):
            if converted is not None:
                value, found = converted[position]
            else:
                value, problem = self._trace_value(row)
                found = [("", problem)] if problem is not None else []
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                ids[position] = value["id"]
            if found:
                problems[position] = json.dumps(found)
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
        if self._convert is not None:
            # Pickled: Arrow would turn the row's lists into arrays on the way to the driver.
            columns[ROW] = np.asarray([pickle.dumps(row) for row in rows], dtype=object)
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
