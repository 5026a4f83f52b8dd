"""``kp eval --task`` and ``--plugin``: the summaries example as a user runs it, and its errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner
from tests.user_code import user_code_forgotten

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "summaries"
CASES = str(EXAMPLE / "cases.jsonl")
SUITE = str(EXAMPLE / "suite.yaml")
PLUGIN = str(EXAMPLE / "summary_scorers.py")
WORKFLOW = str(EXAMPLE / "workflow.py")
EXAMPLE_ARGS = ("eval", CASES, "--suite", SUITE, "--plugin", PLUGIN)
COUNTING_TASK = """
from pathlib import Path

LOG = Path(__file__).with_name("calls.log")


def answer(task):
    with LOG.open("a") as log:
        log.write(task.case_id + "\\n")
    if task.case_id == "returns-policy" and Path(__file__).with_name("fail").exists():
        raise RuntimeError("the model is down")
    return str(task.input)


NOT_A_FUNCTION = 42
"""
RAISES_AT = COUNTING_TASK.split("\n").index('        raise RuntimeError("the model is down")') + 1
"""The line of the task file the failing call raises at."""


@pytest.fixture(autouse=True)
def user_code() -> Iterator[None]:
    """Each test imports the example's modules afresh and leaves the registry as it found it."""
    with user_code_forgotten():
        yield


@pytest.fixture
def counting(tmp_path: Path) -> Path:
    """A task file that logs each call beside itself (``calls.log``)."""
    path = tmp_path / "kp_counting_task.py"
    path.write_text(COUNTING_TASK, encoding="utf-8")
    return path


def calls(counting: Path) -> list[str]:
    log = counting.with_name("calls.log")
    return log.read_text().split() if log.exists() else []


def test_the_example_workflow_runs_from_the_command_line(kp: KpRunner) -> None:
    """The scripted summariser: 3 of 4 pass; password-reset invents '24/7' and fails for it."""
    run = kp(*EXAMPLE_ARGS, "--task", f"{WORKFLOW}:summarise", "-f", "json")
    assert run.code == 1
    document = json.loads(run.out)
    verdicts = {case["id"]: case["passed"] for case in document["cases"]}
    assert verdicts == {
        "returns-policy": True,
        "shipping-times": True,
        "warranty": True,
        "password-reset": False,
    }
    failing = document["cases"][3]
    [grounded] = [s for s in failing["scorers"] if s["type"] == "numbers-grounded"]
    assert grounded["details"]["invented"] == ["24", "7"]
    assert grounded["diagnosis"] == ["not in the input: 24, 7"]
    assert all(case["task"]["attempts"] == 1 for case in document["cases"])
    assert document["summary"]["task"]["runs"] == 4
    assert run.err.splitlines() == [
        "3 of 4 cases passed (75.0%); weighted mean 0.926",
        "--fail-on failure: 1 failing case",
    ]


def test_the_example_gives_markdown_and_html_reports(kp: KpRunner, tmp_path: Path) -> None:
    """The same run as a Markdown summary and a self-contained HTML page."""
    markdown = kp(*EXAMPLE_ARGS, "--task", f"{WORKFLOW}:summarise", "-f", "markdown")
    assert "#### `password-reset`" in markdown.out
    assert "not in the input: 24, 7" in markdown.out
    page = tmp_path / "report.html"
    assert kp(*EXAMPLE_ARGS, "--task", f"{WORKFLOW}:summarise", "-o", str(page)).code == 1
    assert "password-reset" in page.read_text(encoding="utf-8")


