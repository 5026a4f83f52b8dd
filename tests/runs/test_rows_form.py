"""The form rows are written in, and the parameter rule it keeps: Parquet needs a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import ParameterConflictError
from knowledgepulse.runs.read import trace_options
from knowledgepulse.runs.write import rows_form
from knowledgepulse.sources import RowOptions, TraceOptions


def test_parquet_rows_without_an_output_name_the_output_parameter(tmp_path: Path) -> None:
    """Parquet input to a stream is refused by a conflict naming ``output``, as Python spells it."""
    source = tmp_path / "rows.parquet"
    source.write_bytes(b"PAR1")  # the form is told by the first bytes
    with pytest.raises(ParameterConflictError, match=r"give output='FILE\.parquet'"):
        rows_form(None, [str(source)])


def test_rows_go_out_as_parquet_to_a_parquet_file_else_in_the_other_form() -> None:
    """A .parquet output or first input gives Parquet; anything else the form asked for."""
    assert rows_form(Path("out.parquet"), ["rows.jsonl"]) == "parquet"
    assert rows_form(None, ["rows.jsonl"], "json") == "json"


def test_trace_options_are_none_when_nothing_is_given() -> None:
    """No domain, confidence or column given (``None`` values) gives no options at all."""
    assert trace_options(domain=None, confidence=None, id_field=None) is None


def test_trace_options_keep_the_row_columns_given() -> None:
    """A given row column lands in the rows' options; the ones not given stay guessed."""
    options = trace_options(domain="code", id_field="uid", task_field=None)
    assert options == TraceOptions(domain="code", rows=RowOptions(id_field="uid"))
