"""evaluate(): a task over cases, then the suite over its outputs; errors, order, cache, repeats."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.errors import SettingTypeError
from knowledgepulse.evals import evaluate
from knowledgepulse.evals.evaluate import evaluate_async
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.report import EvalReport
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.reports.evals import to_json, to_markdown
from knowledgepulse.reports.junit import to_junit
from tests.evals.builders import make_suite, op, page

TEXT_SUITE = make_suite(
    {"type": "content-quality", "threshold": 1.0},
    {"type": "response-time", "params": {"max_acceptable_ms": 60_000}},
)


def text_case(case_id: str, text: str, *patterns: str) -> dict[str, Any]:
    return {
        "id": case_id,
        "instruction": "Repeat the input",
        "input": text,
        "expected": {"contentPatterns": list(patterns)},
    }


CASES = [text_case(f"c{i}", f"fact {i}", f"fact {i}") for i in range(6)]


def echo(task: TaskInput) -> str:
    return str(task.input)


def slow_echo(seconds: float) -> Any:
    """A task that takes ``seconds`` to echo its input."""

    def task(task_input: TaskInput) -> str:
        time.sleep(seconds)
        return str(task_input.input)

    return task


class Counting:
    """A sync task that counts its calls (from any thread)."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.answer = answer

    def __call__(self, task: TaskInput) -> Any:
        with self.lock:
            self.calls.append((task.case_id, task.run))
        return str(task.input) if self.answer is None else self.answer


def run(task: Any, cases: Any = CASES, suite: Any = TEXT_SUITE, **options: Any) -> EvalRun:
    return evaluate(task, cases, suite, retry_delay=0, **options)


def test_the_tasks_outputs_are_scored_and_the_verdicts_reported() -> None:
    """Each case's output is the task's answer to its input; the suite judges it."""
    result = run(lambda task: "fact 1" if task.case_id == "c1" else "nothing")
    assert [(c.case_id, c.passed) for c in result.cases] == [(f"c{i}", i == 1) for i in range(6)]
    assert result.summary.passed == 1
    assert result.summary.task is not None
    assert (result.summary.task.runs, result.summary.task.errors) == (6, 0)


def test_results_keep_the_cases_order_whatever_finishes_first() -> None:
    """Later cases answer first here; the run still lists c0..c5 in order."""

    async def task(task_input: TaskInput) -> str:
        await asyncio.sleep(0.01 * (6 - int(task_input.case_id[1:])))
        return str(task_input.input)

    assert [c.case_id for c in run(task, concurrency=6).cases] == [f"c{i}" for i in range(6)]


def test_no_more_calls_than_the_concurrency_run_at_once() -> None:
    """With concurrency 2, at most two sync calls are in flight."""
    running = 0
    most = 0
    lock = threading.Lock()

    def task(task_input: TaskInput) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return str(task_input.input)

    run(task, concurrency=2)
    assert most == 2


def test_calls_run_concurrently() -> None:
    """With concurrency 6, six calls are in flight at once: each waits for all six to start.

    A barrier rather than a clock: called one at a time the first call's wait breaks (and its
    case fails), where a bound on the elapsed time failed on a loaded machine.
    """
    together = threading.Barrier(6, timeout=30)

    def task(task_input: TaskInput) -> str:
        together.wait()
        return str(task_input.input)

    result = run(task, concurrency=6)
    assert [case.passed for case in result.cases] == [True] * 6


def test_a_task_error_is_that_cases_error_result_and_the_run_goes_on() -> None:
    """c2 raises: its scorers have no score and say why; the other cases pass."""

    def task(task_input: TaskInput) -> str:
        if task_input.case_id == "c2":
            raise RuntimeError("rate limited")
        return str(task_input.input)

    result = run(task)
    failed = result.cases[2]
    assert not failed.passed
    assert not failed.malformed
    assert failed.task is not None
    at = f"tests/evals/test_evaluate.py:{task.__code__.co_firstlineno + 2}, in task"
    assert failed.task.error == f"RuntimeError: rate limited (at {at})"
    for outcome in failed.outcomes:
        assert outcome.score is None
        assert str(outcome.error).startswith("no output to score: the task raised RuntimeError")
    assert all(c.passed for i, c in enumerate(result.cases) if i != 2)
    assert result.summary.task is not None
    assert result.summary.task.errors == 1


