"""Loading cases from JSON, JSON Lines and YAML, with malformed ones located and kept."""

from __future__ import annotations

import gzip
import io
import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.errors import CaseValidationError
from knowledgepulse.evals.cases import (
    CaseInput,
    FileProblem,
    LoadedCase,
    MalformedCase,
    fit_cases,
    load_cases,
    parse_case,
)
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.suite import preset
from knowledgepulse.records import Record
from knowledgepulse.records.readers import read_records
from tests.evals.builders import op, page

EXAMPLES = Path(__file__).parents[2] / "examples" / "evals"


def bulk_cases(paths: Path | list[Path]) -> list[CaseInput]:
    """The cases of the files, checked against a suite that reads the bulk-edit form."""
    return list(fit_cases(load_cases(paths), preset("standard")))


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
    first, second, third = bulk_cases([path])
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
    [malformed] = bulk_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert [str(p) for p in malformed.problems] == [
        f"{path}:7: actual.durationMs: got -5; expected greater than or equal to 0"
    ]


def test_yaml_values_are_read_as_written_not_as_yaml_11_numbers(tmp_path: Path) -> None:
    """``1:30`` was 90 and ``010`` was 8 (YAML 1.1); now the text, and the decimal number."""
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
                durationMs: 1:30
              expected: {}
            - id: c2
              pages:
                - id: p1
                  blocks:
                    - {id: b1, type: paragraph, content: Cart}
              actual:
                operations:
                  - {type: update, targetIndex: 010, content: 12:30}
              expected: {}
            """
        ).lstrip()
    )
    malformed, loaded = bulk_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert [str(p) for p in malformed.problems] == [
        f'{path}:7: actual.durationMs: got "1:30"; expected a valid number'
    ]
    assert isinstance(loaded, LoadedCase)
    assert loaded.case.actual == {
        "operations": [{"type": "update", "targetIndex": 10, "content": "12:30"}]
    }


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
        parse_case({"id": 3, "pages": "p1", "expect": {}})
    assert [p.path for p in raised.value.problems] == ["id", "pages", "expect"]


_KEYS = st.sampled_from(["dict", "list", "float", "durationMs", "a b", "[key]"]) | st.text(
    max_size=4
)
_STEPS = st.lists(st.one_of(_KEYS, st.integers(0, 2)), max_size=5)


def _holding(path: list[str | int], leaf: object) -> object:
    """A JSON value with ``leaf`` at ``path`` (a list index pads the list with nulls)."""
    value = leaf
    for step in reversed(path):
        value = [*([None] * step), value] if isinstance(step, int) else {step: value}
    return value


@given(part=st.sampled_from(["input", "actual", "expected"]), path=_STEPS)
def test_a_value_json_refuses_is_told_at_its_json_path(part: str, path: list[str | int]) -> None:
    """A NaN anywhere in a case's JSON data is located by its path, without pydantic's type tags."""
    with pytest.raises(CaseValidationError) as raised:
        parse_case({"id": "c", part: _holding(path, float("nan"))})
    [problem] = raised.value.problems
    assert problem.path == format_path((part, *path))
    assert problem.message.startswith("NaN and infinite numbers are not allowed")


@pytest.mark.parametrize(
    ("expected_op", "told"),
    [
        (
            op("update", "B1"),
            "targetBlockId: 'B1' names no block of page 'p1' (did you mean 'b1'?)",
        ),
        (op("delete", None, index=5), "targetIndex: 5 names no block of page 'p1' (blocks 'b1')"),
        (op("update", "b1", page="p9"), "pageId: 'p9' is no page of the case (its pages: 'p1')"),
    ],
)
def test_an_expected_target_the_pages_lack_is_a_warning(
    tmp_path: Path, expected_op: dict[str, object], told: str
) -> None:
    """A typo in an expected target is told as a warning at its path; the case is still scored."""
    data = case_json(expected={"operations": [expected_op]})
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(data) + "\n")
    [loaded] = bulk_cases(path)
    assert isinstance(loaded, LoadedCase)
    [warning] = loaded.warnings
    assert warning.warning
    assert str(warning).startswith(f"{path}:1: warning: expected.operations[0].{told}")


@pytest.mark.parametrize(
    ("changes", "told"),
    [
        (
            {"actual": {"operations": [op("Update", "b1", content="Basket")]}},
            "actual.operations[0].type: type 'Update' is unknown (known types: insert, update, "
            "delete). Did you mean 'update'? The operation is scored as made of an unknown type",
        ),
        (
            {"actual": {"operations": [op("updte", "b1", content="Basket")]}},
            "actual.operations[0].type: type 'updte' is unknown (known types: insert, update, "
            "delete). Did you mean 'update'?",
        ),
        (
            {"expected": {"operations": [op("Delete", "b1")]}},
            "expected.operations[0].type: type 'Delete' is unknown (known types: insert, update, "
            "delete). Did you mean 'delete'? No operation can match it",
        ),
        (
            {"expected": {"contentPatterns": {"p2": ["Basket"]}}},
            "expected.contentPatterns.p2: 'p2' is no page of the case (its pages: 'p1'); its "
            "patterns are searched in no content and count as not found, so check the id",
        ),
    ],
)
def test_a_misspelt_type_or_pattern_page_is_a_warning_and_scores_stay(
    tmp_path: Path, changes: dict[str, object], told: str
) -> None:
    """An unknown operation type (data, by the spec) or a pattern page the case lacks is warned
    about at its file, line and path, with the fix; the case is scored as without the warning."""
    data = {**case_json(), **changes}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(data) + "\n")
    [loaded] = bulk_cases(path)
    assert isinstance(loaded, LoadedCase)
    [warning] = loaded.warnings
    assert warning.warning
    assert str(warning).startswith(f"{path}:1: warning: {told}")
    [result] = run_suite(preset("standard"), path).cases
    assert not result.malformed
    assert result.warnings == (warning,)
    scored = evaluate_case(preset("standard"), loaded.case)
    assert [(o.key, o.score) for o in result.outcomes] == [
        (o.key, o.score) for o in scored.outcomes
    ]


def test_known_types_and_pattern_pages_of_the_case_give_no_warning(tmp_path: Path) -> None:
    """Every known type, and patterns keyed by a page the case has, warn of nothing."""
    actual = [op("insert", "b1", content="x"), op("update", "b1", content="y"), op("delete", "b1")]
    data = case_json(
        actual={"operations": actual},
        expected={"operations": [op("update", "b1")], "contentPatterns": {"p1": ["x"]}},
    )
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(data) + "\n")
    [loaded] = bulk_cases(path)
    assert isinstance(loaded, LoadedCase)
    assert loaded.warnings == ()


def test_expected_targets_the_pages_have_give_no_warning(tmp_path: Path) -> None:
    """By id or by index, a block that is on its page warns of nothing."""
    ops = [op("update", "b1"), op("update", None, index=0), op("update", "b1", page="p1")]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(case_json(expected={"operations": ops})) + "\n")
    [loaded] = bulk_cases(path)
    assert isinstance(loaded, LoadedCase)
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    ("changes", "told"),
    [
        ({"expectd": {}}, "expectd: unknown field; did you mean 'expected'?"),
        ({"pages": [{**page("p1", b1="x"), "titel": "T"}]}, "pages[0].titel: unknown field; did"),
        (
            {"expected": {"operations": [{**op("update", "b1"), "postion": "before"}]}},
            "expected.operations[0].postion: unknown field; did you mean 'position'?",
        ),
        (
            {"expected": {"operations": [{"type": "update", "targetBlockID": "b1"}]}},
            "expected.operations[0].targetBlockID: unknown field; did you mean 'targetBlockId'?",
        ),
        ({"zzz": 1}, "zzz: unknown field; remove it or check its spelling"),
    ],
)
def test_an_unknown_key_names_the_key_its_object_takes(
    tmp_path: Path, changes: dict[str, object], told: str
) -> None:
    """A misspelt key of a case, a page or an expected operation names the key meant, if any."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({**case_json(), **changes}) + "\n")
    [malformed] = bulk_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert any(str(p).startswith(f"{path}:1: {told}") for p in malformed.problems)


