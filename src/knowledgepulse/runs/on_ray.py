"""A run on a Ray Dataset: rows read into items and embedded by actors, scored in order.

The steps are the local run's: rows become trace items as :func:`~knowledgepulse.runs.items_of`
reads them (a ``trace`` column of JSON, rows that are traces, or, with ``source``, rows of a
conversation format), the actors embed them, the driver measures novelty in order (so the
results equal the local ones) and gives :class:`~knowledgepulse.value.ScoredItem` objects, each
written back in its own form by :func:`~knowledgepulse.runs.write.annotated`. An actor cannot
receive a loaded model (an onnxruntime session does not pickle): it gets a picklable
``EmbedderFactory``. With ``redact``, the actors redact each trace and row before they embed it,
as a local run redacts before it scores. Ray itself is imported on first use (``docs/ray.md``).
"""

from __future__ import annotations

import itertools
import json
import math
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, TypedDict, Unpack, cast

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import (
    instance_of,
    optional_positive_int,
    positive_int,
    text_of,
    wrong_setting,
)
from knowledgepulse.engines.ray_engine import (
    EmbedderFactory,
    MiniLMFactory,
    RayClusterError,
    actors_allowed,
    first_line,
    import_ray,
    reraised,
)
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.novelty.embedder import Embedder, dimensions_of, model_id_of
from knowledgepulse.novelty.representation import novelty_text
from knowledgepulse.novelty.settings import DEFAULT_BATCH_SIZE
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.runs.inputs import ROWS_NAME, items_of
from knowledgepulse.runs.read import without_secrets
from knowledgepulse.runs.redaction import messages_level, redacted_record, redactor_of
from knowledgepulse.runs.write import Kept, UnreadRows, in_place, kept_like, rows_table
from knowledgepulse.sources._read import Lead, ReadWarnings, broken_laws, decide
from knowledgepulse.sources._registry import REASONING_TRACE, Source, plugin_sources, registered
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.trace.item import task_in
from knowledgepulse.trace.load import trace_items
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.sources import TraceOptions
    from knowledgepulse.value.breakdown import ValueBreakdown

TRACE_COLUMN = "trace"
"""The column a dataset of traces holds each trace in (JSON text, or its parsed value)."""

_TRACE_KEYS = frozenset({"@type", "@context", "id", "metadata", "task", "steps", "outcome"})
"""A row with none of a trace's keys is not a trace (a text or a record of another kind)."""

# The columns the embedding stage gives the driver (prefixed: they never clash with the user's).
_TRACE_JSON = "_kp_trace"
_VECTOR = "_kp_vector"
_WINDOWS = "_kp_windows"
_CAPPED = "_kp_capped"
_PROBLEMS = "_kp_problems"
_KEY = "_kp_key"
_ROW = "_kp_row"
_FOUND = "_kp_found"
_TASK = "_kp_task"
_REWARD = "_kp_reward"
_NUMBERED = "_kp_numbered"
_PLACED = "_kp_placed"
_WARNED = "_kp_warned"


class RowRead(NamedTuple):
    """What an actor read of one row: its trace document, or its problems; and its facts.

    Attributes:
        document: the trace as JSON, or ``None``: the row gave none.
        problems: why it gave none, as ``(path, message)`` pairs.
        task: the task the row says it is a run of (its task column), as a local read's item.
        reward: the row's reward (a number in its success column), as a local read's item.
        numbered: the trace is named by the row's number in its batch (``rows:<n>``, no id
            column), which the driver renames by its place in the whole dataset.
        source: the source that read the row (what a repeated id's warning says).
        laws: the laws of faithful conversion its trace breaks, as read (``broken_laws``).
        notes: what reading it lost or guessed (the item's ``warnings``), said once a dataset.
        placed: the trace records the row's number in its batch (``metadata.source.row``),
            which the driver sets to its place in the whole dataset.
    """

    document: dict[str, Any] | None
    problems: list[tuple[str, str]]
    task: str | None = None
    reward: float | None = None
    numbered: bool = False
    source: str = REASONING_TRACE
    laws: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    placed: bool = False


RowReader: TypeAlias = Callable[[list[dict[str, Any]]], list[RowRead]]
"""A picklable callable that reads a batch of rows in an actor: a :class:`RowRead` for each
row, in order."""


