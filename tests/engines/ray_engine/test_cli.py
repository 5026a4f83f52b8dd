"""``kp score --engine ray``: the local results from Ray actors, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner
from tests.engines.ray_engine.conftest import records

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.fixture
def traces_file(tmp_path: Path, corpus_lines: list[str]) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(corpus_lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.embedder
def test_engine_ray_gives_the_local_report(
    kp: KpRunner, traces_file: Path, corpus_lines: list[str]
) -> None:
    """Same rows, scores within 1e-6, same nearest ids and windows, exit 0."""
    options = ("-f", "jsonl", "--max-windows", "2", "--batch-size", "8")
    local = kp("score", str(traces_file), *options, "--workers", "1")
    remote = kp("score", str(traces_file), *options, "--engine", "ray", "--workers", "2")
    assert (local.code, remote.code) == (0, 0), remote.err
    ours, theirs = records(remote.out), records(local.out)
    assert len(ours) == len(theirs) == len(corpus_lines)
    for mine, expected in zip(ours, theirs, strict=True):
        assert mine["id"] == expected["id"]
        assert mine["score"] == pytest.approx(expected["score"], abs=1e-6)
        assert mine["novelty_source"] == expected["novelty_source"]
        assert mine["nearest_trace"] == expected["nearest_trace"]
        assert mine["inputs"]["novelty"] == pytest.approx(expected["inputs"]["novelty"])
    # The first trace meets an empty cache; every later one is measured against a neighbour.
    assert [row["novelty_source"] for row in ours] == ["empty_cache"] + ["embedding"] * (
        len(ours) - 1
    )
    assert remote.err.strip().splitlines()[-1] == local.err.strip().splitlines()[-1]


def test_an_address_with_nothing_listening_is_one_line_and_exit_2(
    kp: KpRunner, traces_file: Path
) -> None:
    run = kp("score", str(traces_file), "--engine", "ray", "--address", "127.0.0.1:1")
    assert run.code == 2
    assert len(run.err.strip().splitlines()) == 1
    assert "cannot connect to the Ray cluster at 127.0.0.1:1" in run.err
    assert run.out == ""


def test_address_without_engine_ray_is_a_usage_error(kp: KpRunner, traces_file: Path) -> None:
    run = kp("score", str(traces_file), "--address", "127.0.0.1:6379")
    assert run.code == 2
    assert "--address names a Ray cluster; it needs --engine ray" in run.err


def test_engine_ray_without_an_embedder_is_a_usage_error(kp: KpRunner, traces_file: Path) -> None:
    run = kp("score", str(traces_file), "--engine", "ray", "--no-embedder")
    assert run.code == 2
    assert "nothing to run" in run.err


def test_engine_ray_without_ray_installed_names_the_extra(
    kp: KpRunner, traces_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No traceback: one line with the pip command, exit 2."""
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail as if absent
    run = kp("score", str(traces_file), "--engine", "ray")
    assert run.code == 2
    assert run.err.startswith("kp: error: Ray is not installed")
    assert 'pip install -e ".[ray]" in the knowledgepulse checkout' in run.err
    assert "Traceback" not in run.err


def test_kp_and_the_package_never_import_ray() -> None:
    """``import knowledgepulse``, ``kp --help`` and ``kp score --help`` leave Ray unloaded."""
    code = (
        "import sys, knowledgepulse, knowledgepulse.engines.ray_engine\n"
        "from knowledgepulse.cli.main import main\n"
        "main(['--help']); main(['score', '--help'])\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "--engine [local|ray]" in done.stdout
