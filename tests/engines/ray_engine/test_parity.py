"""A Ray Dataset of real rows gives back what ``runs.annotate`` gives for the same rows.

The law: every row in, every row out, in order: the same columns and values, the same ids and
nearest ids, a bad row in its place with the same ``kp_error``, redacted the same way.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.engines.ray_engine import MiniLMFactory
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.runs import annotate
from knowledgepulse.runs.on_ray import (
    ConversationRows,
    TraceBatchEmbedder,
    collected,
    dataset_actors,
    dataset_lead,
    score_dataset,
)
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.runs.redaction import redactor_of
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer

CHAT = Path(__file__).parents[2] / "conformance" / "files" / "openai-chat"
FILES = ("foundry_zava_retail_sft_test.jsonl", "toolbench_G1_10_ChatGPT_DFS_woFilter_w2.jsonl")
BAD = {"messages": "not a conversation", "task": "t9", "reward": 0.1, "note": "ops@example.com"}


def chat_table() -> pa.Table:
    """Real chat rows (no id column) as Parquet holds them, with a task, a reward and a bad row.

    The bad row, third, holds an e-mail address for ``redact`` to find.
    """
    rows: list[dict[str, Any]] = []
    for name in FILES:
        rows += [json.loads(line) for line in (CHAT / name).read_text().splitlines()]
    for number, row in enumerate(rows):
        row.update(task=f"t{number % 2}", reward=(0.2, 0.9, 0.5, 1.0)[number % 4], note=None)
        row["messages"] = json.dumps(row["messages"])
    rows.insert(2, BAD)
    return pa.Table.from_pylist(rows)


def local_rows(table: pa.Table, redact: bool, scorer: TraceValueScorer) -> list[dict[str, Any]]:
    """``runs.annotate`` of the rows as Arrow holds them, as row dicts."""
    rows: list[dict[str, Any]] = annotate(table, redact=redact, scorer=scorer).to_pylist()
    return rows


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6), st.booleans())
def test_rows_cut_into_any_batches_come_back_as_annotate_gives_them(
    sizes: list[int], redact: bool
) -> None:
    """The actors' and driver's steps (in-process), over batches of any sizes, give the rows,
    ids, nearest ids and kp_error of one local ``annotate``; no row is dropped."""
    table = chat_table()
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    redactor = redactor_of(redact)
    reader = ConversationRows(*dataset_lead(table.to_pylist(), "auto"))  # as on Ray
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, reader, None, redactor)
    positions, start, results = itertools.count(), 0, []
    for size in [*sizes, table.num_rows]:  # the last batch takes whatever is left
        if start >= table.num_rows:
            break
        batch = actor(table.slice(start, size))
        results += list(score_batch(scorer, batch, positions, redactor))
        start += size
    on_ray = collected(results)
    local = local_rows(table, redact, TraceValueScorer(embedder=HashingEmbedder()))
    assert len(on_ray.rows) == table.num_rows
    assert on_ray.rows == local
    assert [row["kp_error"] is not None for row in on_ray.rows] == [False, False, True] + [
        False
    ] * (table.num_rows - 3)


@pytest.mark.embedder
@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
@pytest.mark.parametrize("redact", [False, True])
def test_a_parquet_file_on_ray_comes_back_as_annotate_gives_it(
    tmp_path: Path, redact: bool
) -> None:
    """``read_parquet`` of real chat rows with a bad one: score_dataset's rows are annotate's."""
    path = tmp_path / "chat.parquet"
    pq.write_table(chat_table(), path)
    result = score_dataset(
        ray.data.read_parquet(str(path)),
        source="auto",
        redact=redact,
        factory=MiniLMFactory(max_windows=2),
        concurrency=1,  # a second actor would hold the CPU the read needs, on 2 CPUs
        batch_size=3,
    )
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=2))
    assert result.rows == local_rows(pq.read_table(path), redact, scorer)
    errors = [row["kp_error"] for row in result.rows if row["kp_error"] is not None]
    assert [f"{problem.path}: {problem.message}" for problem in result.problems] == errors != []


def test_the_default_actor_pool_leaves_a_cpu_for_the_datasets_read() -> None:
    """On 2 CPUs, 1 actor (2 held every CPU, and read_parquet waited forever); GPUs still count."""
    assert dataset_actors({"CPU": 2.0}, 1, 0) == 1
    assert dataset_actors({"CPU": 1.0}, 1, 0) == 1
    assert dataset_actors({"CPU": 64.0}, 1, 0) == 63
    assert dataset_actors({"CPU": 64.0, "GPU": 4.0}, 1, 1) == 4
    assert dataset_actors({"CPU": 4.0, "GPU": 8.0}, 1, 1) == 3
