"""Reports an older kp wrote (tests/data/older_kp/README.md): baselines keep their verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledgepulse.errors import ReportFileError
from knowledgepulse.evals.cases import LoadedCase, load_cases
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.report import REPORT_FORMAT, EvalReport, load_report
from knowledgepulse.evals.results import RunSummary
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.suite import load_suite
from knowledgepulse.reports.evals import to_json
from tests.paths import REPO

OLDER = REPO / "tests" / "data" / "older_kp"
EXAMPLES = REPO / "examples" / "evals"
OLD_REPORTS = sorted(OLDER.glob("report-*.json"))


def _todays_run(worse: str | None = None) -> EvalReport:
    """Today's run of the cases the old reports were written from; ``worse``'s answer broken."""
    cases = []
    for item in load_cases([EXAMPLES / "cases.jsonl"]):
        assert isinstance(item, LoadedCase)
        case = item.case
        if case.id == worse:
            wrong = {"durationMs": 780, "operations": [{"type": "delete", "targetBlockId": "h1"}]}
            case = case.model_copy(update={"actual": wrong})
        cases.append(case)
    return EvalReport.of(run_suite(load_suite(EXAMPLES / "suite.yaml"), cases))


@pytest.mark.parametrize("path", OLD_REPORTS, ids=lambda path: path.stem)
def test_an_older_report_is_a_baseline_with_the_verdicts_it_recorded(path: Path) -> None:
    """The same cases today: every case unchanged, none regressed."""
    comparison = compare_runs(path, _todays_run())
    summary = comparison.summary
    assert (summary.unchanged, summary.regressions, summary.changed) == (4, 0, 0)
    assert not comparison.regressed


@pytest.mark.parametrize("path", OLD_REPORTS, ids=lambda path: path.stem)
def test_a_case_worse_than_in_an_older_report_is_a_regression(path: Path) -> None:
    """A case that passed in the old baseline and fails today regresses (never 'no change')."""
    comparison = compare_runs(path, _todays_run(worse="delete-outdated-notice"))
    assert comparison.regressed
    (regressed,) = comparison.of("regressed")
    assert regressed.case_id == "delete-outdated-notice"


def test_a_report_names_its_format_first() -> None:
    """``format`` leads the document, so a later kp can tell the reports it must refuse."""
    document = json.loads(to_json(run_suite(load_suite(EXAMPLES / "suite.yaml"), [])))
    assert next(iter(document.items())) == ("format", REPORT_FORMAT)


def test_an_older_report_without_a_format_is_of_the_first_one() -> None:
    """Reports written before ``format`` was named read as format 1, whose shape they have."""
    for path in OLD_REPORTS:
        assert "format" not in json.loads(path.read_text(encoding="utf-8"))
        assert load_report(path).format == REPORT_FORMAT


def test_a_report_of_a_newer_format_is_refused_with_the_way_on(tmp_path: Path) -> None:
    """A newer kp's report is never read with defaults: one error says to upgrade or rewrite."""
    document = _todays_run().model_dump()
    family = REPORT_FORMAT.rpartition("/")[0]
    document["format"] = f"{family}/2"
    path = tmp_path / "newer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ReportFileError) as raised:
        load_report(path)
    assert "a newer knowledgepulse wrote this report" in str(raised.value)
    assert "pip install -U knowledgepulse" in str(raised.value)
    assert "kp eval CASES --suite SUITE -f json -o FILE" in str(raised.value)
    (problem,) = raised.value.problems
    assert (problem.path, f"{family}/2" in problem.message) == ("format", True)


@pytest.mark.parametrize("written", ["knowledgepulse-eval-report/x", "other/1", 1, None])
def test_a_report_of_an_unknown_format_is_not_a_report(tmp_path: Path, written: object) -> None:
    """Any other ``format`` is no kp eval report's: refused, naming the one this kp reads."""
    document = {**_todays_run().model_dump(), "format": written}
    path = tmp_path / "other.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ReportFileError, match="is not a kp eval JSON report") as raised:
        load_report(path)
    (problem,) = raised.value.problems
    assert problem.path == "format"
    assert REPORT_FORMAT in problem.message


def test_a_count_an_older_report_left_out_reads_as_nothing_counted() -> None:
    """A summary without a count (an older kp wrote fewer) reads it as 0: no failure, no case."""
    empty = RunSummary.model_validate({})
    counts = [name for name, field in RunSummary.model_fields.items() if field.annotation is int]
    assert {"cases", "passed", "failed", "malformed", "unreadable_files"} <= set(counts)
    assert [getattr(empty, name) for name in counts] == [0] * len(counts)
    assert (empty.pass_rate, empty.weighted_mean, empty.scorers) == (None, None, {})


@pytest.mark.parametrize("unscored", [0, 1, 2])
def test_unscored_is_written_only_when_some_case_went_unscored(unscored: int) -> None:
    """0 unscored is left out of the JSON summary, so reports stay as they were; else written."""
    written = RunSummary(unscored=unscored).model_dump(mode="json")
    assert written.get("unscored", 0) == unscored
    assert ("unscored" in written) == (unscored > 0)
