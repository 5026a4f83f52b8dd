"""Scorer plugins in the pytest plugin: ``plugins:`` in an evaluation file and ``--kp-plugin``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledgepulse.cli.main import main
from tests.pytest_plugin.conftest import Json, write_jsonl

pytest_plugins = ["pytester"]

SCORERS = '''
from knowledgepulse.evals import Scorer, ScoreResult, register_scorer


@register_scorer("shouts-{tag}")
class Shouts(Scorer):
    """1.0 when the output is in capitals; the diagnosis says which words are not."""

    default_threshold = 1.0
    reads = frozenset()

    def evaluate(self, actual, expected, pages):
        quiet = [w for w in str(actual).split() if not w.isupper()]
        return ScoreResult(0.0 if quiet else 1.0, {"quiet": quiet})

    def diagnose(self, result):
        return [f"not shouted: {w}" for w in result.details["quiet"]]
'''
SUITE = "name: shouting\nscorers:\n  - type: shouts-{tag}\n"
EXAMPLES = Path(__file__).parents[2] / "examples"


def said(case_id: str, text: str) -> Json:
    return {"id": case_id, "input": "say it", "actual": text}


@pytest.fixture
def shouting(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> pytest.Pytester:
    """``plugins/scorers.py`` (a scorer type unique to the test), a suite and two cases."""
    tag = request.node.name.replace("_", "-")
    (pytester.path / "plugins").mkdir()
    (pytester.path / "plugins" / "scorers.py").write_text(SCORERS.replace("{tag}", tag), "utf-8")
    (pytester.path / "suite.yaml").write_text(SUITE.replace("{tag}", tag), "utf-8")
    write_jsonl(
        pytester.path / "cases.jsonl", [said("loud", "HELLO THERE"), said("soft", "HELLO there")]
    )
    return pytester


def test_plugins_key_loads_scorers_and_their_diagnosis_fails_the_case(
    shouting: pytest.Pytester,
) -> None:
    shouting.makefile(
        ".kp.yaml", evals="suite: suite.yaml\nplugins: [plugins/scorers.py]\ncases: cases.jsonl\n"
    )
    result = shouting.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*::loud PASSED*", "*::soft FAILED*", "*not shouted: there*"])


def test_the_same_plugin_in_two_evaluation_files_loads_once(shouting: pytest.Pytester) -> None:
    text = "suite: suite.yaml\nplugins: plugins/scorers.py\ncases: cases.jsonl\n"
    shouting.makefile(".kp.yaml", one=text, two=text)
    shouting.runpytest().assert_outcomes(passed=2, failed=2)


@pytest.mark.parametrize(
    ("plugin", "said_of_it"),
    [("plugins/missing.py", "no such file"), ("no_such_scorers", "no module named")],
)
def test_a_plugin_that_cannot_load_is_a_collection_error(
    shouting: pytest.Pytester, plugin: str, said_of_it: str
) -> None:
    shouting.makefile(
        ".kp.yaml", evals=f"suite: suite.yaml\nplugins: [{plugin}]\ncases: cases.jsonl\n"
    )
    result = shouting.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*plugins[[]0]*{plugin}*{said_of_it}*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_plugin_that_raises_is_a_collection_error_naming_it(shouting: pytest.Pytester) -> None:
    (shouting.path / "plugins" / "broken.py").write_text("raise RuntimeError('boom')\n", "utf-8")
    shouting.makefile(
        ".kp.yaml", evals="suite: suite.yaml\nplugins: [plugins/broken.py]\ncases: cases.jsonl\n"
    )
    result = shouting.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*plugin*broken.py*RuntimeError: boom*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_hung_scorer_fails_its_case_at_the_evaluation_files_timeout(
    shouting: pytest.Pytester,
) -> None:
    """A scorer of the user's that hangs is bounded by `timeout` (no task needed), as in kp eval."""
    scorers = shouting.path / "plugins" / "scorers.py"
    scorers.write_text(
        scorers.read_text("utf-8").replace(
            "        quiet = ", "        __import__('time').sleep(3)\n        quiet = "
        ),
        "utf-8",
    )
    shouting.makefile(
        ".kp.yaml",
        evals="suite: suite.yaml\nplugins: [plugins/scorers.py]\ncases: cases.jsonl\n"
        "timeout: 0.2\n",
    )
    result = shouting.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*gave no result within*"])


