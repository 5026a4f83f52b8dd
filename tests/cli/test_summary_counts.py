"""Each command that reads traces counts in its summary the records skipped and warned about."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner
from tests.paths import REPO

TRACES = REPO / "examples" / "traces"
STATIC = ("--embedder", "static")
COMMANDS = {
    "score": ("score", *STATIC),
    "select": ("select", *STATIC),
    "dedupe": ("dedupe", *STATIC),
    "redact": ("redact",),
    "convert": ("convert",),
}


def read_twice(tmp_path: Path) -> Path:
    """Two good traces, the first again (a warning: its id repeats) and a line of broken JSON."""
    good = (TRACES / "traces.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    broken = (TRACES / "invalid.jsonl").read_text(encoding="utf-8").splitlines()[2]
    path = tmp_path / "input.jsonl"
    path.write_text("\n".join([*good, good[0], broken]) + "\n", encoding="utf-8")
    return path


def summary(err: str) -> str:
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_summary_counts_the_skipped_and_the_warned(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """As kp score's does, the summary says 1 invalid record skipped and 1 warning."""
    source = read_twice(tmp_path)
    run = kp(*COMMANDS[command], str(source), "-o", str(tmp_path / "out.jsonl"))
    assert "appeared earlier in the input" in run.err
    assert "; 1 invalid record skipped; 1 warning" in summary(run.err)


def test_split_summary_counts_the_skipped_and_the_warned(kp: KpRunner, tmp_path: Path) -> None:
    """kp split's summary, like kp score's, says 1 invalid record skipped and 1 warning."""
    source = read_twice(tmp_path)
    run = kp("split", str(source), "--test", "0.3", "-o", str(tmp_path / "sets"))
    assert summary(run.err).endswith("; 1 invalid record skipped; 1 warning")


@pytest.mark.parametrize("command", ["redact", "convert"])
def test_a_repeated_id_is_said_kept_by_commands_that_score_nothing(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """kp redact and kp convert score nothing: the warning says both traces are kept."""
    source = read_twice(tmp_path)
    run = kp(*COMMANDS[command], str(source), "-o", str(tmp_path / "out.jsonl"))
    warning = next(line for line in run.err.splitlines() if "appeared earlier" in line)
    assert "both traces are kept" in warning
    assert "scored" not in warning
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 3
