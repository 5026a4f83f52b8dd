"""Traces written to Parquet: a table of traces, a row a trace, read back as the same traces."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.errors import OutputError
from knowledgepulse.records import Location, Record
from knowledgepulse.runs import items_of, select, split
from knowledgepulse.runs.write import item_writer
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem, parse_trace
from knowledgepulse.value import TraceValueScorer
from tests.builders import curation_traces, trace_json


def _read_back(path: Path) -> list[TraceItem]:
    read = list(items_of(str(path)))
    assert all(isinstance(item, TraceItem) for item in read), read
    return [item for item in read if isinstance(item, TraceItem)]


def _mixed_traces() -> list[dict[str, Any]]:
    """Traces a struct column could not hold as they are: tool inputs whose keys and types
    differ, a step without input, a field only one trace has."""
    traces = curation_traces()
    traces[0]["steps"][0]["input"] = {"n": 1, "when": {"day": "mon"}}
    traces[1]["steps"][0]["input"] = {"n": "one", "tags": [1, "a", None]}
    traces[2]["steps"][0].pop("input", None)
    traces[3]["producer_note"] = {"by": "a test"}
    return traces


def test_a_selection_written_to_parquet_reads_back_as_the_traces_it_writes_as_json_lines(
    tmp_path: Path,
) -> None:
    """``write_to("x.parquet")`` on traces: the same documents, scores set, as ``x.jsonl``."""
    result = select(_mixed_traces(), scorer=TraceValueScorer(embedder=HashingEmbedder()))
    result.write_to(tmp_path / "x.parquet")
    result.write_to(tmp_path / "x.jsonl")
    got, want = _read_back(tmp_path / "x.parquet"), _read_back(tmp_path / "x.jsonl")
    assert [item.trace for item in got] == [item.trace for item in want]
    assert [item.document for item in got] == [item.document for item in want]
    table = pq.read_table(tmp_path / "x.parquet")
    assert table.num_rows == len(want)
    assert str(table.schema.field("id").type) == "string"  # queryable as text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(st.lists(st.dictionaries(st.text(max_size=5), _JSON, max_size=4), min_size=1, max_size=4))
def test_any_tool_inputs_survive_a_table_of_traces(inputs: list[dict[str, Any]]) -> None:
    """Whatever JSON each trace's tool input holds, each trace reads back exactly as written."""
    traces = []
    for number, tool_input in enumerate(inputs):
        document = trace_json(trace_id=f"kp:trace:t{number}")
        document["steps"][0]["input"] = tool_input
        traces.append(document)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.parquet"
        with item_writer(path, "parquet", ()) as out:
            for number, document in enumerate(traces):
                record = Record(Location("t.jsonl", number + 1), document)
                out.write_trace(TraceItem(record, parse_trace(document)))
        assert [item.document for item in _read_back(path)] == traces


def test_traces_and_dataset_rows_in_one_parquet_file_are_refused(tmp_path: Path) -> None:
    """A table of traces holds traces only: a row after them is an OutputError, not a bad file."""
    document = trace_json()
    trace = TraceItem(Record(Location("t.jsonl", 1), document), parse_trace(document))
    rows = [
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]}
    ]
    (row_item,) = [item for item in items_of(rows) if isinstance(item, TraceItem)]
    with item_writer(tmp_path / "t.parquet", "parquet", ()) as out:
        out.write_trace(trace)
        with pytest.raises(OutputError, match="trace documents and dataset rows"):
            out.write_row(row_item, {})


def test_a_split_of_a_table_of_traces_writes_its_parts_as_tables_of_traces(
    tmp_path: Path,
) -> None:
    """``split(x.parquet).write_to``: each part a Parquet table of its traces, as read."""
    result = select(_mixed_traces(), scorer=TraceValueScorer(embedder=HashingEmbedder()))
    result.write_to(tmp_path / "traces.parquet")
    read = _read_back(tmp_path / "traces.parquet")
    parts = split(
        str(tmp_path / "traces.parquet"),
        test=0.5,
        scorer=TraceValueScorer(embedder=HashingEmbedder()),
    )
    written = parts.write_to(tmp_path / "parts")
    assert sorted(path.name for path in written.values()) == ["test.parquet", "train.parquet"]
    back = [item.trace for path in written.values() for item in _read_back(path)]
    assert sorted(back, key=lambda trace: trace.id) == sorted(
        (item.trace for item in read), key=lambda trace: trace.id
    )


def _as_table(kind: str, traces: list[dict[str, Any]]) -> Any:
    """The traces as a table of that kind, a row a trace, as a user builds one."""
    if kind == "pandas":
        import pandas as pd

        return pd.DataFrame(traces)
    if kind == "datasets":
        dataset = pytest.importorskip("datasets").Dataset
        return dataset.from_list(traces)
    import pyarrow as pa

    return pa.Table.from_pylist(traces)


@pytest.mark.parametrize("kind", ["pandas", "arrow", "datasets"])
def test_a_split_of_a_trace_table_in_memory_writes_its_parts_as_tables_of_traces(
    kind: str, tmp_path: Path
) -> None:
    """``split(table).write_to``: Parquet parts, as from the table's file, the same traces."""
    traces = curation_traces()
    parts = split(
        _as_table(kind, traces), test=0.5, scorer=TraceValueScorer(embedder=HashingEmbedder())
    )
    assert len(parts.items) == len(traces)
    written = parts.write_to(tmp_path / "parts")
    assert sorted(path.name for path in written.values()) == ["test.parquet", "train.parquet"]
    back = [item.trace for path in written.values() for item in _read_back(path)]
    assert sorted(back, key=lambda trace: trace.id) == sorted(
        (item.trace for item in parts.items), key=lambda trace: trace.id
    )


def test_a_split_of_trace_dicts_still_writes_json_lines(tmp_path: Path) -> None:
    """A list of dicts is no table: its parts are JSON Lines, as from a .jsonl file."""
    parts = split(_mixed_traces(), test=0.5, scorer=TraceValueScorer(embedder=HashingEmbedder()))
    written = parts.write_to(tmp_path / "parts")
    assert sorted(path.name for path in written.values()) == ["test.jsonl", "train.jsonl"]
