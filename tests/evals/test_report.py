"""The JSON report model: written from a run, read back from a file, the same model both ways."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import InputFileError, ReportFileError
from knowledgepulse.evals import evaluate
from knowledgepulse.evals.cases import LoadedCase, MalformedCase, load_cases
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.report import (
    NESTED_TOO_DEEP,
    REFERS_TO_ITSELF,
    EvalReport,
    json_data,
    load_report,
    parse_report,
)
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.scorer import ScoreResult, details_diagnosis
from knowledgepulse.evals.suite import load_suite
from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.records import Location, Problem
from knowledgepulse.records.json_values import MAX_NESTING
from knowledgepulse.reports.evals import indented_json, to_json
from tests.evals.builders import cases, make_suite
from tests.evals.test_evaluate import TEXT_SUITE, text_case
from tests.paths import REPO

SUITE = make_suite(
    {"type": "operation-accuracy"},
    {"type": "content-quality", "name": "content", "weight": 2},
    {"type": "anti-hallucination"},
    name="demo",
)
EXAMPLES = REPO / "examples" / "evals"


def rewritten(text: str) -> str:
    """A report's text read back into the model and written again."""
    return indented_json(parse_report(json.loads(text), "r.json").model_dump())


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=st.lists(cases(), max_size=4, unique_by=lambda case: case.id))
def test_a_report_reads_back_as_the_run_it_was_written_from(drawn: list[Case]) -> None:
    """JSON report -> model equals the model of the run in memory, and writes the same bytes."""
    run = run_suite(SUITE, drawn)
    text = to_json(run)
    assert parse_report(json.loads(text), "r.json") == EvalReport.of(run, "r.json")
    assert rewritten(text) == text


def _flaky(task: TaskInput) -> str:
    """Fails on the first case's second run, echoes the input otherwise."""
    if task.case_id == "c0" and task.run == 1:
        raise ValueError("flaky")
    return str(task.input)


def example_run(name: str) -> EvalRun:
    """The run of an example cases file (all of them together for ``all``), or of a task."""
    files = ["cases.jsonl", "cases.yaml", "invalid-cases.jsonl"] if name == "all" else [name]
    task_cases = [text_case(f"c{i}", f"fact {i}", f"fact {i}") for i in range(2)]
    if name.startswith("task"):
        return evaluate(_flaky, task_cases, TEXT_SUITE, repeat=2 if name == "task x2" else 1)
    suite = load_suite(EXAMPLES / "suite.yaml")
    return run_suite(suite, load_cases([EXAMPLES / file for file in files]))


@pytest.mark.parametrize(
    "name", ["cases.jsonl", "cases.yaml", "invalid-cases.jsonl", "all", "task", "task x2"]
)
def test_an_example_report_writes_the_same_bytes_after_reading_it_back(name: str) -> None:
    """dump -> load -> dump is the identity on every example's report, tasks and repeats too."""
    text = to_json(example_run(name))
    assert rewritten(text) == text


def test_a_report_without_the_fields_older_versions_lacked_reads_with_defaults() -> None:
    """Only what a comparison needs is required; counts, margins and details default."""
    document = {
        "suite": {"scorers": [{"key": "s", "type": "s", "weight": 1, "threshold": 0.5}]},
        "summary": {},
        "cases": [
            {
                "id": "a",
                "passed": True,
                "scorers": [{"type": "s", "score": 1, "threshold": 0.5, "passed": True}],
            }
        ],
    }
    report = parse_report(document, "old.json")
    (case,) = report.cases
    assert (report.summary.cases, report.summary.pass_rate, report.problems) == (0, None, [])
    assert (case.weighted_score, case.malformed, case.scorers[0].key) == (None, False, "s")
    assert (case.scorers[0].margin, case.scorers[0].details, case.scorers[0].weight) == (
        None,
        {},
        1.0,
    )


def test_a_malformed_case_without_an_id_is_counted_as_such() -> None:
    """Such a case cannot be matched with anything: it is counted in without_id."""
    problem = Problem(Location("c.jsonl", 1), "id", "required field is missing")
    run = run_suite(SUITE, [MalformedCase(Location("c.jsonl", 1), (problem,), None)])
    assert EvalReport.of(run).without_id == 1
    assert parse_report(json.loads(to_json(run)), "r.json").without_id == 1


def test_a_malformed_case_with_an_id_is_kept_as_malformed(tmp_path: Path) -> None:
    """It keeps its id and verdict (failed), with no scores."""
    problem = Problem(Location("c.jsonl", 1), "pages", "required field is missing")
    run = run_suite(SUITE, [MalformedCase(Location("c.jsonl", 1), (problem,), "broken")])
    path = tmp_path / "r.json"
    path.write_text(to_json(run), encoding="utf-8")
    (case,) = load_report(path).cases
    assert (case.id, case.malformed, case.passed, case.scorers) == ("broken", True, False, [])


