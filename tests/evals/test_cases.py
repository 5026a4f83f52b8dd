"""Loading cases from JSON, JSON Lines and YAML, with malformed ones located and kept."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from knowledgepulse.errors import CaseValidationError
from knowledgepulse.evals.cases import LoadedCase, MalformedCase, load_cases, parse_case
from tests.evals.builders import op, page

EXAMPLES = Path(__file__).parents[2] / "examples" / "evals"


def case_json(case_id: str = "c1", **changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "id": case_id,
        "pages": [page("p1", b1="Cart")],
        "actual": {"operations": [op("update", "b1", content="Basket")]},
        "expected": {"operations": [op("update", "b1")]},
    }
    return {**data, **changes}


def test_jsonl_cases_load_in_order_with_their_lines(tmp_path: Path) -> None:
    """Each line is one case, located at its line."""
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(case_json(f"c{i}")) for i in range(3)) + "\n")
    loaded = load_cases(path)
    assert all(isinstance(item, LoadedCase) for item in loaded)
    assert [(item.case.id, item.location.line) for item in loaded] == [  # type: ignore[union-attr]
        ("c0", 1),
        ("c1", 2),
        ("c2", 3),
    ]


def test_malformed_line_is_reported_with_file_line_and_path_and_others_load(
    tmp_path: Path,
) -> None:
    """A bad case becomes a MalformedCase with FILE:LINE: PATH; the next case still loads."""
    path = tmp_path / "cases.jsonl"
    bad = case_json("bad", actual={"operations": [op("insert", "b1", position="inside")]})
    path.write_text(f"{json.dumps(bad)}\n{{not json\n{json.dumps(case_json('good'))}\n")
    first, second, third = load_cases([path])
    assert isinstance(first, MalformedCase)
    assert first.case_id == "bad"
    assert [str(p) for p in first.problems] == [
        f"{path}:1: actual.operations[0].position: got \"inside\"; expected 'before' or 'after'"
    ]
    assert isinstance(second, MalformedCase)
    assert second.case_id is None
    assert str(second.problems[0]).startswith(f"{path}:2: invalid JSON")
    assert isinstance(third, LoadedCase)
    assert third.case.id == "good"


def test_yaml_problems_point_at_the_line_of_the_bad_key(tmp_path: Path) -> None:
    """In YAML a problem deep inside a case names the line of that key."""
    path = tmp_path / "cases.yaml"
    path.write_text(
        textwrap.dedent(
            """
            - id: c1
              pages:
                - id: p1
                  blocks:
                    - {id: b1, type: paragraph, content: Cart}
              actual:
                durationMs: -5
              expected: {}
            """
        ).lstrip()
    )
    [malformed] = load_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert [str(p) for p in malformed.problems] == [
        f"{path}:7: actual.durationMs: got -5; expected greater than or equal to 0"
    ]


def test_json_list_of_cases_loads_each(tmp_path: Path) -> None:
    """A JSON file may hold a list of cases."""
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([case_json("a"), case_json("b")], indent=2))
    assert [item.case.id for item in load_cases(path) if isinstance(item, LoadedCase)] == [
        "a",
        "b",
    ]


def test_parse_case_raises_with_every_problem() -> None:
    """parse_case on bad data lists each problem with its path."""
    with pytest.raises(CaseValidationError) as raised:
        parse_case({"id": 3, "pages": []})
    paths = [p.path for p in raised.value.problems]
    assert paths[:2] == ["id", "pages"]
    assert "actual" in paths


def test_example_case_files_load_and_the_invalid_one_has_four_malformed_cases() -> None:
    """The shipped examples: all valid in cases.*, four malformed in invalid-cases.jsonl."""
    valid = load_cases([EXAMPLES / "cases.yaml", EXAMPLES / "cases.jsonl"])
    assert len(valid) == 9
    assert all(isinstance(item, LoadedCase) for item in valid)
    invalid = load_cases(EXAMPLES / "invalid-cases.jsonl")
    assert [type(item).__name__ for item in invalid] == [
        "LoadedCase",
        "MalformedCase",
        "MalformedCase",
        "MalformedCase",
        "MalformedCase",
    ]
