"""The README works as written, from the project's root: its first screen's two commands, its
Python snippets, the output it pictures (what ``kp`` really prints), its links and extras."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
TEXT = (ROOT / "README.md").read_text("utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", TEXT, re.S | re.M)
# The framework one-liners need a live agent of each framework; tests/integrations runs them.
SNIPPETS = [body for kind, body in BLOCKS if kind == "python" and "kp.integrations" not in body]
FIRST_SCREEN = "\n".join(TEXT.splitlines()[:25])
SETUP, TESTS = [
    body for kind, body in re.findall(r"^```(\w+)\n(.*?)^```", FIRST_SCREEN, re.S | re.M)
]
KP = [sys.executable, "-c", "from knowledgepulse.cli.main import main; raise SystemExit(main())"]


def kp(*args: str) -> subprocess.CompletedProcess[str]:
    """``kp ARGS`` in a fresh process from the project's root, on a wide terminal."""
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*KP, *args], cwd=ROOT, capture_output=True, text=True, env=env, check=False
    )


def command(block: str) -> str:
    """The one command line of a first-screen block (its comment left out)."""
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1, block
    return lines[0]


def pictured(prompt: str) -> list[str]:
    """The lines of the README's console block that starts with ``$ PROMPT``, prompt left out."""
    found = re.search(rf"^\$ {re.escape(prompt)}\n(.*?)^```", TEXT, re.S | re.M)
    assert found, prompt
    return found.group(1).splitlines()


def test_is_a_guide_of_about_250_lines() -> None:
    """The README guides; the reference material lives in docs/ (issue 19)."""
    assert len(TEXT.splitlines()) <= 250


def test_the_first_screen_sets_up_and_runs_the_main_job_then_the_tests() -> None:
    """Two one-line commands, each from a fresh venv: score the bundled examples; run the tests."""
    setup, tests = command(SETUP), command(TESTS)
    for line in (setup, tests):
        assert line.startswith("python -m venv .venv && . .venv/bin/activate && pip install -e ")
        assert "torch" not in line  # the default run needs no multi-GB CUDA download
    assert setup.endswith("&& kp score examples/traces/traces.jsonl")
    assert tests.endswith('pip install -e ".[embeddings,test]" && python -m pytest -n auto')


@pytest.mark.embedder
def test_the_first_command_scores_the_bundled_examples() -> None:
    """The main job of the first command (after the set-up) runs and scores every trace."""
    args = shlex.split(command(SETUP).rpartition("&&")[2])
    assert args[0] == "kp"
    run = kp(*args[1:])
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.splitlines()) == 8  # piped: one JSON row a trace
    assert "8 traces scored; 5 reach the sharing threshold 0.75" in run.stderr


@pytest.mark.embedder
def test_the_pictured_score_table_is_what_kp_prints() -> None:
    """Each trace's score in the README's table is the score kp gives it."""
    rows = [line.split() for line in pictured("kp score examples/traces/traces.jsonl")]
    shown = {row[0]: float(row[1]) for row in rows if row and row[0].startswith("kp:trace:")}
    assert len(shown) == 8
    run = kp("score", "examples/traces/traces.jsonl", "-f", "jsonl")
    assert run.returncode == 0, run.stderr
    real = {row["id"]: round(row["score"], 3) for row in map(json.loads, run.stdout.splitlines())}
    assert shown == real


@pytest.mark.embedder
def test_the_pictured_explanation_is_what_kp_prints() -> None:
    """The README's ``--explain`` excerpt is a run of lines kp prints, none left out.

    A line left out of one trace's explanation (a dimension) would leave sums a reader cannot
    check.
    """
    shown = pictured("kp score examples/traces/traces.jsonl --explain")
    excerpt = "\n".join(line for line in shown if line != "...")
    assert len(excerpt.splitlines()) >= 10
    run = kp("score", "examples/traces/traces.jsonl", "-f", "table", "--explain")
    assert run.returncode == 0, run.stderr
    printed = "\n".join(line.rstrip() for line in run.stdout.splitlines())
    assert excerpt in printed


@pytest.mark.embedder
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_python_snippet_runs(snippet: str) -> None:
    """Each Python snippet runs in a fresh interpreter, prints, and raises nothing."""
    result = subprocess.run(
        [sys.executable, "-c", snippet], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


@pytest.mark.embedder
def test_the_api_snippet_prints_no_binary_noise() -> None:
    """The first snippet prints the score as is: 0.724, never 0.7240000000000001."""
    result = subprocess.run(
        [sys.executable, "-c", SNIPPETS[0]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("0.724 Dimensions(complexity=0.425, "), first
    assert re.findall(r"\d\.\d{10,}", first) == []


def test_the_pictured_trace_is_a_valid_trace() -> None:
    """The trimmed trace a reader copies to start from scores as it is; before, it lacked the
    required quality_score, visibility and privacy_level, so kp refused it with three errors."""
    from knowledgepulse import parse_trace

    traces = [
        json.loads(body) for kind, body in BLOCKS if kind == "json" and "ReasoningTrace" in body
    ]
    assert traces
    for trace in traces:
        parse_trace(trace)


def test_every_local_link_leads_to_a_file() -> None:
    """Links to docs/ pages and example folders point at what is in the repository."""
    links = [link for link in re.findall(r"\]\(([^)#]+)", TEXT) if "://" not in link]
    assert links
    assert [link for link in links if not (ROOT / link).exists()] == []