def test_fields_a_newer_report_adds_are_ignored(tmp_path: Path, cart_case: Case) -> None:
    """Extra keys at every level (a top-level source too) do not stop the comparison."""
    run = run_suite(SUITE, [LoadedCase(cart_case, Location("c.jsonl", 1))])
    document = EvalReport.of(run).model_dump()
    document["repeats"] = 3
    document["source"] = 7
    document["cases"][0]["stddev"] = [{"passed": True}]
    document["cases"][0]["scorers"][0]["stddev"] = 0.1
    document["suite"]["scorers"][0]["extra"] = "x"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    report = load_report(path)
    assert (report.cases[0].id, report.source) == (cart_case.id, str(path))


def test_a_gzipped_report_with_a_bom_is_read(tmp_path: Path, cart_case: Case) -> None:
    """Reports may be compressed (CI artifacts) or start with a UTF-8 byte-order mark."""
    text = to_json(run_suite(SUITE, [cart_case]))
    path = tmp_path / "r.json.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + text.encode()))
    assert [c.id for c in load_report(path).cases] == [cart_case.id]


def test_a_truncated_gzipped_report_is_a_report_error(tmp_path: Path, cart_case: Case) -> None:
    """A .gz cut short (a broken CI download) is refused with its name, not an EOFError."""
    data = gzip.compress(to_json(run_suite(SUITE, [cart_case])).encode())
    path = tmp_path / "r.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ReportFileError, match="cannot be read in full") as caught:
        load_report(path)
    assert ["truncated compressed file" in str(p) for p in caught.value.problems] == [True]


def _problems(path: Path) -> list[str]:
    with pytest.raises(ReportFileError, match="is not a kp eval JSON report") as caught:
        load_report(path)
    assert "kp eval CASES --suite SUITE -f json -o FILE" in str(caught.value)
    return [str(problem) for problem in caught.value.problems]


def test_a_file_that_is_not_json_says_where(tmp_path: Path) -> None:
    """A JSON Lines file (two documents) is refused with its line."""
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": 1}\n{"id": 2}\n', encoding="utf-8")
    (problem,) = _problems(path)
    assert problem.startswith(f"{path}:2: invalid JSON")


def test_a_json_document_of_the_wrong_shape_names_each_path(tmp_path: Path) -> None:
    """Every problem is listed, each with its JSON path."""
    path = tmp_path / "r.json"
    document = {
        "suite": {"scorers": [{"key": 1, "type": "t", "weight": 1, "threshold": 0.5}]},
        "cases": [{"id": "a", "passed": "yes", "scorers": []}],
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    problems = _problems(path)
    assert f"{path}: suite.scorers[0].key: got 1; expected a valid string" in problems
    assert f"{path}: summary: required field is missing" in problems
    assert any(p.startswith(f'{path}: cases[0].passed: got "yes"') for p in problems)


def test_a_list_is_not_a_report(tmp_path: Path) -> None:
    """A top-level list (kp score -f json output, say) is named as such."""
    path = tmp_path / "scores.json"
    path.write_text("[1, 2]", encoding="utf-8")
    assert _problems(path) == [
        f"{path}: got a list; expected an object with suite, summary and cases"
    ]


def test_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    """A binary file is refused as a report, not with a traceback."""
    path = tmp_path / "r.json"
    path.write_bytes(b'{\n"suite": "\xff"}')
    assert _problems(path) == [
        f"{path}:2: not UTF-8 text: byte 0xff (invalid start byte); save it as UTF-8"
    ]


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    """The file's name and 'no such file'."""
    with pytest.raises(InputFileError, match="no such file"):
        load_report(tmp_path / "absent.json")


def test_details_holding_themselves_are_written_with_a_marker_not_a_recursion_error() -> None:
    """A dict or list inside itself becomes REFERS_TO_ITSELF where it repeats."""
    details: dict[str, object] = {"a": 1}
    items: list[object] = [2]
    details["me"], details["items"] = details, items
    items.append(items)
    assert json_data(details) == {"a": 1, "me": REFERS_TO_ITSELF, "items": [2, REFERS_TO_ITSELF]}


def test_details_nested_10000_deep_are_cut_at_max_nesting() -> None:
    """Past MAX_NESTING levels a value is NESTED_TOO_DEEP; the report stays writable JSON."""
    deep: list[object] = []
    for _ in range(10_000):
        deep = [deep]
    written = json_data({"deep": deep})
    text = json.dumps(written)
    assert text.count("[") == MAX_NESTING - 1
    assert json.dumps(NESTED_TOO_DEEP) in text


def test_a_value_shared_by_two_keys_is_written_in_full_twice() -> None:
    """Only a value inside itself is marked: the same list under two keys is no cycle."""
    shared = [1, {"b": 2}]
    assert json_data({"x": shared, "y": shared}) == {"x": shared, "y": shared}


def test_numpy_numbers_in_details_are_written_as_numbers_not_their_text() -> None:
    """np.int64(3) and an array are 3 and [1, 2] in the report and the default diagnosis."""
    details = {"n": np.int64(3), "mean": np.float32(0.5), "arr": np.array([1, 2])}
    assert json_data(details) == {"n": 3, "mean": 0.5, "arr": [1, 2]}
    assert json_data({"gap": np.float64("nan")}) == {"gap": "nan"}  # as a float NaN is
    assert details_diagnosis(ScoreResult(0.5, details)) == [
        'details: {"n": 3, "mean": 0.5, "arr": [1, 2]}'
    ]