@dataclass(frozen=True, slots=True)
class TraceColumn:
    """Reads each row's trace from ``column`` (JSON text or a value), or the row itself.

    Attributes:
        column: the column holding the trace; a row without it is the trace, its columns the
            trace's keys (less ``order_by``).
        order_by: the column the rows are ordered by, which is not part of a trace.
        task_field: where each row's task is read: its column (a dotted path), else the
            trace's JSON's, as ``items_of`` reads it.
    """

    column: str = TRACE_COLUMN
    order_by: str | None = None
    task_field: str | None = None

    def __call__(self, rows: list[dict[str, Any]]) -> list[RowRead]:
        """Each row's trace as parsed JSON, or ``None`` and why there is none."""
        return [self._read(row) for row in rows]

    def _read(self, row: dict[str, Any]) -> RowRead:
        if self.column not in row:
            trace = {key: value for key, value in row.items() if key != self.order_by}
            if not _TRACE_KEYS & set(trace):
                return RowRead(None, [("", _no_trace_column(self.column, trace))])
            return RowRead(trace, [], self._task(None, trace))
        value, column = row[self.column], self.column
        if value is None:
            return RowRead(None, [("", f"the {column!r} column is null")])
        try:
            if isinstance(value, bytes | bytearray):
                value = value.decode("utf-8")
            if isinstance(value, str):
                value = json.loads(value)
        except UnicodeDecodeError as error:
            return RowRead(None, [("", f"the {column!r} column is not UTF-8: {error}")])
        except json.JSONDecodeError as error:
            return RowRead(None, [("", f"the {column!r} column is not JSON: {error}")])
        return RowRead(value, [], self._task(row, value))

    def _task(self, row: dict[str, Any] | None, document: Any) -> str | None:
        return None if self.task_field is None else task_in(row, document, self.task_field)


@dataclass(frozen=True, slots=True)
class ConversationRows:
    """Reads a batch of conversation rows into traces, as ``items_of`` reads row dicts.

    No actor knows a row's place in the whole dataset: a row without an id column is named by
    its number in the batch and marked ``numbered``, for the driver to name it by its place.

    Attributes:
        source: the conversation format (``openai-chat``...), or ``auto`` for each batch's.
        lead: the dataset's row that decides the source and columns, read first (and left
            out) in every batch, as a local read's first row decides for the whole file.
        options: the domain, confidence and row columns.
        task_field: where each row's task is read (a column, else a dotted path in the trace).
        plugins: the third parties' sources registered where it was made (the driver), which
            it registers where it reads (an actor): one registered in a notebook or a script
            has no entry point an actor could find it by.
    """

    source: str = "auto"
    lead: dict[str, Any] | None = None
    options: TraceOptions | None = None
    task_field: str | None = None
    plugins: tuple[type[Source], ...] = field(default_factory=plugin_sources)

    def __call__(self, rows: list[dict[str, Any]]) -> list[RowRead]:
        """Each row's trace document and facts, or ``None`` and its problems."""
        registered(self.plugins)
        read: list[RowRead | None] = [None] * len(rows)
        problems: list[list[tuple[str, str]]] = [[] for _ in rows]
        skip = 0 if self.lead is None else 1
        given = rows if self.lead is None else [self.lead, *rows]
        found = items_of(
            given, source=self.source, options=self.options, task_field=self.task_field
        )
        # The source that reads them (what a repeated id's warning says): without a lead, the
        # batch's first row a source recognises decides, as in ``items_of``.
        source = self.source if self.lead is not None else dataset_lead(rows, self.source)[0]
        for item in found:
            if isinstance(item, Problem):
                index = item.location.index
                at = 0 if index is None else index - skip  # -1: the lead's own
                # A warning is said again by the driver, which sees the whole dataset's ids.
                if not item.warning and at >= 0:
                    problems[at].append((item.path, item.message))
                continue
            index = (item.row or item.record).location.index
            if index is not None and index >= skip:
                numbered = item.document["id"] == _row_id(index)
                placed = item.document["metadata"].get("source", {}).get("row") == index
                laws = tuple(broken_laws(item.trace, source))
                read[index - skip] = RowRead(
                    item.document,
                    [],
                    item.task,
                    item.reward,
                    numbered,
                    source,
                    laws,
                    item.warnings,
                    placed,
                )
        unread = [("", "not read: its batch's rows are claimed by more than one source")]
        return [
            found if found is not None else RowRead(None, problems[n] or unread)
            for n, found in enumerate(read)
        ]


