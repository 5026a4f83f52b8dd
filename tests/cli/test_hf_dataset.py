"""A Hugging Face ``save_to_disk`` folder, and its ``.arrow`` file, scored like the JSON Lines rows
it was saved from (``examples/datasets/make_hf_dataset.py`` made it from ``openai_chat.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import KpRunner
from tests.paths import REPO

EXAMPLES = REPO / "examples" / "datasets"
FOLDER = EXAMPLES / "openai_chat_hf"


def scores(kp: KpRunner, path: str) -> list[tuple[str, float]]:
    """Each trace's id and score from ``kp score --no-embedder PATH -f jsonl``."""
    run = kp("score", "--no-embedder", path, "-f", "jsonl")
    assert run.code == 0, run.err
    assert "read as openai-chat rows (3 traces)" in run.err
    return [(row["id"], row["score"]) for row in map(json.loads, run.out.splitlines())]


@pytest.mark.parametrize("path", [FOLDER, FOLDER / "data-00000-of-00001.arrow"])
def test_a_saved_dataset_scores_as_its_json_lines_rows(kp: KpRunner, path: object) -> None:
    """The folder and its Arrow file give the JSON Lines file's ids and scores, in order."""
    expected = scores(kp, str(EXAMPLES / "openai_chat.jsonl"))
    assert len(expected) == 3
    assert scores(kp, str(path)) == expected


@pytest.mark.parametrize("path", [FOLDER, FOLDER / "data-00000-of-00001.arrow"])
def test_a_saved_dataset_to_parquet_keeps_its_column_types(
    kp: KpRunner, tmp_path: Path, path: Path
) -> None:
    """Its rows written to Parquet have the Arrow file's types and ``datasets``' features (a
    ``List(Json)`` conversation among them), not types guessed from their values."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    with pa.memory_map(str(FOLDER / "data-00000-of-00001.arrow")) as data:
        given = pa.ipc.open_stream(data).read_all()
    out = tmp_path / "scored.parquet"
    run = kp("score", "--no-embedder", "--annotate", str(path), "-o", str(out))
    assert run.code == 0, run.err
    written = pq.read_table(out)
    assert written.schema.metadata[b"huggingface"] == given.schema.metadata[b"huggingface"]
    for field in given.schema:
        assert written.schema.field(field.name) == field
    assert [parsed(row) for row in written.select(given.schema.names).to_pylist()] == [
        parsed(row) for row in given.to_pylist()
    ]


def parsed(row: dict[str, Any]) -> dict[str, Any]:
    """A row of the example dataset with its conversation's JSON text parsed (as values)."""
    return {**row, "trajectory": [json.loads(message) for message in row["trajectory"]]}


def test_parquet_with_json_columns_goes_back_to_parquet(kp: KpRunner, tmp_path: Path) -> None:
    """A Parquet file whose conversation is a list of JSON values (``datasets``' ``Json``, for
    messages of differing shapes) is written back with that type and the same values."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [json.loads(line) for line in (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()]
    column = [[compact(message) for message in row["trajectory"]] for row in rows]
    table = pa.table(
        {
            "trajectory_id": [row["trajectory_id"] for row in rows],
            "trajectory": pa.array(column, pa.list_(pa.string())).cast(pa.list_(pa.json_())),
            "meta": pa.array(
                [{"note": compact({"n": index})} for index in range(len(rows))],
                pa.struct([("note", pa.string())]),
            ).cast(pa.struct([("note", pa.json_())])),
        }
    )
    source, out = tmp_path / "rows.parquet", tmp_path / "scored.parquet"
    pq.write_table(table, source)
    run = kp("score", "--no-embedder", "--annotate", str(source), "-o", str(out))
    assert run.code == 0, run.err
    written = pq.read_table(out)
    for field in table.schema:
        assert written.schema.field(field.name) == field
    assert written.select(table.schema.names).to_pylist() == table.to_pylist()


def compact(value: Any) -> str:
    """``value`` as JSON text the way kp writes it (no spaces, text as it is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
