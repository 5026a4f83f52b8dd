"""A Parquet output of no row keeps the dataset's columns: an empty set reads with the others.

Before, a set no row went to (``kp split``'s empty validation set, ``kp select`` choosing
none, an input of no row) was written with the ``kp_`` columns alone: a loader of the sets
together (``datasets.load_dataset("parquet", data_files=...)``, ``pa.concat_tables``)
refused it, its schema differing from the others'. Checked on a real dataset shard
(LLaMA-Factory's multimodal example: image bytes, nested parts, ``datasets``' metadata) by
pyarrow alone, never by kp's reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knowledgepulse import runs
from knowledgepulse.value.scorer import TraceValueScorer
from tests.cli.conftest import KpRunner

SHARD = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "openai-chat"
    / "llamafactory_mllm_example_test-0.parquet"
)


def assert_same_columns(written: Path, added: tuple[str, ...]) -> None:
    """``written`` has no row, the shard's columns (types, metadata) and then ``added``."""
    source, table = pq.read_schema(SHARD), pq.read_table(written)
    assert table.num_rows == 0
    assert table.schema.names == [*source.names, *added]
    for field in source:
        assert table.schema.field(field.name).type == field.type
    assert table.schema.metadata == source.metadata
    # Read with the rows of the shard, as a loader of a split's sets does.
    pa.concat_tables([pq.read_table(SHARD).select(source.names), table.select(source.names)])


SCORED = (
    "kp_score",
    "kp_shareable",
    "kp_complexity",
    "kp_novelty",
    "kp_tool_diversity",
    "kp_outcome_confidence",
    "kp_nearest",
    "kp_error",
    "kp_raw",
)


def test_select_of_none_keeps_the_columns(kp: KpRunner, tmp_path: Path) -> None:
    out = tmp_path / "best.parquet"
    run = kp("select", str(SHARD), "--no-embedder", "--budget", "0", "-o", str(out))
    assert run.code == 0, run.err
    assert_same_columns(out, SCORED)


def test_an_empty_split_set_keeps_the_columns(kp: KpRunner, tmp_path: Path) -> None:
    """Three rows of one task each, asked for three sets at 1%: validation gets none."""
    args = ["split", str(SHARD), "--by", "task", "--no-embedder", "--test", "0.3"]
    run = kp(*args, "--validation", "0.01", "-o", str(tmp_path / "sets"))
    assert run.code == 0, run.err
    assert "validation 0" in run.err
    assert_same_columns(tmp_path / "sets" / "validation.parquet", ())
    together = pa.concat_tables(pq.read_table(path) for path in (tmp_path / "sets").iterdir())
    assert together.num_rows == pq.read_metadata(SHARD).num_rows


@pytest.mark.parametrize(
    ("command", "added"),
    [
        (("score", "--annotate", "--no-embedder"), SCORED),
        (("redact",), ("kp_error", "kp_raw")),
        (
            ("dedupe", "--by", "task", "--no-embedder"),
            (*SCORED[:-2], "kp_group", "kp_kept", "kp_error", "kp_raw"),
        ),
    ],
)
def test_an_input_of_no_row_gives_its_columns(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...], added: tuple[str, ...]
) -> None:
    empty = tmp_path / "empty.parquet"
    table = pq.read_table(SHARD)
    pq.write_table(table.slice(0, 0), empty)
    out = tmp_path / "out.parquet"
    run = kp(*command, str(empty), "--allow-empty", "-o", str(out))
    assert run.code == 0, run.err
    source = pq.read_schema(empty)
    written = pq.read_table(out)
    assert written.schema.names == [*source.names, *added]
    assert written.schema.metadata == source.metadata


def test_a_python_selection_of_none_keeps_the_tables_columns(tmp_path: Path) -> None:
    table = pq.read_table(SHARD)
    picked = runs.select(table, budget=0, scorer=TraceValueScorer(embedder=None))
    picked.write_to(tmp_path / "best.parquet")
    assert_same_columns(tmp_path / "best.parquet", SCORED)


def test_a_saved_datasets_split_sets_are_parquet_of_its_schema(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A save_to_disk folder is a table, as a Dataset is: its sets were JSON Lines before, its
    types and features lost; each set (the empty one too) now has its schema, the rows theirs."""
    folder = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat_hf"
    (arrow_file,) = folder.glob("*.arrow")
    with pa.memory_map(str(arrow_file)) as data:
        given = pa.ipc.open_stream(data).read_all()
    args = ["split", str(folder), "--by", "task", "--no-embedder", "--test", "0.3"]
    run = kp(*args, "--validation", "0.01", "-o", str(tmp_path / "sets"))
    assert run.code == 0, run.err
    parts = sorted((tmp_path / "sets").iterdir())
    assert [part.name for part in parts] == ["test.parquet", "train.parquet", "validation.parquet"]
    # Parquet names a list's item "element" (Arrow IPC "item"): the same type, cast as is.
    tables = [pq.read_table(part).cast(given.schema) for part in parts]
    for part, table in zip(parts, tables, strict=True):
        assert pq.read_schema(part).names == given.schema.names
        assert pq.read_schema(part).metadata == given.schema.metadata
        assert table.schema.equals(given.schema, check_metadata=True)
    back = pa.concat_tables(tables).to_pylist()
    assert sorted(map(_parsed, back), key=str) == sorted(map(_parsed, given.to_pylist()), key=str)


def _parsed(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its messages' JSON text (``datasets``' Json) as the values: written again."""
    return {**row, "trajectory": [json.loads(text) for text in row["trajectory"]]}
