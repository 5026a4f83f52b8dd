"""On a system without ``fcntl`` and ``os.pread`` (Windows), kp scores and selects with caches in
memory or ``.npz`` files, and refuses a ring file saying why; no process is signalled to find out
whether a temporary's writer is alive (Windows' ``os.kill`` terminates whatever the signal).

CI runs on Linux: the other system is simulated by hiding both from a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledgepulse._util import atomic
from knowledgepulse.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"

_RUN_WITHOUT_LOCKS = """
import json, os, sys
sys.modules["fcntl"] = None  # importing it raises ImportError, as on Windows
del os.pread
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from knowledgepulse.cli.main import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def _kp_without_locks(*argvs: list[str]) -> list[tuple[int, str, str]]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN_WITHOUT_LOCKS, json.dumps(argvs)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return [tuple(result) for result in json.loads(done.stdout)]


def test_scoring_and_selecting_need_no_file_locks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    score = ["score", "--embedder", "static", "-f", "jsonl", str(EXAMPLE)]
    select = ["select", "--budget", "3", "--embedder", "static", str(EXAMPLE)]
    npz, ring = tmp_path / "cache.npz", tmp_path / "cache.kpc"
    *unlocked, with_npz, with_ring = _kp_without_locks(
        score,
        select,
        ["score", "--embedder", "static", "--cache", str(npz), str(EXAMPLE)],
        ["score", "--embedder", "static", "--cache", str(ring), str(EXAMPLE)],
    )
    for argv, (code, out, _) in zip([score, select], unlocked, strict=True):
        assert code == main(argv)
        assert out == capsys.readouterr().out  # the same bytes as with file locks
    assert with_npz[0] == 0
    assert npz.is_file()
    code, _, said = with_ring
    assert code == 2
    assert f"{ring}: a ring-file cache needs POSIX file locks" in said
    assert "give a name ending in .npz" in said
    assert "Traceback" not in said
    assert not ring.exists()
    assert not list(tmp_path.glob(".cache.kpc.*"))  # no temporary made before refusing


def test_no_process_is_signalled_where_os_kill_terminates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.jsonl"
    stale = tmp_path / f".out.jsonl.abc.{os.getpid() + 1}.kp-tmp"
    stale.write_text("")
    signalled: list[int] = []
    monkeypatch.setattr(atomic, "_KILL_ASKS", False)
    monkeypatch.setattr(os, "kill", lambda pid, signal: signalled.append(pid))
    atomic.remove_stale_temporaries(target)
    assert signalled == []
    assert stale.exists()  # kept: its writer may be alive
