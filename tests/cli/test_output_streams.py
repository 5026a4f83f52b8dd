"""Where ``kp`` writes: a reader of standard output that goes away, ``-o -``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from knowledgepulse.cli.main import EXIT_OK, main

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


class _ClosedPipe(io.StringIO):
    """A standard output whose reader has gone (``kp score ... | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_goes_away_ends_the_run_with_exit_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kp score ... | head`` exits 0 with nothing on stderr, as the code means it to."""
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    code = main(["score", str(TRACES), "--no-embedder", "-f", "jsonl"])
    assert code == EXIT_OK
    assert capsys.readouterr().err == ""
