"""``--workers`` by default: one per core only for an input big enough to pay for starting them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from knowledgepulse.runs.embedder import WORKERS_FROM_BYTES, workers_for
from tests.cli.conftest import KpRunner


@pytest.fixture(autouse=True)
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("knowledgepulse.novelty.minilm.available_threads", lambda: 4)


def _file(tmp_path: Path, size: int, name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    return str(path)


def test_a_small_input_runs_the_model_in_this_process(tmp_path: Path) -> None:
    """8 traces (14 KB): one worker, not four processes that each take 0.8 s to start."""
    assert workers_for([_file(tmp_path, 14_000)]) == 1


def test_an_input_from_the_threshold_gets_one_worker_per_core(tmp_path: Path) -> None:
    """At WORKERS_FROM_BYTES, summed over the files, every core gets a worker."""
    half = WORKERS_FROM_BYTES // 2
    assert workers_for([_file(tmp_path, half, "a"), _file(tmp_path, half - 1, "b")]) == 1
    assert workers_for([_file(tmp_path, half, "a"), _file(tmp_path, half, "b")]) == 4


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2"])
def test_a_compressed_input_counts_for_what_it_holds(tmp_path: Path, suffix: str) -> None:
    """A compressed file counts four times its size: trace JSON compresses well."""
    path = tmp_path / f"t.jsonl{suffix}"
    path.write_bytes(b"x" * (WORKERS_FROM_BYTES // 4))
    assert workers_for([str(path)]) == 4


def test_a_pipe_gets_one_worker_per_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input of unknown size: a wrong guess costs a small input 0.8 s, not half speed."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("{}"))  # no file descriptor: size unknown
    assert workers_for([]) == 4
    assert workers_for(["-"]) == 4


def test_a_file_redirected_to_stdin_counts_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kp score - < small.jsonl: the shell gave a regular file, whose size is known."""
    with Path(_file(tmp_path, 100)).open() as stream:
        monkeypatch.setattr(sys, "stdin", stream)
        assert workers_for(["-"]) == 1


def test_one_core_means_one_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to share out on one core, whatever the size."""
    monkeypatch.setattr("knowledgepulse.novelty.minilm.available_threads", lambda: 1)
    assert workers_for([_file(tmp_path, 2 * WORKERS_FROM_BYTES)]) == 1


def test_the_help_says_when_workers_start(kp: KpRunner) -> None:
    """kp score --help documents the threshold."""
    text = " ".join(kp("score", "--help").out.split())
    assert "the cores for an input of 512 KiB or more" in text