LEAD_ROWS = 1000
"""How many of a dataset's first rows are looked in for its lead (:func:`dataset_lead`)."""


def dataset_lead(rows: Iterable[dict[str, Any]], source: str) -> tuple[str, dict[str, Any] | None]:
    """The source a dataset's rows are read by, and the row that decides how (its lead).

    The lead a local read finds in a file (``sources._read.decide``, the same code): a named
    source's first row, or the first row a source recognises (``auto``); each actor reads its
    batch after this row, so that a batch is read as the dataset is, not by its own first row
    (a bad row there would be no source's, or name no column). Only the first
    :data:`LEAD_ROWS` are looked at; without a lead, each batch decides for itself.
    """
    located = (
        Record(Location.of_row(ROWS_NAME, number, in_memory=True), row)
        for number, row in enumerate(itertools.islice(rows, LEAD_ROWS))
    )
    lead = Lead()
    for _ in decide(located, source, lead):  # the rows before it are their batches' problems
        pass
    if lead.source is None or lead.first is None:
        return source, None
    return lead.source.name, lead.first.value


def _row_id(number: int) -> str:
    """The id a row without an id column gets from its number (``items_of``'s naming)."""
    return f"kp:trace:{ROWS_NAME}:{number}"


def _placed(document: dict[str, Any], place: int) -> dict[str, Any]:
    """A trace that records its row's number (``metadata.source.row``) given its ``place``."""
    metadata = document["metadata"]
    source = {**metadata["source"], "row": place}
    return {**document, "metadata": {**metadata, "source": source}}


def _renumbered(document: dict[str, Any], place: int) -> dict[str, Any]:
    """A row-numbered trace named by its ``place`` in the dataset, as a local read names it."""
    metadata = document["metadata"]
    source = {**metadata["source"], "trace_id": f"{ROWS_NAME}:{place}"}
    return {**document, "id": _row_id(place), "metadata": {**metadata, "source": source}}


