"""docs/evals-tasks.md's Python example runs as written, on a copy of the bundled summaries."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from knowledgepulse.evals.results import EvalRun
from tests.paths import REPO

PAGE = (REPO / "docs" / "evals-tasks.md").read_text("utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE, re.S | re.M)


def test_the_evaluate_block_runs_on_the_examples_and_defines_all_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block calling evaluate() runs alone (every name it uses defined in it) and scores
    every case of examples/summaries, caching the outputs under its task_version."""
    (block,) = [code for code in BLOCKS if "run = evaluate(" in code]
    shutil.copytree(REPO / "examples" / "summaries", tmp_path / "examples" / "summaries")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(block, "evals-tasks.md", "exec"), namespace)
    run = namespace["run"]
    assert isinstance(run, EvalRun)
    lines = (tmp_path / "examples" / "summaries" / "cases.jsonl").read_text("utf-8").splitlines()
    assert run.summary.cases == sum(bool(line.strip()) for line in lines)
    assert run.summary.task is not None
    assert run.summary.task.errors == 0
