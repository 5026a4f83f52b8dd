"""Runs as a comparison sees them: from memory, and read back from kp eval JSON reports."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import InputFileError, ReportFileError
from knowledgepulse.evals.cases import LoadedCase, MalformedCase
from knowledgepulse.evals.compare import load_report, report_snapshot, run_snapshot
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.records import Location, Problem
from knowledgepulse.reports.evals import run_to_dict, to_json
from tests.evals.builders import cases, make_suite

SUITE = make_suite(
    {"type": "operation-accuracy"},
    {"type": "content-quality", "name": "content", "weight": 2},
    {"type": "anti-hallucination"},
    name="demo",
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=st.lists(cases(), max_size=4, unique_by=lambda case: case.id))
def test_a_report_reads_back_as_the_run_it_was_written_from(drawn: list[Case]) -> None:
    """JSON report -> snapshot equals the snapshot taken from the run in memory (ids unique,
    as a report must have them)."""
    run = run_suite(SUITE, drawn)
    from_file = report_snapshot(json.loads(to_json(run)), "r.json")
    assert from_file == run_snapshot(run, "r.json")


def test_a_malformed_case_without_an_id_is_counted_not_kept() -> None:
    """Such a case cannot be matched with anything: it is counted in without_id."""
    problem = Problem(Location("c.jsonl", 1), "id", "required field is missing")
    run = run_suite(SUITE, [MalformedCase(Location("c.jsonl", 1), (problem,), None)])
    snap = run_snapshot(run)
    assert (snap.cases, snap.without_id) == ((), 1)
    assert report_snapshot(run_to_dict(run), "r.json").without_id == 1


def test_a_malformed_case_with_an_id_is_kept_as_malformed(tmp_path: Path) -> None:
    """It keeps its id and verdict (failed), with no scores."""
    problem = Problem(Location("c.jsonl", 1), "pages", "required field is missing")
    run = run_suite(SUITE, [MalformedCase(Location("c.jsonl", 1), (problem,), "broken")])
    path = tmp_path / "r.json"
    path.write_text(to_json(run), encoding="utf-8")
    (case,) = load_report(path).cases
    assert (case.case_id, case.malformed, case.passed, dict(case.scores)) == (
        "broken",
        True,
        False,
        {},
    )


def test_fields_a_newer_report_adds_are_ignored(tmp_path: Path, cart_case: Case) -> None:
    """Extra keys at every level (repeat statistics, say) do not stop the comparison."""
    document = run_to_dict(run_suite(SUITE, [LoadedCase(cart_case, Location("c.jsonl", 1))]))
    document["repeats"] = 3
    document["cases"][0]["runs"] = [{"passed": True}]
    document["cases"][0]["scorers"][0]["stddev"] = 0.1
    document["suite"]["scorers"][0]["extra"] = "x"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load_report(path).cases[0].case_id == cart_case.id


def test_a_gzipped_report_with_a_bom_is_read(tmp_path: Path, cart_case: Case) -> None:
    """Reports may be compressed (CI artifacts) or start with a UTF-8 byte-order mark."""
    text = to_json(run_suite(SUITE, [cart_case]))
    path = tmp_path / "r.json.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + text.encode()))
    assert [c.case_id for c in load_report(path).cases] == [cart_case.id]


def test_a_truncated_gzipped_report_is_a_report_error(tmp_path: Path, cart_case: Case) -> None:
    """A .gz cut short (a broken CI download) is refused with its name, not an EOFError."""
    data = gzip.compress(to_json(run_suite(SUITE, [cart_case])).encode())
    path = tmp_path / "r.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ReportFileError, match="cannot be read in full") as caught:
        load_report(path)
    assert ["truncated .gz" in str(problem) for problem in caught.value.problems] == [True]


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
