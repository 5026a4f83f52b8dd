"""runs.on_ray tells each row as a local read of the same rows does: place, warnings, messages.

The actor's step and the driver's run in this process, a batch at a time as ``score_dataset``
feeds them (no Ray started), and once on the local Ray; the local run reads the same rows with
``items_of`` and ``annotate``.
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

from knowledgepulse.records import Problem
from knowledgepulse.records.json_values import LONE_SURROGATE
from knowledgepulse.redact.items import Redactor
from knowledgepulse.runs import annotate, items_of, score
from knowledgepulse.runs.on_ray import (
    ConversationRows,
    DatasetScores,
    RowReader,
    TraceBatchEmbedder,
    TraceColumn,
    collected,
    dataset_lead,
    score_dataset,
)
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.sources._read import ReadWarnings
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import trace_json

PLANTED = "ask jane.doe@example.com or +1 415 555 2671"


def _chat(row_id: str, question: str, answer: str) -> dict[str, Any]:
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return {"id": row_id, "messages": messages}


def _chat_rows() -> list[dict[str, Any]]:
    """Rows with a broken law (a JSON objective), a bad row, and an id repeated 2 batches on."""
    return [
        _chat("r1", '{"query": "weather in Paris"}', "Sunny in Paris today."),
        _chat("r2", "What is two plus two, please?", "Four."),
        {"id": "r3", "messages": [{"role": "wizard", "content": "hi"}]},
        _chat("r4", "Name a prime number above ten.", "Eleven."),
        _chat("r1", "Again: what is the weather in Paris?", "Still sunny."),
    ]


def _conversations(rows: list[dict[str, Any]]) -> ConversationRows:
    """The reader ``score_dataset(source="auto")`` gives its actors: the dataset's lead first."""
    return ConversationRows(*dataset_lead(rows, "auto"))


def _on_ray(
    rows: list[dict[str, Any]], reader: RowReader, redactor: Redactor | None = None
) -> DatasetScores:
    """The rows through the actor's step and the driver's, 2 rows a batch, as on Ray."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, reader, None, redactor)
    positions, said = itertools.count(), ReadWarnings()
    batches = (actor(pa.Table.from_pylist(rows[at : at + 2])) for at in range(0, len(rows), 2))
    return collected(
        result
        for batch in batches
        for result in score_batch(scorer, batch, positions, redactor, said)
    )


def _local_problems(rows: list[dict[str, Any]], redact: bool | Redactor = False) -> list[Problem]:
    told: list[Problem] = []
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    annotate(rows, scorer=scorer, redact=redact, on_problem=told.append)
    return told


def test_a_row_s_warnings_on_ray_are_a_local_read_s() -> None:
    """A broken conversion law and an id repeated in a later batch are said, as locally."""
    rows = _chat_rows()
    ray_warnings = [str(p) for p in _on_ray(rows, _conversations(rows)).problems if p.warning]
    local = [str(p) for p in _local_problems(rows) if p.warning]
    assert any("objective is JSON" in text for text in local)
    assert any("appeared earlier" in text for text in local)
    assert ray_warnings == local


def test_rows_on_ray_are_located_as_a_local_read_locates_them() -> None:
    """Each item's and each problem's location (file, line, index) is a local read's."""
    rows = _chat_rows()
    result = _on_ray(rows, _conversations(rows))
    local = list(items_of(rows))
    assert [item.item.location for item in result.items] == [
        item.location for item in local if not isinstance(item, Problem)
    ]
    assert [(p.location, str(p)) for p in result.problems] == [
        (p.location, str(p)) for p in local if isinstance(p, Problem)
    ]


def test_a_lone_surrogate_on_ray_reads_as_u_fffd_with_a_local_read_s_warning() -> None:
    """A trace column whose JSON holds a lone ``\\ud83d`` (``json.loads`` keeps it) is scored
    as U+FFFD with the local read's warning at its row, and the local score; not refused."""
    traces = [
        trace_json(trace_id="kp:trace:plain"),
        trace_json(trace_id="kp:trace:lone", objective="Find a flight \ud83d to Oslo"),
    ]
    result = _on_ray([{"trace": json.dumps(t)} for t in traces], TraceColumn())
    local = _local_problems(traces)
    assert [str(p) for p in local] == ["rows:2: warning: task.objective: " + LONE_SURROGATE]
    assert [str(p) for p in result.problems] == [str(p) for p in local]
    assert result.items[1].item.trace.task.objective == "Find a flight \ufffd to Oslo"
    scored = score(traces, scorer=TraceValueScorer(embedder=HashingEmbedder()))
    assert [b.score for b in result.breakdowns] == [item.breakdown.score for item in scored]


