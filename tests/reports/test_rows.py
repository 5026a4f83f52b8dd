"""``RowWriter`` to Parquet: every column kept or a clear stop, whatever JSON values rows hold."""

from __future__ import annotations

import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import OutputError
from knowledgepulse.records import Location, Record
from knowledgepulse.records.json_values import json_value
from knowledgepulse.records.readers import read_records
from knowledgepulse.reports import rows as rows_module
from knowledgepulse.reports.rows import RowWriter, jsonl_row
from tests.builders import without_nulls
from tests.trace.strategies import json_values


def written(path: Path, rows: list[Record], mode: str = "w+b") -> pa.Table:
    """``rows`` written to ``path`` as Parquet with no added column, read back.

    ``w+b`` as kp opens its output: a file the writer can read back to widen its columns.
    """
    with path.open(mode) as stream, RowWriter("parquet", stream, added=()) as writer:
        for row in rows:
            writer.write(row, {})
    return pq.read_table(path)


def from_json(values: list[dict[str, Any]], name: str = "rows.jsonl") -> list[Record]:
    return [Record(Location(name, i + 1, i), value) for i, value in enumerate(values)]


def test_an_empty_object_is_written_as_null(tmp_path: Path) -> None:
    """Parquet has no struct without a field: ``{}``, alone or nested, comes back null."""
    table = written(
        tmp_path / "out.parquet",
        from_json([{"meta": {}, "nest": {"n": 1, "e": {}, "l": [{}]}}, {"meta": {}, "nest": {}}]),
    )
    assert table.column("meta").to_pylist() == [None, None]
    assert table.column("nest").to_pylist() == [{"n": 1, "e": None, "l": [None]}, None]


def test_an_integer_beyond_int64_makes_its_column_unsigned(tmp_path: Path) -> None:
    """2**63 (orjson reads up to 2**64 - 1 as an int) is kept exactly, in a uint64 column."""
    table = written(tmp_path / "out.parquet", from_json([{"big": 2**63}, {"big": 1}]))
    assert table.schema.field("big").type == pa.uint64()
    assert table.column("big").to_pylist() == [2**63, 1]


def test_rows_of_two_parquet_files_keep_the_columns_of_both(tmp_path: Path) -> None:
    """A file's extra column is in the output, null in the other file's rows."""
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "a"}]), first)
    pq.write_table(pa.Table.from_pylist([{"id": "b", "notes": "keep me"}]), second)
    rows = [
        Record(Location(str(first), 1, 0), {"id": "a"}),
        Record(Location(str(second), 1, 0), {"id": "b", "notes": "keep me"}),
    ]
    table = written(tmp_path / "out.parquet", rows)
    assert table.to_pylist() == [{"id": "a", "notes": None}, {"id": "b", "notes": "keep me"}]


def test_a_later_row_with_a_new_column_widens_the_output_before_the_kp_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column new after the first batch is added, null in the rows before; ``kp_`` stay last.

    Before, it stopped the run (``the column 'late' is not in the Parquet output``).
    """
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    rows = from_json([{"id": 1}, {"id": 2}, {"id": 3, "late": "v"}, {"id": 4}, {"id": 5, "n": 1}])
    out = tmp_path / "out.parquet"
    with out.open("w+b") as stream, RowWriter("parquet", stream, added=("kp_score",)) as writer:
        for index, row in enumerate(rows):
            writer.write(row, {"kp_score": index / 2})
    table = pq.read_table(out)
    assert table.schema.names == ["id", "late", "n", "kp_score"]
    assert table.to_pylist() == [
        {
            "id": n + 1,
            "late": "v" if n == 2 else None,
            "n": 1 if n == 4 else None,
            "kp_score": n / 2,
        }
        for n in range(5)
    ]
    assert pq.ParquetFile(out).metadata.num_row_groups == 3  # a batch each, as written


def test_a_later_row_with_a_new_column_stops_a_stream_that_cannot_be_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written only (a pipe, a device), the output cannot widen: the row is named, not dropped."""
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    rows = from_json([{"id": 1}, {"id": 2}, {"id": 3, "late": "v"}])
    with pytest.raises(OutputError, match=r"rows\.jsonl:3: the column 'late' is not in"):
        written(tmp_path / "out.parquet", rows, mode="wb")


