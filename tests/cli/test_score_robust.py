"""``kp score`` never loses a run: checks before work, atomic output, odd records, no tracebacks."""

from __future__ import annotations

import bz2
import csv
import errno
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.cli.main import EXIT_INTERNAL, EXIT_USAGE
from knowledgepulse.errors import ConversionError
from tests.builders import trace_json
from tests.cli.conftest import KpRunner

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"
TRACES = EXAMPLES / "traces.jsonl"


def write_jsonl(path: Path, documents: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in documents), "utf-8")
    return path


def test_output_in_a_missing_directory_fails_before_any_work(kp: KpRunner, tmp_path: Path) -> None:
    """-o into a directory that does not exist is one line, exit 2, before reading anything."""
    run = kp("score", "--no-embedder", "-o", str(tmp_path / "nope" / "out.jsonl"), "missing.jsonl")
    assert run.code == 2
    assert run.err.startswith("kp: error: cannot write the output ")
    assert "does not exist; create it first" in run.err
    assert "Traceback" not in run.err
    assert "missing.jsonl" not in run.err  # the input was never opened


def test_cache_in_a_missing_directory_fails_before_any_work(kp: KpRunner, tmp_path: Path) -> None:
    """--cache into a directory that does not exist fails at once, not after all the scoring."""
    run = kp("score", str(TRACES), "--cache", str(tmp_path / "nope" / "c.npz"))
    assert run.code == 2
    assert "cannot write the cache" in run.err


