"""runs.write: items written back in their own form, one at a time or as the table they came in."""

from __future__ import annotations

import io
import json
import os
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.reports.rows import SCORE_COLUMNS, kp_columns
from knowledgepulse.runs import items_of
from knowledgepulse.runs.write import (
    ItemWriter,
    UnreadRows,
    annotated,
    annotated_like,
    item_writer,
    redacted_like,
)
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer
from knowledgepulse.value.item import ScoredItem
from tests.builders import make_trace, trace_json

DATASETS = Path(__file__).parents[2] / "examples" / "datasets"


def scored_row(raw: bytes = b'{"id": 7, "messages": []}') -> ScoredItem:
    """A scored item read from a JSON Lines row (its own bytes kept)."""
    trace = make_trace()
    row = Record(Location("rows.jsonl", 1, 0), json.loads(raw), raw=raw)
    item = TraceItem(Record(row.location, trace_json()), trace, row)
    return ScoredItem(item, TraceValueScorer(embedder=None).score(trace))


def scored_trace() -> ScoredItem:
    """A scored item read from a trace file."""
    trace = make_trace()
    item = TraceItem(Record(Location("t.jsonl", 1, 0), trace_json()), trace)
    return ScoredItem(item, TraceValueScorer(embedder=None).score(trace))


def test_a_row_goes_back_as_its_own_bytes_with_its_kp_columns() -> None:
    """A JSON Lines row keeps its bytes (spacing, key order); the kp_ columns follow."""
    stream = io.StringIO()
    with ItemWriter(stream) as writer:
        writer.write(scored_row())
    line = stream.getvalue()
    assert line.startswith('{"id": 7, "messages": [],"kp_score":')
    assert list(json.loads(line))[2:] == list(SCORE_COLUMNS)


def test_a_trace_goes_back_with_its_quality_score_and_the_item_is_not_changed() -> None:
    """metadata.quality_score is set in what is written, not in the item's document."""
    scored = scored_trace()
    stream = io.StringIO()
    with ItemWriter(stream) as writer:
        writer.write(scored)
    written = json.loads(stream.getvalue())
    assert written["metadata"]["quality_score"] == round(scored.breakdown.score, 12)
    assert list(written["metadata"]) == list(scored.item.document["metadata"])
    assert scored.item.document["metadata"]["quality_score"] == 0.0


def test_an_item_written_as_read_is_its_row_else_its_document() -> None:
    """write_as_read: a dataset row's own bytes with no column added; a trace as its document."""
    stream = io.StringIO()
    with ItemWriter(stream, added=()) as writer:
        writer.write_as_read(scored_row().item)
        writer.write_as_read(scored_trace().item)
    row, trace = stream.getvalue().splitlines()
    assert row == '{"id": 7, "messages": []}'
    assert json.loads(trace) == trace_json()


def test_the_json_form_is_one_list_even_when_empty() -> None:
    """form="json": a JSON list an item a line; no item at all is an empty list."""
    for count in (0, 2):
        stream = io.StringIO()
        with ItemWriter(stream, "json") as writer:
            for _ in range(count):
                writer.write(scored_trace())
        assert len(json.loads(stream.getvalue())) == count
        assert writer.written == count


def test_parquet_rows_come_back_with_typed_kp_columns(tmp_path: Path) -> None:
    """Parquet holds rows: each row's columns, then the kp_ columns with their types."""
    path = tmp_path / "out.parquet"
    with item_writer(path, "parquet") as writer:
        writer.write(scored_row())
        writer.write_row(scored_row().item, kp_columns(scored_row().breakdown))
    table = pq.read_table(path)
    assert table.column_names == ["id", "messages", *SCORE_COLUMNS]
    assert table.schema.field("kp_score").type == pa.float64()
    assert table.num_rows == 2


def test_parquet_is_written_to_a_file_only() -> None:
    """A stream cannot hold Parquet's footer-last layout: a path is asked for."""
    with pytest.raises(ValueError, match="give a path"), item_writer(io.StringIO(), "parquet"):
        pass


def test_a_file_appears_only_when_the_block_completes(tmp_path: Path) -> None:
    """An error inside the block leaves no file (nor a half-written one)."""
    path = tmp_path / "out.jsonl"

    def failing() -> None:
        with item_writer(path) as writer:
            writer.write_trace(scored_trace().item)
            raise RuntimeError

    with pytest.raises(RuntimeError):
        failing()
    assert not path.exists()
    with item_writer(path) as writer:
        writer.write_trace(scored_trace().item)
    assert json.loads(path.read_text())["id"] == "kp:trace:test-1"


def test_annotated_is_the_row_with_its_columns_or_the_annotated_trace() -> None:
    """One item as a dict: a row and its kp_ columns, else the trace with its quality score."""
    row, trace = scored_row(), scored_trace()
    assert annotated(row) == {"id": 7, "messages": [], **kp_columns(row.breakdown)}
    assert annotated(row, {"kp_kept": True}) == {"id": 7, "messages": [], "kp_kept": True}
    score = annotated(trace)["metadata"]["quality_score"]
    assert score == pytest.approx(trace.breakdown.score)


def chat_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATASETS / "openai_chat.jsonl").read_text().splitlines()]


def scored_rows(data: Any) -> list[ScoredItem]:
    scorer = TraceValueScorer(embedder=None)
    loaded = [item for item in items_of(data) if isinstance(item, TraceItem)]
    return [ScoredItem(item, scorer.score(item.trace)) for item in loaded]