def test_a_later_trace_with_a_new_key_widens_the_table_of_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace past the first batch with a key they lacked adds its column; each trace reads
    back as written (a key a trace lacked stays absent). Before, the run stopped there."""
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    documents: list[dict[str, Any]] = [{"id": "a", "steps": [1]}, {"id": "b", "steps": []}]
    documents.append({"id": "c", "steps": [{"x": 1}], "source_skill": "s", "metadata": {"k": 1}})
    out = tmp_path / "traces.parquet"
    with out.open("w+b") as stream, RowWriter("parquet", stream) as writer:
        for index, document in enumerate(documents):
            writer.write_document(Location("t.jsonl", index + 1, index), document)
    back = [record.value for record in read_records(out) if isinstance(record, Record)]
    assert back == documents


@pytest.mark.parametrize(
    ("late", "place"),
    [
        ({"meta": {"a": 3, "b": "x"}}, ("meta", "b")),
        (
            {"meta": {"a": 3}, "turns": [{"role": "user"}, {"role": "tool", "name": "ls"}]},
            ("turns", -1, "name"),
        ),
        ({"meta": {"a": 3}, "late": [1]}, ("late",)),
        ({"meta": {"a": 3, "none": {"x": 1.5}}}, ("meta", "none")),
    ],
    ids=["struct key", "nested key", "column", "null then typed"],
)
def test_a_later_row_with_a_new_key_widens_the_output_where_it_is(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    late: dict[str, Any],
    place: tuple[str | int, ...],
) -> None:
    """A struct's new key at any depth, a new column, a type where there were only nulls: each
    is added, null in the rows before, and every value reads back as written.

    Before, each stopped the run at that row.
    """
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    first = [{"meta": {"a": n, "none": None}, "turns": [{"role": "user"}]} for n in range(2)]
    got = written(tmp_path / "out.parquet", from_json([*first, late])).to_pylist()
    assert [without_nulls(row) for row in got] == [without_nulls(row) for row in [*first, late]]

    def at(row: dict[str, Any]) -> Any:
        value: Any = row
        for key in place:
            value = value[key]
        return value

    assert [at(row) for row in got] == [None, None, at(late)]


def read_back(path: Path) -> list[Any]:
    """The rows of a Parquet file as kp reads them: a JSON column's text as its values."""
    return [record.value for record in read_records(path) if isinstance(record, Record)]


@pytest.mark.parametrize(
    ("late", "column", "place"),
    [
        ({"meta": {"a": 3.5}}, "meta", r"meta\.a is 3\.5, a fraction in a column of integers"),
        ({"meta": {"a": "3"}}, "meta", r"meta\.a is a string, where the earlier rows' int64 is"),
        ({"meta": {"a": 3}, "turns": [{"role": "user"}, {"role": 5}]}, "turns", r"turns\[1\]"),
        (  # a new key, with a fraction beside it: no widening takes the row
            {"meta": {"a": 3.5, "b": "x"}},
            "meta",
            r"meta\.[ab] is",
        ),
        (  # a new column, with a text where integers are
            {"meta": {"a": "3"}, "late": 1},
            "meta",
            r"meta\.a is a string",
        ),
    ],
)
def test_a_later_row_that_does_not_fit_the_first_batch_makes_its_column_json_text(
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    late: dict[str, Any],
    column: str,
    place: str,
) -> None:
    """A value past the first batch of another type, or one pyarrow would cut: its column is
    JSON text from then on, the rows written so far written again, every value read back as it
    was written, and a warning names the row and the place.

    Before, the run stopped there (rows in != rows out); before that, a fraction was truncated
    without a word.
    """
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    first = [{"meta": {"a": n}, "turns": [{"role": "user"}]} for n in range(2)]
    out = tmp_path / "out.parquet"
    table = written(out, from_json([*first, late]))
    assert [name for name in table.schema.names if _is_json(table.schema.field(name))] == [column]
    assert without_nulls(read_back(out)) == without_nulls([*first, late])
    assert regex_search(rf"rows\.jsonl:3: {place}", caplog.text)
    assert f"the column {column!r} is written as JSON text" in caplog.text


def _is_json(field: pa.Field) -> bool:
    return getattr(field.type, "extension_name", None) == "arrow.json"