def test_frozen_with_a_cache_that_does_not_exist_is_an_input_error(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--frozen against a missing cache would score every novelty 0.5: refuse it instead."""
    run = kp("score", str(TRACES), "--frozen", "--cache", str(tmp_path / "c.npz"))
    assert run.code == 2
    assert "does not exist" in run.err
    assert "--frozen" in run.err


def test_an_explicit_model_that_cannot_load_is_an_error(kp: KpRunner, tmp_path: Path) -> None:
    """--model naming a file that is not a model fails with exit 2, not a silent N = 0.5."""
    model = tmp_path / "model.onnx"
    model.write_bytes(b"not a model")
    run = kp("score", str(TRACES), "--model", str(model), "-f", "jsonl")
    assert run.code == 2
    assert run.err.startswith("kp: error:")
    assert run.out == ""


def test_output_replaces_the_file_only_when_the_run_completes(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupted run leaves the previous --output file whole, and no temporary behind."""
    out = tmp_path / "out.jsonl"
    out.write_text("previous report\n")
    from knowledgepulse.reports import value

    def interrupted(self: object, result: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(value.JsonLinesWriter, "write", interrupted)
    run = kp("score", str(TRACES), "--no-embedder", "-f", "jsonl", "-o", str(out))
    assert run.code == 130
    assert "interrupted" in run.err
    assert out.read_text() == "previous report\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]


def test_output_file_gets_the_umask_mode(kp: KpRunner, tmp_path: Path) -> None:
    """Reports are created with the mode the user's umask gives, not 0600."""
    out = tmp_path / "out.csv"
    old = os.umask(0o022)
    try:
        assert kp("score", str(TRACES), "--no-embedder", "-f", "csv", "-o", str(out)).code == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644


def test_csv_has_no_float_noise_and_json_booleans(kp: KpRunner) -> None:
    """Scores are written without binary noise (0.724, not 0.7240000000000001); true/false."""
    run = kp("score", str(TRACES), "--no-embedder", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(run.out)))
    assert {row["shareable"] for row in rows} <= {"true", "false"}
    for row in rows:
        for column in ("score", "complexity", "novelty", "weighted_sum"):
            assert len(row[column].split(".")[-1]) <= 12, row[column]
    assert rows[0]["score"] == "0.724"


@pytest.mark.parametrize("output_format", ["jsonl", "json", "csv", "table"])
@pytest.mark.parametrize("to_file", [False, True])
def test_odd_records_render_in_every_format_and_destination(
    kp: KpRunner, tmp_path: Path, output_format: str, to_file: bool
) -> None:
    """Lone surrogates, markup, emoji codes and control characters never crash a report."""
    # (exit 0: replacing a lone surrogate is a warning, not a rejection)
    odd_ids = [
        "kp:trace:\ud800lone",
        "kp:trace:[bold]x[/bold]",
        "kp:trace::100:",
        "kp:trace:\x1b[31m",
    ]
    documents = [trace_json(trace_id=trace_id, domain="[red]d:fire:") for trace_id in odd_ids]
    documents[0]["steps"][0]["content"] = "x\udfff"
    path = tmp_path / "odd.jsonl"
    path.write_bytes(
        "".join(json.dumps(d) + "\n" for d in documents).encode("utf-8")  # ASCII escapes
    )
    out = tmp_path / "report.out"
    args = ["score", str(path), "--no-embedder", "-f", output_format]
    run = kp(*args, *(["-o", str(out)] if to_file else []))
    assert run.code == 0, run.err
    text = out.read_text("utf-8") if to_file else run.out
    assert "[bold]x[/bold]" in text
    assert ":100:" in text
    if output_format in ("jsonl", "json"):
        rows = jsonl(text) if output_format == "jsonl" else json.loads(text)["traces"]
        # Half a surrogate pair names no character: it is read as U+FFFD, with a warning.
        assert [r["id"] for r in rows] == [odd_ids[0].replace("\ud800", "\ufffd"), *odd_ids[1:]]
    assert "read as U+FFFD" in run.err


def test_csv_keeps_a_carriage_return_inside_its_row(kp: KpRunner, tmp_path: Path) -> None:
    """A lone CR in an id or a domain is quoted: a CSV reader gets one row per trace, intact."""
    ids = ["kp:trace:a\rb", "kp:trace:c\r\nd", "kp:trace:plain"]
    documents = [trace_json(trace_id=trace_id, domain="do\rmain") for trace_id in ids]
    path = write_jsonl(tmp_path / "cr.jsonl", documents)
    run = kp("score", str(path), "--no-embedder", "-f", "csv")
    assert run.code == 0, run.err
    rows = list(csv.DictReader(io.StringIO(run.out, newline="")))
    assert [row["id"] for row in rows] == ids
    assert {row["domain"] for row in rows} == {"do\rmain"}
    assert run.out.endswith(",trace,trace\n")  # lines still end with \n


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_annotate_output_reads_back(kp: KpRunner, tmp_path: Path) -> None:
    """kp reads its own --annotate output: raw U+2028 and deep (allowed) nesting included."""
    document = trace_json(trace_id="kp:trace:sep")
    document["steps"][0]["content"] = "a\u2028b\u0085c"
    depth = 90
    document["steps"][0]["input"] = json.loads('{"x": ' + "[" * depth + "]" * depth + "}")
    source = write_jsonl(tmp_path / "in.jsonl", [document])
    annotated = tmp_path / "annotated.jsonl"
    first = kp("score", str(source), "--no-embedder", "--annotate", "-o", str(annotated))
    assert first.code == 0, first.err
    again = kp("score", str(annotated), "--no-embedder", "-f", "jsonl")
    assert again.code == 0, again.err
    (row,) = jsonl(again.out)
    written = json.loads(annotated.read_text("utf-8"))
    assert written["metadata"]["quality_score"] == row["score"]
    assert written["steps"][0]["content"] == "a\u2028b\u0085c"


@pytest.mark.parametrize(
    ("suffix", "compress"), [(".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)]
)
def test_compressed_traces_are_scored(
    kp: KpRunner, tmp_path: Path, suffix: str, compress: Callable[[bytes], bytes]
) -> None:
    """A .jsonl.gz, .jsonl.xz or .jsonl.bz2 file scores exactly as the plain file does."""
    packed = tmp_path / f"traces.jsonl{suffix}"
    packed.write_bytes(compress(TRACES.read_bytes()))
    plain = kp("score", str(TRACES), "--no-embedder", "-f", "jsonl")
    zipped = kp("score", str(packed), "--no-embedder", "-f", "jsonl")
    assert [r["score"] for r in jsonl(zipped.out)] == [r["score"] for r in jsonl(plain.out)]


def test_table_stays_readable_at_80_columns(tmp_path: Path) -> None:
    """At 80 columns every score and the whole of every id is on screen."""
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    script = (
        "import sys; from knowledgepulse.cli.main import main; "
        "from knowledgepulse.cli import _console; _console.stdout_is_terminal = lambda: True; "
        f"sys.exit(main(['score', {str(TRACES)!r}, '--no-embedder']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    ids = [json.loads(line)["id"] for line in TRACES.read_text().splitlines()]
    flat = result.stdout.replace("\n", "")
    for trace_id in ids:
        assert trace_id.split(":")[-1][:12] in flat
    assert "0.724" in result.stdout
    assert "+ER error_recovery_bonus" in result.stdout


def test_an_internal_error_is_one_line_with_its_own_exit_code(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in kp prints one line saying how to see the traceback, and exits 3."""
    from knowledgepulse.value.scorer import TraceValueScorer

    def broken(self: object, traces: object) -> object:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(TraceValueScorer, "iter_scores", broken)
    monkeypatch.delenv("KP_TRACEBACK", raising=False)
    run = kp("score", str(TRACES), "--no-embedder", "-f", "jsonl")
    assert run.code == EXIT_INTERNAL
    assert "kp: internal error: ZeroDivisionError: boom" in run.err
    assert "KP_TRACEBACK=1" in run.err
    assert "Traceback" not in run.err


def test_explain_shows_every_dimension_input(kp: KpRunner) -> None:
    """--explain says what went into each dimension, not only the weighted sum."""
    run = kp("score", str(TRACES), "--no-embedder", "--explain", "-f", "table")
    assert run.code == 0
    # The first trace (finance-tsmc): 3 step types, no recovery, 5 steps, 2 tools, 0.92 success.
    for words in ("3 of 4 step types", "no error recovery", "2 distinct tools over 5 steps"):
        assert words in run.out
    assert "confidence 0.9200 x 1.0 (succeeded)" in run.out


def test_an_eof_error_inside_a_command_is_not_mistaken_for_ctrl_c(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """click turns EOFError into Abort; kp still reports it as the internal error it is."""
    from knowledgepulse.value.scorer import TraceValueScorer

    def broken(self: object, traces: object) -> object:
        raise EOFError("truncated")

    monkeypatch.setattr(TraceValueScorer, "iter_scores", broken)
    run = kp("score", str(TRACES), "--no-embedder", "-f", "jsonl")
    assert run.code == EXIT_INTERNAL
    assert "EOFError: truncated" in run.err


@pytest.mark.parametrize("bad", ['{"a": NaN, "b": "trunc', '{"a": 1, "a": 2, "b": [tr'])
def test_a_nan_or_repeated_key_then_a_syntax_error_is_one_bad_record(
    kp: KpRunner, tmp_path: Path, bad: str
) -> None:
    """Such a record is reported at its line (exit 1); the traces around it are scored."""
    good = [json.dumps(trace_json(trace_id=f"kp:trace:{n}")) for n in range(2)]
    path = tmp_path / "t.jsonl"
    path.write_text(f"{good[0]}\n{bad}\n{good[1]}\n")
    run = kp("score", "--no-embedder", "-f", "jsonl", str(path))
    assert run.code == 1
    assert [json.loads(line)["id"] for line in run.out.splitlines()] == ["kp:trace:0", "kp:trace:1"]
    assert f"{path}:2: invalid JSON" in run.err
    assert kp("validate", str(path)).code == 1


@pytest.mark.parametrize("command", ["score", "validate", "convert", "redact", "select", "dedupe"])
def test_a_file_of_identical_bad_rows_prints_a_few_and_one_line_for_the_rest(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """200 rows of the wrong shape: 3 problems printed, one line for 197; all counted, exit 1."""
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"foo": n} for n in range(200)])
    out = ["-o", str(tmp_path / "out.jsonl")] if command != "validate" else []
    budget = ["--budget", "5"] if command == "select" else []
    run = kp(command, *budget, *out, str(rows))
    assert run.code == 1
    assert run.err.count("not a trace file") == 3
    assert "... and 197 more records with the same problem (first at " in run.err
    assert f"{rows}:4, last at {rows}:200)" in run.err
    assert command == "dedupe" or "200 " in run.err  # the summary counts every one


def test_a_full_disk_names_the_output_and_what_to_do(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write refused for want of room (``-o /dev/full``): the error names the -o file."""

    def full(_: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("knowledgepulse._util.atomic.os.fsync", full)
    out = tmp_path / "out.jsonl"
    run = kp("score", "--no-embedder", "-o", str(out), str(TRACES))
    assert run.code == 2
    assert run.err.endswith(
        f"kp: error: {out}: {os.strerror(errno.ENOSPC)}; free some space, or write elsewhere\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "module", "files", "said"),
    [
        (
            "score",
            "score_files",
            "-o out --cache c",
            "; nothing was written to --output or --cache",
        ),
        ("score", "score_files", "", ""),
        ("score", "score_files", "-o - --cache c --frozen", ""),
        ("convert", "convert", "--output out", "; nothing was written to --output"),
        ("convert", "convert", "-o -", ""),
        ("validate", "problems", "", ""),
    ],
)
def test_ctrl_c_names_only_the_files_the_run_was_given_to_write(
    *,
    kp: KpRunner,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
    module: str,
    files: str,
    said: str,
) -> None:
    """Ctrl-C's line is one line, naming --output or --cache only when given (stdout and a
    --frozen cache are not written); before, it named the command's options, given or not."""

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    if "--cache" in files:  # a saved cache, which --frozen requires
        assert kp("score", str(TRACES), "--cache", "c", "-o", "scored.jsonl").code == 0
    before = {path: path.read_bytes() for path in tmp_path.iterdir()}
    monkeypatch.setattr(f"knowledgepulse.runs.{module}.read_items", interrupted)
    run = kp("-v", command, str(TRACES), *files.split())
    assert (run.code, run.err) == (130, f"kp: interrupted{said}\n")
    assert {path: path.read_bytes() for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize("error", [ZeroDivisionError, ValueError, ConversionError])
def test_an_error_line_shows_no_secret_it_quotes(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch, error: Callable[[str], Exception]
) -> None:
    """An internal or a library error quoting a value has its secrets redacted, the rest kept."""
    from knowledgepulse.value.scorer import TraceValueScorer

    token = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"

    def broken(self: object, traces: object) -> object:
        raise error(f"input_value='deploy with {token}'")

    monkeypatch.setattr(TraceValueScorer, "iter_scores", broken)
    monkeypatch.delenv("KP_TRACEBACK", raising=False)
    run = kp("score", str(TRACES), "--no-embedder", "-f", "jsonl")
    assert run.code in (EXIT_INTERNAL, EXIT_USAGE)
    assert token[4:16] not in run.err
    assert "input_value='deploy with [REDACTED:api_key]'" in run.err


def test_a_missing_file_named_with_a_secret_is_told_without_it(kp: KpRunner) -> None:
    """kp: error: names the file given, its secret redacted."""
    run = kp("score", "runs_ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF.jsonl", "--no-embedder")
    assert run.code == EXIT_USAGE
    assert "kp: error: runs_[REDACTED:api_key].jsonl" in run.err


def test_an_error_line_whose_cleaning_fails_is_withheld_not_a_traceback(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in loading the redaction rules must not hide the error, nor show its text raw."""
    import knowledgepulse.redact

    def broken(text: str, level: str) -> object:
        raise RuntimeError("the rules are broken")

    monkeypatch.setattr(knowledgepulse.redact, "clean_text", broken)
    run = kp("score", "runs_ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF.jsonl", "--no-embedder")
    assert run.code == EXIT_USAGE
    assert "ghp_4fG7" not in run.err
    assert "could not be cleaned of secrets" in run.err
    assert "Traceback" not in run.err