def test_a_worse_prompt_shows_as_regressions_against_a_baseline(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Rerun after a change: three cases that passed now fail; exit 4 for the regression."""
    base = tmp_path / "base.json"
    assert kp(*EXAMPLE_ARGS, "--task", f"{WORKFLOW}:summarise", "-o", str(base)).code == 1
    run = kp(
        *EXAMPLE_ARGS,
        "--task",
        f"{WORKFLOW}:summarise_briefly",
        "--baseline",
        str(base),
        "-f",
        "json",
    )
    assert run.code == 4
    assert "3 regressions" in run.err


def test_the_example_runs_from_a_few_lines_of_python() -> None:
    """``python examples/summaries/workflow.py`` calls evaluate() and prints the verdicts."""
    done = subprocess.run(
        [sys.executable, WORKFLOW], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "PASS returns-policy",
        "PASS shipping-times",
        "PASS warranty",
        "FAIL password-reset",
        "3 of 4 cases passed (75.0%); weighted mean 0.926",
    ]


def test_repeat_reports_pass_at_k_for_a_varying_task(kp: KpRunner) -> None:
    """summarise_sampled drops its last sentence every second run: a fact, or the invented line."""
    run = kp(
        *EXAMPLE_ARGS, "--task", f"{WORKFLOW}:summarise_sampled", "--repeat", "3", "-f", "json"
    )
    document = json.loads(run.out)
    repeats = {case["id"]: case["repeat"]["passed_runs"] for case in document["cases"]}
    assert repeats == {"returns-policy": 3, "shipping-times": 2, "warranty": 3, "password-reset": 1}
    assert [case["passed"] for case in document["cases"]] == [True, False, True, False]
    assert all(len(case["runs"]) == 3 for case in document["cases"])
    assert document["summary"]["repeat"]["runs_per_case"] == 3
    assert document["summary"]["task"]["runs"] == 12


def test_a_task_version_caches_outputs_so_a_new_suite_calls_nothing(
    kp: KpRunner, tmp_path: Path, counting: Path
) -> None:
    """First run calls each case once; a rerun with another suite calls none."""
    cache = str(tmp_path / "cache")
    task = ("--task", f"{counting}:answer", "--task-version", "v1", "--cache-dir", cache)
    assert kp(*EXAMPLE_ARGS, *task, "-f", "json").code == 0
    assert len(calls(counting)) == 4
    other = tmp_path / "suite.yaml"
    other.write_text("scorers:\n  - type: content-quality\n    params: {ignore_case: true}\n")
    run = kp("eval", CASES, "--suite", str(other), *task, "-f", "json")
    assert len(calls(counting)) == 4
    document = json.loads(run.out)
    assert document["summary"]["task"]["cached"] == 4
    assert run.code == 0
    kp(*EXAMPLE_ARGS, *task, "--no-cache", "-f", "json")
    assert len(calls(counting)) == 8


def test_a_failing_call_is_reported_and_the_others_are_scored(kp: KpRunner, counting: Path) -> None:
    """The task's exception is that case's error, located on stderr; the run goes on."""
    counting.with_name("fail").touch()
    run = kp(*EXAMPLE_ARGS, "--task", f"{counting}:answer", "--retries", "1", "-f", "json")
    assert run.code == 1
    assert (
        f"{CASES}:1: case 'returns-policy': the task raised RuntimeError: the model is down "
        f"(at {os.path.realpath(counting)}:{RAISES_AT}, in answer) (after 2 attempts)"
    ) in run.err
    cases = json.loads(run.out)["cases"]
    assert cases[0]["task"]["error"] == {
        "type": "RuntimeError",
        "message": "the model is down",
        "at": f"{os.path.realpath(counting)}:{RAISES_AT}, in answer",  # outside the working dir
    }
    assert [case["scorers"][0]["score"] is None for case in cases] == [True, False, False, False]
    # Each scorer's reason names the option to give, as kp spells it.
    assert cases[0]["scorers"][0]["error"].endswith(
        "fix the task, or retry it (--retries) if the failure comes and goes"
    )
    assert calls(counting).count("returns-policy") == 2


def test_dry_run_with_a_task_checks_the_inputs_without_calling(
    kp: KpRunner, tmp_path: Path, counting: Path
) -> None:
    """A case missing what the suite reads of the input is reported; the task is not called."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "no-pages", "expected": {"operations": []}}) + "\n")
    run = kp(
        "eval", str(cases), "--preset", "standard", "--task", f"{counting}:answer", "--dry-run"
    )
    assert run.code == 1
    assert f"{cases}:1: pages: required field is missing" in run.err
    assert calls(counting) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("summarise", "kp: error: task 'summarise': give MODULE:FUNCTION"),
        ("kp_no_such_module:f", "no module named 'kp_no_such_module'"),
        (f"{WORKFLOW}:summarize", "has no attribute 'summarize'; did you mean 'summarise'?"),
        (f"{WORKFLOW}:HERE", "HERE is a PosixPath, not a function"),
        ("no/such/file.py:f", "task 'no/such/file.py:f': no such file"),
    ],
)
def test_a_bad_task_spec_is_a_one_line_usage_error(kp: KpRunner, spec: str, message: str) -> None:
    """Exit 2, one line on stderr, nothing on stdout, no traceback."""
    run = kp(*EXAMPLE_ARGS, "--task", spec, "-f", "json")
    assert run.code == 2
    assert run.out == ""
    assert len(run.err.strip().splitlines()) == 1
    assert message in run.err


