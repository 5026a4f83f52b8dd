"""``kp`` writes traces to a ``.parquet`` name as a table of traces, which reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from knowledgepulse.runs import items_of
from knowledgepulse.trace import TraceItem
from tests.builders import curation_traces
from tests.cli.conftest import KpRunner


@pytest.mark.parametrize("command", [["redact"], ["convert"], ["score", "--annotate"]])
def test_kp_writes_traces_to_a_parquet_name_as_parquet(
    kp: KpRunner, tmp_path: Path, command: list[str]
) -> None:
    """``-o x.parquet`` on a trace file: a Parquet table of the traces (redact wrote JSON Lines
    under that name, convert refused it)."""
    source = tmp_path / "t.jsonl"
    traces = curation_traces()
    source.write_text("".join(json.dumps(document) + "\n" for document in traces))
    target = tmp_path / "out.parquet"
    run = kp(*command, str(source), "-o", str(target))
    assert run.code == 0, run.err
    assert target.read_bytes()[:4] == b"PAR1"
    assert [
        item.trace.id for item in [i for i in items_of(str(target)) if isinstance(i, TraceItem)]
    ] == [t["id"] for t in traces]


def test_kp_converts_dataset_rows_to_a_parquet_table_of_their_traces(
    kp: KpRunner, tmp_path: Path
) -> None:
    """``kp convert rows.jsonl -o x.parquet`` writes the traces, as JSON Lines would hold them;
    before, the input rows themselves went out unconverted (and rows of mixed shapes failed)."""
    rows = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
    target = tmp_path / "out.parquet"
    run = kp("convert", str(rows), "-o", str(target))
    assert run.code == 0, run.err
    traces = [json.loads(line) for line in kp("convert", str(rows)).out.splitlines()]
    assert pq.read_table(target).column_names == list(traces[0])  # a column a trace's key
    assert [
        item.document for item in items_of(str(target)) if isinstance(item, TraceItem)
    ] == traces
