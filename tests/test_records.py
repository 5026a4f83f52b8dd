"""Reading JSON, JSON Lines and YAML records with their locations."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Problem, Record, parse_records, read_records


def parsed(text: str, fmt: str, name: str = "in") -> list[Record | Problem]:
    return list(parse_records(text, name, fmt))  # type: ignore[arg-type]


def test_json_list_elements_know_their_lines() -> None:
    """Each element of a top-level JSON list is a record that starts on its own line."""
    items = parsed('[\n  {"a": 1},\n\n  {"b": 2}\n]\n', "json")
    assert [(r.location.line, r.location.index) for r in items if isinstance(r, Record)] == [
        (2, 0),
        (4, 1),
    ]


def test_json_single_document_is_one_record() -> None:
    """A JSON file holding one object is one record."""
    items = parsed('\n{"a": [1, 2]}\n', "json")
    assert len(items) == 1
    assert isinstance(items[0], Record)
    assert items[0].value == {"a": [1, 2]}
    assert items[0].location.line == 2


def test_jsonl_bad_line_is_reported_and_the_rest_read() -> None:
    """A broken JSON Lines line becomes a problem at its line; the lines after it are read."""
    items = parsed('{"a": 1}\n{"b": \n\n{"c": 3}\n', "jsonl", "x.jsonl")
    assert isinstance(items[1], Problem)
    assert str(items[1]).startswith("x.jsonl:2: invalid JSON")
    assert isinstance(items[2], Record)
    assert items[2].location.line == 4


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_problems_with_their_path(literal: str) -> None:
    """NaN, infinities and overflowing literals are rejected with the JSON path that holds them."""
    items = parsed(f'{{"steps": [{{"latency_ms": {literal}}}]}}\n', "jsonl", "t.jsonl")
    assert [str(i) for i in items] == [
        "t.jsonl:1: steps[0].latency_ms: "
        "NaN and infinite numbers are not valid JSON; use a finite number"
    ]


def test_yaml_records_know_the_line_of_each_key() -> None:
    """A problem deep inside a YAML record points at the line of that key."""
    (record,) = parsed("scorers:\n  - type: a\n    treshold: 2\n", "yaml", "s.yaml")
    assert isinstance(record, Record)
    assert str(record.problem(("scorers", 0, "treshold"), "unknown key")) == (
        "s.yaml:3: scorers[0].treshold: unknown key"
    )


def test_yaml_list_gives_one_record_per_item() -> None:
    """A top-level YAML list yields one record per item, with item-relative paths and lines."""
    items = parsed("- id: a\n- id: b\n  x: 1\n", "yaml", "c.yaml")
    second = items[1]
    assert isinstance(second, Record)
    assert second.value == {"id": "b", "x": 1}
    assert second.locate(("x",)).line == 3


def test_yaml_does_not_construct_python_objects() -> None:
    """YAML is loaded safely: a python/object tag is a problem, not code execution."""
    items = parsed("!!python/object/apply:os.system ['echo hi']\n", "yaml", "evil.yaml")
    assert isinstance(items[0], Problem)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    """A file that does not exist is one clear error naming it."""
    with pytest.raises(InputFileError, match="no such file"):
        list(read_records(tmp_path / "nope.jsonl"))


def test_stdin_is_sniffed_as_jsonl(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input with one object a line is read as JSON Lines."""
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": 1}\n{"a": 2}\n'))
    items = list(read_records("-"))
    assert [str(i.location) for i in items] == ["<stdin>:1", "<stdin>:2"]


def test_stdin_pretty_json_is_one_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input holding one pretty-printed object is read as one JSON document."""
    monkeypatch.setattr("sys.stdin", io.StringIO('{\n  "a": 1\n}\n'))
    items = list(read_records("-"))
    assert len(items) == 1
    assert isinstance(items[0], Record)


def test_yaml_is_refused_where_only_json_is_accepted(tmp_path: Path) -> None:
    """A YAML file given where JSON is expected is an error that names the accepted formats."""
    path = tmp_path / "t.yaml"
    path.write_text("a: 1\n")
    with pytest.raises(InputFileError, match="use json, jsonl"):
        list(read_records(path, formats=("json", "jsonl")))
