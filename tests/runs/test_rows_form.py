"""The form rows are written in, and the parameter rule it keeps: Parquet needs a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import ParameterConflictError
from knowledgepulse.runs.read import trace_options
from knowledgepulse.runs.write import check_output_name, output_form, rows_form
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


@pytest.mark.parametrize("name", ["out.arrow", "out.CSV", "out.feather", "out.zip"])
def test_an_output_named_after_a_form_not_written_is_refused(name: str) -> None:
    """Rows or traces are never written under another format's suffix as JSON Lines."""
    with pytest.raises(ParameterConflictError, match=r"output .* is not a form written here"):
        rows_form(Path(name), ["rows.jsonl"])
    with pytest.raises(ParameterConflictError, match=r"\.jsonl, \.ndjson, \.json"):
        output_form(Path(name), [], rows=False)


def test_traces_and_rows_to_a_parquet_name_are_parquet() -> None:
    """A .parquet name gives Parquet, for rows and for traces (a table of traces) alike."""
    assert output_form(Path("out.parquet"), [], rows=False) == "parquet"
    assert output_form(Path("out.parquet"), [], rows=True) == "parquet"


@pytest.mark.parametrize("name", ["out.jsonl", "out.json", "out", "/dev/stdout", "tmp.Xy12ab"])
def test_a_jsonl_name_or_one_of_no_known_form_is_written_as_json_lines(name: str) -> None:
    """What a suffix does not name (none, a mktemp name) is written as it was: JSON Lines."""
    check_output_name(Path(name), parquet=False)
    assert output_form(Path(name), [], rows=False) == "jsonl"


def test_trace_options_are_none_when_nothing_is_given() -> None:
    """No domain, confidence or column given (``None`` values) gives no options at all."""
    assert trace_options(domain=None, confidence=None, id_field=None) is None


def test_trace_options_keep_the_row_columns_given() -> None:
    """A given row column lands in the rows' options; the ones not given stay guessed."""
    options = trace_options(domain="code", id_field="uid", task_field=None)
    assert options == TraceOptions(domain="code", rows=RowOptions(id_field="uid"))
