"""Scoring on a Ray cluster (extra ``ray``: ``pip install "knowledgepulse[ray]"``; ``docs/ray.md``).

:class:`RayEmbedder` spreads each embedding call over a pool of Ray actors, for any scorer
(``kp score --engine ray``). :func:`score_dataset` scores a ``ray.data.Dataset`` of traces
(a ``trace`` column of JSON, or rows that are traces): the actors embed, the driver measures
novelty in order, so the results equal the local ones. An actor cannot receive a loaded model
(an onnxruntime session does not pickle): it gets a picklable :class:`EmbedderFactory`.
Ray itself is imported on first use, so importing this module never needs it.
"""

from __future__ import annotations

import itertools
import json
import logging
import pickle
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeAlias, TypedDict, Unpack

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import optional_positive_int
from knowledgepulse.errors import (
    KnowledgePulseError,
    MissingDependencyError,
    ScorerParameterError,
    import_optional,
)
from knowledgepulse.novelty.devices import resolve_device
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    dimensions_of,
    embedder_for,
    model_id_of,
)
from knowledgepulse.novelty.representation import LeadingEmbedder, novelty_text
from knowledgepulse.novelty.settings import DEFAULT_BATCH_SIZE, DEFAULT_MAX_WINDOWS
from knowledgepulse.novelty.windows import WindowedEmbeddings
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import validate_record
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import TraceValueScorer

INSTALL_HINT = 'pip install "knowledgepulse[ray]"'
CONNECT_TIMEOUT_S = 5.0
"""How long the reachability check of ``address`` waits; Ray itself retries for minutes."""
DEFAULT_START_TIMEOUT_S = 120.0


class RayClusterError(KnowledgePulseError):
    """Raised when the Ray cluster cannot be reached or cannot start the embedding actors."""


