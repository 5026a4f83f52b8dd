"""The task progress bar: drawn only when asked or on a terminal, counting outputs and hits."""

from __future__ import annotations

import io
import sys

import pytest

from knowledgepulse.evals.evaluate import TaskProgress


def test_a_bar_is_drawn_while_entered_and_counts_outputs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Enabled, it is on screen inside the block and gone after; counts include cache hits."""
    with TaskProgress(3, True) as bar:
        assert bar.drawing
        bar.advance()
        bar.advance(cached=True)
    assert not bar.drawing
    assert (bar.done, bar.cached) == (2, 1)
    assert capsys.readouterr().out == ""


def test_by_default_it_draws_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """None means: when stderr is a terminal; a pipe or a log gets nothing."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with TaskProgress(3, None) as bar:
        assert not bar.drawing
    with TaskProgress(3, True) as forced:
        assert forced.drawing


def test_nothing_to_do_draws_nothing() -> None:
    """A run with no calls (every case malformed) shows no empty bar."""
    with TaskProgress(0, True) as bar:
        assert not bar.drawing
