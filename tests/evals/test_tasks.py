"""Calling a task: sync or async, timed, bounded by a timeout, retried, failures recorded."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.evals.models import ActualOutput, Case
from knowledgepulse.evals.results import TaskSummary
from knowledgepulse.evals.tasks import (
    TaskAnswer,
    TaskInput,
    TaskRecord,
    call_task,
    check_options,
    output_json,
    task_name,
)
from tests.evals.builders import page

INPUT = TaskInput("c1", "Summarise", "Some text.", (), None)


def call(task: Any, **options: Any) -> TaskAnswer:
    return asyncio.run(call_task(task, INPUT, **options))


def test_task_input_carries_the_input_and_never_the_expectation() -> None:
    """instruction, input, pages and metadata reach the task; actual and expected do not."""
    case = Case.model_validate(
        {
            "id": "c1",
            "instruction": "Summarise",
            "input": {"text": "x"},
            "pages": [page("p1", b1="one")],
            "metadata": {"lang": "en"},
            "actual": "old",
            "expected": "secret",
        }
    )
    task_input = TaskInput.of(case, run=2)
    assert (task_input.instruction, task_input.input, task_input.run) == (
        "Summarise",
        {"text": "x"},
        2,
    )
    assert task_input.to_json() == {
        "id": "c1",
        "instruction": "Summarise",
        "input": {"text": "x"},
        "pages": [{"id": "p1", "blocks": [{"id": "b1", "type": "paragraph", "content": "one"}]}],
        "metadata": {"lang": "en"},
    }
    assert "secret" not in repr(task_input)


def test_a_sync_task_answers_with_its_time() -> None:
    """A plain function's return value is the output; the attempt is timed."""
    answer = call(lambda task: task.input.upper())
    assert answer.output == "SOME TEXT."
    assert answer.record == TaskRecord(attempts=1)
    assert answer.duration_ms is not None
    assert answer.duration_ms >= 0


def test_an_async_task_is_awaited() -> None:
    """A coroutine function is awaited on the loop."""

    async def task(task_input: TaskInput) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"summary": task_input.input}

    assert call(task).output == {"summary": "Some text."}


def test_a_sync_task_runs_off_the_event_loop() -> None:
    """A sync task runs in a thread of its own, not the loop's."""
    seen: list[str] = []

    def task(task_input: TaskInput) -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    call(task)
    assert seen == ["kp-task"]


def test_an_exception_is_the_answers_error_with_type_and_message() -> None:
    """A task that raises gives no output and a record saying what it raised."""

    def task(task_input: TaskInput) -> str:
        raise ValueError("the model refused")

    answer = call(task)
    assert answer.output is None
    assert answer.record.failed
    at = f"tests/evals/test_tasks.py:{task.__code__.co_firstlineno + 1}, in task"
    assert answer.record.error == f"ValueError: the model refused (at {at})"
    assert not answer.record.timed_out


def test_a_slow_task_times_out_and_is_abandoned() -> None:
    """Past the timeout the call is an error (timed_out), long before the task would end.

    The task waits for an event set after the call (30 s if never set), so the bound on the
    time leaves a loaded machine room and the abandoned thread ends with the test.
    """
    release = threading.Event()
    started = time.perf_counter()
    answer = call(lambda task: release.wait(30), timeout=0.05)
    elapsed = time.perf_counter() - started
    release.set()
    assert elapsed < 15
    assert answer.record.timed_out
    assert answer.record.error == "TimeoutError: no answer within 0.05 s"


def test_a_tasks_own_timeout_error_is_not_ours() -> None:
    """A TimeoutError the task raises itself keeps its message and is not a timeout of ours."""

    def task(task_input: TaskInput) -> str:
        raise TimeoutError("upstream gateway")

    record = call(task, timeout=5).record
    assert (record.error, record.timed_out) == ("TimeoutError: upstream gateway", False)


def test_failures_are_retried_until_one_attempt_succeeds() -> None:
    """Each exception is retried, up to ``retries`` times; the record counts the attempts."""
    calls: list[int] = []

    def flaky(task_input: TaskInput) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("try again")
        return "fine"

    answer = call(flaky, retries=2, retry_delay=0)
    assert (answer.output, answer.record.attempts, len(calls)) == ("fine", 3, 3)


def test_retries_give_up_with_the_last_error_and_the_attempt_count() -> None:
    """After 1 + retries failed attempts, the error says how many there were."""
    calls: list[int] = []

    def broken(task_input: TaskInput) -> str:
        calls.append(1)
        raise ConnectionError(f"attempt {len(calls)}")

    record = call(broken, retries=2, retry_delay=0).record
    assert len(calls) == 3
    at = f"tests/evals/test_tasks.py:{broken.__code__.co_firstlineno + 2}, in broken"
    assert record.error == f"ConnectionError: attempt 3 (at {at}) (after 3 attempts)"


