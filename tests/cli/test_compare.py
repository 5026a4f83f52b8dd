"""``kp compare``, ``kp eval --baseline`` and ``kp eval -f html``, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import KpRunner

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "evals"
CASES = str(EXAMPLES / "cases.jsonl")
SUITE = str(EXAMPLES / "suite.yaml")


def changed_cases(tmp_path: Path, durations: dict[str, float]) -> str:
    """The example cases with some durations changed ("after a change to the workflow")."""
    cases = [json.loads(line) for line in Path(CASES).read_text(encoding="utf-8").splitlines()]
    for case in cases:
        if case["id"] in durations:
            case["actual"]["durationMs"] = durations[case["id"]]
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return str(path)


@pytest.fixture
def baseline(kp: KpRunner, tmp_path: Path) -> str:
    """The example run's JSON report: 2 of 4 pass; translate-heading-slow fails on time."""
    path = tmp_path / "base.json"
    assert kp("eval", CASES, "--suite", SUITE, "-o", str(path)).code == 1
    return str(path)


@pytest.fixture
def regressed(tmp_path: Path) -> str:
    """multi-page-rename now too slow (a regression), translate-heading-slow fast (improved)."""
    return changed_cases(tmp_path, {"multi-page-rename": 9000, "translate-heading-slow": 1000})


def test_eval_with_a_baseline_exits_4_on_a_regression(
    kp: KpRunner, baseline: str, regressed: str, tmp_path: Path
) -> None:
    """Exit 4; the JSON report gains the comparison and is still a baseline for the next run."""
    report = tmp_path / "new.json"
    run = kp("eval", regressed, "--suite", SUITE, "--baseline", baseline, "-o", str(report))
    assert run.code == 4, run.err
    assert f"against {baseline}: 1 regression, 1 improvement, 0 changed, 2 unchanged" in run.err
    document = json.loads(report.read_text(encoding="utf-8"))
    changes = {c["id"]: c["change"] for c in document["comparison"]["cases"]}
    assert changes["multi-page-rename"] == "regressed"
    assert changes["translate-heading-slow"] == "improved"
    again = kp("eval", regressed, "--suite", SUITE, "--baseline", str(report), "-f", "json")
    assert again.code == 0  # nothing regressed against itself; its old failures fail nothing
    assert json.loads(again.out)["comparison"]["summary"]["unchanged"] == 4


def test_compare_reports_the_regression_in_each_format(
    kp: KpRunner, baseline: str, regressed: str, tmp_path: Path
) -> None:
    """Table, Markdown (by the .md suffix) and JSON all name the regressed case; exit 4."""
    new = tmp_path / "new.json"
    kp("eval", regressed, "--suite", SUITE, "-o", str(new))
    table = kp("compare", baseline, str(new), "-f", "table")
    assert table.code == 4
    assert "Regressions (1)" in table.out
    assert "multi-page-rename" in table.out
    markdown = tmp_path / "comment.md"
    assert kp("compare", baseline, str(new), "-o", str(markdown)).code == 4
    text = markdown.read_text(encoding="utf-8")
    assert text.startswith("## Comparison: bulk-edit")
    assert (
        "| multi-page-rename | response-time 1.000 → 0.200 (-0.800), pass → fail; output changed |"
        in text
    )
    document: dict[str, Any] = json.loads(kp("compare", baseline, str(new), "-f", "json").out)
    assert document["summary"]["regressions"] == 1


def test_compare_exits_0_without_a_regression(kp: KpRunner, baseline: str) -> None:
    """A report compared with itself: no change, exit 0, even though cases fail."""
    run = kp("compare", baseline, baseline, "-f", "json")
    assert run.code == 0
    assert json.loads(run.out)["summary"]["unchanged"] == 4


