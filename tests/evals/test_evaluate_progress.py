"""evaluate()'s progress: reported to a callback, counting outputs and cache hits; never drawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from knowledgepulse.evals import evaluate
from knowledgepulse.evals.evaluate import TaskProgress
from tests.evals.test_evaluate import CASES, TEXT_SUITE, echo


def test_progress_is_told_before_the_first_call_and_after_each_output() -> None:
    """Six cases, two runs each: 0 of 12 first, then one more each time, up to 12 of 12."""
    seen: list[TaskProgress] = []
    evaluate(echo, CASES, TEXT_SUITE, repeat=2, progress=seen.append)
    assert seen[0] == TaskProgress(0, 12, 0)
    assert [report.done for report in seen] == list(range(13))
    assert {report.total for report in seen} == {12}


def test_progress_counts_the_outputs_read_from_the_cache(tmp_path: Path) -> None:
    """A rerun under the same task version reads every output from the cache, and says so."""
    evaluate(echo, CASES, TEXT_SUITE, task_version="v1", cache_dir=tmp_path)
    seen: list[TaskProgress] = []
    evaluate(echo, CASES, TEXT_SUITE, task_version="v1", cache_dir=tmp_path, progress=seen.append)
    assert seen[-1] == TaskProgress(6, 6, 6)


def test_a_run_with_no_calls_reports_nothing_to_do() -> None:
    """Every case malformed: one report of 0 of 0, so a shell draws no empty bar."""
    seen: list[TaskProgress] = []
    evaluate(echo, [{"id": "typo", "inptu": "x"}], TEXT_SUITE, progress=seen.append)
    assert seen == [TaskProgress(0, 0, 0)]


def test_evaluating_imports_no_rich() -> None:
    """The library draws nothing: evaluating with a progress callback never loads rich."""
    code = (
        "import sys\n"
        "from knowledgepulse.evals import evaluate\n"
        "from knowledgepulse.evals.suite import suite_from_dict\n"
        "suite = suite_from_dict({'name': 's', 'scorers': [{'type': 'content-quality'}]})\n"
        "case = {'id': 'c', 'instruction': 'say hi', 'input': 'hi',\n"
        "        'expected': {'contentPatterns': ['hi']}}\n"
        "run = evaluate(lambda task: 'hi', [case], suite, progress=print)\n"
        "assert run.passed\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'rich'], 'rich was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "TaskProgress(done=1, total=1, cached=0)" in done.stdout