class TraceBatchEmbedder:
    """A ``map_batches`` actor: reads each row's trace, validates it and embeds the valid ones.

    It gives, for every input row in its order, the trace id, the trace as JSON, its novelty
    vector (zeros for a bad row), the windows read (-1: not known), whether it was capped (-1:
    not known) and the row's problems as JSON (``""``: none), plus the ``order_by`` value, and
    the row itself, pickled (so that its values come back exactly as read; a bad row's too, to
    be given back with its error), unless the row is the trace; and the task and reward read
    with it (JSON text, and NaN for none) and whether it is named by, or records, its number,
    so that the driver's item is a local read's. With a ``redactor``, the trace and the row are
    redacted before they are embedded (an id as written: hashed when it held anything), and what was
    redacted in each is given too, as JSON (``Finding`` fields), for the driver to count; and
    what reading each row warned of (its source, broken laws, notes and the warnings of its
    trace's read, as JSON), for the driver to say as a local read does.
    """

    def __init__(
        self,
        factory: EmbedderFactory,
        novelty_text_name: str,
        reader: RowReader,
        order_by: str | None,
        redactor: Redactor | None = None,
    ) -> None:
        self._embedder: Embedder = factory()
        self._text = novelty_text(novelty_text_name)
        self._reader = reader
        self._order_by = order_by
        self._redactor = redactor

    def __call__(self, batch: Any) -> dict[str, NDArray[Any]]:
        """Embed one ``pyarrow.Table`` batch; see the class docstring for the columns."""
        rows: list[dict[str, Any]] = batch.to_pylist()
        size = len(rows)
        texts, problems, redacted, warned = (np.full(size, "", dtype=object) for _ in range(4))
        tasks = np.full(size, "null", dtype=object)  # JSON: a task is text, or none
        rewards = np.full(size, np.nan, dtype=np.float64)
        windows = np.full(size, -1, dtype=np.int32)
        capped = np.full(size, -1, dtype=np.int8)
        numbered, placed = np.zeros(size, dtype=np.bool_), np.zeros(size, dtype=np.bool_)
        valid: dict[int, TraceItem] = {}
        kept: list[dict[str, Any] | None] = [None if self._is_trace(row) else row for row in rows]
        for position, read in enumerate(self._reader(rows)):
            value, found = read.document, read.problems
            numbered[position], placed[position] = read.numbered, read.placed
            result, told = (None, []) if found else _trace_of(value)
            if result is not None:
                valid[position] = replace(result, task=read.task, reward=read.reward)
                warned[position] = json.dumps([read.source, read.laws, read.notes, told])
                continue
            refused = [(path, message, False) for path, message in found] or told
            problems[position] = json.dumps(refused)
            row = kept[position]
            if self._redactor is not None and row is not None:  # it goes back with its error
                kept[position] = redacted_record(Record(Location("row"), row), self._redactor).value
        for position, item in valid.items():
            if self._redactor is not None:
                valid[position], kept[position], redacted[position] = self._redacted(
                    item, kept[position]
                )
            texts[position] = json.dumps(
                valid[position].document, ensure_ascii=False, default=_plain
            )
            tasks[position] = json.dumps(valid[position].task)  # redacted with the item
            if valid[position].reward is not None:
                rewards[position] = valid[position].reward
        positions = list(valid)
        represented = self._text.embed(self._embedder, [item.trace for item in valid.values()])
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
        # Pickled: Arrow would turn the row's lists into arrays on the way to the driver.
        return {
            _TRACE_JSON: texts,
            _VECTOR: vectors,
            _WINDOWS: windows,
            _CAPPED: capped,
            _PROBLEMS: problems,
            _FOUND: redacted,
            _TASK: tasks,
            _REWARD: rewards,
            _NUMBERED: numbered,
            _PLACED: placed,
            _WARNED: warned,
            _ROW: np.asarray([pickle.dumps(row) for row in kept], dtype=object),
            **(
                {_KEY: np.asarray(batch.column(self._order_by).to_pylist(), dtype=object)}
                if self._order_by is not None
                else {}
            ),
        }

    def _redacted(
        self, item: TraceItem, row: dict[str, Any] | None
    ) -> tuple[TraceItem, dict[str, Any] | None, str]:
        """The item and its row redacted, and what was redacted, as JSON for the driver."""
        assert self._redactor is not None
        with_row = replace(item, row=None if row is None else Record(item.location, row))
        cleaned, findings = self._redactor.redact(with_row, count=False)
        found = json.dumps([[f.path, f.type, f.rule, f.count] for f in findings])
        return cleaned, None if cleaned.row is None else cleaned.row.value, found

    def _is_trace(self, row: dict[str, Any]) -> bool:
        """Whether the row is itself the trace (no row to give back beside it)."""
        reader = self._reader
        return isinstance(reader, TraceColumn) and reader.column not in row


def _trace_of(value: Any) -> tuple[TraceItem | None, list[tuple[str, str, bool]]]:
    """A row's trace read as a local read reads a record (``trace_items``, the same code).

    The item (``None``: refused), and its problems and warnings as ``(path, message,
    warning)``: a lone surrogate read as U+FFFD, a misspelt key. Before, a text holding a lone
    surrogate (made in Python: ``json.loads`` keeps one) was refused here; a local read scored it.
    """
    item: TraceItem | None = None
    said: list[tuple[str, str, bool]] = []
    for found in trace_items([Record(Location("row"), value)], instead=""):
        if isinstance(found, TraceItem):
            item = found
        else:
            said.append((found.path, found.message, found.warning))
    return item, said


def _no_trace_column(column: str, row: dict[str, Any]) -> str:
    """Why a row with none of a trace's keys holds no trace.

    ``ray.data.read_text`` gives ``{"text": ...}``: read as a trace, each such row was seven
    "required field is missing" that named no cause.
    """
    example = next(iter(row), "text")
    return (
        f"the row has no {column!r} column and is no trace itself (its columns: "
        f"{', '.join(map(repr, row)) or 'none'}); put each trace in a {column!r} column "
        f"(dataset.map(lambda row: {{{column!r}: row[{example!r}]}})) or name its column "
        "(column=)"
    )


