"""Scoring on a Ray cluster (extra ``ray``: ``pip install "knowledgepulse[ray]"``; ``docs/ray.md``).

:class:`RayEmbedder` (:mod:`~knowledgepulse.engines.ray_embedder`) is an embedder whose calls run
on a pool of Ray actors, for any scorer (``kp score --engine ray``); :func:`score_dataset`,
here, scores a ``ray.data.Dataset`` of traces: embedding on an actor pool, novelty in the driver.
Ray itself is imported on first use (``import_ray``), so importing this module never needs it.

A row is a trace: a column (``trace`` by default) holding it as a JSON string (or bytes, or a
struct), or else the row itself. Novelty is online, so the driver scores the rows in order
(the dataset's, or an ``order_by`` column's), batch after batch, as
:meth:`TraceValueScorer.score_many` does: the results equal the local ones (``docs/ray.md``).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, Unpack, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.engines.ray_embedder import (
    INSTALL_HINT,
    DeviceFactory,
    EmbedderFactory,
    EmbedWorker,
    MiniLMFactory,
    NamesItsModel,
    RayClusterError,
    RayEmbedder,
    actors_allowed,
    check_reachable,
    contiguous_shards,
    first_line,
    import_ray,
    own_error,
)
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.novelty.embedder import Embedder, dimensions_of, model_id_of
from knowledgepulse.novelty.representation import novelty_text
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.trace.load import LoadedTrace, validate_record
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import DEFAULT_BATCH_SIZE, TraceValueScorer

TRACE_COLUMN = "trace"
"""The column :func:`score_dataset` reads a trace from."""

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


class TraceBatchEmbedder:
    """A ``map_batches`` actor: validates each row's trace and embeds the valid ones.

    It gives, for every input row in its order, the trace id, the trace as JSON, its novelty
    vector (zeros for a bad row), the windows read (-1: not known), whether it was capped (-1:
    not known) and the row's problems as JSON (``""``: none), plus the ``order_by`` value; with
    ``convert`` (rows in a conversation format), the row itself too, pickled, so that its values
    come back exactly as read. A row without ``column`` is read as the trace itself.
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
        read = self._convert(rows) if self._convert else [self._trace_value(row) for row in rows]
        for position, (value, found) in enumerate(read):
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
        width = (
            represented.vectors.shape[-1]
            if valid and represented.vectors.ndim == 2
            else self._text.dimensions(dimensions_of(self._embedder) or 0)
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

    def _trace_value(self, row: dict[str, Any]) -> tuple[Any, list[tuple[str, str]]]:
        """The row's trace as parsed JSON, or ``None`` and why there is none."""
        if self._column not in row:
            return {key: value for key, value in row.items() if key != self._order_by}, []
        value, column = row[self._column], self._column
        if value is None:
            return None, [("", f"the {column!r} column is null")]
        try:
            if isinstance(value, bytes | bytearray):
                value = value.decode("utf-8")
            if isinstance(value, str):
                value = json.loads(value)
        except UnicodeDecodeError as error:
            return None, [("", f"the {column!r} column is not UTF-8: {error}")]
        except json.JSONDecodeError as error:
            return None, [("", f"the {column!r} column is not JSON: {error}")]
        return value, []


def _plain(value: Any) -> Any:
    """What ``json.dumps`` cannot write, as Arrow gives it: a timestamp or date, a NumPy value."""
    for method in ("isoformat", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            return convert()
    raise TypeError(f"{type(value).__name__} is not JSON")


@dataclass(frozen=True, slots=True)
class ScoredRow:
    """One row's result: its breakdown, or (``breakdown`` ``None``) its problems.

    ``position`` is its place in the order scored; ``key`` its ``order_by`` value; ``row`` the
    row as read when the rows were converted (``convert``).
    """

    position: int
    trace_id: str | None
    breakdown: ValueBreakdown | None
    problems: tuple[Problem, ...] = ()
    key: Any = None
    row: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class DatasetScores:
    """Every row's result, in the order scored (see :func:`score_dataset`)."""

    rows: tuple[ScoredRow, ...]

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """The breakdowns of the rows that were scored, in order."""
        return [row.breakdown for row in self.rows if row.breakdown is not None]

    @property
    def problems(self) -> list[Problem]:
        """Every problem of the bad rows, in order."""
        return [problem for row in self.rows for problem in row.problems]


class ActorOptions(TypedDict, total=False):
    """The scorer and the actor pool of :func:`iter_dataset_scores` (see its arguments)."""

    scorer: TraceValueScorer | None
    factory: EmbedderFactory | None
    concurrency: int | None
    num_cpus: float
    num_gpus: float
    batch_size: int


class DatasetOptions(ActorOptions, total=False):
    """Every keyword argument of :func:`iter_dataset_scores`."""

    column: str
    order_by: str | None
    convert: RowConverter | None


def score_dataset(dataset: Any, **options: Unpack[DatasetOptions]) -> DatasetScores:
    """Score every row of a Ray Dataset of traces; the results in the order scored.

    Takes the arguments of :func:`iter_dataset_scores` and collects its rows.
    """
    return DatasetScores(tuple(iter_dataset_scores(dataset, **options)))


def iter_dataset_scores(
    dataset: Any,
    *,
    scorer: TraceValueScorer | None = None,
    factory: EmbedderFactory | None = None,
    column: str = TRACE_COLUMN,
    order_by: str | None = None,
    concurrency: int | None = None,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    convert: RowConverter | None = None,
) -> Iterator[ScoredRow]:
    """Score a Ray Dataset of traces, yielding each row's result in order as it is ready.

    Args:
        dataset: a ``ray.data.Dataset`` whose rows are traces (see the module docstring).
        scorer: the scorer whose settings apply (default: a new one); its embedder only names
            the model, which must be the factory's: the actors do the embedding.
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread each).
        column: the column holding each trace; rows without it are read as the trace itself.
        order_by: score in the order of this column instead of the dataset's order.
        concurrency: how many embedding actors (default: as the cluster's CPUs or GPUs allow).
        num_cpus: CPUs per actor.
        num_gpus: GPUs per actor (give a factory of a GPU embedder with it).
        batch_size: rows per actor call and per novelty pass.
        convert: makes the traces of a batch of rows in a conversation format (see
            :mod:`knowledgepulse.ray_rows`), instead of ``column``; each result carries its row.

    Raises:
        MissingDependencyError: Ray is not installed.
        ScorerParameterError: the scorer's embedder is not the factory's model.
        EmbedderUnavailableError: the model cannot be loaded on the cluster.
    """
    ray = import_ray()
    factory = factory or MiniLMFactory()
    # The driver may have no GPU: it names the model without making the actors' embedder.
    naming = factory.naming_embedder if isinstance(factory, NamesItsModel) else factory
    if scorer is None:
        scorer = TraceValueScorer(embedder=naming())
    else:
        _check_same_model(scorer, naming)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    if concurrency is None:
        concurrency = actors_allowed(ray.cluster_resources(), num_cpus, num_gpus)
    mapped = dataset.map_batches(
        TraceBatchEmbedder,
        fn_constructor_args=(factory, scorer.novelty_text, column, order_by, convert),
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        num_gpus=num_gpus,
    )
    if order_by is not None:
        # Sorted after embedding, not before: a sort before it would wait for CPUs the actor
        # pool already holds (it deadlocks a 2-CPU Ray), while this one runs once they are free.
        mapped = mapped.sort(KEY)
    # The novelty pass needs the rows in order; the actors still embed blocks in parallel.
    mapped.context.execution_options.preserve_order = True
    position = 0
    try:
        for batch in mapped.iter_batches(batch_size=batch_size, batch_format="numpy"):
            rows = _score_batch(scorer, batch, position)
            position += len(rows)
            yield from rows
    except ray.exceptions.RayError as error:
        # An actor's own error (a model that does not load) reaches the caller as it is.
        ours = own_error(error)
        if ours is not None:
            raise ours from None
        raise RayClusterError(
            f"scoring the dataset failed on the cluster: {first_line(error)}"
        ) from error


def _check_same_model(scorer: TraceValueScorer, naming: Callable[[], Embedder]) -> None:
    if scorer.embedder is None:
        return
    expected, found = model_id_of(naming()), model_id_of(scorer.embedder)
    if expected != found:
        raise ScorerParameterError(
            f"the scorer's embedder is {found!r} but the actors embed with {expected!r}; give "
            "the scorer the same model (its cache records it), or embedder=None"
        )


def _score_batch(scorer: TraceValueScorer, batch: dict[str, Any], start: int) -> list[ScoredRow]:
    """One batch's rows, scored in order (novelty of the valid ones in one pass)."""
    size = len(batch[ID])
    keys = batch.get(KEY)
    originals = batch.get(ROW)
    problems = [str(text) for text in batch[PROBLEMS]]
    valid = [row for row in range(size) if not problems[row]]
    vectors = np.asarray(batch[VECTOR], dtype=np.float32).reshape(size, -1)
    windows = [int(batch[WINDOWS][row]) for row in valid]
    capped = [int(batch[CAPPED][row]) for row in valid]
    known = all(count >= 0 for count in windows) and all(flag >= 0 for flag in capped)
    breakdowns = iter(
        scorer.score_embedded(
            [json.loads(str(batch[TRACE_JSON][row])) for row in valid],
            vectors[valid],
            windows=windows if known else None,
            capped=[bool(flag) for flag in capped] if known else None,
        )
        if valid
        else []
    )
    rows = []
    for row in range(size):
        position = start + row
        trace_id = str(batch[ID][row]) or None
        key = None if keys is None else _plain_key(keys[row])
        # Only our own actors' rows (pickled there, see TraceBatchEmbedder) are unpickled.
        original = None if originals is None else pickle.loads(originals[row])
        if problems[row]:
            where = Location(f"row {position}" + (f" ({trace_id})" if trace_id else ""))
            found = tuple(
                Problem(where, path, message) for path, message in json.loads(problems[row])
            )
            rows.append(ScoredRow(position, trace_id, None, found, key, original))
        else:
            rows.append(ScoredRow(position, trace_id, next(breakdowns), (), key, original))
    return rows


def _plain_key(value: Any) -> Any:
    item = getattr(value, "item", None)
    return item() if callable(item) else value


__all__ = [
    "INSTALL_HINT",
    "TRACE_COLUMN",
    "DatasetScores",
    "DeviceFactory",
    "EmbedWorker",
    "EmbedderFactory",
    "MiniLMFactory",
    "RayClusterError",
    "RayEmbedder",
    "RowConverter",
    "ScoredRow",
    "TraceBatchEmbedder",
    "check_reachable",
    "contiguous_shards",
    "iter_dataset_scores",
    "score_dataset",
]
