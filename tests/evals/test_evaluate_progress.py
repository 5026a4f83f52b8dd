"""The task progress bar: drawn only when asked or on a terminal, counting outputs and hits."""

from __future__ import annotations

import io
import sys

import pytest

from knowledgepulse.evals.evaluate import task_progress


def _stderr(monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> io.StringIO:
    # Replaced in the test's body: pytest's capture resets sys.stderr after fixtures.
    stream = io.StringIO()
    monkeypatch.setattr(stream, "isatty", lambda: terminal)
    monkeypatch.setattr(sys, "stderr", stream)
    return stream


def test_a_bar_counts_outputs_and_cache_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Enabled, the bar on stderr counts every output and the cache hits among them."""
    stderr = _stderr(monkeypatch, terminal=True)
    with task_progress(3, True) as advance:
        advance(False)
        advance(True)
    assert "2/3" in stderr.getvalue()
    assert "1 cached" in stderr.getvalue()


def test_by_default_it_draws_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """None means: when stderr is a terminal; a pipe or a log gets nothing."""
    stderr = _stderr(monkeypatch, terminal=False)
    with task_progress(3, None) as advance:
        advance(False)
    assert stderr.getvalue() == ""


def test_nothing_to_do_draws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with no calls (every case malformed) shows no empty bar."""
    stderr = _stderr(monkeypatch, terminal=True)
    with task_progress(0, True):
        pass
    assert stderr.getvalue() == ""
