"""runs.on_ray, given a source: a Ray Dataset of conversation rows comes back as its rows."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.engines.ray_engine import MiniLMFactory
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.reports.rows import ANNOTATED_COLUMNS
from knowledgepulse.runs import items_of, score, select
from knowledgepulse.runs.on_ray import ConversationRows, TraceBatchEmbedder, score_dataset
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer
from tests.sources.helpers import convert_file

EXAMPLES = Path(__file__).parents[3] / "examples" / "datasets"
FACTORY = MiniLMFactory(max_windows=2)


def test_each_row_of_a_batch_gives_its_trace_or_its_located_problems() -> None:
    """A bad row's problems carry their path; a row without an id is marked named by its number."""
    rows = [json.loads(line) for line in (EXAMPLES / "sharegpt.jsonl").read_text().splitlines()]
    rows.insert(1, {"conversations": [{"from": "human", "value": "hi"}, {"value": "no from"}]})
    first, bad, last = ConversationRows()(rows)
    assert first.document is not None
    assert last.document is not None
    assert (first.document["id"], last.document["id"]) == ("kp:trace:rows:0", "kp:trace:rows:2")
    assert first.numbered
    assert last.numbered
    assert bad[0] is None
    assert [path for path, _ in bad[1]] == ["conversations[1]"]


def test_every_row_no_source_knows_says_so() -> None:
    """A row in no known shape is a problem of its own, in a batch of such rows too."""
    first, second = (read.problems for read in ConversationRows()([{"x": 1}, {"y": 2}]))
    assert "not a trace file this tool knows" in first[0][1]
    assert "not a trace file this tool knows" in second[0][1]


def test_an_item_scored_on_ray_keeps_the_task_and_reward_its_row_gave() -> None:
    """The actor's and driver's steps (in-process) give each item a local read's task and reward.

    A reward column (a number in the success column) and a task column travel with the item,
    so that ``select(result.items, per_task=1, rank_by="reward")`` chooses as locally.
    """
    rows = [json.loads(line) for line in (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()]
    for row, reward in zip(rows, (0.25, 1.0, 0.5), strict=True):
        row["resolved"] = reward
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, ConversationRows(), None)
    batch = actor(pa.Table.from_pylist(rows))
    scored = list(score_batch(scorer, batch, itertools.count()))
    local = [item for item in items_of(rows) if isinstance(item, TraceItem)]
    assert all(isinstance(item, ScoredItem) for item in scored)
    assert [s.item.task for s in scored] == [i.task for i in local] != [None] * 3  # type: ignore[union-attr]
    assert [s.item.reward for s in scored] == [i.reward for i in local] == [0.25, 1.0, 0.5]  # type: ignore[union-attr]


@pytest.mark.embedder
@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_a_parquet_dataset_of_chat_rows_comes_back_as_its_rows_with_the_local_scores() -> None:
    """``ray.data.read_parquet`` rows: columns as pyarrow reads them, with the local kp_ scores."""
    path = EXAMPLES / "openai_chat.parquet"
    dataset = ray.data.read_parquet(str(path))
    result = score_dataset(dataset, source="auto", factory=FACTORY, concurrency=1)

    originals = pq.read_table(path).to_pylist()
    assert result.problems == []
    assert [{k: v for k, v in row.items() if not k.startswith("kp_")} for row in result.rows] == (
        originals
    )
    assert all(
        list(row)[-len(ANNOTATED_COLUMNS) :] == list(ANNOTATED_COLUMNS) for row in result.rows
    )
    traces = [item.trace for item in convert_file(path) if isinstance(item, TraceItem)]
    local = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=2)).score_many(traces)
    assert [row["kp_score"] for row in result.rows] == [round(b.score, 4) for b in local]
    assert [row["kp_nearest"] for row in result.rows] == [b.novelty.nearest_id for b in local]


@pytest.mark.embedder
@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_what_ray_scored_is_selected_as_the_same_rows_in_memory() -> None:
    """select(score_dataset(...).items, per_task=1, rank_by=reward) picks what select(rows) does."""
    rows = [json.loads(line) for line in (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()]
    for row, reward in zip(rows, (0.25, 1.0, 0.5), strict=True):
        row["resolved"] = reward
    result = score_dataset(ray.data.from_items(rows), source="auto", factory=FACTORY)
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=2))
    on_ray = select(result.items, per_task=1, rank_by="reward", scorer=scorer)
    in_memory = select(rows, per_task=1, rank_by="reward", scorer=scorer)
    assert [s.trace.id for s in on_ray.selected] == [s.trace.id for s in in_memory.selected]
    assert on_ray.outcomes == in_memory.outcomes
    assert not on_ray.tasks_inferred


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=5))
def test_any_batching_scores_as_one_local_run(sizes: list[int]) -> None:
    """Rows cut into batches of any sizes (the actor's and driver's steps, in-process) give the
    local run's items: same ids, scores, tasks and rewards, in order."""
    lines = (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in (lines * 3)[: sum(sizes)]]
    for number, row in enumerate(rows):
        row["trajectory_id"] = f"run-{number}"
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, ConversationRows(), None)
    positions, start, scored = itertools.count(), 0, list[ScoredItem]()
    for size in sizes:
        batch = actor(pa.Table.from_pylist(rows[start : start + size]))
        found = score_batch(scorer, batch, positions)
        scored.extend(item for item in found if isinstance(item, ScoredItem))
        start += size
    local = score(rows, scorer=TraceValueScorer(embedder=HashingEmbedder()))
    facts = [(s.trace.id, s.item.task, s.item.reward) for s in local]
    assert [(s.trace.id, s.item.task, s.item.reward) for s in scored] == facts
    # The vectors travel as float32, as on Ray: the scores agree within 1e-6.
    assert [s.breakdown.score for s in scored] == pytest.approx(
        [s.breakdown.score for s in local], abs=1e-6
    )
