"""The output cache: a rerun after changing the suite calls nothing; a new input or version does."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.errors import OutputError
from knowledgepulse.evals import evaluate
from knowledgepulse.evals.evaluate import OutputCache
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.tasks import TaskInput
from tests.evals.builders import make_suite
from tests.evals.test_evaluate import CASES, TEXT_SUITE, Counting, text_case


def cached_run(
    task: Any, cache_dir: Path, cases: Any = CASES, suite: Any = TEXT_SUITE, **options: Any
) -> EvalRun:
    options.setdefault("task_version", "v1")
    return evaluate(task, cases, suite, cache_dir=cache_dir, **options)


def files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


def test_a_rerun_after_changing_only_the_suite_calls_nothing(tmp_path: Path) -> None:
    """Same outputs, same durations, re-scored by the new suite, without one call."""
    first_task, again_task = Counting(), Counting()
    first = cached_run(first_task, tmp_path)
    stricter = make_suite({"type": "content-quality", "name": "facts", "threshold": 0.5})
    again = cached_run(again_task, tmp_path, suite=stricter)
    assert len(first_task.calls) == 6
    assert again_task.calls == []
    assert [c.task.cached for c in again.cases if c.task] == [True] * 6
    assert [c.duration_ms for c in again.cases] == [c.duration_ms for c in first.cases]
    assert [o.key for o in again.cases[0].outcomes] == ["facts"]
    assert again.summary.task is not None
    assert again.summary.task.cached == 6


def test_changing_what_is_expected_reuses_the_outputs(tmp_path: Path) -> None:
    """The expectation is not part of the key: a fixed pattern re-scores cached answers."""
    cached_run(Counting(), tmp_path)
    task = Counting()
    changed = [{**case, "expected": {"contentPatterns": ["nothing"]}} for case in CASES]
    result = cached_run(task, tmp_path, changed)
    assert task.calls == []
    assert not any(c.passed for c in result.cases)


def test_a_changed_input_or_version_calls_the_task_again(tmp_path: Path) -> None:
    """Only the case whose input changed is called; a new version calls every case."""
    cached_run(Counting(), tmp_path)
    task = Counting()
    cases = [*CASES[:5], text_case("c5", "new text", "new")]
    cached_run(task, tmp_path, cases)
    assert task.calls == [("c5", 0)]
    task = Counting()
    cached_run(task, tmp_path, task_version="v2")
    assert len(task.calls) == 6


def test_without_a_task_version_nothing_is_cached(tmp_path: Path) -> None:
    """No version, no way to know when the task changed: every run calls, nothing is written."""
    task = Counting()
    cached_run(task, tmp_path, task_version=None)
    cached_run(task, tmp_path, task_version=None)
    assert len(task.calls) == 12
    assert files(tmp_path) == []


def test_each_repetition_is_cached_on_its_own(tmp_path: Path) -> None:
    """repeat=2 keeps two outputs per case, and a rerun reads both."""
    cached_run(Counting(), tmp_path, CASES[:2], repeat=2)
    assert len(files(tmp_path)) == 4
    task = Counting()
    cached_run(task, tmp_path, CASES[:2], repeat=2)
    assert task.calls == []


def test_failures_are_not_cached(tmp_path: Path) -> None:
    """A task that raised is called again next time."""

    def broken(task: TaskInput) -> str:
        raise RuntimeError("down")

    cached_run(broken, tmp_path)
    assert files(tmp_path) == []


def test_an_unreadable_cache_file_is_a_miss_and_is_rewritten(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged file costs one call and a warning, never the run."""
    cached_run(Counting(), tmp_path, CASES[:1])
    [path] = files(tmp_path)
    path.write_text("{half a fi")
    task = Counting()
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        result = cached_run(task, tmp_path, CASES[:1])
    assert task.calls == [("c0", 0)]
    assert result.passed
    assert "cannot be read" in caplog.text
    assert '"output": "fact 0"' in path.read_text()


def test_a_cache_path_that_is_a_file_fails_before_any_call(tmp_path: Path) -> None:
    """A file where the directory should be is refused, and the error says how to get around it."""
    blocker = tmp_path / "outputs"
    blocker.write_text("")
    task = Counting()
    with pytest.raises(OutputError, match=r"cannot use .* or turn the cache off"):
        cached_run(task, blocker)
    assert task.calls == []


inputs = st.builds(
    TaskInput,
    st.sampled_from(["a", "b"]),
    st.none() | st.sampled_from(["Summarise", "Translate"]),
    st.none() | st.text(max_size=5) | st.dictionaries(st.text(max_size=3), st.integers()),
    st.just(()),
    st.none() | st.just({"lang": "ja"}),
    st.integers(0, 2),
)


@given(first=inputs, second=inputs)
def test_two_inputs_share_a_key_exactly_when_the_task_would_see_the_same(
    first: TaskInput, second: TaskInput
) -> None:
    """The key is a function of the input and run alone, and tells different ones apart."""
    cache = OutputCache("unused", task="m:f", task_version="v1")
    same = (first.to_json(), first.run) == (second.to_json(), second.run)
    assert (cache.key(first) == cache.key(second)) == same


def test_the_task_and_its_version_are_part_of_the_key() -> None:
    """Two tasks, or two versions of one, never read each other's outputs."""
    task_input = TaskInput("c", None, "x", (), None)
    keys = {
        OutputCache("d", task=task, task_version=version).key(task_input)
        for task in ("m:f", "m:g")
        for version in ("v1", "v2")
    }
    assert len(keys) == 4
