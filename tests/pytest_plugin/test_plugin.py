"""The pytest plugin: evaluation files and --kp-suite runs as test items, in a pytester session."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from knowledgepulse.evals import evaluate_case, load_suite, parse_case
from knowledgepulse.evals.suite import PRESET_NAMES
from knowledgepulse.records import Location
from knowledgepulse.testing import failure_message
from tests.evals.builders import op
from tests.pytest_plugin.conftest import SUITE, Project, literal, rename_case, write_jsonl

# Enabled here rather than in conftest.py: pytest refuses `pytest_plugins` in a conftest
# below the rootdir once the session is configured (a module-level one is fine).
pytest_plugins = ["pytester"]


def test_an_evaluation_file_gives_one_test_per_case_named_by_its_id(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Every case of the case files is an item whose node id ends with the case id."""
    project(rename_case("first"), rename_case("second"))
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["evals.kp.yaml::first PASSED*", "evals.kp.yaml::second PASSED*"], consecutive=True
    )


def test_a_failing_case_fails_with_its_diagnosis_and_no_traceback(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The failure text is the case's diagnosis as the table report renders it."""
    project(rename_case("good"), rename_case("stays-cart", renamed="Cart"))
    reports = pytester.inline_run()
    reports.assertoutcome(passed=1, failed=1)
    (failed,) = reports.getfailures()
    case = parse_case(rename_case("stays-cart", renamed="Cart"))
    expected = evaluate_case(load_suite("suite.yaml"), case, Location("cases.jsonl", 2, 1))
    text = failed.longreprtext
    assert text == failure_message(expected)
    assert text.startswith("1 scorer below threshold: content-quality 0.000 < 0.600\n")
    assert "FAIL stays-cart  cases.jsonl:2" in text
    assert "Pattern 'Basket' not found in content: 'Your Cart'" in text
    assert "Traceback" not in text
    assert "pytest_plugin.py" not in text


def test_a_malformed_case_fails_with_its_located_problems_and_the_others_run(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A case with a bad field fails with FILE:LINE: PATH: message; its neighbours pass."""
    bad = rename_case("inside")
    bad["actual"]["operations"][0]["position"] = "inside"
    project(rename_case("before"), bad, "{not json", rename_case("after"))
    result = pytester.runpytest("-rf")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*malformed case: 1 problem",
            "MALFORMED inside  cases.jsonl:2",
            literal('    cases.jsonl:2: actual.operations[0].position: got "inside"; ') + "*",
        ]
    )
    result.stdout.fnmatch_lines(["MALFORMED (no id)  cases.jsonl:3", "*invalid JSON*"])
    result.stdout.fnmatch_lines(["FAILED evals.kp.yaml::(no id) cases.jsonl:3 - *"])


def test_a_case_file_cut_short_fails_and_the_cases_before_the_break_run(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A YAML syntax error is a failing item at its line; the cases read before it still run."""
    project(eval_file="preset: standard\ncases: cases.yaml\n")
    (pytester.path / "cases.yaml").write_text(
        "---\nid: whole\npages: [{id: p, blocks: [{id: b1, type: p, content: Cart}]}]\n"
        "actual: {operations: []}\nexpected: {operations: []}\n---\nid: cut\n  bad: [\n",
        encoding="utf-8",
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*::whole PASSED*",
            "*::(not read in full) cases.yaml:8 FAILED*",
            "*the file cannot be read past this point*",
            "cases.yaml:8: invalid YAML*",
        ]
    )


def test_a_bad_suite_is_a_collection_error_listing_every_problem(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Every suite problem is listed with its line; no case runs; pytest exits 2."""
    project(
        rename_case("never-run"),
        suite="scorers:\n  - type: operation-accuracy\n    treshold: 0.9\n"
        "  - type: content-qualty\n",
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            literal("suite.yaml:3: scorers[0].treshold: unknown key; did you mean 'threshold'?*"),
            literal("suite.yaml:4: scorers[1].type: unknown scorer type 'content-qualty'. Did*"),
            "evals.kp.yaml: 2 problems in the evaluation file or its suite; no case was run",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_bad_evaluation_file_names_every_problem_at_its_line(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Unknown keys, missing case files and patterns that match nothing are all reported."""
    project(
        rename_case("x"),
        eval_file="sute: suite.yaml\ncases: [cases.jsonl]\n",
    )
    first = pytester.runpytest()
    first.stdout.fnmatch_lines(
        ["evals.kp.yaml:1: sute: unknown key; did you mean 'suite'?*", "*no case was run"]
    )
    project(
        rename_case("x"),
        eval_file="suite: suite.yaml\ncases:\n  - missing.jsonl\n  - 'data/*.jsonl'\n",
    )
    second = pytester.runpytest()
    assert second.ret == pytest.ExitCode.INTERRUPTED
    second.stdout.fnmatch_lines(
        [
            literal(
                "evals.kp.yaml:3: cases[0]: missing.jsonl: no such file; paths in an evaluation "
                "file are relative to the file"
            ),
            literal("evals.kp.yaml:4: cases[1]: no file matches 'data/*.jsonl'*"),
        ]
    )


def test_junitxml_holds_one_testcase_per_case_with_the_diagnosis(
    pytester: pytest.Pytester, project: Project
) -> None:
    """--junitxml: a testcase per case id, the failure's message, and the scores as properties."""
    project(rename_case("good"), rename_case("stays-cart", renamed="Cart"))
    pytester.runpytest("--junitxml=report.xml")
    root = ET.parse(pytester.path / "report.xml").getroot()
    testcases = {case.get("name"): case for case in root.iter("testcase")}
    assert list(testcases) == ["good", "stays-cart"]
    assert testcases["good"].find("failure") is None
    failure = testcases["stays-cart"].find("failure")
    assert failure is not None
    assert "content-quality 0.000 < 0.600" in (failure.get("message") or "")
    assert "Pattern 'Basket' not found" in (failure.text or "")
    properties = {p.get("name"): p.get("value") for p in testcases["good"].iter("property")}
    assert properties == {
        "kp.weighted_score": "1.0",
        "kp.score.operation-accuracy": "1.0",
        "kp.score.content-quality": "1.0",
    }


def test_the_summary_and_junit_message_are_the_failures_first_line(
    pytester: pytest.Pytester, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-rf (whole on CI) and the JUnit message give the verdict alone; the diagnosis follows it
    in the element text, not cut into the message after ~500 characters."""
    monkeypatch.setenv("CI", "true")  # pytest then prints the summary's message uncut
    project(rename_case("good"), rename_case("stays-cart", renamed="Cart"))
    result = pytester.runpytest("-rf", "--junitxml=report.xml")
    verdict = "Failed: 1 scorer below threshold: content-quality 0.000 < 0.600"
    summary = result.stdout.lines[
        result.stdout.lines.index(
            next(line for line in result.stdout.lines if line.startswith("FAILED"))
        ) :
    ]
    assert summary[0].endswith(f"::stays-cart - {verdict}")
    assert not any("FAIL stays-cart" in line for line in summary[1:])
    root = ET.parse(pytester.path / "report.xml").getroot()
    (failure,) = root.iter("failure")
    assert failure.get("message") == verdict
    assert "Pattern 'Basket' not found" in (failure.text or "")


def test_assert_passes_fails_a_users_test_with_the_diagnosis(pytester: pytest.Pytester) -> None:
    """In a user's test the AssertionError carries the diagnosis; the helper's frame is hidden."""
    pytester.makepyfile(
        test_model="""
        from knowledgepulse.evals import evaluate_case, parse_case, preset
        from knowledgepulse.testing import assert_passes

        def test_model_output():
            case = parse_case({
                "id": "mine",
                "pages": [{"id": "p", "blocks": [{"id": "b1", "type": "p", "content": "Cart"}]}],
                "actual": {"operations": []},
                "expected": {"operations": [{"type": "update", "targetBlockId": "b1"}]},
            })
            assert_passes(evaluate_case(preset("standard"), case))
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*assert_passes(evaluate_case(preset("standard"), case))',
            "E * AssertionError: 2 scorers below threshold: operation-accuracy 0.000 < 0.800, "
            "target-block-precision 0.000 < 0.750",
            "E * FAIL mine  <case>  weighted 0.333",
        ]
    )
    assert "raise AssertionError" not in result.stdout.str()


def test_a_duplicate_case_id_is_a_warning_at_its_line_and_both_cases_run(
    pytester: pytest.Pytester, project: Project
) -> None:
    """The second use of an id gets a unique node id and a warning pointing at the case file."""
    project(rename_case("twice"), rename_case("twice"))
    result = pytester.runpytest("-v", "-W", "default::knowledgepulse.pytest_plugin.EvalWarning")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*::twice PASSED*", literal("*::twice[2] PASSED*")])
    result.stdout.fnmatch_lines(
        ["*cases.jsonl:2: EvalWarning: id: the case id 'twice' is also used at cases.jsonl:1*"]
    )


def test_a_warning_made_an_error_fails_its_case_with_the_warning(
    pytester: pytest.Pytester, project: Project
) -> None:
    """-W error::EvalWarning turns the duplicate id into that case's failure, not a traceback."""
    project(rename_case("twice"), rename_case("twice"))
    result = pytester.runpytest("-W", "error::knowledgepulse.pytest_plugin.EvalWarning")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["id: the case id 'twice' is also used at cases.jsonl:1*"])
    assert "Traceback" not in result.stdout.str()


