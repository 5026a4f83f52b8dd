"""The progress bars: reading (bytes of plain files, else a count) and kp eval's task calls."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from knowledgepulse.evals.evaluate import TaskProgress
from knowledgepulse.reports.terminal import ReadProgress, TaskBar


def test_plain_files_are_measured_in_bytes(tmp_path: Path) -> None:
    """With plain files the total is their size, so the bar moves while they are read."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"x" * 10)
    second.write_bytes(b"y" * 32)
    progress = ReadProgress.for_sources([str(first), str(second)])
    assert progress.total_bytes == 42


def test_stdin_and_gzip_are_counted_not_sized(tmp_path: Path) -> None:
    """Standard input and compressed files have no known size: the bar counts traces instead."""
    for name in ("a.jsonl.gz", "a.jsonl.xz", "a.jsonl.bz2"):
        (tmp_path / name).write_bytes(b"\x1f\x8b")
        assert ReadProgress.for_sources([str(tmp_path / name)]).total_bytes is None
    assert ReadProgress.for_sources(["-"]).total_bytes is None


def test_a_disabled_progress_draws_nothing_and_costs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Off a terminal nothing is started; advancing is a no-op."""
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    with ReadProgress(100) as progress:
        progress.advance(50)
        progress.scored(1)
        assert progress.bar is None


def _stderr(monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> io.StringIO:
    # Replaced in the test's body: pytest's capture resets sys.stderr after fixtures.
    stream = io.StringIO()
    monkeypatch.setattr(stream, "isatty", lambda: terminal)
    monkeypatch.setattr(sys, "stderr", stream)
    return stream


def test_the_task_bar_counts_outputs_and_cache_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, kp eval's bar shows the outputs in of the total, and the cache hits."""
    stderr = _stderr(monkeypatch, terminal=True)
    with TaskBar() as bar:
        for report in (TaskProgress(0, 3, 0), TaskProgress(1, 3, 0), TaskProgress(2, 3, 1)):
            bar(report)
    assert "2/3" in stderr.getvalue()
    assert "1 cached" in stderr.getvalue()


def test_the_task_bar_draws_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe or a log gets nothing."""
    stderr = _stderr(monkeypatch, terminal=False)
    with TaskBar() as bar:
        bar(TaskProgress(1, 3, 0))
        assert bar.bar is None
    assert stderr.getvalue() == ""


def test_the_task_bar_draws_nothing_when_there_is_nothing_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run with no calls (every case malformed) shows no empty bar."""
    stderr = _stderr(monkeypatch, terminal=True)
    with TaskBar() as bar:
        bar(TaskProgress(0, 0, 0))
    assert stderr.getvalue() == ""