def test_a_misspelt_key_on_ray_is_the_local_read_s_warning_in_a_good_or_bad_row() -> None:
    """``tols`` is warned of (did you mean ``tool``?) before the row's item or its errors, as
    a local read of the same traces does; before, the Ray path said nothing of it."""
    good, bad = trace_json(trace_id="kp:trace:good"), trace_json(trace_id="kp:trace:bad")
    for trace in (good, bad):
        trace["steps"][0]["tols"] = 1
    bad["steps"][0]["type"] = "daydream"
    result = _on_ray([{"trace": json.dumps(t)} for t in (good, bad)], TraceColumn())
    local = _local_problems([good, bad])
    assert [p.warning for p in local] == [True, True, False]
    assert [str(p) for p in result.problems] == [str(p) for p in local]


@pytest.mark.parametrize("redact", [False, True])
def test_a_bad_row_s_message_is_cleaned_at_a_local_run_s_level(redact: bool) -> None:
    """Redacting, an e-mail and a phone quoted by a bad row's message are gone, as locally;
    without, the message is the local one too (an e-mail kept: only secrets are cleaned)."""
    good = trace_json(trace_id="kp:trace:good")
    bad = trace_json(trace_id="kp:trace:bad")
    bad["metadata"]["success"] = PLANTED
    redactor = Redactor() if redact else None
    result = _on_ray([{"trace": json.dumps(t)} for t in (good, bad)], TraceColumn(), redactor)
    local = _local_problems([good, bad], redact=redact)
    assert [str(p) for p in result.problems] == [str(p) for p in local]
    assert ("jane.doe@example.com" in str(result.problems)) is not redact
    assert ("415 555" in str(result.problems)) is not redact


def test_the_rows_table_types_its_kp_columns_when_they_are_all_empty() -> None:
    """``table()`` of rows that all scored (``kp_error`` all empty), or that all failed (the
    scores all empty), has the columns' own types: Parquet parts of both read back as one."""
    rows = _chat_rows()
    good, bad = [row for row in rows if row["id"] != "r3"], [rows[2]]
    scored = _on_ray(good, _conversations(good)).table()
    failed = _on_ray(bad, _conversations(bad)).table()
    assert scored.column("kp_error").null_count == scored.num_rows
    assert failed.column("kp_score").null_count == failed.num_rows == 1
    for name in ("kp_error", "kp_score", "kp_nearest", "kp_shareable"):
        assert scored.schema.field(name).type == failed.schema.field(name).type != pa.null()
    assert scored.to_pylist() == _on_ray(good, _conversations(good)).rows


@pytest.fixture(scope="module")
def parquet_rows(ray_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> DatasetScores:
    """The chat rows as 3 Parquet files (Ray blocks) scored on the local Ray, 2 rows a batch."""
    folder = tmp_path_factory.mktemp("rows")
    rows = _chat_rows()
    for number, part in enumerate((rows[:2], rows[2:3], rows[3:])):
        pq.write_table(pa.Table.from_pylist(part), folder / f"part-{number}.parquet")
    dataset = ray.data.read_parquet(str(folder))
    return score_dataset(dataset, source="auto", factory=HashingEmbedder, batch_size=2)


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_a_ray_run_says_the_local_run_s_problems_and_warnings(
    parquet_rows: DatasetScores,
) -> None:
    """Over real blocks, the problems and warnings (an id repeated a block on) are the local."""
    assert [str(p) for p in parquet_rows.problems] == [
        str(p) for p in _local_problems(_chat_rows())
    ]


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_a_ray_dataset_of_traces_with_a_lone_surrogate_scores_as_the_local_run() -> None:
    """Rows that are traces made in Python, one text with a lone surrogate (Ray keeps it,
    pickled): on the local Ray, the local run's warning and scores; before, the row was refused."""
    traces = [
        trace_json(trace_id="kp:trace:plain"),
        trace_json(trace_id="kp:trace:lone", objective="Find a flight \ud83d to Oslo"),
    ]
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    result = score_dataset(ray.data.from_items(traces), scorer=scorer, factory=HashingEmbedder)
    assert [str(p) for p in result.problems] == [str(p) for p in _local_problems(traces)]
    scored = score(traces, scorer=TraceValueScorer(embedder=HashingEmbedder()))
    assert [b.score for b in result.breakdowns] == [item.breakdown.score for item in scored]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_rows_written_back_from_ray_read_back_as_one_table(
    parquet_rows: DatasetScores, tmp_path: Path
) -> None:
    """docs/ray.md's write-back: parts whose ``kp_error`` or scores are all empty are written
    as Parquet files that ``pyarrow.parquet.read_table`` reads as one table of every row."""
    ray.data.from_arrow(parquet_rows.table()).repartition(3).write_parquet(str(tmp_path))
    assert len(list(tmp_path.glob("*.parquet"))) == 3
    read = pq.read_table(tmp_path).to_pylist()
    assert sorted(read, key=json.dumps) == sorted(parquet_rows.rows, key=json.dumps)
    assert [row["kp_error"] is None for row in parquet_rows.rows] == [True] * 2 + [False] + [
        True
    ] * 2
