"""Scoring a ``ray.data.Dataset`` of traces: embedding on an actor pool, novelty in the driver.

A row is a trace: a column (``trace`` by default) holding it as a JSON string (or bytes, or a
struct), or else the row itself. Novelty is online, so the rows are scored in order: the
dataset's (Ray's ``preserve_order``), or that of an ``order_by`` column. The embedding runs in
parallel on the actors; the novelty pass and the breakdowns run in the driver, batch after
batch, as :meth:`TraceValueScorer.score_many` does, so the results equal the local ones.
``docs/ray.md`` says why the JSON column is the robust form and how the order is kept.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from knowledgepulse.engines.ray_engine.actor import (
    CAPPED,
    ID,
    KEY,
    PROBLEMS,
    ROW,
    TRACE_COLUMN,
    TRACE_JSON,
    VECTOR,
    WINDOWS,
    EmbedderFactory,
    MiniLMFactory,
    NamesItsModel,
    RowConverter,
    TraceBatchEmbedder,
)
from knowledgepulse.engines.ray_engine.embedder import (
    RayClusterError,
    actors_allowed,
    first_line,
    import_ray,
    own_error,
)
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.novelty.embedder import Embedder, model_id_of
from knowledgepulse.records import Location, Problem
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import DEFAULT_BATCH_SIZE, TraceValueScorer


@dataclass(frozen=True, slots=True)
class ScoredRow:
    """One row's result: its breakdown, or why it could not be scored.

    Attributes:
        position: the row's 0-based place in the order it was scored in.
        trace_id: the row's ``id`` when it has one (a bad row may not).
        breakdown: the breakdown, or ``None`` for a bad row.
        problems: what is wrong with a bad row, each with its JSON path (empty when scored).
        key: the row's ``order_by`` value (``None`` without ``order_by``).
        row: the row as read, when the rows were converted (``convert``); else ``None``.
    """

    position: int
    trace_id: str | None
    breakdown: ValueBreakdown | None
    problems: tuple[Problem, ...] = ()
    key: Any = None
    row: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class DatasetScores:
    """Every row's result, in the order scored (see :func:`score_dataset`).

    Attributes:
        rows: one :class:`ScoredRow` per input row.
    """

    rows: tuple[ScoredRow, ...]

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """The breakdowns of the rows that were scored, in order."""
        return [row.breakdown for row in self.rows if row.breakdown is not None]

    @property
    def problems(self) -> list[Problem]:
        """Every problem of the bad rows, in order."""
        return [problem for row in self.rows for problem in row.problems]


def score_dataset(dataset: Any, **options: Any) -> DatasetScores:
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
        scorer: the scorer whose cache, mode, profiles, threshold and novelty text apply
            (default: a new one). Its embedder only names the model: it must be the factory's
            model (the cache records it); the actors do the embedding.
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread each).
        column: the column holding each trace; rows without it are read as the trace itself.
        order_by: score in the order of this column instead of the dataset's order.
        concurrency: how many embedding actors (default: as many as the cluster's CPUs, or
            GPUs with ``num_gpus``, allow).
        num_cpus: CPUs per actor.
        num_gpus: GPUs per actor (give a factory of a GPU embedder with it).
        batch_size: rows per actor call and per novelty pass.
        convert: makes the traces of a batch of rows that are not traces (a dataset's rows in
            a conversation format, see :mod:`knowledgepulse.ray_rows`); each result then carries its
            row. ``column`` is not read then.

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
    batches = mapped.iter_batches(batch_size=batch_size, batch_format="numpy")
    for batch in _unwrapped_errors(ray, batches):
        rows = _score_batch(scorer, batch, position)
        position += len(rows)
        yield from rows


def _check_same_model(scorer: TraceValueScorer, naming: Callable[[], Embedder]) -> None:
    if scorer.embedder is None:
        return
    expected, found = model_id_of(naming()), model_id_of(scorer.embedder)
    if expected != found:
        raise ScorerParameterError(
            f"the scorer's embedder is {found!r} but the actors embed with {expected!r}; give "
            "the scorer the same model (its cache records it), or embedder=None"
        )


def _unwrapped_errors(ray: Any, batches: Any) -> Iterator[dict[str, Any]]:
    """The batches; an actor's own error (a model that does not load) reaches the caller as is."""
    try:
        yield from batches
    except ray.exceptions.RayError as error:
        ours = own_error(error)
        if ours is not None:
            raise ours from None
        raise RayClusterError(
            f"scoring the dataset failed on the cluster: {first_line(error)}"
        ) from error


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
