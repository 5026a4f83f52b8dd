"""Running ``kp`` in-process and capturing what it prints."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from knowledgepulse.cli.main import main


@dataclass(frozen=True)
class Run:
    """The outcome of one ``kp`` invocation."""

    code: int
    out: str
    err: str


KpRunner = Callable[..., Run]


@pytest.fixture
def kp(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> KpRunner:
    """Call ``kp ARGS...`` in-process (optionally with text on stdin)."""

    def run(*args: str, stdin: str | None = None) -> Run:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
