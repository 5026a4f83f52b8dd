"""Tables of other libraries (Polars, DuckDB, a RecordBatchReader) given to a run through Arrow.

Any object with ``__arrow_c_stream__`` is read as its Arrow stream; a call that gives rows back
exports it once and gives a pyarrow Table. The class below stands for such a library, without
it: Polars' DataFrame, like it, iterates its columns, not its rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC
from typing import Any, cast

import pyarrow as pa
import pyarrow.dataset as pa_dataset
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse import sources
from knowledgepulse.errors import SettingTypeError
from knowledgepulse.runs import annotate, decontaminate, dedupe, items_of, redact, select, split
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer


def chat_row(number: int) -> dict[str, Any]:
    """An OpenAI-chat row: a request, a tool call and its result, an answer."""
    call = {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"order": number})},
    }
    return {
        "id": f"row-{number}",
        "task": f"task-{number % 4}",
        "messages": [
            {"role": "user", "content": f"Where is order #{number}?", "tool_calls": None},
            {"role": "assistant", "content": "Looking it up.", "tool_calls": [call]},
            {"role": "tool", "content": '{"ok": true}', "tool_calls": None},
            {"role": "assistant", "content": f"Order #{number} ships today.", "tool_calls": None},
        ],
    }


ROWS = [chat_row(number) for number in range(24)]
TABLE = pa.Table.from_pylist(ROWS)


class ArrowOnly:
    """Rows held by another library: Arrow data by ``__arrow_c_stream__``, columns by ``iter``.

    Each export is counted, and gives its batches as they are read (``read``: how many).
    """

    def __init__(self, table: pa.Table, batch_rows: int = 5) -> None:
        self.table = table
        self.batch_rows = batch_rows
        self.exports = 0
        self.read = 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.column_names)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        self.exports += 1

        def batches() -> Iterator[pa.RecordBatch]:
            for batch in self.table.to_batches(max_chunksize=self.batch_rows):
                self.read += 1
                yield batch

        reader = pa.RecordBatchReader.from_batches(self.table.schema, batches())
        return reader.__arrow_c_stream__(requested_schema)


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def test_a_table_given_as_arrow_data_is_annotated_as_the_pyarrow_table() -> None:
    """Every row back, as a pyarrow Table, with the scores of the same rows given as a Table;
    before, its columns were read as rows and none scored."""
    given = ArrowOnly(TABLE)
    annotated = annotate(given, scorer=scorer())
    assert isinstance(annotated, pa.Table)
    assert annotated.to_pylist() == annotate(TABLE, scorer=scorer()).to_pylist()
    assert annotated.column("kp_error").null_count == len(ROWS)
    assert given.exports == 1


CALLS: dict[str, Callable[[Any], Any]] = {
    "redact": lambda data: redact(data).data,
    "select": lambda data: select(data, budget=5, scorer=scorer()).rows,
    "dedupe": lambda data: dedupe(data, by="task", scorer=scorer()).kept_rows,
    "split": lambda data: split(data, test=0.25, scorer=scorer()).rows("test"),
    "decontaminate": lambda data: (
        decontaminate(data, against_texts=["Where is order #3?"], scorer=scorer()).kept_rows
    ),
}


@pytest.mark.parametrize("call", CALLS)
def test_every_call_exports_arrow_data_once_and_gives_a_table_like_the_tables(call: str) -> None:
    """Each call gives the rows a pyarrow Table of the same rows gives, reading the data once:
    a stream read again gives no row, and a query run again may give them in another order."""
    given = ArrowOnly(TABLE)
    got = CALLS[call](given)
    assert isinstance(got, pa.Table)
    assert got.to_pylist() == CALLS[call](TABLE).to_pylist()
    assert given.exports == 1


def test_a_record_batch_reader_given_to_annotate_gives_back_every_row() -> None:
    """A reader is read once, into the Table given back: no row is lost to a second reading."""
    reader = pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches(max_chunksize=7))
    annotated = annotate(reader, scorer=scorer())
    assert annotated.column("id").to_pylist() == [row["id"] for row in ROWS]


def test_text_held_as_views_is_given_back() -> None:
    """A table whose text is ``string_view`` (Polars' and DuckDB's export) gives its rows back:
    pyarrow has no ``take`` for views, which failed every call that gives rows back."""
    schema = pa.schema(
        [
            pa.field("id", pa.string_view()),
            pa.field("task", pa.string_view()),
            pa.field("messages", TABLE.schema.field("messages").type),
        ]
    )
    viewed = TABLE.cast(schema)
    annotated = annotate(ArrowOnly(viewed), scorer=scorer())
    assert annotated.column("id").to_pylist() == [row["id"] for row in ROWS]
    assert select(viewed, budget=3, scorer=scorer()).rows.num_rows == 3


@pytest.mark.parametrize("call", CALLS)
def test_a_category_whose_values_are_views_is_given_back(call: str) -> None:
    """A dictionary column of ``string_view`` values (a Polars ``Categorical`` or ``Enum``)
    comes back with its values: ``redact`` (and ``split(redact=...)``) made the table again
    from its rows, which pyarrow cannot do for such a column, and raised pyarrow's
    ``ArrowNotImplementedError`` with a traceback."""
    task = pa.array([row["task"] for row in ROWS]).dictionary_encode()
    viewed = TABLE.set_column(
        TABLE.schema.get_field_index("task"),
        "task",
        task.cast(pa.dictionary(pa.uint32(), pa.string_view())),
    )
    got = CALLS[call](ArrowOnly(viewed))
    assert pa.types.is_dictionary(got.schema.field("task").type)
    assert got.column("task").to_pylist() == CALLS[call](TABLE).column("task").to_pylist()


def test_arrow_data_is_read_a_batch_at_a_time() -> None:
    """items_of gives the first item having read one batch of the stream, not all of it."""
    given = ArrowOnly(TABLE, batch_rows=4)
    first = next(items_of(given))
    assert isinstance(first, TraceItem)
    assert first.row is not None
    assert first.row.value["id"] == "row-0"
    assert given.read == 1


def test_sources_convert_reads_a_table_that_gives_arrow_data() -> None:
    """sources.convert gives each row's trace; before, each column name was a bad record."""
    read = list(sources.convert(ArrowOnly(TABLE), source="openai-chat"))
    assert [item.row.value["id"] for item in read if isinstance(item, TraceItem) and item.row] == [
        row["id"] for row in ROWS
    ]


