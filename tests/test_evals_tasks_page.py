"""docs/evals-tasks.md's Python example runs as written, on a copy of the bundled summaries."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from knowledgepulse.evals.cases import check_case
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.records import Location
from tests.evals.builders import make_suite
from tests.paths import REPO

PAGE = (REPO / "docs" / "evals-tasks.md").read_text("utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE, re.S | re.M)


@pytest.mark.usefixtures("isolated_registry")  # the block loads a copy of the scorer plugin
def test_the_evaluate_block_runs_on_the_examples_and_defines_all_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block calling evaluate() runs alone (every name it uses defined in it) and scores
    every case of examples/summaries, caching the outputs under its task_version."""
    (block,) = [code for code in BLOCKS if "run = evaluate(" in code]
    shutil.copytree(REPO / "examples" / "summaries", tmp_path / "examples" / "summaries")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    try:
        exec(compile(block, "evals-tasks.md", "exec"), namespace)
    finally:  # the copy's modules: a later test loading the examples' own would be refused
        for name, module in list(sys.modules.items()):
            if Path(getattr(module, "__file__", None) or "/").is_relative_to(tmp_path):
                del sys.modules[name]
    run = namespace["run"]
    assert isinstance(run, EvalRun)
    lines = (tmp_path / "examples" / "summaries" / "cases.jsonl").read_text("utf-8").splitlines()
    assert run.summary.cases == sum(bool(line.strip()) for line in lines)
    assert run.summary.task is not None
    assert run.summary.task.errors == 0


def test_the_quoted_problem_for_an_agents_object_answer_is_what_kp_says() -> None:
    """The page quotes content-quality's problem for {"answer", "tool_calls"}: word for word."""
    case = Case.model_validate({"id": "c", "actual": {"answer": "Sunny.", "tool_calls": []}})
    [problem] = check_case(case, make_suite({"type": "content-quality"}), Location("c")).problems
    quoted = re.search(r"`(actual: content-quality reads .*?)`\.", PAGE, re.S)
    assert quoted is not None
    assert " ".join(quoted.group(1).split()) == f"{problem.path}: {problem.message}"
