"""docs/evals-baselines.md's CI recipe works as written: it installs knowledgepulse from where
it is (no package index has it), and its ``kp`` steps, run in order on a copy of the bundled
eval examples, record a baseline on main and gate a pull request on it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledgepulse.cli.main import main
from tests.paths import REPO

PAGE = (REPO / "docs" / "evals-baselines.md").read_text("utf-8")
CI = PAGE.partition("## In CI")[2]
(RECIPE,) = re.findall(r"^```yaml\n(.*?)^```", CI, re.S | re.M)
STEPS: list[dict[str, Any]] = yaml.safe_load(RECIPE)["jobs"]["evals"]["steps"]


def kp_steps(event: str) -> list[str]:
    """The shell of each step that runs ``kp`` on one event, in order."""
    return [
        step["run"]
        for step in STEPS
        if str(step.get("run", "")).startswith("kp ") and event in str(step.get("if", event))
    ]


def run_step(script: str, capsys: pytest.CaptureFixture[str]) -> int:
    """One ``kp`` step in-process, read as its shell would: ``>> FILE`` appends what it prints,
    ``|| true`` makes any exit a success."""
    words = shlex.split(os.path.expandvars(script))
    tolerant = words[-2:] == ["||", "true"]
    words = words[:-2] if tolerant else words
    appended_to = words[-1] if words[-2:-1] == [">>"] else None
    words = words[:-2] if appended_to else words
    assert words[0] == "kp", script
    capsys.readouterr()
    code = main(words[1:])
    if appended_to:
        with Path(appended_to).open("a", encoding="utf-8") as summary:
            summary.write(capsys.readouterr().out)
    return 0 if tolerant else code


def test_the_recipe_installs_knowledgepulse_from_a_checkout_not_an_index() -> None:
    """The install step names a path (``pip install ./knowledgepulse``), checked out before it."""
    installs = [step["run"] for step in STEPS if "pip install" in str(step.get("run", ""))]
    assert installs == ["pip install ./knowledgepulse"]
    checkouts = [
        step.get("with", {}) for step in STEPS if step.get("uses") == "actions/checkout@v4"
    ]
    assert {"repository": "your-org/knowledgepulse", "path": "knowledgepulse"} in checkouts


def test_the_recipe_records_a_baseline_then_gates_a_pull_request_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """main's step writes baseline.json (failing cases do not fail it); the pull request's steps
    compare with it, exit 0 when nothing is worse, and write the Markdown summary."""
    shutil.copytree(REPO / "examples" / "evals", tmp_path / "evals")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    on_main, on_pull_request = kp_steps("push"), kp_steps("pull_request")
    assert len(on_main) == 1
    assert len(on_pull_request) == 2
    for script in [*on_main, *on_pull_request]:
        assert run_step(script, capsys) == 0, (script, capsys.readouterr().err)
    assert (tmp_path / "baseline.json").is_file()
    assert (tmp_path / "new.json").is_file()
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert "0 regressions" in summary, summary


def test_the_from_python_block_compares_a_run_with_a_baseline_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "From Python": on a copy of examples/evals with a baseline of the same run, the block
    prints no regression, the comparison as Markdown, and writes report.html."""
    (block,) = re.findall(
        r"^```python\n(.*?)^```", PAGE.partition("## From Python")[2], re.S | re.M
    )[:1]
    shutil.copytree(REPO / "examples" / "evals", tmp_path / "examples" / "evals")
    monkeypatch.chdir(tmp_path)
    suite, cases = "examples/evals/suite.yaml", "examples/evals/cases.jsonl"
    assert main(["eval", cases, "--suite", suite, "-f", "json", "-o", "baseline.json"]) in (0, 1)
    capsys.readouterr()
    exec(compile(block, "evals-baselines.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.startswith("0 []\n## Comparison: ")
    assert (tmp_path / "report.html").read_text("utf-8").startswith("<!DOCTYPE html>")
