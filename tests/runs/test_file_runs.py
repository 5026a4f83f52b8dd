"""What the trace commands do, as one library call each: score, convert, redact, validate files."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.cli.main import flag_of
from knowledgepulse.errors import (
    CacheFileError,
    OutputError,
    ParameterConflictError,
    ScorerParameterError,
)
from knowledgepulse.runs.convert import convert_files
from knowledgepulse.runs.embedder import run_scorer
from knowledgepulse.runs.problems import validate_files
from knowledgepulse.runs.redaction import redact_files, redactor_for
from knowledgepulse.runs.score_files import score_files
from tests.paths import REPO

TRACES = str(REPO / "examples" / "traces" / "traces.jsonl")
INVALID = str(REPO / "examples" / "traces" / "invalid.jsonl")


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_score_files_writes_a_report_line_per_trace_and_tallies_them() -> None:
    """Scoring a file without an embedder: one JSON line per trace, counted in the tally."""
    out = io.StringIO()
    done = score_files([TRACES], out, no_embedder=True)
    rows = _lines(out)
    assert len(rows) == done.tally.scored > 0
    assert all(0.0 <= row["score"] <= 1.0 for row in rows)
    assert done.summary.startswith(f"{done.tally.scored} traces scored")


@pytest.mark.parametrize("call", [score_files, convert_files, redact_files])
def test_one_path_given_alone_is_one_file_not_a_path_a_character(call: Any) -> None:
    """A str for ``paths`` reads that file; it was read a character at a time, and the "/" among
    them walked the whole file system (a PermissionError under /proc)."""
    alone, listed = io.StringIO(), io.StringIO()
    call(TRACES, alone)
    call([TRACES], listed)
    assert alone.getvalue() == listed.getvalue() != ""


@pytest.mark.parametrize("call", [score_files, convert_files, redact_files])
def test_a_target_given_as_text_is_a_path_and_another_type_names_target(
    call: Any, tmp_path: Path
) -> None:
    """target="out.jsonl" writes that file (it failed as "'str' object has no attribute
    'write'"); a number is refused naming target, before any output."""
    out, listed = tmp_path / "out.jsonl", io.StringIO()
    call([TRACES], str(out))
    call([TRACES], listed)
    assert out.read_text("utf-8") == listed.getvalue() != ""
    with pytest.raises(TypeError, match=r"^target=3: give a file's path \(a str or a Path\)"):
        call([TRACES], 3)


def test_score_files_keeps_the_results_for_a_table() -> None:
    """``output_format="table"`` writes nothing and gives every result back, in order."""
    done = score_files([TRACES], output_format="table", no_embedder=True)
    assert len(done.results) == done.tally.scored > 0


@pytest.mark.parametrize(
    ("settings", "python", "kp"),
    [
        (
            {"redact": True},
            "redact=True cleans the traces annotate=True",
            "--redact cleans the traces --annotate writes; add --annotate",
        ),
        ({"annotate": True, "output_format": "csv"}, "output_format='json'", "--format json"),
        ({"cache_size": 10, "no_embedder": True}, "ttl_ms and max_windows", "--ttl and"),
        ({"explain": True, "output_format": "csv"}, "give output_format='table'", "--format table"),
    ],
)
def test_score_files_refuses_settings_that_contradict_each_other(
    settings: dict[str, Any], python: str, kp: str
) -> None:
    """A conflict is refused before any record is read, naming parameters (kp: its options)."""
    with pytest.raises(ParameterConflictError) as raised:
        score_files([TRACES], io.StringIO(), **settings)
    assert python in str(raised.value)
    assert kp in raised.value.message_with(flag_of)


def test_score_files_reads_a_frozen_cache_in_a_directory_it_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``frozen`` only reads the cache, so a read-only directory (a shared one) is no error."""
    cache = tmp_path / "shared" / "traces.kpcache"
    cache.parent.mkdir()
    score_files([TRACES], io.StringIO(), cache_path=cache)
    # os.access, not chmod: root (a container's test run) may write anywhere.
    writable = os.access
    monkeypatch.setattr(
        "knowledgepulse._util.atomic.os.access",
        lambda path, mode: writable(path, mode) and Path(path) != cache.parent,
    )
    out = io.StringIO()
    done = score_files([TRACES], out, cache_path=cache, frozen=True)
    assert done.tally.scored == len(_lines(out)) > 0
    with pytest.raises(OutputError, match="no permission to write in") as raised:
        score_files([TRACES], io.StringIO(), cache_path=cache)
    # The cache is there to read: the refusal names the way to use it anyway.
    assert "without saving, give --frozen" in raised.value.message_with(flag_of)


def test_score_files_refuses_a_frozen_cache_that_is_one_of_its_inputs() -> None:
    """Read-only or not, an input given as the cache is a mistake, named before any work."""
    with pytest.raises(OutputError, match="it is an input of this run"):
        score_files([TRACES], io.StringIO(), cache_path=Path(TRACES), frozen=True)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("name", ["seen.kpcache", "seen.npz"])
def test_score_files_refuses_an_output_that_is_its_cache(
    tmp_path: Path, name: str, frozen: bool
) -> None:
    """The cache given as the output too is refused before any work, the cache left as it was:
    the output replaced it, even a --frozen one, and the run then called the cache damaged."""
    cache = tmp_path / name
    score_files([TRACES], io.StringIO(), cache_path=cache)
    before = cache.read_bytes()
    again = tmp_path / "." / name  # another spelling of the same file
    with pytest.raises(OutputError, match="it is this run's cache") as raised:
        score_files([TRACES], again, cache_path=cache, frozen=frozen)
    assert "(--cache)" in raised.value.message_with(flag_of)
    assert cache.read_bytes() == before


def test_score_files_refuses_an_output_that_is_its_new_cache(tmp_path: Path) -> None:
    """A cache not made yet named as the output too: refused, and neither file is written."""
    cache = tmp_path / "new.kpcache"
    with pytest.raises(OutputError, match="it is this run's cache"):
        score_files([TRACES], cache, cache_path=cache)
    assert not cache.exists()


def test_score_files_refuses_an_output_or_cache_that_is_its_profiles_file(tmp_path: Path) -> None:
    """The profiles file is read too: given as the output (a .json report was written over it,
    exit 0) or as the cache, it is refused before any work and left as it was."""
    profiles = tmp_path / "profiles.json"
    profiles.write_text(
        json.dumps(
            {"legal": {"complexity": 1, "novelty": 0, "tool_diversity": 0, "outcome_confidence": 0}}
        )
    )
    before = profiles.read_bytes()
    with pytest.raises(OutputError, match=r"cannot write the output .* it is an input of this run"):
        score_files([TRACES], profiles, output_format="json", profiles_file=profiles)
    with pytest.raises(OutputError, match=r"cannot write the cache .* it is an input of this run"):
        score_files([TRACES], io.StringIO(), cache_path=profiles, profiles_file=profiles)
    assert profiles.read_bytes() == before


def test_score_files_refuses_a_frozen_cache_that_does_not_exist(tmp_path: Path) -> None:
    """``frozen`` scores against a saved cache: a missing one is named before any work."""
    missing = tmp_path / "missing.kpcache"
    with pytest.raises(CacheFileError, match="does not exist; build it first"):
        score_files([TRACES], io.StringIO(), cache_path=missing, frozen=True)


def test_run_scorer_gives_a_scorer_of_the_settings() -> None:
    """The settings reach the scorer: the embedder, the batch size, the threshold."""
    with run_scorer([TRACES], kind="static", batch_size=7, threshold=0.3) as scorer:
        assert (scorer.embedder is not None, scorer.batch_size, scorer.threshold) == (True, 7, 0.3)
    with run_scorer([TRACES], no_embedder=True, threshold=0.3) as scorer:
        assert (scorer.embedder, scorer.threshold) == (None, 0.3)


def test_run_scorer_refuses_an_empty_novelty_text_rather_than_taking_the_default() -> None:
    with (
        pytest.raises(ScorerParameterError, match="unknown novelty text"),
        run_scorer([TRACES], kind="static", novelty_text=""),
    ):
        pass


def test_convert_files_passes_reasoning_traces_through_and_counts_them() -> None:
    """Traces converted: one JSON line each, the count and the tally said in the summary."""
    out = io.StringIO()
    done = convert_files([TRACES], out)
    assert len(_lines(out)) == done.traces > 0
    assert done.summary == f"converted {done.traces} traces"


def test_redact_files_cleans_what_it_writes_and_says_each_finding() -> None:
    """Each finding is told as a line; the redacted traces are written, as many as read."""
    out, found = io.StringIO(), list[str]()
    done = redact_files([TRACES], out, privacy_level="aggregated", on_finding=found.append)
    assert len(_lines(out)) == done.traces > 0
    assert all(": redacted " in line for line in found)
    assert done.summary.startswith(f"read {done.traces} traces; ")


def test_redactor_for_refuses_a_level_without_redact() -> None:
    """A privacy level or rules without ``redact`` says how to redact and nothing does."""
    with pytest.raises(ParameterConflictError) as raised:
        redactor_for(False, "aggregated")
    assert raised.value.message_with(flag_of) == (
        "--privacy-level and --redact-rules say how to redact; add --redact"
    )
    assert redactor_for(False) is None


def test_validate_files_counts_valid_traces_and_keeps_problems() -> None:
    """Reading only: valid traces counted, each problem told and kept for the report."""
    told: list[str] = []
    done = validate_files([TRACES, INVALID], keep=True, on_problem=told.append)
    assert done.valid > 0
    assert done.tally.invalid > 0
    assert len(done.report["problems"]) == len(told) > 0