def import_ray() -> ModuleType:
    """The ``ray`` module; a :class:`MissingDependencyError` with the install line without it."""
    return import_optional(
        "ray",
        lambda error: MissingDependencyError(
            f"Ray is not installed ({error}); install it with: {INSTALL_HINT}"
        ),
    )


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (Ray's run to pages), or its repr when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


def _reraised(error: BaseException | None, fallback: RayClusterError) -> KnowledgePulseError:
    """Our own error that a Ray error wraps (a model that does not load), else ``fallback``."""
    cause = error
    while cause is not None:
        if isinstance(cause, KnowledgePulseError):
            return cause
        cause = getattr(cause, "cause", None) or cause.__cause__
    return fallback


def actors_allowed(resources: dict[str, float], num_cpus: float, num_gpus: float) -> int:
    """How many actors ``resources`` hold (at least 1): by GPUs when the actors ask for any."""
    if num_gpus > 0:
        return max(1, int(resources.get("GPU", 0) // num_gpus))
    return max(1, int(resources.get("CPU", 1) // max(num_cpus, 1e-9)))


def check_reachable(address: str, *, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast when nothing listens at a ``host:port`` (or ``ray://host:port``) address.

    ``auto`` and ``local`` are left to Ray, which retries an unreachable address for minutes.

    Raises:
        RayClusterError: the address is malformed or nothing accepts connections there.
    """
    if address in ("auto", "local"):
        return
    bare = address.split("://", 1)[1] if "://" in address else address
    host, _, port_text = bare.rpartition(":")
    if not host or not port_text.isdigit():
        raise RayClusterError(
            f"--address {address!r} is not HOST:PORT (say 10.0.0.5:6379, or ray://10.0.0.5:10001 "
            "for Ray Client)"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port_text)), timeout=timeout).close()
    except OSError as error:
        raise RayClusterError(
            f"cannot connect to the Ray cluster at {address}: {error.strerror or error}; check "
            "the address (`ray status` on the head node prints it) or drop --address to start "
            "a local Ray"
        ) from None


EmbedderFactory: TypeAlias = Callable[[], Embedder]
"""A picklable callable that makes an :class:`~knowledgepulse.novelty.Embedder`, once per actor
(its model may load on first use): a module-level function or a dataclass such as
:class:`MiniLMFactory` will do; a lambda will not (it does not pickle by reference)."""


@dataclass(frozen=True, slots=True)
class MiniLMFactory:
    """Makes the bundled all-MiniLM-L6-v2 embedder (or another ONNX model) in each actor.

    Attributes:
        model_path: an ONNX model instead of the bundled one, at this path on every node.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
        threads: onnxruntime threads per actor (N actors x 1 thread beat one x N on CPU).
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

    ``device`` (``cpu``, ``cuda``, ``cuda:N`` or ``auto``) is resolved on the actor's node.
    ``cuda`` gives the fp16 PyTorch model (the ``gpu`` extra on the nodes; give the actors
    ``num_gpus``); ``cpu``, and ``auto`` on an actor that reserved no GPU, is
    :class:`MiniLMFactory`'s.
    """

    device: str = "cuda"
    max_windows: int | None = DEFAULT_MAX_WINDOWS

    def __call__(self) -> Embedder:
        """A new embedder for the device (its model loads on first use)."""
        device = resolve_device(self.device)
        if device == "cpu":
            return self.naming_embedder()
        return embedder_for(device, max_windows=self.max_windows)

    def naming_embedder(self) -> Embedder:
        """The bundled CPU model, not loaded: it shares the fp16 model's id (the same weights)."""
        return MiniLMFactory(max_windows=self.max_windows)()


class EmbedWorker:
    """The actor serving one embedder's calls for a :class:`RayEmbedder`."""

    def __init__(self, factory: EmbedderFactory) -> None:
        self._embedder: Embedder = factory()

    def describe(self) -> tuple[int | None, str, int | None]:
        """Load the model now, and say its ``dimensions``, ``model_id`` and ``max_windows``."""
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
        return WindowedEmbeddings(self.embed_batch(texts), (), ())

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """The embedder's ``embed_leading``; without one, ``embed_batch`` (as the scorer does)."""
        if isinstance(self._embedder, LeadingEmbedder):
            return np.asarray(self._embedder.embed_leading(texts, max_pieces), dtype=np.float32)
        return self.embed_batch(texts)


def contiguous_shards(weights: Sequence[int], parts: int) -> list[range]:
    """Cut ``len(weights)`` items into at most ``parts`` non-empty runs of about equal weight.

    The runs are in order and cover every item once. A weight below 1 counts as 1 (an empty
    text still costs a call).
    """
    count = len(weights)
    parts = min(parts, count)
    if parts <= 0:
        return []
    cumulative = np.cumsum(np.maximum(np.asarray(weights, dtype=np.int64), 1))
    total = int(cumulative[-1])
    cuts = [0]
    for part in range(1, parts):
        cut = int(np.searchsorted(cumulative, part * total / parts, side="left")) + 1
        # Clamped so that this run and each run after it keep at least one item.
        cuts.append(min(max(cut, cuts[-1] + 1), count - (parts - part)))
    cuts.append(count)
    return [range(start, end) for start, end in itertools.pairwise(cuts)]


class RayEmbedder:
    """An embedder that spreads each call over a pool of Ray actors, one embedder in each.

    It offers what :class:`~knowledgepulse.novelty.MiniLMEmbedder` offers with the same results,
    so a :class:`~knowledgepulse.value.TraceValueScorer` given one scores as with the local
    embedder. The actors start on first use (or :meth:`start`) and live until :meth:`close`;
    use it as a context manager.

    Args:
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread per actor).
        concurrency: how many actors (default: as many as the cluster's free CPUs, or GPUs with
            ``num_gpus``, allow).
        num_cpus: CPUs Ray reserves for each actor.
        num_gpus: GPUs Ray reserves for each actor (a fraction shares one).
        address: a running cluster to join (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            default: the Ray this process already initialised, else a new local one.
        start_timeout_s: how long to wait for the actors to start before giving up.
        init_options: more keyword arguments for ``ray.init``.

    Raises:
        MissingDependencyError: Ray is not installed.
        ScorerParameterError: a count or resource out of range.
    """

    def __init__(
        self,
        factory: EmbedderFactory | None = None,
        *,
        concurrency: int | None = None,
        num_cpus: float = 1.0,
        num_gpus: float = 0.0,
        address: str | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        optional_positive_int(concurrency, "concurrency", none_means="what the cluster allows")
        for name, value in (("num_cpus", num_cpus), ("num_gpus", num_gpus)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ScorerParameterError(f"{name} must be a number >= 0, got {value!r}")
        self._factory: EmbedderFactory = factory or MiniLMFactory()
        self._concurrency = concurrency
        self._num_cpus = float(num_cpus)
        self._num_gpus = float(num_gpus)
        self._start_timeout_s = start_timeout_s
        self._address = address
        self._init_options = init_options or {}
        self._owned = False  # whether this embedder started Ray (and so shuts it down)
        self._ray = import_ray()
        self._actors: list[Any] = []
        self._description: tuple[int | None, str, int | None] | None = None

    @property
    def concurrency(self) -> int:
        """How many actors embed (starts them, as the three properties below do)."""
        return len(self._started())

    @property
    def dimensions(self) -> int | None:
        """The length of every embedding, as the actors' embedder declares it."""
        return self._describe()[0]

    @property
    def model_id(self) -> str:
        """The actors' embedder's ``model_id``."""
        return self._describe()[1]

    @property
    def max_windows(self) -> int | None:
        """The actors' embedder's ``max_windows`` (``None``: every window, or not said)."""
        return self._describe()[2]

    def start(self) -> None:
        """Connect to Ray and start the actors now, loading each one's model.

        Raises:
            RayClusterError: the cluster cannot be reached, or the actors did not start in
                time (too few free CPUs or GPUs); the message says which.
            EmbedderUnavailableError: the model cannot be loaded on the cluster.
        """
        self._describe()

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text, (len(texts), dimensions), in the texts' order."""
        return self._stack(self._spread("embed_batch", texts))

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """The vectors, with how many windows of each text were read and whether it was capped."""
        parts: list[WindowedEmbeddings] = self._spread("embed_windowed", texts)
        vectors = self._stack([part.vectors for part in parts])
        windows = tuple(count for part in parts for count in part.windows)
        capped = tuple(flag for part in parts for flag in part.capped)
        if len(windows) != len(texts) or len(capped) != len(texts):
            windows, capped = (), ()  # the actors' embedder does not count windows
        return WindowedEmbeddings(vectors, windows, capped)

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Each text's first ``max_pieces`` word pieces as one window."""
        weights = [min(len(text), 16 * max_pieces) for text in texts]
        return self._stack(self._spread("embed_leading", texts, max_pieces, weights=weights))

    def close(self) -> None:
        """Stop the actors, and the local Ray if this embedder started it. Safe to call twice."""
        actors, self._actors = self._actors, []
        if actors and self._ray.is_initialized():
            for actor in actors:
                self._ray.kill(actor)
        if self._owned:
            self._owned = False
            self._ray.shutdown()

    def __enter__(self) -> RayEmbedder:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _started(self) -> list[Any]:
        if self._actors:
            return self._actors
        ray = self._open()
        count = self._concurrency or actors_allowed(
            ray.available_resources(), self._num_cpus, self._num_gpus
        )
        worker = ray.remote(num_cpus=self._num_cpus, num_gpus=self._num_gpus)(EmbedWorker)
        self._actors = [worker.remote(self._factory) for _ in range(count)]
        return self._actors

    def _describe(self) -> tuple[int | None, str, int | None]:
        if self._description is not None:
            return self._description
        refs = [actor.describe.remote() for actor in self._started()]
        ray = self._ray
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=self._start_timeout_s)
        if pending:
            resources = ray.cluster_resources()
            self.close()
            raise RayClusterError(
                f"{len(pending)} of {len(refs)} embedding actors did not start within "
                f"{self._start_timeout_s:g} s; each needs {self._num_cpus:g} CPU and "
                f"{self._num_gpus:g} GPU, the cluster has {resources.get('CPU', 0):g} CPUs and "
                f"{resources.get('GPU', 0):g} GPUs in all: ask for fewer workers or add nodes"
            )
        self._description = self._gather(refs)[0]
        return self._description

    def _spread(
        self, method: str, texts: Sequence[str], *args: Any, weights: Sequence[int] | None = None
    ) -> list[Any]:
        actors = self._started()
        self._describe()
        shards = contiguous_shards(weights or [len(text) for text in texts], len(actors))
        refs = [
            getattr(actor, method).remote([texts[i] for i in shard], *args)
            for actor, shard in zip(actors, shards, strict=False)
        ]
        return self._gather(refs)

    def _open(self) -> ModuleType:
        """Ray, initialised: the one this process has (a notebook's), else joined or started."""
        ray = self._ray
        # Checked even when Ray is initialised: a mistyped address must not silently run on
        # whatever this process is connected to.
        if self._address is not None:
            check_reachable(self._address)
        if ray.is_initialized():
            return ray
        quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        try:
            ray.init(address=self._address, **{**quiet, **self._init_options})
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise RayClusterError(
                f"cannot start or join Ray{f' at {self._address}' if self._address else ''}: "
                f"{first_line(error)}"
            ) from None
        self._owned = True
        return ray

    def _gather(self, refs: list[Any]) -> list[Any]:
        ray = self._ray
        try:
            return list(ray.get(refs))
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            failed = RayClusterError(f"an embedding actor failed: {type(cause).__name__}: {cause}")
            raise _reraised(cause, failed) from None
        except ray.exceptions.RayActorError as error:
            raise RayClusterError(
                f"an embedding actor died ({first_line(error)}); a node may "
                "have run out of memory: ask for fewer workers or a smaller --batch-size"
            ) from None

    def _stack(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
        if not parts:
            return np.zeros((0, self._describe()[0] or 0), dtype=np.float32)
        return np.concatenate([np.asarray(part, dtype=np.float32) for part in parts])


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


RowConverter: TypeAlias = Callable[
    [list[dict[str, Any]]], list[tuple[dict[str, Any] | None, list[tuple[str, str]]]]
]
"""A picklable callable that makes the trace of each row of a batch (a dataset of rows): given
the batch's rows (dicts), for each in order the trace document, or ``None`` and the row's
problems as ``(path, message)`` pairs."""


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
        ids, texts, problems = (np.full(size, "", dtype=object) for _ in range(3))
        windows = np.full(size, -1, dtype=np.int32)
        capped = np.full(size, -1, dtype=np.int8)
        valid: dict[int, TraceItem] = {}
        read = self._convert(rows) if self._convert else [self._trace_value(row) for row in rows]
        for position, (value, found) in enumerate(read):
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                ids[position] = value["id"]
            if found:
                problems[position] = json.dumps(found)
                continue
            result = validate_record(Record(Location("row"), value))
            if isinstance(result, TraceItem):
                valid[position] = result
                texts[position] = json.dumps(value, ensure_ascii=False, default=_plain)
            else:
                problems[position] = json.dumps([[item.path, item.message] for item in result])
        positions = list(valid)
        represented = self._text.embed(self._embedder, [loaded.trace for loaded in valid.values()])
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
    # The driver may have no GPU: a factory with a ``naming_embedder`` (DeviceFactory) gives
    # one of the same model id and dimensions that any machine can make, unloaded.
    naming: Callable[[], Embedder] = getattr(factory, "naming_embedder", factory)
    if scorer is None:
        scorer = TraceValueScorer(embedder=naming())
    elif scorer.embedder is not None:
        expected, found = model_id_of(naming()), model_id_of(scorer.embedder)
        if expected != found:
            raise ScorerParameterError(
                f"the scorer's embedder is {found!r} but the actors embed with {expected!r}; "
                "give the scorer the same model (its cache records it), or embedder=None"
            )
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
    positions = itertools.count()
    try:
        for batch in mapped.iter_batches(batch_size=batch_size, batch_format="numpy"):
            yield from _score_batch(scorer, batch, positions)
    except ray.exceptions.RayError as error:
        # An actor's own error (a model that does not load) reaches the caller as it is.
        failed = RayClusterError(f"scoring the dataset failed on the cluster: {first_line(error)}")
        ours = _reraised(error, failed)
        raise ours from (error if ours is failed else None)


def _score_batch(
    scorer: TraceValueScorer, batch: dict[str, Any], positions: Iterator[int]
) -> Iterator[ScoredRow]:
    """One batch's rows, scored in order (novelty of the valid ones in one pass)."""
    size = len(batch[ID])
    keys, originals = batch.get(KEY), batch.get(ROW)
    problems = [str(text) for text in batch[PROBLEMS]]
    valid = [row for row in range(size) if not problems[row]]
    windows, capped = batch[WINDOWS][valid], batch[CAPPED][valid]
    known = bool((windows >= 0).all() and (capped >= 0).all())
    breakdowns = iter(
        scorer.score_embedded(
            [json.loads(str(batch[TRACE_JSON][row])) for row in valid],
            np.asarray(batch[VECTOR], dtype=np.float32).reshape(size, -1)[valid],
            windows=[int(count) for count in windows] if known else None,
            capped=[bool(flag) for flag in capped] if known else None,
        )
        if valid
        else []
    )
    for row in range(size):
        position, trace_id = next(positions), str(batch[ID][row]) or None
        where = Location(f"row {position}" + (f" ({trace_id})" if trace_id else ""))
        found = [Problem(where, *item) for item in json.loads(problems[row] or "[]")]
        scored = None if found else next(breakdowns)
        key = None if keys is None else _plain_key(keys[row])
        # Only our own actors' rows (pickled there, see TraceBatchEmbedder) are unpickled.
        original = None if originals is None else pickle.loads(originals[row])
        yield ScoredRow(position, trace_id, scored, tuple(found), key, original)


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
