"""The plugin's report (--kp-report) and gate (--kp-baseline, --kp-fail-on), as kp eval's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from knowledgepulse.cli.main import main
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.report import load_report
from tests.paths import REPO
from tests.pytest_plugin.conftest import Project, rename_case, write_jsonl
from tests.test_doc_commands import shows, steps

pytest_plugins = ["pytester"]

_BASE = (rename_case("a"), rename_case("b", renamed="Cart"), rename_case("c"))
"""Two passing cases and one failing one (b)."""
_NOW = (rename_case("a", renamed="Cart"), rename_case("b", renamed="Cart"), rename_case("c"))
"""The same cases with a regressed (a, which passed in _BASE) and b failing still."""


def _kp(*args: str) -> int:
    """``kp ARGS...`` in-process, quiet: what the report files hold is what is checked."""
    return main([*args, "-q"])


def test_kp_report_writes_the_run_as_kp_eval_writes_it_and_kp_compare_reads_it(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The plugin's JSON report holds kp eval's verdicts and totals; both compare, no change."""
    project(*_BASE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "plugin.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["report (json) written to plugin.json"])
    assert (
        _kp("eval", "cases.jsonl", "-s", "suite.yaml", "--fail-on", "never", "-o", "kp.json") == 0
    )
    ours, theirs = load_report("plugin.json"), load_report("kp.json")
    assert [(c.id, c.passed, c.weighted_score) for c in ours.cases] == [
        (c.id, c.passed, c.weighted_score) for c in theirs.cases
    ]
    assert ours.summary == theirs.summary
    assert compare_runs(ours, theirs).summary.unchanged == 3
    assert _kp("compare", "plugin.json", "kp.json", "-o", "compared.json") == 0
    assert _kp("compare", "kp.json", "plugin.json", "-o", "compared.json") == 0
    # kp eval takes it as its baseline: b failed there too, so only an old failure stays.
    assert _kp("eval", "cases.jsonl", "-s", "suite.yaml", "--baseline", "plugin.json") == 0


def test_a_kp_eval_baseline_fails_the_regressed_case_and_xfails_the_old_failure(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Against kp eval's report: a regressed case fails, an old failure is xfailed, exit 1."""
    project(*_BASE)
    assert (
        _kp("eval", "cases.jsonl", "-s", "suite.yaml", "--fail-on", "never", "-o", "base.json") == 0
    )
    write_jsonl(pytester.path / "cases.jsonl", _NOW)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rfx", "--kp-baseline", "base.json")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "against base.json: 1 regression, 0 improvements, 0 changed, 2 unchanged, *",
            "--kp-fail-on regression: 1 regression, 0 new failures; 1 old failure does not fail "
            "the run",
        ]
    )
    result.stdout.fnmatch_lines(["FAILED evals.kp.yaml::a - Failed: regression against the *"])
    result.stdout.fnmatch_lines(
        ["XFAIL evals.kp.yaml::b - old failure: it fails in the baseline base.json too; *"]
    )


def test_without_a_regression_the_session_passes_with_its_old_failure(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The baseline's own failures do not fail the run (as kp eval --baseline exits 0)."""
    project(*_BASE)
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "base.json")
    result = pytester.runpytest("-p", "no:cacheprovider", "--kp-baseline", "base.json")
    result.assert_outcomes(passed=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK


def test_kp_fail_on_failure_fails_every_failing_case_with_its_standing(
    pytester: pytest.Pytester, project: Project
) -> None:
    """--kp-fail-on failure with a baseline: old failures fail too, each says how it stands."""
    project(*_BASE)
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "base.json")
    write_jsonl(pytester.path / "cases.jsonl", _NOW)
    args = ("--kp-baseline", "base.json", "--kp-fail-on", "failure", "-rf")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["FAILED evals.kp.yaml::b - Failed: old failure against the *"])
    result.stdout.fnmatch_lines(["--kp-fail-on failure: 2 failing cases (1 regression, *"])


def test_kp_fail_on_never_records_a_baseline_and_passes(
    pytester: pytest.Pytester, project: Project
) -> None:
    """--kp-fail-on never: failing cases are xfailed, the session exits 0, the report is kept."""
    project(*_BASE)
    args = ("--kp-fail-on", "never", "--kp-report", "base.json")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert [case.passed for case in load_report("base.json").cases] == [True, False, True]