def test_retries_wait_longer_each_time() -> None:
    """The backoff doubles: 0.02 s, then 0.04 s, before the second and third attempts."""
    times: list[float] = []

    def broken(task_input: TaskInput) -> str:
        times.append(time.perf_counter())
        raise ConnectionError

    call(broken, retries=2, retry_delay=0.02)
    first, second = times[1] - times[0], times[2] - times[1]
    assert first >= 0.02
    assert second >= 0.04


def test_a_pydantic_model_is_dumped_as_the_case_files_write_it() -> None:
    """ActualOutput becomes {operations, durationMs} with camelCase keys and no nulls."""
    output = ActualOutput.model_validate(
        {"operations": [{"type": "delete", "targetBlockId": "b1"}]}
    )
    assert output_json(output) == {"operations": [{"type": "delete", "targetBlockId": "b1"}]}


@dataclass
class Tagged:
    tags: set[str]


@given(st.sets(st.text(max_size=3), max_size=12), st.frozensets(st.integers() | st.text()))
def test_a_set_is_the_same_list_in_every_process(texts: set[str], mixed: frozenset[Any]) -> None:
    """A set is sorted (items that do not compare, by type and repr), not in hash order, which
    changes with each process's hash seed: the same answer gives the same report bytes."""
    assert output_json({"tags": texts}) == {"tags": sorted(texts)}
    assert output_json(Tagged(texts)) == {"tags": sorted(texts)}
    assert output_json(mixed) == output_json(frozenset(reversed(list(mixed))))


def test_numpy_scalars_and_arrays_are_numbers_and_lists() -> None:
    """What NumPy returns (an int64 from argmax, a float32, an array) is the JSON it holds."""
    np = pytest.importorskip("numpy")
    answer = {"best": np.argmax([1, 3, 2]), "p": np.float32(0.5), "v": np.array([[1, 2]])}
    assert output_json(answer) == {"best": 1, "p": 0.5, "v": [[1, 2]]}
    assert output_json(np.bool_(True)) is True


def test_a_nan_in_a_numpy_array_is_named_by_its_index() -> None:
    """A NaN in an array is the task's error, at its place, as in a list."""
    np = pytest.importorskip("numpy")
    record = call(lambda task: {"scores": np.array([0.5, np.nan])}).record
    assert "not JSON (dict): scores[1] is nan; return a str" in str(record.error_message)


@pytest.mark.parametrize("bad", [object(), float("nan"), {"x": float("inf")}])
def test_an_output_that_is_not_json_is_the_tasks_error(bad: Any) -> None:
    """An arbitrary object or NaN cannot be scored or cached: the call fails, saying so."""
    record = call(lambda task: bad).record
    assert (record.error_type, record.not_json, record.error_at) == ("TaskOutputError", True, None)
    assert str(record.reason(500)).startswith("the task returned data that is not JSON (")


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"answer": object(), "citations": []}, "answer is of type object"),
        ({"answer": "x", "scores": [0.5, float("nan")]}, "scores[1] is nan"),
        ([{"ok": 1}, {"when": (1, object())}], "[1].when[1] is of type object"),
        ({"tags": {1, object()}}, "tags is a set holding a value of type object"),
    ],
)
def test_a_value_that_is_not_json_is_named_by_its_path(bad: Any, said: str) -> None:
    """In a dict of many fields, "Unable to serialize unknown type" says neither which nor
    where: the error names the first value JSON cannot hold by its path."""
    record = call(lambda task: bad).record
    assert f"not JSON ({type(bad).__name__}): {said}; return a str" in str(record.error_message)


def test_task_name_is_module_and_qualified_name() -> None:
    """What the cache keys outputs by, besides the version."""
    assert task_name(call) == f"{__name__}:call"


def test_summary_counts_calls_errors_timeouts_and_the_cache() -> None:
    """Durations of the outputs that came; errors and timeouts counted."""
    summary = TaskSummary.of(
        [
            (TaskRecord(1), 10.0),
            (TaskRecord(0, cached=True), 30.0),
            (TaskRecord(2, error_type="TimeoutError", error_message="x", timed_out=True), None),
        ]
    )
    assert summary.model_dump() == {
        "runs": 3,
        "cached": 1,
        "errors": 1,
        "timeouts": 1,
        "mean_duration_ms": 20.0,
        "max_duration_ms": 30.0,
    }


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("concurrency", 0),
        ("concurrency", True),
        ("timeout", 0),
        ("timeout", float("inf")),
        ("retries", -1),
        ("retry_delay", -1),
        ("repeat", 0),
    ],
)
def test_settings_no_run_can_use_are_refused(setting: str, value: Any) -> None:
    """Each setting out of range is named in the error."""
    options: dict[str, Any] = {
        "concurrency": 1,
        "timeout": None,
        "retries": 0,
        "retry_delay": 0,
        "repeat": 1,
        setting: value,
    }
    with pytest.raises(ValueError, match=setting):
        check_options(**options)