def _plain(value: Any) -> Any:
    """What ``json.dumps`` cannot write, as Arrow gives it: a timestamp or date, a NumPy value."""
    for method in ("isoformat", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            return convert()
    raise TypeError(f"{type(value).__name__} is not JSON")


@dataclass(frozen=True, slots=True)
class DatasetScores:
    """Every row of a dataset scored, in the order scored (see :func:`score_dataset`).

    Attributes:
        items: each row that gave a trace, as a scored item: its location is ``rows:N`` (its
            place in the order scored, from 1, as a local read of rows locates it), its ``row``
            the dataset's row as read (``None`` when the row is the trace itself).
        problems: the problems of the rows that gave none, and the warnings of those read (a
            repeated id, a conversion's broken law), located as the items.
        kept: every dataset row in order: each scored item, and each row that gave none with
            its error (empty: the items only).
    """

    items: list[ScoredItem]
    problems: list[Problem]
    kept: list[Kept] = field(default_factory=list)

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """The breakdowns of the rows that were scored, in order."""
        return [item.breakdown for item in self.items]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row in its own form and its place, for ``ray.data.from_items``.

        As :func:`~knowledgepulse.runs.annotate` gives row dicts back: a scored row with the
        ``kp_`` columns added and an empty ``kp_error``; a dataset row that gave no trace with
        ``kp_error`` saying why (redacted as a read row is), the other ``kp_`` columns empty; a
        row that is a trace with ``metadata.quality_score`` (one that gave none is left out).
        """
        return cast("list[dict[str, Any]]", kept_like(None, self.kept or self.items))

    def table(self, schema: Any = None) -> Any:
        """:attr:`rows` as one ``pyarrow.Table``: ``ray.data.from_arrow(result.table())``.

        Its ``kp_`` columns have their types whatever their values (a local ``annotate``'s),
        the other columns those of ``schema`` (a ``pyarrow.Schema``, the dataset's:
        ``dataset.schema().base_schema``) or, without it, of all rows at once; so every block
        Ray cuts it into has one schema, and the Parquet files written read back as one table.
        (``ray.data.from_items(result.rows)`` types each block by its own rows: a block whose
        ``kp_error`` is all empty gets a null column that the other files' strings do not fit.)

        Raises:
            MissingDependencyError: pyarrow is not installed.
            OutputError: the rows fit no one table (a column of numbers and of text).
        """
        return rows_table(self.rows, schema)


class ActorOptions(TypedDict, total=False):
    """The scorer and the actor pool of :func:`iter_dataset_scores` (see its arguments)."""

    scorer: TraceValueScorer | None
    factory: EmbedderFactory | None
    concurrency: int | None
    num_cpus: float
    num_gpus: float
    batch_size: int


def dataset_actors(resources: dict[str, float], num_cpus: float, num_gpus: float) -> int:
    """The default actor pool for a dataset: as many as fit, less one CPU for its read.

    Every actor holds its CPUs for the whole run; with all of them held, a read task that
    needs one (``read_parquet``, ``read_text``) never runs and the run waits forever.
    """
    left = {**resources, "CPU": max(resources.get("CPU", 1) - 1, 0)}
    return min(actors_allowed(resources, num_cpus, num_gpus), actors_allowed(left, num_cpus, 0))


def score_dataset(
    dataset: Any,
    *,
    source: str | None = None,
    options: TraceOptions | None = None,
    task_field: str | None = None,
    column: str = TRACE_COLUMN,
    order_by: str | None = None,
    redact: bool | Redactor = False,
    **engine: Unpack[ActorOptions],
) -> DatasetScores:
    """Score every row of a Ray Dataset; the scored items and the bad rows' problems, in order.

    Takes the arguments of :func:`iter_dataset_scores` and collects what it yields.
    """
    results = iter_dataset_scores(
        dataset,
        source=source,
        options=options,
        task_field=task_field,
        column=column,
        order_by=order_by,
        redact=redact,
        **engine,
    )
    return collected(results)


def collected(results: Iterable[ScoredItem | Problem]) -> DatasetScores:
    """The scored items and problems of a run, and every row in its place.

    A bad dataset row (its problems' ``record``, redacted by the actor when redacting, as a
    local run's is) is kept with its error (:class:`~.write.UnreadRows`).
    """
    unread = UnreadRows()
    items: list[ScoredItem] = []
    problems: list[Problem] = []

    def scored() -> Iterator[ScoredItem]:
        for result in results:
            if isinstance(result, Problem):
                problems.append(result)
                unread.add(result)
            else:
                items.append(result)
                yield result

    kept = list(in_place(scored(), unread, every_file=True))
    return DatasetScores(items, problems, kept)


def iter_dataset_scores(
    dataset: Any,
    *,
    source: str | None = None,
    options: TraceOptions | None = None,
    task_field: str | None = None,
    column: str = TRACE_COLUMN,
    order_by: str | None = None,
    redact: bool | Redactor = False,
    scorer: TraceValueScorer | None = None,
    factory: EmbedderFactory | None = None,
    concurrency: int | None = None,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[ScoredItem | Problem]:
    """Score a Ray Dataset, yielding each row's scored item (or problems) in order as ready.

    Args:
        dataset: a ``ray.data.Dataset`` of traces or of conversation rows.
        source: ``None``: each row holds a trace in ``column``, or is one; a conversation
            format (``openai-chat``...) or ``auto`` (the first row's that a source recognises,
            as a local read's: :func:`dataset_lead`): each row is a conversation, read as
            ``kp score --from`` reads dataset rows.
        options: with ``source``, the domain, confidence and row columns (``RowOptions``).
        task_field: where each row's task is read (``item.item.task``, what ``select``'s
            ``per_task`` and ``split`` group by): a row's column, else a dotted path in its
            trace's JSON (``metadata.task_id``), as ``runs.score``'s ``task_field``.
        column: the column holding each trace (``source=None``).
        order_by: score in the order of this column instead of the dataset's order.
        redact: clean each trace and row of secrets and personal data before it is embedded
            and scored, as a local run does: ``True`` by each trace's privacy level, or a
            configured ``Redactor`` (it goes to the actors pickled, and counts here).
        scorer: the scorer whose settings apply (default: a new one); its embedder only names
            the model, which must be the factory's: the actors do the embedding.
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread each).
        concurrency: how many embedding actors (default: as the cluster's CPUs or GPUs allow,
            less one CPU for the dataset's read: :func:`dataset_actors`).
        num_cpus: CPUs per actor.
        num_gpus: GPUs per actor (give a factory of a GPU embedder with it).
        batch_size: rows per actor call and per novelty pass.

    Raises:
        MissingDependencyError: Ray is not installed.
        SettingTypeError: ``dataset`` is not a Ray Dataset.
        ScorerParameterError: the scorer's embedder is not the factory's model; ``order_by``
            is no column of the dataset; ``concurrency`` or ``batch_size`` is below 1.
        EmbedderUnavailableError: the model cannot be loaded on the cluster.
    """
    if task_field is not None:
        text_of(task_field, "task_field", "a column's name or a dotted path (metadata.task_id)")
    optional_positive_int(concurrency, "concurrency", none_means="as many as the cluster allows")
    positive_int(batch_size, "batch_size")
    ray = import_ray()
    instance_of(
        dataset,
        "dataset",
        ray.data.Dataset,
        "a ray.data.Dataset (rows in memory: ray.data.from_items(rows), or score them "
        "locally with knowledgepulse.runs.score)",
    )
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
    redactor = redactor_of(redact)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    if order_by is not None:
        _check_column(dataset, order_by)
    reader: RowReader = TraceColumn(column, order_by, task_field)
    if source is not None:
        rows = iter(dataset.limit(LEAD_ROWS).iter_rows())
        try:
            reader = ConversationRows(
                *dataset_lead(rows, source), options=options, task_field=task_field
            )
        finally:  # the read's resources are freed before the actors ask for theirs
            getattr(rows, "close", lambda: None)()
    if concurrency is None:
        concurrency = dataset_actors(ray.cluster_resources(), num_cpus, num_gpus)
    mapped = dataset.map_batches(
        TraceBatchEmbedder,
        fn_constructor_args=(factory, scorer.novelty_text, reader, order_by, redactor),
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        num_gpus=num_gpus,
    )
    if order_by is not None:
        # Sorted after embedding, not before: a sort before it would wait for CPUs the actor
        # pool already holds (it deadlocks a 2-CPU Ray), while this one runs once they are free.
        mapped = mapped.sort(_KEY)
    # The novelty pass needs the rows in order; the actors still embed blocks in parallel.
    mapped.context.execution_options.preserve_order = True
    positions, said = itertools.count(), ReadWarnings()  # over the whole dataset, as one read
    try:
        for batch in mapped.iter_batches(batch_size=batch_size, batch_format="numpy"):
            yield from _score_batch(scorer, batch, positions, redactor, said)
    except ray.exceptions.RayError as error:
        # An actor's own error (a model that does not load) reaches the caller as it is.
        failed = RayClusterError(f"scoring the dataset failed on the cluster: {first_line(error)}")
        ours = reraised(error, failed)
        raise ours from (error if ours is failed else None)


def _check_column(dataset: Any, order_by: str) -> None:
    """Refuse an ``order_by`` the dataset has no column of, before the actors start.

    An actor's error would reach the driver as Ray Data's ``UserCodeException``, which keeps
    only the text of ours. The schema is the dataset's metadata (a lazy ``map`` runs a block).
    """
    schema = dataset.schema()
    names = list(getattr(schema, "names", None) or [])
    if names and order_by not in names:
        columns = ", ".join(map(repr, names))
        raise wrong_setting("order_by", order_by, f"one of the dataset's columns: {columns}")


def _score_batch(
    scorer: TraceValueScorer,
    batch: dict[str, Any],
    positions: Iterator[int],
    redactor: Redactor | None = None,
    said: ReadWarnings | None = None,
) -> Iterator[ScoredItem | Problem]:
    """One batch's rows, scored in order (novelty of the valid ones in one pass).

    Each row is located as a local read of rows locates it (``rows:N``). A problem's message
    is given cleaned at the level a local run's is (``messages_level``), and a bad dataset row
    on its problems (``record``, ``row``), to be given back with its error; a read row's
    warnings (a repeated id: among the rows ``said`` has seen) come before its item, as a local
    read's. With a ``redactor``, each row's redaction (found by the actor) is counted in it. A
    trace named by its row's number in its actor's batch, or recording it, is named by (and
    records) its place in the whole dataset instead.
    """
    said = ReadWarnings() if said is None else said
    level = messages_level(redactor)
    size = len(batch[_PROBLEMS])
    places = [next(positions) for _ in range(size)]
    problems = [str(text) for text in batch[_PROBLEMS]]
    valid = [row for row in range(size) if not problems[row]]
    documents = {row: json.loads(str(batch[_TRACE_JSON][row])) for row in valid}
    for row in valid:
        if batch[_NUMBERED][row]:
            documents[row] = _renumbered(documents[row], places[row])
        if batch[_PLACED][row]:
            documents[row] = _placed(documents[row], places[row])
    traces = {row: ReasoningTrace.model_validate(documents[row]) for row in valid}
    windows, capped = batch[_WINDOWS][valid], batch[_CAPPED][valid]
    known = bool((windows >= 0).all() and (capped >= 0).all())
    breakdowns = iter(
        scorer.score_embedded(
            [traces[row] for row in valid],
            np.asarray(batch[_VECTOR], dtype=np.float32).reshape(size, -1)[valid],
            windows=[int(count) for count in windows] if known else None,
            capped=[bool(flag) for flag in capped] if known else None,
        )
        if valid
        else []
    )
    for row, position in enumerate(places):
        where = Location.of_row(ROWS_NAME, position, in_memory=True)
        # Only our own actors' rows (pickled there, see TraceBatchEmbedder) are unpickled.
        original = pickle.loads(batch[_ROW][row])
        if problems[row]:
            record = None if original is None else Record(where, original)
            found = (
                Problem(where, path, message, warning=True)
                if warning
                else Problem(where, path, message, record=record, row=record is not None)
                for path, message, warning in json.loads(problems[row])
            )
            yield from cast("Iterator[Problem]", without_secrets(found, level))
            continue
        reward = float(batch[_REWARD][row])
        source, laws, notes, read = json.loads(str(batch[_WARNED][row]))
        item = TraceItem(
            Record(where, documents[row]),
            traces[row],
            None if original is None else Record(where, original),
            task=json.loads(str(batch[_TASK][row])),
            warnings=tuple(notes),
            reward=None if math.isnan(reward) else reward,
        )
        # What reading the trace said (a lone surrogate, a misspelt key) comes first, as locally.
        warned = [Problem(where, path, message, warning=True) for path, message, _ in read]
        warned.extend(said.of(item, source, laws))
        yield from cast("Iterator[Problem]", without_secrets(warned, level))
        if redactor is not None:
            from knowledgepulse.redact.walk import Finding  # noqa: PLC0415 - only to redact

            redactor.count(item, [Finding(*each) for each in json.loads(batch[_FOUND][row])])
        yield ScoredItem(item, next(breakdowns))


__all__ = [
    "DatasetScores",
    "iter_dataset_scores",
    "score_dataset",
]
