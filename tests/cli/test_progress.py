"""The progress bar's measure: bytes of plain files, or a count when the size is unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.cli._console import ReadProgress


def test_plain_files_are_measured_in_bytes(tmp_path: Path) -> None:
    """With plain files the total is their size, so the bar moves while they are read."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"x" * 10)
    second.write_bytes(b"y" * 32)
    progress = ReadProgress.for_sources([str(first), str(second)])
    assert progress.total_bytes == 42


def test_stdin_and_gzip_are_counted_not_sized(tmp_path: Path) -> None:
    """Standard input and compressed files have no known size: the bar counts traces instead."""
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(b"\x1f\x8b")
    assert ReadProgress.for_sources(["-"]).total_bytes is None
    assert ReadProgress.for_sources([str(gz)]).total_bytes is None


def test_a_disabled_progress_draws_nothing_and_costs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Off a terminal nothing is started; advancing is a no-op."""
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    with ReadProgress(100) as progress:
        progress.advance(50)
        progress.scored(1)
        assert progress.bar is None