def test_the_tolerance_option_absorbs_small_score_changes(
    kp: KpRunner, baseline: str, tmp_path: Path
) -> None:
    """7400 ms to 7450 ms moves response-time by 0.01: changed, unless --tolerance 0.05."""
    slower = changed_cases(tmp_path, {"translate-heading-slow": 7450})
    new = tmp_path / "new.json"
    kp("eval", slower, "--suite", SUITE, "-o", str(new))
    strict = json.loads(kp("compare", baseline, str(new), "-f", "json").out)
    assert strict["summary"]["changed"] == 1
    loose = json.loads(kp("compare", baseline, str(new), "-f", "json", "--tolerance", "0.05").out)
    assert loose["summary"]["changed"] == 0
    assert kp("compare", baseline, str(new), "--tolerance", "-1").code == 2


def test_a_file_that_is_not_a_report_is_refused_before_any_run(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A case file as baseline: exit 2 with the file and line, and no report is written."""
    report = tmp_path / "out.json"
    run = kp("eval", CASES, "--suite", SUITE, "--baseline", CASES, "-o", str(report))
    assert run.code == 2
    assert f"kp: error: {CASES} is not a kp eval JSON report" in run.err
    assert f"{CASES}:2: invalid JSON" in run.err
    assert not report.exists()
    compare = kp("compare", CASES, CASES)
    assert compare.code == 2
    assert "Traceback" not in compare.err
    missing = kp("compare", str(tmp_path / "absent.json"), CASES)
    assert (missing.code, "no such file" in missing.err) == (2, True)


def test_eval_writes_a_self_contained_html_report(kp: KpRunner, tmp_path: Path) -> None:
    """-o report.html picks the html format; the page lists the failing cases, fetches nothing."""
    path = tmp_path / "report.html"
    run = kp("eval", CASES, "--suite", SUITE, "-o", str(path))
    assert run.code == 1
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<h2 id='failing'>Failing cases (2)</h2>" in page
    for case_id in ("summarise-sections-hallucinated-tip", "translate-heading-slow"):
        assert f"<h3>FAIL <bdi>{case_id}</bdi></h3>" in page
    assert "<ins>+ <bdi>Tip: sign up for our newsletter" in page
    assert "<script" not in page
    assert "://" not in page


def test_eval_html_with_a_baseline_includes_the_comparison(
    kp: KpRunner, baseline: str, regressed: str, tmp_path: Path
) -> None:
    """The page holds the comparison section; the exit code still says 'regression'."""
    path = tmp_path / "report.html"
    run = kp(
        "eval", regressed, "--suite", SUITE, "--baseline", baseline, "-f", "html", "-o", str(path)
    )
    assert run.code == 4
    page = path.read_text(encoding="utf-8")
    assert "Comparison with the baseline" in page
    assert "Regressions (1)" in page


def test_eval_markdown_with_a_baseline_appends_the_comparison(
    kp: KpRunner, baseline: str, regressed: str
) -> None:
    """The run's Markdown, then the comparison's, in one document."""
    run = kp("eval", regressed, "--suite", SUITE, "--baseline", baseline, "-f", "markdown")
    assert run.code == 4
    assert run.out.index("## Evaluation: bulk-edit") < run.out.index("## Comparison: bulk-edit")


def test_dry_run_refuses_the_html_format(kp: KpRunner) -> None:
    """--dry-run prints a suite, which has no HTML view."""
    assert kp("eval", CASES, "--suite", SUITE, "--dry-run", "-f", "html").code == 2


def test_help_documents_the_regression_exit_code(kp: KpRunner) -> None:
    """kp --help lists compare and exit code 4; both commands' help say when it is used."""

    def words(*args: str) -> str:
        return " ".join(kp(*args).out.split())  # help text is wrapped to the terminal

    top = words("--help")
    assert "compare Compare two kp eval reports." in top
    assert "4 a regression against a baseline (kp compare, kp eval --baseline)" in top
    assert "Exit code 0 when no case regressed, 4 when one did" in words("compare", "--help")
    assert "4 when a case that passed in the --baseline fails now" in words("eval", "--help")


def test_tolerance_without_a_baseline_is_a_usage_error(kp: KpRunner) -> None:
    """An option that would change nothing is refused rather than silently ignored."""
    run = kp("eval", CASES, "--suite", SUITE, "--tolerance", "0.1", "-f", "json")
    assert run.code == 2
    assert "--tolerance applies to the comparison with --baseline" in run.err
