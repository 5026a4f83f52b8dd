"""runs.on_ray's ``task_field``: a Ray run reads each row's task where a local run reads it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import ray

from knowledgepulse.runs import items_of, select
from knowledgepulse.runs.on_ray import (
    ConversationRows,
    RowReader,
    TraceBatchEmbedder,
    TraceColumn,
    score_dataset,
)
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer

EXAMPLES = Path(__file__).parents[3] / "examples"


def chat_rows() -> list[dict[str, Any]]:
    lines = (EXAMPLES / "datasets" / "openai_chat.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def trace_rows() -> list[dict[str, Any]]:
    """Trace documents in a ``trace`` column, each with a ``suite`` column beside it."""
    lines = (EXAMPLES / "traces" / "traces.jsonl").read_text().splitlines()
    return [{"trace": line, "suite": f"suite-{n % 3}"} for n, line in enumerate(lines)]


def _in_process(rows: list[dict[str, Any]], reader: RowReader) -> list[ScoredItem]:
    """One batch through the actor's step and the driver's, as score_dataset runs them."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, reader, None)
    found = score_batch(scorer, actor(pa.Table.from_pylist(rows)), itertools.count())
    return [item for item in found if isinstance(item, ScoredItem)]


def _local_tasks(rows: list[dict[str, Any]], task_field: str) -> list[str | None]:
    return [i.task for i in items_of(rows, task_field=task_field) if isinstance(i, TraceItem)]


@pytest.mark.parametrize("task_field", ["model", "messages.0.role"])
def test_conversation_rows_take_their_task_at_task_field(task_field: str) -> None:
    """A column, or a dotted path into the row, names each conversation's task as locally."""
    rows = chat_rows()
    scored = _in_process(rows, ConversationRows(task_field=task_field))
    tasks = [s.item.task for s in scored]
    assert tasks == _local_tasks(rows, task_field)
    assert tasks != [s.item.task for s in _in_process(rows, ConversationRows())]


def test_a_trace_column_takes_its_task_from_the_row_else_the_trace() -> None:
    """The row's column first, else the dotted path in its trace (as ``with_task`` reads)."""
    rows = trace_rows()
    by_column = [s.item.task for s in _in_process(rows, TraceColumn(task_field="suite"))]
    assert by_column == [row["suite"] for row in rows]
    by_path = _in_process(rows, TraceColumn(task_field="metadata.task_domain"))
    assert [s.item.task for s in by_path] == [s.trace.metadata.task_domain for s in by_path]


def test_rows_that_are_traces_take_their_task_as_a_local_read() -> None:
    """Without a trace column the row is the trace: its dotted path, as ``items_of`` reads."""
    rows = [json.loads(row["trace"]) for row in trace_rows()]
    scored = _in_process(rows, TraceColumn(task_field="metadata.task_domain"))
    assert [s.item.task for s in scored] == _local_tasks(rows, "metadata.task_domain")


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_score_dataset_takes_task_field_as_runs_score_does() -> None:
    """``score_dataset(ds, task_field=...)``: a keyword, as ``runs.score``'s, not an option;
    the items then group by it in ``select`` as the rows in memory do."""
    rows = trace_rows()
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    result = score_dataset(
        ray.data.from_items(rows), task_field="suite", scorer=scorer, factory=HashingEmbedder
    )
    assert [s.item.task for s in result.items] == [row["suite"] for row in rows]
    chosen = select(result.items, per_task=1, scorer=scorer)
    assert not chosen.tasks_inferred
    assert len(chosen.selected) == len({row["suite"] for row in rows})


def test_a_row_without_the_trace_column_or_a_trace_s_keys_says_so_once() -> None:
    """Rows of ``ray.data.read_text`` ({"text": ...}) not mapped to a ``trace`` column: one
    problem a row naming the column to make, not seven missing fields."""
    lines = (EXAMPLES / "traces" / "traces.jsonl").read_text().splitlines()[:2]
    reads = TraceColumn()([{"text": line} for line in lines])
    assert [read.document for read in reads] == [None, None]
    for read in reads:
        [(_, message)] = read.problems
        assert "no 'trace' column" in message
        assert "{'trace': row['text']}" in message
    trace = json.loads(lines[0])
    assert TraceColumn()([trace])[0].document == trace  # a row that is a trace is still one