@pytest.mark.parametrize(
    ("name", "extra", "starts"),
    [
        ("report.md", (), "## Evaluation: rename"),
        ("report.html", (), "<!DOCTYPE html>"),
        ("report.txt", ("--kp-report-format", "markdown"), "## Evaluation: rename"),
    ],
)
def test_the_report_format_comes_from_the_suffix_or_the_format_option(
    pytester: pytest.Pytester, project: Project, name: str, extra: tuple[str, ...], starts: str
) -> None:
    """As kp eval -o: .md is Markdown, .html a page; --kp-report-format names it otherwise."""
    project(*_BASE)
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", name, *extra)
    assert (pytester.path / name).read_text(encoding="utf-8").lstrip().startswith(starts)


def test_a_markdown_report_against_a_baseline_holds_the_comparison(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A pull request's summary: the run's totals, then its regressions against the baseline."""
    project(*_BASE)
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "base.json")
    write_jsonl(pytester.path / "cases.jsonl", _NOW)
    pytester.runpytest(
        "-p", "no:cacheprovider", "--kp-baseline", "base.json", "--kp-report", "pr.md"
    )
    text = (pytester.path / "pr.md").read_text(encoding="utf-8")
    assert "## Comparison: rename" in text
    assert "### Regressions (1)" in text


def test_a_junit_report_marks_each_case_with_its_standing(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The .xml report is kp eval's JUnit: one test case per evaluation case."""
    project(*_BASE)
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "report.xml")
    cases = ET.parse(pytester.path / "report.xml").getroot().iter("testcase")
    assert len(list(cases)) == 3


def test_the_ini_keys_name_the_report_and_the_baseline_relative_to_the_ini_file(
    pytester: pytest.Pytester, project: Project
) -> None:
    """kp_report and kp_baseline in the ini file, as their options; paths relative to it."""
    project(*_BASE)
    (pytester.path / "reports").mkdir()
    pytester.makeini("[pytest]\nkp_report = reports/base.json\n")
    pytester.runpytest("-p", "no:cacheprovider")
    assert load_report(pytester.path / "reports" / "base.json").summary.cases == 3
    write_jsonl(pytester.path / "cases.jsonl", _NOW)
    ini = "[pytest]\nkp_baseline = reports/base.json\nkp_report = reports/pr.json\n"
    pytester.makeini(ini)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    report = json.loads((pytester.path / "reports" / "pr.json").read_text(encoding="utf-8"))
    assert report["comparison"]["summary"]["regressions"] == 1


def test_under_xdist_the_report_options_are_refused_with_what_to_do(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Each xdist worker sees only its share of the cases: one line says so, nothing runs."""
    pytest.importorskip("xdist")
    project(*_BASE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2", "--kp-report", "r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --kp-report and --kp-baseline need every case's result in one process, *-n*"]
    )
    assert not (pytester.path / "r.json").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--kp-fail-on", "regression"), "*--kp-fail-on regression needs --kp-baseline FILE*"),
        (("--kp-tolerance", "0.1"), "*--kp-tolerance*--kp-baseline*"),
        (("--kp-baseline", "suite.yaml"), "ERROR: suite.yaml is not a kp eval JSON report*"),
        (("--kp-baseline", "missing.json"), "ERROR: *missing.json*"),
        (("--kp-report", "r.json", "--kp-report-format", "html"), "*.json names the json format*"),
        (("--kp-report-format", "html"), "ERROR: --kp-report-format names the format of *"),
        (("--kp-baseline", "r.json", "--kp-tolerance", "-1"), "ERROR: --kp-tolerance*0 or more*"),
        (
            ("--kp-report", "r.xml", "--junitxml", "./r.xml"),
            "ERROR: --kp-report and --junitxml name one file (r.xml): the one written last *",
        ),
    ],
)
def test_a_wrong_report_option_is_a_usage_error_before_any_case_runs(
    pytester: pytest.Pytester, project: Project, args: tuple[str, ...], said: str
) -> None:
    """What is wrong, named by the plugin's options, and no case is scored (nor a file written:
    --junitxml and --kp-report on one file left only the one written last)."""
    project(*_BASE)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])
    assert "Traceback" not in result.stderr.str()
    assert not (pytester.path / "r.xml").exists()


@pytest.mark.parametrize(
    ("ini", "said"),
    [
        ("kp_fail_on = regresion", "ERROR: kp_fail_on = regresion: give one of *"),
        ("kp_report_format = xml", "ERROR: kp_report_format = xml: not a report format; *"),
        ("kp_fail_on = regression", "ERROR: kp_fail_on = regression needs --kp-baseline FILE*"),
    ],
)
def test_a_wrong_ini_setting_is_named_as_the_ini_file_writes_it(
    pytester: pytest.Pytester, project: Project, ini: str, said: str
) -> None:
    """A bad value from pytest.ini is named by its key there, not as an option never typed."""
    project(*_BASE)
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])


def test_an_ini_report_on_the_junit_file_is_named_by_its_ini_key(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The report the ini file names, on --junitxml's file, is said as ``kp_report``."""
    project(*_BASE)
    pytester.makeini("[pytest]\nkp_report = r.xml\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml", "r.xml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: kp_report and --junitxml name one file (*r.xml): *"])