def test_one_column_of_arrow_data_is_refused_as_not_rows() -> None:
    """A column (a Polars Series, a ChunkedArray of numbers) says it is not rows."""
    with pytest.raises(SettingTypeError, match=r"data \(a ChunkedArray\) is one column"):
        annotate(pa.chunked_array([[1, 2, 3]]), scorer=scorer())


def test_a_pyarrow_dataset_is_refused_with_what_to_give_instead(tmp_path: Any) -> None:
    """A pyarrow dataset (no Arrow stream of its own) is told to give its table or files."""
    pq.write_table(TABLE, tmp_path / "rows.parquet")
    with pytest.raises(SettingTypeError, match=r"data.to_table\(\), or give the paths"):
        annotate(pa_dataset.dataset(tmp_path / "rows.parquet"), scorer=scorer())


def test_a_lazy_query_is_refused_with_what_to_give_instead() -> None:
    """An object with ``collect`` (a Polars LazyFrame) is told to run its query first."""

    class Lazy:
        def collect(self) -> ArrowOnly:
            return ArrowOnly(TABLE)

    with pytest.raises(SettingTypeError, match=r"a Polars DataFrame, a DuckDB relation.*collect"):
        annotate(cast("Any", Lazy()), scorer=scorer())


@settings(max_examples=15, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=len(ROWS)),
    batch_rows=st.integers(min_value=1, max_value=9),
)
def test_arrow_data_annotates_as_its_table_in_any_batches(count: int, batch_rows: int) -> None:
    """However the stream is cut into batches, annotate gives what the Table gives."""
    table = TABLE.slice(0, count)
    got = annotate(ArrowOnly(table, batch_rows=batch_rows), scorer=scorer())
    assert got.to_pylist() == annotate(table, scorer=scorer()).to_pylist()


_ROWS = 6
"""The rows of a drawn table: the first of ROWS, each with drawn columns beside its own."""


def _cells(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.none() | values, min_size=_ROWS, max_size=_ROWS)


_TYPED_COLUMNS: list[tuple[Any, st.SearchStrategy[list[Any]]]] = [
    (pa.int64(), _cells(st.integers(-(2**63), 2**63 - 1))),
    (pa.float64(), _cells(st.floats(allow_nan=False))),
    (pa.string(), _cells(st.text(max_size=8))),
    (pa.large_string(), _cells(st.text(max_size=8))),
    (pa.bool_(), _cells(st.booleans())),
    (pa.binary(), _cells(st.binary(max_size=8))),
    (pa.list_(pa.int64()), _cells(st.lists(st.none() | st.integers(0, 9), max_size=3))),
    (
        pa.struct([("a", pa.int64()), ("b", pa.string())]),
        _cells(
            st.fixed_dictionaries({"a": st.none() | st.integers(0, 5), "b": st.text(max_size=3)})
        ),
    ),
    (pa.timestamp("us", tz="UTC"), _cells(st.datetimes(timezones=st.just(UTC)))),
    (pa.decimal128(8, 2), _cells(st.decimals(-1000, 1000, places=2))),
]


@st.composite
def typed_tables(draw: st.DrawFn) -> pa.Table:
    """The first rows of TABLE with one to three drawn columns of Arrow's common types."""
    table = TABLE.slice(0, _ROWS)
    for number in range(draw(st.integers(min_value=1, max_value=3))):
        kind, cells = draw(st.sampled_from(_TYPED_COLUMNS))
        table = table.append_column(f"x{number}", pa.array(draw(cells), kind))
    return table


@settings(max_examples=20, deadline=None)
@given(table=typed_tables())
def test_a_tables_own_columns_come_back_with_their_types_and_values(table: pa.Table) -> None:
    """annotate gives every row back and select its picks, each table column as it was (type,
    values, an infinite float's row too), the kp_ columns after them."""
    annotated = annotate(table, scorer=scorer(), on_problem=lambda _: None)
    assert annotated.select(table.column_names).equals(table)
    picked = select(table, scorer=scorer(), on_problem=lambda _: None).rows
    place = {row_id: index for index, row_id in enumerate(table.column("id").to_pylist())}
    order = [place[row_id] for row_id in picked.column("id").to_pylist()]
    assert picked.select(table.column_names).equals(table.take(order))