def test_any_json_output_and_expectation_make_a_valid_case() -> None:
    """Without a suite that reads the bulk-edit form, a text output and no pages are fine."""
    case = parse_case(
        {"id": "s1", "instruction": "Summarise", "input": "Long text.", "actual": "Short."}
    )
    assert (case.actual, case.expected, case.pages, case.has_actual) == ("Short.", None, [], True)
    assert not parse_case({"id": "s2"}).has_actual


def test_example_case_files_load_and_the_invalid_one_has_four_malformed_cases() -> None:
    """The shipped examples: all valid in cases.*, four malformed in invalid-cases.jsonl."""
    valid = bulk_cases([EXAMPLES / "cases.yaml", EXAMPLES / "cases.jsonl"])
    assert len(valid) == 9
    assert all(isinstance(item, LoadedCase) for item in valid)
    invalid = bulk_cases(EXAMPLES / "invalid-cases.jsonl")
    assert [type(item).__name__ for item in invalid] == [
        "LoadedCase",
        "MalformedCase",
        "MalformedCase",
        "MalformedCase",
        "MalformedCase",
    ]


# --- patterns, duplicate ids, unreadable files -----------------------------------------------


def write_jsonl(path: Path, *cases: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return path


def test_an_invalid_regex_makes_its_case_malformed_at_the_patterns_path(tmp_path: Path) -> None:
    """An invalid pattern is a located problem before the case runs, not a hidden detail."""
    path = tmp_path / "cases.yaml"
    path.write_text(
        textwrap.dedent(
            """
            - id: c1
              pages: [{id: p1, blocks: [{id: b1, type: p, content: Cart}]}]
              actual: {operations: []}
              expected:
                contentPatterns:
                  - Cart
                  - (unclosed
            """
        ).lstrip("\n")
    )
    [malformed] = load_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert malformed.case_id == "c1"
    [problem] = malformed.problems
    assert str(problem) == (
        f"{path}:7: expected.contentPatterns[1]: not a valid regular expression: missing ) at "
        "position 9; fix the pattern (a backslash makes a special character literal, as in '\\(')"
    )


def test_an_invalid_regex_does_not_hide_what_the_suite_finds_wrong_in_the_case(
    tmp_path: Path,
) -> None:
    """Every problem of the case at once: fixing the pattern must not reveal a bad index next."""
    path = tmp_path / "cases.yaml"
    path.write_text(
        textwrap.dedent(
            """
            - id: c1
              pages: [{id: p1, blocks: [{id: b1, type: p, content: Cart}]}]
              actual: {operations: [{type: update, targetIndex: 2.0, content: x}]}
              expected:
                contentPatterns: [(unclosed]
            """
        ).lstrip("\n")
    )
    [malformed] = bulk_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert malformed.case_id == "c1"
    assert [(p.location.line, p.path) for p in malformed.problems] == [
        (3, "actual.operations[0].targetIndex"),
        (5, "expected.contentPatterns[0]"),
    ]


def test_a_compile_bomb_makes_its_case_malformed_quickly(tmp_path: Path) -> None:
    """The bound refuses the pattern by its page's path; the next case still loads."""
    bomb = case_json(
        "bomb",
        expected={"operations": [], "contentPatterns": {"p1": ["(?:(?:a{1000}){1000}){100}b"]}},
    )
    path = write_jsonl(tmp_path / "cases.jsonl", bomb, case_json("ok"))
    malformed, loaded = load_cases(path)
    assert isinstance(malformed, MalformedCase)
    assert malformed.problems[0].path == "expected.contentPatterns.p1[0]"
    assert malformed.problems[0].message.startswith("pattern refused: the pattern's repeats")
    assert isinstance(loaded, LoadedCase)


def test_a_repeated_case_id_is_a_warning_on_the_later_case_even_across_files(
    tmp_path: Path,
) -> None:
    """Duplicate ids are said, located at the later id, and reject nothing."""
    first = write_jsonl(tmp_path / "a.jsonl", case_json("same"), case_json("other"))
    second = write_jsonl(tmp_path / "b.jsonl", case_json("same"))
    loaded = load_cases([first, second])
    assert all(isinstance(item, LoadedCase) for item in loaded)
    assert [len(item.warnings) for item in loaded] == [0, 0, 1]  # type: ignore[union-attr]
    [warning] = loaded[2].warnings  # type: ignore[union-attr]
    assert warning.warning
    assert str(warning) == (
        f"{second}:1: warning: id: the case id 'same' is also used at {first}:1; give each case "
        "its own id: reports tell cases apart by it, and a comparison matches them by it, so "
        "this run's JSON report cannot be a baseline"
    )


def test_a_file_named_twice_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Overlapping globs name a file twice: its cases count once, with no warning of themselves."""
    monkeypatch.chdir(tmp_path)
    first = write_jsonl(tmp_path / "a.jsonl", case_json("one"), case_json("two"))
    other = write_jsonl(tmp_path / "b.jsonl", case_json("three"))
    loaded = load_cases([first, other, "a.jsonl", f"{tmp_path}/./a.jsonl"])
    assert [item.case.id for item in loaded] == ["one", "two", "three"]  # type: ignore[union-attr]
    assert [item.location.file for item in loaded] == [str(first)] * 2 + [str(other)]
    assert not any(item.warnings for item in loaded)  # type: ignore[union-attr]


def test_a_yaml_syntax_error_is_a_file_problem_not_a_case(tmp_path: Path) -> None:
    """The file could not be read: that is not "a malformed case", and the cases before stay."""
    path = tmp_path / "cases.yaml"
    path.write_text(
        "- id: ok\n  pages: [{id: p, blocks: []}]\n  actual: {}\n  expected: {}\n- id: [\n"
    )
    loaded, problem = load_cases(path)
    assert isinstance(loaded, LoadedCase)
    assert isinstance(problem, FileProblem)
    assert (problem.location.line, problem.location.index) == (6, None)
    assert problem.problem.message.startswith("invalid YAML: ")


def test_every_problem_of_one_yaml_record_makes_one_malformed_case(tmp_path: Path) -> None:
    """A repeated key and a NaN in the same record: one case, two problems."""
    path = tmp_path / "cases.yaml"
    path.write_text("- id: a\n  id: b\n  x: .nan\n- id: c\n  y: .inf\n")
    first, second = load_cases(path)
    assert isinstance(first, MalformedCase)
    assert [p.path for p in first.problems] == ["id", "x"]
    assert isinstance(second, MalformedCase)
    assert [p.path for p in second.problems] == ["y"]


@pytest.mark.parametrize(
    "bad",
    [
        "  id: again",  # a repeated key
        "  x: !!binary aGVsbG8=",  # a tag JSON has no value for
        "  x: .nan",  # a number JSON has not
    ],
)
def test_a_yaml_case_the_reader_refuses_keeps_its_id_and_start_line(
    tmp_path: Path, bad: str
) -> None:
    """A case refused while read is named by its readable id, at its own line, not '(no id)'."""
    path = tmp_path / "cases.yaml"
    path.write_text(f"- id: a\n- id: b\n  expected: {{}}\n{bad}\n- id: b\n")
    _, refused, later = load_cases(path)
    assert isinstance(refused, MalformedCase)
    assert (refused.case_id, refused.location.line) == ("b", 2)
    assert refused.problems[0].location.line == 4
    # Known by its id, the case is the first 'b': the later one is warned of as its repeat.
    assert isinstance(later, MalformedCase | LoadedCase)
    assert [str(w.location) for w in later.warnings] == [f"{path}:5"]


@pytest.mark.parametrize(
    "bad",
    [
        '"expected": {"a": NaN}',  # a number JSON has not
        '"expected": {"a": -Infinity}',
        '"expected": {"a": 1e999}',  # a number too large for a float
    ],
)
@pytest.mark.parametrize(
    ("name", "cases"),
    [
        ("cases.jsonl", '{{"id": "a"}}\n{{"id": "b", {bad}}}\n{{"id": "b"}}\n{{"id": [NaN]}}\n'),
        (
            "cases.json",
            '[{{"id": "a"}},\n {{"id": "b", {bad}}},\n {{"id": "b"}},\n {{"id": [NaN]}}]',
        ),
    ],
)
def test_a_case_the_reader_refuses_keeps_its_id(
    tmp_path: Path, name: str, cases: str, bad: str
) -> None:
    """A JSON Lines case, or one of a JSON list, refused while read is named by the id its line
    shows, at that line, not '(no id)'."""
    path = tmp_path / name
    path.write_text(cases.format(bad=bad))
    _, refused, later, nameless = load_cases(path)
    assert isinstance(refused, MalformedCase)
    assert (refused.case_id, refused.location.line) == ("b", 2)
    assert refused.problems[0].path == "expected.a"
    # Known by its id, the case is the first 'b': the later one is warned of as its repeat.
    assert isinstance(later, MalformedCase | LoadedCase)
    assert [str(w.location) for w in later.warnings] == [f"{path}:3"]
    assert isinstance(nameless, MalformedCase)
    assert nameless.case_id is None


def test_a_json_case_document_the_reader_refuses_keeps_its_id(tmp_path: Path) -> None:
    """A JSON file of one case refused while read (a nested NaN) is named by its id."""
    path = tmp_path / "case.json"
    path.write_text('{"id": "b",\n "expected": {"a": NaN}}\n')
    [refused] = load_cases(path)
    assert isinstance(refused, MalformedCase)
    assert (refused.case_id, refused.location.line) == ("b", 1)
    assert [(str(p.location), p.path) for p in refused.problems] == [(f"{path}:1", "expected.a")]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("cases.jsonl", '{"id": "a", "expected": NaN}\n{"id": "b"}\n'),
        ("cases.json", '[{"id": "a", "expected": NaN}, {"id": "b"}]'),
        ("case.json", '{"id": "a", "expected": NaN}'),
        ("cases.yaml", "- id: a\n  expected: .nan\n- id: b\n"),
    ],
)
def test_a_case_s_own_nan_is_refused_in_every_format(tmp_path: Path, name: str, text: str) -> None:
    """A NaN is no expected output: a case's own field holding one is refused, not read as null.

    Only a dataset row's own NaN is a missing cell (read as null); a case is none.
    """
    path = tmp_path / name
    path.write_text(text)
    refused, *_ = load_cases(path)
    assert isinstance(refused, MalformedCase)
    assert refused.case_id == "a"
    assert [(p.path, p.message) for p in refused.problems] == [
        ("expected", "NaN and infinite numbers are not valid JSON; use a finite number")
    ]
    # The same text read as a dataset's rows keeps the rule for rows: the cell is null.
    if not name.endswith(".yaml"):
        first = next(iter(read_records(path)))
        assert isinstance(first, Record)
        assert first.value == {"id": "a", "expected": None}


def test_a_readers_warning_rides_with_its_case(tmp_path: Path) -> None:
    r"""An unpaired ``\ud800`` escape is read as U+FFFD; the case carries the warning."""
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case_json("x\ud800")) + "\n")
    [loaded] = load_cases(path)
    assert isinstance(loaded, LoadedCase)
    assert loaded.case.id == "x\ufffd"
    assert [w.path for w in loaded.warnings] == ["id"]


@pytest.mark.parametrize("case_id", ["", "  ", "\n\t"])
def test_a_blank_case_id_makes_its_case_malformed_with_no_id(tmp_path: Path, case_id: str) -> None:
    """Reports and pytest name a case by its id: an id with no visible character is refused."""
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case_json(case_id)) + "\n" + json.dumps(case_json("ok")) + "\n")
    bad, good = load_cases(path)
    assert isinstance(bad, MalformedCase)
    assert bad.case_id is None
    assert [f"{p.path}: {p.message}" for p in bad.problems] == [
        f"id: got {json.dumps(case_id)}; expected a name that is not blank"
    ]
    assert isinstance(good, LoadedCase)


@pytest.mark.parametrize("case_id", ["ケース 1", "a::b", " padded ", "tab\tin", "x\r"])
def test_a_case_id_with_a_visible_character_is_valid(case_id: str) -> None:
    """Unicode, spaces, controls and punctuation are fine in an id (reports escape controls)."""
    assert parse_case(case_json(case_id)).id == case_id


@pytest.mark.parametrize("given_as", ["file", "gzip", "stdin"])
def test_a_single_json_case_s_problems_name_their_key_s_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given_as: str
) -> None:
    """One pretty-printed JSON case, a file, a .gz or standard input: the problem is at its
    key's line, as a JSON suite's are; before, every one was at line 1."""
    text = json.dumps(case_json(actual={"durationMs": -5, "operations": []}), indent=2)
    path = tmp_path / "case.json"
    if given_as == "gzip":
        path = tmp_path / "case.json.gz"
        path.write_bytes(gzip.compress(text.encode()))
    elif given_as == "stdin":
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
    else:
        path.write_text(text)
    [malformed] = bulk_cases(Path("-") if given_as == "stdin" else path)
    assert isinstance(malformed, MalformedCase)
    [problem] = malformed.problems
    assert problem.path == "actual.durationMs"
    assert text.splitlines()[(problem.location.line or 0) - 1].strip() == '"durationMs": -5,'