def regex_search(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


@pytest.mark.parametrize(
    ("rows", "column", "where"),
    [
        (  # a text in one row and an object in another
            [{"meta": "a"}, {"meta": None}, {"meta": "b"}, {"meta": {"k": 1}}],
            "meta",
            r"rows\.jsonl:4: the column 'meta' holds an object with keys k here and a string "
            "in an earlier row",
        ),
        (  # Anthropic's messages: a text content, then a list of blocks
            [{"messages": [{"content": "hi"}, {"content": [{"type": "text", "text": "yo"}]}]}],
            "messages",
            r"rows\.jsonl:1: messages\[1\]\.content is a list here and a string at "
            r"messages\[0\]\.content",
        ),
        (  # tool_calls a list in one row, its JSON text in another
            [{"m": [{"tool_calls": "[]"}]}, {"m": [{"tool_calls": None}, {"tool_calls": [1]}]}],
            "m",
            r"rows\.jsonl:2: m\[1\]\.tool_calls is a list here and a string there in an "
            "earlier row",
        ),
        (  # a list of a number and a text, alone in its column
            [{"id": 1}, {"id": 2, "mixed": [1, "a"]}],
            "mixed",
            r"rows\.jsonl:2: mixed\[1\] is a string here and a",
        ),
    ],
)
def test_a_column_of_no_one_type_is_written_as_json_text_naming_where(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    rows: list[dict[str, Any]],
    column: str,
    where: str,
) -> None:
    """A column whose values no one Parquet type holds is JSON text (Parquet's JSON type), each
    value read back as written; a warning names the first place where the values differ.

    Before, the run stopped there: 17 of the 76 dataset files of this repository in JSON Lines
    (Anthropic's and OpenAI Responses' messages mix text and lists of blocks) could not be
    written to Parquet. Before that, the error said only pyarrow's ``Expected bytes, got a
    'dict' object``.
    """
    out = tmp_path / "out.parquet"
    table = written(out, from_json(rows))
    assert [name for name in table.schema.names if _is_json(table.schema.field(name))] == [column]
    assert without_nulls(read_back(out)) == without_nulls(rows)
    assert regex_search(where, caplog.text)
    assert f"the column {column!r} is written as JSON text" in caplog.text


def test_a_json_column_holds_json_for_every_reader(tmp_path: Path) -> None:
    """A text in a JSON column is JSON text too ('"hi"'), which pyarrow's own reader parses."""
    out = tmp_path / "out.parquet"
    written(out, from_json([{"content": "hi"}, {"content": ["a", 1]}, {"content": "[1]"}]))
    texts = pq.read_table(out).column("content").to_pylist()
    assert [json.loads(text) for text in texts] == ["hi", ["a", 1], "[1]"]


def test_a_stream_that_cannot_be_read_back_still_stops_at_a_later_misfit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe cannot be written again: a later value of another type stops the run there."""
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    rows = from_json([{"meta": {"a": 1}}, {"meta": {"a": 2}}, {"meta": {"a": "3"}}])
    with pytest.raises(OutputError, match=r"rows\.jsonl:3: meta\.a is a string.*-o FILE\.jsonl"):
        written(tmp_path / "out.parquet", rows, mode="wb")


def test_a_later_row_that_fits_the_first_batch_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer keys, a whole float in an integer column and nulls fit: every value comes back."""
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 2)
    rows = [{"meta": {"a": 1, "b": "x"}, "n": 1}, {"meta": {"a": 2}, "n": 2}]
    rows += [{"meta": {"b": None}, "n": 3.0}, {"meta": None}]
    table = written(tmp_path / "out.parquet", from_json(rows))
    assert table.to_pylist() == [
        {"meta": {"a": 1, "b": "x"}, "n": 1},
        {"meta": {"a": 2, "b": None}, "n": 2},
        {"meta": {"a": None, "b": None}, "n": 3},
        {"meta": None, "n": None},
    ]


@given(
    row=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    columns=st.dictionaries(st.sampled_from(["kp_score", "kp_error", "n"]), json_values),
)
def test_a_row_in_memory_written_as_a_json_line_reads_back_with_its_columns(
    row: dict[str, Any], columns: dict[str, Any]
) -> None:
    """Any JSON row (an integer past 64 bits too, which kp reads) is one line that reads back as
    the row with the columns added; before, orjson's TypeError on a large integer stopped
    every write_to of rows held in memory."""
    line = rows_module.jsonl_row(Record(Location("rows", 1, 0), row), columns)
    assert "\n" not in line
    assert json.loads(line) == {**row, **columns}


def test_a_nanosecond_timestamp_goes_to_json_lines_as_rfc_3339(tmp_path: Path) -> None:
    """A Parquet ``timestamp[ns]`` (read as pandas' Timestamp) is written as a microsecond one is.

    Before, orjson refused pandas' subclass of datetime and its ``str`` was written:
    ``1970-01-01 00:00:00.000000001+00:00``, a space for the ``T``, unlike its other columns.
    """
    pytest.importorskip("pandas")  # without it pyarrow gives datetimes, which orjson writes
    source = tmp_path / "in.parquet"
    nanos = pa.array([1, 10**18], type=pa.timestamp("ns"))
    micros = pa.array([0, 10**12], type=pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table({"ns": nanos, "us": micros}), source)
    lines = [jsonl_row(row, {}) for row in read_records(source) if isinstance(row, Record)]
    assert [json.loads(line) for line in lines] == [
        {"ns": "1970-01-01T00:00:00.000000001+00:00", "us": "1970-01-01T00:00:00+00:00"},
        {"ns": "2001-09-09T01:46:40+00:00", "us": "1970-01-12T13:46:40+00:00"},
    ]