def test_an_expected_block_the_pages_lack_is_a_warning_at_its_case(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A typo in an expected block id is told in pytest's warnings summary, naming the id meant."""
    typo = rename_case("typo")
    typo["expected"] = {"operations": [op("update", "B1")], "contentPatterns": ["Basket"]}
    project(typo)
    result = pytester.runpytest("-W", "default::knowledgepulse.pytest_plugin.EvalWarning")
    result.assert_outcomes(failed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*cases.jsonl:1: EvalWarning: expected.operations[[]0[]].targetBlockId: 'B1' names no"
            " block of page 'p' (did you mean 'b1'?)*"
        ]
    )


def test_the_session_ends_with_each_evaluations_summary(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Pass rate, weighted mean and the scorer means of the cases that ran, per evaluation file."""
    project(rename_case("good"), rename_case("stays-cart", renamed="Cart"))
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        [
            "*knowledgepulse evaluations*",
            "evals.kp.yaml: 1 of 2 cases passed (50.0%); weighted mean 0.750",
            "  scorer means: operation-accuracy 1.000, content-quality 0.500",
        ]
    )


def test_kp_suite_evaluates_the_case_files_given_as_arguments(
    pytester: pytest.Pytester, project: Project
) -> None:
    """--kp-suite: each case of each named case file is a test; the header names the suite."""
    project()
    (pytester.path / "evals.kp.yaml").unlink()
    write_jsonl(pytester.path / "a.jsonl", [rename_case("a1"), rename_case("a2", renamed="Cart")])
    write_jsonl(pytester.path / "b.jsonl", [rename_case("b1")])
    result = pytester.runpytest("--kp-suite", "suite.yaml", "a.jsonl", "b.jsonl", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "knowledgepulse: suite rename (2 scorers) for the case files given as arguments",
            "*",
            "a.jsonl::a1 PASSED*",
            "a.jsonl::a2 FAILED*",
            "b.jsonl::b1 PASSED*",
        ]
    )


def test_kp_preset_with_an_unknown_name_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """A preset typo stops the session with exit 4 and the closest preset name."""
    result = pytester.runpytest("--kp-preset", "strct", "cases.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: unknown preset 'strct'. Did you mean 'strict'?*"])
    # The way out is named as pytest's command line spells it, not as the library's function.
    result.stderr.fnmatch_lines(["*write your own suite file and load it (--kp-suite FILE)"])


def test_kp_suite_with_a_bad_suite_is_a_usage_error_listing_every_problem(
    pytester: pytest.Pytester,
) -> None:
    """No case runs; each problem of the --kp-suite file is printed with its line."""
    (pytester.path / "suite.yaml").write_text(
        "scorers:\n  - type: nope\n    weight: -1\n", encoding="utf-8"
    )
    result = pytester.runpytest("--kp-suite", "suite.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: suite.yaml: 2 problems in the suite",
            literal("  suite.yaml:2: scorers[0].type: unknown scorer type 'nope'*"),
            literal("  suite.yaml:3: scorers[0].weight: got -1*"),
            "fix the suite; no case was run",
        ]
    )


def test_the_help_names_the_options_and_every_preset(pytester: pytest.Pytester) -> None:
    """pytest --help lists --kp-suite, --kp-preset with each built-in preset, and the ini key."""
    result = pytester.runpytest("--help")
    text = " ".join(result.stdout.str().split())
    assert "--kp-suite=FILE" in text
    assert "kp_eval_files" in text
    for name in PRESET_NAMES:
        assert name in text.split("--kp-preset=NAME", 1)[1]


def test_the_plugin_leaves_a_session_without_evaluations_alone(
    pytester: pytest.Pytester,
) -> None:
    """Case, suite and YAML files not named as evaluations are not collected; no extra output."""
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    (pytester.path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    write_jsonl(pytester.path / "cases.jsonl", [rename_case("x")])
    (pytester.path / "eval_cases.yaml").write_text("suite: suite.yaml\ncases: cases.jsonl\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    mentions = [line for line in result.outlines if "knowledgepulse" in line]
    assert [line for line in mentions if not line.startswith("plugins:")] == []


def test_the_kp_eval_files_ini_option_chooses_which_files_are_evaluations(
    pytester: pytest.Pytester, project: Project
) -> None:
    """With kp_eval_files = eval_*.yaml, an eval_ file is collected and *.kp.yaml no longer is."""
    project(rename_case("x"))
    (pytester.path / "eval_renames.yaml").write_text("suite: suite.yaml\ncases: cases.jsonl\n")
    pytester.makeini("[pytest]\nkp_eval_files = eval_*.yaml\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["eval_renames.yaml::x PASSED*"])


def test_importing_the_plugin_imports_no_renderer() -> None:
    """Loading the plugin (every pytest session does) pulls in neither rich nor the reports."""
    code = (
        "import sys, knowledgepulse.pytest_plugin; "
        "print(sorted(m for m in ('rich', 'knowledgepulse.reports') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_shipped_examples_run_as_the_docs_say(pytester: pytest.Pytester) -> None:
    """examples/pytest: five bulk-edit cases and one summary fail on purpose; the rest pass."""
    examples = Path(__file__).parents[2] / "examples" / "pytest"
    result = pytester.runpytest("-p", "no:cacheprovider", str(examples))
    result.assert_outcomes(passed=10, failed=6)
    result.stdout.fnmatch_lines(
        [
            "*bulk_edit.kp.yaml: 4 of 9 cases passed (44.4%)*",
            "*rename.kp.yaml: 2 of 2 cases passed (100.0%)*",
            "*summaries.kp.yaml: 3 of 4 cases passed (75.0%)*",
        ]
    )


def test_the_run_docs_evals_pytest_shows_is_what_pytest_prints(tmp_path: Path) -> None:
    """ "What a run shows": its command, run beside the examples on a 100-column terminal,
    prints the block's lines, from the failing case's heading to the short summary."""
    repo = Path(__file__).parents[2]
    page = (repo / "docs" / "evals-pytest.md").read_text("utf-8")
    section = page.split("## What a run shows\n", 1)[1]
    block = section.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    command, shown = shlex.split(block[0].removeprefix("$ ")), block[1:]
    assert command[0] == "pytest"
    (tmp_path / "examples").symlink_to(repo / "examples", target_is_directory=True)
    # As on a user's terminal: under CI (CI, BUILD_NUMBER) pytest does not cut summary lines.
    environment = {
        **{key: value for key, value in os.environ.items() if key not in ("CI", "BUILD_NUMBER")},
        "COLUMNS": "100",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    printed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *command[1:]],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert shown[0] in printed, "\n".join(printed)
    start = printed.index(shown[0])
    assert printed[start : start + len(shown)] == shown


@pytest.mark.parametrize("given", [("evals.kp.yaml",), ("--kp-preset", "standard", "empty.jsonl")])
def test_case_files_that_hold_no_case_are_a_collection_error(
    pytester: pytest.Pytester, given: tuple[str, ...]
) -> None:
    """As kp eval exits 1 over no case, an evaluation of nothing fails instead of passing."""
    (pytester.path / "empty.jsonl").write_text("\n", encoding="utf-8")
    (pytester.path / "evals.kp.yaml").write_text("preset: standard\ncases: empty.jsonl\n")
    (pytester.path / "test_other.py").write_text("def test_fine():\n    pass\n")
    result = pytester.runpytest(*given, "test_other.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*hold no case, so nothing would be checked*"])


def test_a_refused_value_holding_a_secret_fails_without_quoting_the_secret(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A malformed case's message quotes the value it refuses: a secret in it is redacted, as
    in kp's other messages, since a failure goes to CI logs."""
    token = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    bad = rename_case("leaky")
    bad["actual"]["durationMs"] = token
    project(bad)
    result = pytester.runpytest("-v", "--junitxml=report.xml")
    result.assert_outcomes(failed=1)
    shown = result.stdout.str() + (pytester.path / "report.xml").read_text()
    assert "[REDACTED:api_key]" in shown
    assert token[:12] not in shown
