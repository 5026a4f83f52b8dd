"""``kp`` writes traces to a ``.parquet`` name as a table of traces, which reads back."""

from __future__ import annotations

import json
from pathlib import Path

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
