"""Repeated runs: each scorer's mean ± standard error, pass@K and the pass rate, per case."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.evals import evaluate
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.results import CaseResult
from knowledgepulse.evals.runner import combine_runs, score_context
from knowledgepulse.evals.scorer import CaseContext
from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.records import Location
from knowledgepulse.reports.evals import to_json, to_markdown
from tests.evals.builders import make_suite
from tests.evals.test_evaluate import text_case

SUITE = make_suite({"type": "content-quality", "threshold": 0.75})
CASE = text_case("c", "alpha beta gamma delta", "alpha", "beta", "gamma", "delta")


def sometimes(task: TaskInput) -> str:
    """Every word on even runs; on odd runs two of four words are lost."""
    return "alpha beta" if task.run % 2 else str(task.input)


def test_repeat_reports_means_stderr_pass_at_k_and_the_pass_rate() -> None:
    """Runs score 1, 0.5, 1: mean 0.833 ± 0.167, 2 of 3 runs passed, pass@3."""
    [result] = evaluate(sometimes, [CASE], SUITE, repeat=3).cases
    [outcome] = result.outcomes
    assert outcome.score is not None
    assert math.isclose(outcome.score, 5 / 6)
    assert result.repeat is not None
    stats = result.repeat.scorers["content-quality"]
    assert stats.stderr is not None
    assert math.isclose(stats.stderr, math.sqrt(1 / 12) / math.sqrt(3))
    assert (stats.n, stats.errors, stats.passed_runs) == (3, 0, 2)
    assert (result.repeat.passed_runs, result.repeat.pass_at_k) == (2, True)
    assert math.isclose(result.repeat.pass_rate, 2 / 3)
    assert [run.outcomes[0].score for run in result.runs] == [1.0, 0.5, 1.0]


def test_the_verdict_is_taken_on_the_means() -> None:
    """Mean 0.833 reaches 0.75, so the case passes though one run did not; at 0.9 it fails."""
    assert evaluate(sometimes, [CASE], SUITE, repeat=3).passed
    strict = make_suite({"type": "content-quality", "threshold": 0.9})
    [result] = evaluate(sometimes, [CASE], strict, repeat=3).cases
    assert not result.passed
    assert result.repeat is not None
    assert result.repeat.pass_at_k
    diagnosis = result.outcomes[0].diagnosis
    assert diagnosis[0] == "mean 0.833 ± 0.167 over 3 of 3 runs; 2 of 3 runs reached the threshold"
    assert diagnosis[1] == "lowest: run 2, score 0.500"
    assert any("Pattern 'gamma' not found" in line for line in diagnosis)


def test_a_failed_run_is_left_out_of_the_mean_and_counts_as_failed() -> None:
    """No disguised 0: the run without output is an error, the mean is over the others."""

    def task(task_input: TaskInput) -> str:
        if task_input.run == 1:
            raise RuntimeError("flaky")
        return str(task_input.input)

    [result] = evaluate(task, [CASE], SUITE, repeat=3, retry_delay=0).cases
    assert result.outcomes[0].score == 1.0
    assert result.repeat is not None
    stats = result.repeat.scorers["content-quality"]
    assert (stats.n, stats.errors, stats.passed_runs, result.repeat.passed_runs) == (2, 1, 2, 2)


def test_repeat_fields_reach_the_json_report_and_markdown_still_renders() -> None:
    """JSON: per case ``repeat`` and each run; summary ``repeat`` and task calls."""
    run = evaluate(sometimes, [CASE, CASE], SUITE, repeat=2)
    document = json.loads(to_json(run))
    case = document["cases"][0]
    assert case["repeat"]["runs"] == 2
    assert case["repeat"]["pass_at_k"] is True
    assert case["repeat"]["scorers"]["content-quality"]["passed_runs"] == 1
    assert [r["scorers"][0]["score"] for r in case["runs"]] == [1.0, 0.5]
    assert [r["task"]["attempts"] for r in case["runs"]] == [1, 1]
    assert document["summary"]["repeat"] == {
        "runs_per_case": 2,
        "pass_at_k": 1.0,
        "run_pass_rate": 0.5,
    }
    assert document["summary"]["task"]["runs"] == 4
    assert "## Evaluation" in to_markdown(run)


def _run_with(score: float) -> CaseResult:
    """A run whose content-quality score is ``score`` (k of 4 patterns found)."""
    found = round(score * 4)
    patterns = ["x"] * found + ["y"] * (4 - found)
    case = Case.model_validate({**text_case("c", "", *patterns), "actual": "x"})
    return score_context(SUITE, CaseContext(case), Location("c"))


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=6))
def test_laws_of_combined_runs(scores: Sequence[float]) -> None:
    """The mean lies within the runs' scores; pass@K iff a run passed; one run is itself."""
    runs = [_run_with(score) for score in scores]
    combined = combine_runs(SUITE, runs)
    mean = combined.outcomes[0].score
    assert mean is not None
    assert min(scores) - 1e-12 <= mean <= max(scores) + 1e-12
    assert combined.repeat is not None
    assert combined.repeat.pass_at_k == any(run.passed for run in runs)
    assert combined.repeat.passed_runs == sum(run.passed for run in runs)
    if len(runs) == 1:
        assert combined.passed == runs[0].passed
        assert combined.weighted_score == runs[0].weighted_score