def test_evaluations_with_different_suites_cannot_share_one_report(
    pytester: pytest.Pytester, project: Project
) -> None:
    """One report holds one suite's run: two suites are refused, naming the evaluations."""
    project(*_BASE)
    (pytester.path / "other.kp.yaml").write_text("preset: standard\ncases: cases.jsonl\n", "utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*(evals.kp.yaml, other.kp.yaml) use 2 different suites*"])


def test_kp_suite_case_files_make_one_report(pytester: pytest.Pytester, project: Project) -> None:
    """--kp-suite with two case files: one run of their cases, in order, as kp eval's of both."""
    project(*_BASE)
    write_jsonl(pytester.path / "more.jsonl", [rename_case("d")])
    args = ("--kp-suite", "suite.yaml", "cases.jsonl", "more.jsonl", "--kp-report", "r.json")
    pytester.runpytest("-p", "no:cacheprovider", *args)
    assert [case.id for case in load_report("r.json").cases] == ["a", "b", "c", "d"]


def test_a_case_id_used_again_is_a_new_failure_as_in_a_comparison(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A second 'x' is matched by its occurrence: the baseline has one 'x', so it is new."""
    project(rename_case("x"))
    pytester.runpytest("-p", "no:cacheprovider", "--kp-report", "base.json")
    write_jsonl(pytester.path / "cases.jsonl", [rename_case("x"), rename_case("x", renamed="C")])
    args = ("-W", "default", "-rf", "--kp-baseline", "base.json")  # the id used twice warns
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1, failed=1, warnings=1)
    result.stdout.fnmatch_lines(["FAILED *x[[]2] - Failed: new failure against the baseline: *"])
    result.stdout.fnmatch_lines(["--kp-fail-on regression: 0 regressions, 1 new failure; *"])


def test_the_report_block_of_docs_evals_pytest_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "A report and a baseline": each command, run beside the examples, exits 0 and prints the
    lines the block shows; the kp commands read the plugin's report as their baseline."""
    page = (REPO / "docs" / "evals-pytest.md").read_text("utf-8")
    section = page.split("### A report and a baseline\n", 1)[1]
    block = section.split("```console\n", 1)[1].split("```", 1)[0]
    (tmp_path / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    environment = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    # A PYTHONPATH relative to where this session started (src) still names the code under test.
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    environment["PYTHONPATH"] = os.pathsep.join(str(Path(p).absolute()) for p in paths if p)
    monkeypatch.chdir(tmp_path)
    for step in steps(block):
        words = shlex.split(step.command)
        if words[0] == "kp":
            assert _kp(*words[1:]) == 0, step.command
            continue
        assert words[0] == "pytest"
        ran = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words[1:]],
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        assert ran.returncode == 0, ran.stdout
        assert shows(step.shown, ran.stdout), ran.stdout
    assert "## Comparison: bulk-edit" in (tmp_path / "summary.md").read_text("utf-8")


def test_deselected_cases_of_another_suite_do_not_refuse_the_report(
    pytester: pytest.Pytester, project: Project
) -> None:
    """-k keeps one evaluation's cases: the other's suite is not in the run, so it is written."""
    project(*_BASE)
    (pytester.path / "second.kp.yaml").write_text("preset: standard\ncases: cases.jsonl\n", "utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "evals", "--kp-report", "r.json")
    result.assert_outcomes(passed=2, failed=1)
    assert load_report("r.json").suite.name == "rename"