def test_kp_plugin_loads_scorers_for_kp_suite(shouting: pytest.Pytester) -> None:
    result = shouting.runpytest(
        "--kp-suite", "suite.yaml", "--kp-plugin", "plugins/scorers.py", "cases.jsonl"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*not shouted: there*"])


def test_kp_suite_without_its_plugin_is_a_usage_error(shouting: pytest.Pytester) -> None:
    result = shouting.runpytest("--kp-suite", "suite.yaml", "cases.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*shouts-*"])


def test_kp_plugin_that_cannot_load_is_a_usage_error(shouting: pytest.Pytester) -> None:
    result = shouting.runpytest(
        "--kp-suite", "suite.yaml", "--kp-plugin", "plugins/gone.py", "cases.jsonl"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*plugin*gone.py*no such file*"])


def test_kp_plugin_without_a_suite_is_a_usage_error(shouting: pytest.Pytester) -> None:
    result = shouting.runpytest("--kp-plugin", "plugins/scorers.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kp-plugin needs --kp-suite*"])


def test_the_summaries_example_gets_kp_evals_verdicts(
    pytester: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # password-reset fails on purpose: the scripted workflow adds "24/7" support hours the
    # article never gives, which numbers-grounded catches; the other cases pass.
    summaries = EXAMPLES / "summaries"
    report = tmp_path / "report.json"
    code = main(
        [
            "eval",
            str(summaries / "cases.jsonl"),
            "--suite", str(summaries / "suite.yaml"),
            "--plugin", str(summaries / "summary_scorers.py"),
            "--task", f"{summaries / 'workflow.py'}:summarise",
            "--output", str(report),
        ]
    )  # fmt: skip
    capsys.readouterr()
    assert code == 1
    by_kp_eval = {c["id"]: c["passed"] for c in json.loads(report.read_text("utf-8"))["cases"]}
    recorded = pytester.inline_run(str(EXAMPLES / "pytest" / "summaries.kp.yaml"))
    by_pytest = {
        r.nodeid.rsplit("::", 1)[1]: r.passed
        for r in recorded.getreports("pytest_runtest_logreport")
        if r.when == "call"
    }
    assert by_pytest == by_kp_eval
    assert [case for case, passed in by_pytest.items() if not passed] == ["password-reset"]


def test_a_plugin_imported_afresh_registers_its_scorers_again(shouting: pytest.Pytester) -> None:
    # Each in-process run forgets the modules it imported, so the second imports the file anew:
    # the same class, re-registered under its own name, is no clash.
    shouting.makefile(
        ".kp.yaml", evals="suite: suite.yaml\nplugins: [plugins/scorers.py]\ncases: cases.jsonl\n"
    )
    shouting.runpytest().assert_outcomes(passed=1, failed=1)
    shouting.runpytest().assert_outcomes(passed=1, failed=1)


def test_another_scorer_under_a_taken_name_is_a_collection_error(
    shouting: pytest.Pytester,
) -> None:
    scorers = (shouting.path / "plugins" / "scorers.py").read_text("utf-8")
    (shouting.path / "plugins" / "rival.py").write_text(scorers, "utf-8")
    shouting.makefile(
        ".kp.yaml",
        evals="suite: suite.yaml\nplugins: [plugins/scorers.py, plugins/rival.py]\n"
        "cases: cases.jsonl\n",
    )
    result = shouting.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*plugins[[]1]*rival.py*already registered by scorers.Shouts*"])