def test_a_dataframe_comes_back_with_its_index_and_the_kp_columns() -> None:
    """The table's own rows, in the items' order, index kept, kp_ columns added."""
    frame = pd.DataFrame(chat_rows(), index=["a", "b", "c"])
    scored = scored_rows(frame)[::-1]
    back = annotated_like(frame, scored)
    assert list(back.index) == ["c", "b", "a"]
    assert list(back.columns) == [*frame.columns, *SCORE_COLUMNS]
    assert list(back["kp_score"]) == [round(s.breakdown.score, 4) for s in scored]


def test_an_arrow_table_keeps_its_schema_redacted_or_annotated() -> None:
    """Arrow: the same column types before the kp_ columns; redacted rows in the same schema."""
    table = pq.read_table(DATASETS / "hermes.parquet")
    scored = scored_rows(table)
    back = annotated_like(table, scored)
    assert [back.schema.field(name) for name in table.column_names] == list(table.schema)
    assert back.column_names[table.num_columns :] == list(SCORE_COLUMNS)
    assert back.schema.field("kp_nearest").type == pa.string()
    again = redacted_like(table, [item.item for item in scored])
    assert again.schema == table.schema
    assert again.to_pylist() == table.to_pylist()


def test_row_dicts_come_back_as_dicts() -> None:
    """Anything that is not a table gives a list of dicts, the caller's own left unchanged."""
    rows = chat_rows()
    back = annotated_like(rows, scored_rows(rows))
    assert [{k: v for k, v in row.items() if not k.startswith("kp_")} for row in back] == rows
    assert all("kp_score" not in row for row in rows)


def held(in_place: bool) -> UnreadRows:
    """Rows that gave no trace: one read before a row item, one after it."""
    unread = UnreadRows(in_place=in_place)
    bad = [Record(Location("rows.jsonl", line, line - 1), {"n": line}) for line in (1, 3)]
    unread.add(Problem(bad[0].location, "", "no conversation", record=bad[0]))
    for _ in unread.items([scored_row().item]):
        unread.add(Problem(bad[1].location, "", "no conversation", record=bad[1]))
    return unread


@pytest.mark.parametrize(("in_place", "order"), [(True, [1, 7, 3]), (False, [7, 1, 3])])
def test_rows_that_gave_no_trace_go_in_their_places_or_last(
    in_place: bool, order: list[int]
) -> None:
    """In place: each where it was read; else (an output in another order) all after the items."""
    unread = held(in_place)
    stream = io.StringIO()
    with ItemWriter(stream, unread=unread) as writer:
        writer.write(scored_row())
    rows = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [row.get("n", row.get("id")) for row in rows] == order
    assert [row.get("kp_error") for row in rows if "n" in row] == ["no conversation"] * 2
    assert unread.written == 2
    assert writer.items == 1


def test_items_given_out_of_order_are_written_in_their_places() -> None:
    """write(at=) holds an item given before its turn and writes it once the ones before are."""
    rows = [scored_row(), scored_trace(), scored_row()]
    in_order = io.StringIO()
    with ItemWriter(in_order) as writer:
        for scored in rows:
            writer.write(scored)
    shuffled = io.StringIO()
    with ItemWriter(shuffled) as writer:
        for place in (2, 0, 1):
            writer.write(rows[place], at=place)
    assert shuffled.getvalue() == in_order.getvalue()


def test_items_given_before_their_turn_wait_outside_memory() -> None:
    """write(at=) puts aside an early item in a temporary file: a few dozen bytes held each."""
    text = os.urandom(1024).hex()  # 2 KB that compress to about 1 KB
    rows = [scored_row(json.dumps({"id": n, "text": text}).encode()) for n in range(1000)]
    stream = io.StringIO()
    early = list(enumerate(rows))[:0:-1]  # the last first, the first never until the end
    with ItemWriter(stream) as writer:
        tracemalloc.start()
        try:
            for place, scored in early:
                writer.write(scored, at=place)
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        writer.write(rows[0], at=0)
    assert held < 400 * len(rows)
    assert [json.loads(line)["id"] for line in stream.getvalue().splitlines()] == list(range(1000))


class _CountedFile(io.BytesIO):
    """A temporary file that counts its writes (a system call each, on a real one)."""

    writes = 0

    def write(self, data: Any) -> int:
        _CountedFile.writes += 1
        return super().write(data)


def test_items_given_before_their_turn_go_to_the_file_many_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """write(at=) writes the items it puts aside to its temporary file in batches, not a seek
    and a write each (as many system calls as items: as costly as pickling them)."""
    monkeypatch.setattr(tempfile, "TemporaryFile", _CountedFile)
    monkeypatch.setattr(_CountedFile, "writes", 0)
    text = os.urandom(512).hex()
    rows = [scored_row(json.dumps({"id": n, "text": text}).encode()) for n in range(1000)]
    stream = io.StringIO()
    with ItemWriter(stream) as writer:
        for place, scored in list(enumerate(rows))[:0:-1]:
            writer.write(scored, at=place)
        writer.write(rows[0], at=0)
    assert 0 < _CountedFile.writes < len(rows) / 10
    assert [json.loads(line)["id"] for line in stream.getvalue().splitlines()] == list(range(1000))


def test_a_place_never_given_is_an_error_at_the_end() -> None:
    """Items waiting for a place that never came are not dropped silently."""
    writer = ItemWriter(io.StringIO())
    writer.write(scored_row(), at=1)
    with pytest.raises(ValueError, match="no item was given at place 0"):
        writer.close()