def test_a_bad_task_a_missing_case_file_and_a_bad_suite_are_reported_in_one_run(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Each one a line of its own, the suite's problems first: one run shows all to fix
    (before, the task's error alone, and the rest one run after another)."""
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers:\n  - type: content-qualty\n")
    missing = tmp_path / "missing.jsonl"
    run = kp("eval", CASES, str(missing), "--suite", str(suite), "--task", f"{WORKFLOW}:summarize")
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert lines[0].startswith(f"{suite}:2: scorers[0].type: unknown scorer type 'content-qualty'")
    assert lines[1] == f"kp: error: {suite}: 1 problem in the suite; no case was run"
    assert "has no attribute 'summarize'; did you mean 'summarise'?" in lines[2]
    assert lines[3] == f"kp: error: {missing}: no such file"
    assert len(lines) == 4


def test_a_broken_plugin_is_a_one_line_usage_error(kp: KpRunner, tmp_path: Path) -> None:
    """A plugin that raises on import: exit 2, the exception's type and message."""
    plugin = tmp_path / "kp_broken_plugin.py"
    plugin.write_text("raise ValueError('half written')\n")
    run = kp("eval", CASES, "--preset", "standard", "--plugin", str(plugin))
    assert run.code == 2
    assert run.err.strip() == (
        f"kp: error: plugin '{plugin}': importing it raised ValueError: half written (at "
        f"{plugin}:1); fix the module (run it with python to see the traceback)"
    )


def test_without_the_plugin_the_suite_names_the_missing_scorer(kp: KpRunner) -> None:
    """The custom types are unknown until --plugin loads them: a suite error, exit 2."""
    run = kp("eval", CASES, "--suite", SUITE, "--task", f"{WORKFLOW}:summarise")
    assert run.code == 2
    assert "scorers[1].type: unknown scorer type 'word-limit'" in run.err
    assert "give it as a plugin (kp eval --plugin FILE.py;" in run.err


def test_task_settings_without_a_task_are_a_usage_error(kp: KpRunner) -> None:
    """--repeat and friends only mean something with --task."""
    run = kp("eval", CASES, "--suite", SUITE, "--repeat", "3", "--no-cache")
    assert run.code == 2
    assert "--repeat, --no-cache only apply with --task MODULE:FUNCTION" in run.err


def test_one_task_setting_without_a_task_is_named_in_the_singular(kp: KpRunner) -> None:
    """One setting 'only applies'; before, the line read '--concurrency only apply with'."""
    run = kp("eval", CASES, "--suite", SUITE, "--concurrency", "2")
    assert run.code == 2
    assert "--concurrency only applies with --task MODULE:FUNCTION" in run.err


def test_a_cache_dir_without_a_task_version_is_a_usage_error(
    kp: KpRunner, tmp_path: Path, counting: Path
) -> None:
    """--cache-dir without --task-version caches nothing: refused, naming what it needs."""
    cache = tmp_path / "cache"
    run = kp(*EXAMPLE_ARGS, "--task", f"{counting}:answer", "--cache-dir", str(cache))
    assert run.code == 2
    assert "--cache-dir holds the outputs cached under --task-version: give --task-version" in (
        run.err
    )
    assert calls(counting) == []


def test_a_module_task_is_found_from_the_working_directory(
    kp: KpRunner, tmp_path: Path, counting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--task module:function`` finds a module beside the user, as python -m would."""
    monkeypatch.chdir(counting.parent)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "c", "input": "hello", "expected": {"contentPatterns": ["hell"]}}) + "\n"
    )
    task = ("--task", "kp_counting_task:answer")
    run = kp("eval", str(cases), "--suite", SUITE, "--plugin", PLUGIN, *task, "-f", "json")
    assert json.loads(run.out)["cases"][0]["passed"] is True
    assert calls(counting) == ["c"]


def test_a_task_answers_misspelt_operation_type_is_a_warning_line(
    kp: KpRunner, tmp_path: Path
) -> None:
    """kp eval --task warns of a misspelt type at its case, with the type meant, and counts it;
    before, only the scorers' details said it, and the summary counted no warning."""
    task = tmp_path / "kp_typo_task.py"
    task.write_text(
        "def answer(task):\n"
        '    return {"operations": [{"type": "updte", "targetBlockId": "b1", "content": "x"}]}\n'
    )
    blocks = [{"id": "b1", "type": "paragraph", "content": "Cart"}]
    case = {
        "id": "c1",
        "pages": [{"id": "p1", "blocks": blocks}],
        "expected": {"operations": [{"type": "update", "targetBlockId": "b1"}]},
    }
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n")
    run = kp("eval", str(cases), "--preset", "standard", "--task", f"{task}:answer", "-f", "json")
    assert f"{cases}:1: warning: actual.operations[0].type: type 'updte' is unknown" in run.err
    assert "Did you mean 'update'?" in run.err
    assert json.loads(run.out)["summary"]["warnings"] == 1