def test_a_schema_the_parquet_writer_refuses_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow refusing the first batch's schema (before any row is built) is kp's error, not
    a Python one: the message of the rows that do not fit one schema."""

    def refused(*_: object) -> None:
        raise ValueError("unsupported Parquet type")

    monkeypatch.setattr(pq, "ParquetWriter", refused)
    with pytest.raises(OutputError, match="unsupported Parquet type"):
        written(tmp_path / "out.parquet", from_json([{"a": 1}]))


def test_a_duration_goes_to_json_lines_as_iso_8601(tmp_path: Path) -> None:
    """A Parquet ``duration`` column is ISO 8601 text in JSON Lines (pydantic's, pandas'
    ``to_json``'s form); before, Python's ``str``: ``0:00:01.500000``, which nothing reads."""
    source = tmp_path / "in.parquet"
    took = pa.array([1_500_000, -1_000_000, 90_061_000_000], type=pa.duration("us"))
    pq.write_table(pa.table({"took": took}), source)
    lines = [jsonl_row(row, {}) for row in read_records(source) if isinstance(row, Record)]
    assert [json.loads(line)["took"] for line in lines] == ["PT1.5S", "-PT1S", "P1DT1H1M1S"]


def _sometimes(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | value


_calls = st.lists(
    st.fixed_dictionaries(
        {}, optional={"id": _sometimes(st.text(max_size=4)), "args": _sometimes(st.text())}
    ),
    max_size=2,
)
_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool"])},
        optional={
            "content": _sometimes(st.text(max_size=8)),
            "tool_calls": _sometimes(_calls),
            "name": _sometimes(st.text(max_size=4)),
        },
    ),
    max_size=3,
)
_rows = st.fixed_dictionaries(
    {},
    optional={
        "messages": _messages,
        "n": _sometimes(st.integers(min_value=-(2**63), max_value=2**63 - 1)),
        "score": _sometimes(st.floats(allow_nan=False)),
        "source": _sometimes(st.text(max_size=6)),
        "meta": _sometimes(
            st.fixed_dictionaries(
                {},
                optional={"ok": _sometimes(st.booleans()), "tags": st.lists(st.text(max_size=3))},
            )
        ),
    },
)
"""Rows whose columns and keys come and go, each place of one type where it has a value."""


@given(rows=st.lists(_rows, max_size=12), batch=st.integers(min_value=1, max_value=4))
@example(  # pyarrow 26 casts a list of nulls to its own type as an invalid array
    rows=[{"messages": [{"role": "user"}, {"role": "user", "content": None}]}, {"n": 1}], batch=1
)
@example(rows=[{"meta": None}, {"meta": {}}], batch=1)  # written null, as in a first batch
def test_rows_whose_columns_and_keys_come_later_read_back_as_written(
    rows: list[dict[str, Any]], batch: int
) -> None:
    """Rows in = rows out: whatever batch brings a column or a key first, the Parquet file holds
    every row and every value (a key a row lacked reads back null), the same bytes each time."""
    files = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rows_module, "BATCH_ROWS", batch)
        for _ in range(2):
            stream = io.BytesIO()
            with RowWriter("parquet", stream, added=("kp_score",)) as writer:
                for index, row in enumerate(from_json(rows)):
                    writer.write(row, {"kp_score": float(index)})
            files.append(stream.getvalue())
    assert files[0] == files[1]
    table = pq.read_table(io.BytesIO(files[0]))
    assert table.schema.names[-1] == "kp_score"
    back = table.to_pylist()
    assert [row.pop("kp_score") for row in back] == [float(n) for n in range(len(rows))]
    assert [without_nulls(row) for row in back] == [without_nulls(row) for row in rows]


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.dictionaries(st.sampled_from(["a", "b", "c"]), json_values, max_size=3), max_size=10
    ),
    batch=st.integers(min_value=1, max_value=4),
)
def test_rows_of_any_values_come_back_whatever_their_types(
    rows: list[dict[str, Any]], batch: int
) -> None:
    """Rows in = rows out for any JSON values: a column whose values share no one type, in the
    first batch or a later one, is JSON text, and every value reads back as it was written."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(rows_module, "BATCH_ROWS", batch)
        out = Path(folder) / "out.parquet"
        with out.open("w+b") as stream, RowWriter("parquet", stream, added=("kp_score",)) as writer:
            for index, row in enumerate(from_json(rows)):
                writer.write(row, {"kp_score": float(index)})
        back = read_back(out)
    assert [row.pop("kp_score") for row in back] == [float(n) for n in range(len(rows))]
    # An integer past 64 bits in a JSON column reads back as a float, as JSON.parse reads it.
    assert without_nulls(back) == without_nulls(json_value(rows))