def test_a_timeout_is_that_cases_error_and_suggests_more_time() -> None:
    """A call past the timeout fails its case with a hint; the others are scored.

    The timeout leaves the quick calls room on a loaded machine; the slow one waits for an
    event set after the run, not for a time.
    """
    release = threading.Event()
    result = run(
        lambda task: release.wait(30) if task.case_id == "c0" else str(task.input), timeout=0.5
    )
    release.set()
    first = result.cases[0]
    assert first.task is not None
    assert first.task.timed_out
    assert "give the task more time" in str(first.outcomes[0].error)
    assert [c.passed for c in result.cases[1:]] == [True] * 5


def test_retries_are_counted_per_case() -> None:
    """A call that fails once and then answers passes, with two attempts on record."""
    failed_once: set[str] = set()

    def task(task_input: TaskInput) -> str:
        if task_input.case_id not in failed_once:
            failed_once.add(task_input.case_id)
            raise ConnectionError("blip")
        return str(task_input.input)

    result = run(task, retries=1)
    assert result.passed
    assert [c.task.attempts for c in result.cases if c.task] == [2] * 6


def test_durations_are_measured_and_scored_by_response_time() -> None:
    """Each case records how long its call took; response-time scores that duration."""
    result = run(slow_echo(0.03), concurrency=6)
    for case in result.cases:
        assert case.duration_ms is not None
        assert case.duration_ms >= 30
        time_outcome = case.outcomes[1]
        assert time_outcome.result.details["responseTimeMs"] == case.duration_ms


def test_a_slow_tasks_diagnosis_names_the_time_kp_measured() -> None:
    """The hint named only the answer's durationMs, which a task's text answer never has."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 1}})
    result = run(slow_echo(0.02), CASES[:1], suite)
    (outcome,) = result.cases[0].outcomes
    assert outcome.result.details["responseTimeMs"] == result.cases[0].duration_ms
    assert outcome.diagnosis[0] == (
        "check the answer's durationMs, else the task's time kp measured, against "
        "max_acceptable_ms (a suite parameter)"
    )


def test_an_output_giving_its_own_duration_is_scored_by_it() -> None:
    """A bulk-edit output with durationMs: response-time reads that, not the wall time."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 1000}})
    cases = [{"id": "c", "pages": [page("p", b1="x")], "expected": {"operations": []}}]
    result = run(lambda task: {"operations": [], "durationMs": 1500}, cases, suite)
    assert result.cases[0].outcomes[0].score == 0.5


def test_cases_the_suite_cannot_score_never_cost_a_call() -> None:
    """A case without the pages a bulk-edit scorer needs is malformed before any call."""
    task = Counting(answer={"operations": []})
    suite = make_suite({"type": "operation-accuracy"})
    good = {"id": "good", "pages": [page("p", b1="x")], "expected": {"operations": []}}
    bad = {"id": "bad", "input": "no pages", "expected": {"operations": []}}
    result = run(task, [good, bad], suite)
    assert task.calls == [("good", 0)]
    assert [(c.case_id, c.passed, c.malformed) for c in result.cases] == [
        ("good", True, False),
        ("bad", False, True),
    ]
    assert str(result.cases[1].problems[0]) == ("<cases>[1]: pages: required field is missing")


def test_an_output_a_scorer_cannot_read_fails_only_that_scorer() -> None:
    """A text answer to a mixed suite: operation-accuracy cannot read it, content-quality can."""
    suite = make_suite({"type": "operation-accuracy"}, {"type": "content-quality"})
    cases = [
        {
            "id": "c",
            "pages": [page("p", b1="x")],
            "expected": {"operations": [], "contentPatterns": ["Basket"]},
        }
    ]
    [result] = run(lambda task: "Basket", cases, suite).cases
    accuracy, content = result.outcomes
    assert accuracy.score is None
    assert accuracy.error == (
        'cannot read the output: actual: got "Basket"; expected a JSON object '
        "(needed by operation-accuracy)"
    )
    assert content.score == 1.0


def test_a_bulk_edit_task_is_scored_like_recorded_outputs() -> None:
    """A task answering with operations gets the scores those operations get from a file."""
    pages = [page("p", b1="Cart", b2="Checkout")]
    expected = {"operations": [op("update", "b1")], "contentPatterns": ["Basket"]}
    answer = {"operations": [op("update", "b1", content="Basket")]}
    suite = make_suite({"type": "operation-accuracy"}, {"type": "content-quality"})
    from_task = run(lambda task: answer, [{"id": "c", "pages": pages, "expected": expected}], suite)
    recorded = Case.model_validate(
        {"id": "c", "pages": pages, "expected": expected, "actual": answer}
    )
    assert [o.score for o in from_task.cases[0].outcomes] == [
        o.score for o in evaluate_case(suite, recorded).outcomes
    ]


