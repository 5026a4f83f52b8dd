"""A ``kp`` run killed (SIGKILL) or terminated (SIGTERM) leaves no embedding worker behind."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"

pytestmark = [
    pytest.mark.embedder,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def _workers(parent: int) -> list[int]:
    """The multiprocessing children of ``parent`` (workers and resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or gone meanwhile
            continue
        if f"\nPPid:\t{parent}\n" in status and b"multiprocessing" in command:
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


_SCORE = ("score", "--workers", "2", "--batch-size", "1", "-f", "jsonl")


def _scored_one(*args: str) -> subprocess.Popen[bytes]:
    """``kp ARGS`` reading standard input, once it has scored the first example trace."""
    run = subprocess.Popen(
        [sys.executable, "-m", "knowledgepulse.cli.main", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert run.stdin is not None
    assert run.stdout is not None
    run.stdin.write((EXAMPLES / "traces.jsonl").read_bytes().splitlines(keepends=True)[0])
    run.stdin.flush()
    ready, _, _ = select.select([run.stdout], [], [], 60)
    assert ready, "no trace scored within 60 s"
    return run


@pytest.fixture
def scoring() -> Iterator[tuple[subprocess.Popen[bytes], list[int]]]:
    """``kp score --workers 2`` that has scored one trace and waits for more; its workers."""
    run = _scored_one(*_SCORE)
    workers = _workers(run.pid)
    yield run, workers
    run.kill()
    _ended(run, workers)


# Workers exit within milliseconds of their parent; the bound is for a loaded CI machine (2 cores,
# load 20), where 5 s was within reach. The loop returns as soon as none is left.
_WORKERS_END_WITHIN_S = 60


def _ended(run: subprocess.Popen[bytes], workers: list[int]) -> tuple[list[int], str]:
    """The workers still running a minute after ``run`` ended (then killed), and its stderr."""
    run.wait(30)
    deadline = time.monotonic() + _WORKERS_END_WITHIN_S
    while (alive := [pid for pid in workers if _running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in alive:  # else they would hold the output pipes open for ever
        os.kill(pid, signal.SIGKILL)
    _, err = run.communicate()
    return alive, err.decode()


def test_the_workers_end_when_kp_is_killed(
    scoring: tuple[subprocess.Popen[bytes], list[int]],
) -> None:
    """kill -9 of kp: its worker processes see their parent gone and exit within seconds."""
    run, workers = scoring
    assert workers
    run.kill()
    assert _ended(run, workers)[0] == []


def test_sigterm_stops_kp_as_ctrl_c_does(
    scoring: tuple[subprocess.Popen[bytes], list[int]],
) -> None:
    """kill PID (timeout, CI cancellation): one line, exit 143, workers stopped, no traceback."""
    run, workers = scoring
    assert workers
    run.terminate()
    alive, err = _ended(run, workers)
    assert (alive, run.returncode) == ([], 143)
    assert err == "kp: interrupted\n"


def test_an_interrupted_run_leaves_a_resized_cache_file_as_it_was(tmp_path: Path) -> None:
    """kill PID during kp score --cache-size N on a saved cache of another size: exit 143 and
    the file byte for byte as before, as the message says; before, the resize was written when
    the cache was opened, so the interrupted run had already dropped the oldest vectors."""
    cache = tmp_path / "seen.kpcache"
    score = ("score", "-f", "jsonl")
    kp = [sys.executable, "-m", "knowledgepulse.cli.main", *score]
    made = subprocess.run([*kp, str(EXAMPLES / "traces.jsonl"), "--cache", str(cache)], check=False)
    assert made.returncode == 0
    before = cache.read_bytes()
    run = _scored_one(*score, "-", "--cache", str(cache), "--cache-size", "3", "--batch-size", "1")
    run.terminate()
    _, err = run.communicate(timeout=30)
    assert run.returncode == 143, err.decode()
    assert cache.read_bytes() == before


def test_an_interrupted_run_leaves_no_new_cache_file(tmp_path: Path) -> None:
    """kill PID during kp score --cache NEW: exit 143 and no file at NEW, as the message says;
    before, the ring file made when the cache was opened (3.6 MB) stayed behind."""
    cache = tmp_path / "new.kpcache"
    run = _scored_one("score", "-f", "jsonl", "--batch-size", "1", "-", "--cache", str(cache))
    assert cache.exists()  # made when opened: the run is past that point
    run.terminate()
    _, err = run.communicate(timeout=30)
    assert (run.returncode, err.decode()) == (
        143,
        "kp: interrupted; nothing was written to --cache\n",
    )
    assert list(tmp_path.iterdir()) == []