def test_the_run_goes_through_every_renderer() -> None:
    """JSON (with the task's fields), Markdown and JUnit render a task run with an error."""

    def task(task_input: TaskInput) -> str:
        if task_input.case_id == "c0":
            raise ValueError("no")
        return str(task_input.input)

    result = run(task)
    document = json.loads(to_json(result))
    assert document == EvalReport.of(result).model_dump()
    first, second = document["cases"][:2]
    at = f"tests/evals/test_evaluate.py:{task.__code__.co_firstlineno + 2}, in task"
    assert first["task"]["error"] == {"type": "ValueError", "message": "no", "at": at}
    assert "duration_ms" not in first
    assert second["task"] == {"attempts": 1, "cached": False, "timed_out": False, "error": None}
    assert second["duration_ms"] >= 0
    assert document["summary"]["task"]["errors"] == 1
    assert "the task raised ValueError: no" in to_markdown(result)
    suite = ET.fromstring(to_junit(result))
    # A task that raised is an error of the run, not a failed verdict.
    assert (suite.get("errors"), suite.get("failures")) == ("1", "0")


def test_evaluate_async_runs_in_the_callers_loop() -> None:
    """In async code, await evaluate_async; evaluate() says so instead of failing obscurely."""

    async def main() -> EvalRun:
        with pytest.raises(RuntimeError, match="await evaluate_async"):
            evaluate(echo, CASES, TEXT_SUITE)
        return await evaluate_async(echo, CASES, TEXT_SUITE)

    assert asyncio.run(main()).passed


def test_evaluate_is_named_and_typed_as_itself() -> None:
    """The sync twin keeps evaluate_async's parameters but its own name (help(), tracebacks)."""
    assert (evaluate.__name__, evaluate.__qualname__) == ("evaluate", "evaluate")
    assert inspect.signature(evaluate) == inspect.signature(evaluate_async)


def test_cases_and_suite_may_be_files(tmp_path: Path) -> None:
    """A case file and a suite file by path; locations point into the case file."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES[:2]))
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers:\n  - type: content-quality\n")
    result = run(echo, cases, suite)
    assert [str(c.location) for c in result.cases] == [f"{cases}:1", f"{cases}:2"]
    assert result.passed


def test_a_malformed_record_is_reported_and_the_others_run() -> None:
    """A case with an unknown key is malformed; the task still answers the valid ones."""
    task = Counting()
    result = run(task, [CASES[0], {"id": "typo", "inptu": "x"}])
    assert [c.malformed for c in result.cases] == [False, True]
    assert task.calls == [("c0", 0)]


@pytest.mark.parametrize("repeat", [1, 2])
def test_an_answers_misspelt_operation_type_is_warned_as_a_recorded_ones_is(repeat: int) -> None:
    """The did-you-mean warning of a case file's unknown type, once, and the same scores; before,
    only the scorers' details said it."""
    pages = [page("p", b1="Cart")]
    expected = {"operations": [op("update", "b1")]}
    answer = {"operations": [op("updte", "b1", content="Basket")]}
    suite = make_suite({"type": "operation-accuracy"})
    case = {"id": "c", "pages": pages, "expected": expected}
    [result] = evaluate(lambda task: answer, [case], suite, repeat=repeat).cases
    recorded = run_suite(suite, [{**case, "actual": answer}]).cases[0]
    [warning] = result.warnings
    assert warning == recorded.warnings[0]
    assert warning.path == "actual.operations[0].type"
    assert "Did you mean 'update'?" in warning.message
    assert [o.score for o in result.outcomes] == [o.score for o in recorded.outcomes]


def test_a_cases_own_warning_is_not_repeated_by_its_answers_check() -> None:
    """An expected block the pages lack is warned of once, though the answer is checked too."""
    case = {
        "id": "c",
        "pages": [page("p", b1="Cart")],
        "expected": {"operations": [op("update", "b9")]},
    }
    answer = {"operations": [op("update", "b1", content="Basket")]}
    suite = make_suite({"type": "operation-accuracy"})
    [result] = evaluate(lambda task: answer, [case], suite).cases
    assert [w.path for w in result.warnings] == ["expected.operations[0].targetBlockId"]


def test_a_task_that_cannot_take_the_one_task_input_is_refused_before_any_call() -> None:
    """evaluate() refuses a zero-argument task up front, not with a TypeError in every case."""
    calls: list[str] = []

    def no_argument() -> str:
        calls.append("called")
        return "x"

    with pytest.raises(
        SettingTypeError, match=r"task: no_argument\(\).* \(at .*\) cannot be called"
    ):
        evaluate(no_argument, [text_case("a", "x", "x")], TEXT_SUITE)  # type: ignore[arg-type]
    assert calls == []
