"""Where ``kp`` writes: a reader of standard output that goes away, ``-o -``, ``-o x.gz``."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledgepulse.cli.main import EXIT_OK, EXIT_USAGE, main
from tests.cli.conftest import KpRunner
from tests.paths import CORPORA, REPO

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
EVALS = REPO / "examples" / "evals"


class _ClosedPipe(io.StringIO):
    """A standard output whose reader has gone (``kp score ... | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_goes_away_ends_the_run_with_exit_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kp score ... | head`` exits 0 with nothing on stderr, as the code means it to."""
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    code = main(["score", str(TRACES), "--no-embedder", "-f", "jsonl"])
    assert code == EXIT_OK
    assert capsys.readouterr().err == ""


def _into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """``kp ARGS | head -c0``: a real process, its stdout a pipe no one reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "knowledgepulse.cli.main", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ("score", "-f", "table", str(CORPORA / "taubench.jsonl")),
        ("score", "-f", "jsonl", str(CORPORA / "taubench.jsonl")),
        ("profiles",),
    ],
)
def test_a_table_whose_reader_goes_away_exits_0_as_every_report_does(args: tuple[str, ...]) -> None:
    """A rich table to a closed pipe exits 0, quietly; before, rich's own exit 1 ("bad records")."""
    done = _into_a_closed_pipe(*args)
    assert (done.returncode, done.stderr) == (EXIT_OK, "")


@pytest.mark.parametrize("output_format", ["table", "json", "junit"])
def test_an_eval_report_whose_reader_goes_away_keeps_the_gate_verdict(output_format: str) -> None:
    """``kp eval ... | head`` of failing cases exits 1, with the gate line: a cut report gates."""
    cases, suite = str(EVALS / "cases.jsonl"), str(EVALS / "suite.yaml")
    done = _into_a_closed_pipe("eval", cases, "-s", suite, "-f", output_format)
    assert done.returncode == 1, done.stderr
    assert "--fail-on failure: 2 failing cases" in done.stderr
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr


@pytest.mark.parametrize("command", ["convert", "redact", "score"])
def test_stdout_appended_to_an_input_is_refused_not_read_for_ever(
    tmp_path: Path, command: str
) -> None:
    """``kp convert a.jsonl >> a.jsonl`` is a usage error; before, it grew a.jsonl for ever."""
    data = tmp_path / "a.jsonl"
    data.write_bytes(TRACES.read_bytes())
    with data.open("ab") as appended:
        done = subprocess.run(
            [sys.executable, "-m", "knowledgepulse.cli.main", command, "--", str(data)],
            stdout=appended,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
            timeout=60,
            check=False,
        )
    assert done.returncode == EXIT_USAGE
    assert f"standard output is {data}, an input of this run" in done.stderr
    assert data.read_bytes() == TRACES.read_bytes()


@pytest.mark.parametrize(
    ("shell_words", "code", "said"),
    [
        ('"$1" >&-', EXIT_OK, "8 traces scored"),
        ("- <&- >/dev/null", 1, "the input holds no trace"),
        ("<&- >/dev/null", 1, "the input holds no trace"),
    ],
)
def test_a_closed_standard_stream_reads_and_writes_as_devnull(
    shell_words: str, code: int, said: str
) -> None:
    """``kp score f >&-``, ``kp score <&-`` run as with /dev/null; before, internal errors (3)."""
    script = f'exec "$0" -m knowledgepulse.cli.main score {shell_words}'
    done = subprocess.run(
        ["sh", "-c", script, sys.executable, str(TRACES)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        timeout=120,
        check=False,
    )
    assert done.returncode == code, done.stderr
    assert said in done.stderr


def test_a_reader_of_the_messages_that_goes_away_loses_them_not_the_run(tmp_path: Path) -> None:
    """``kp redact f -o out 2>&1 >/dev/null | head -1`` writes out, exits 0; before, rich's 1."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = tmp_path / "out.jsonl"
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "knowledgepulse.cli.main",
                "redact",
                str(TRACES),
                "-o",
                str(out),
            ],
            stderr=write_end,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == EXIT_OK
    assert len(out.read_text("utf-8").splitlines()) == len(TRACES.read_text("utf-8").splitlines())


def test_output_dash_is_stdout_not_a_file_named_dash(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o -`` writes to standard output, as ``-`` reads standard input."""
    monkeypatch.chdir(tmp_path)
    run = kp("score", str(TRACES), "--no-embedder", "-o", "-")
    assert run.code == EXIT_OK
    assert len(run.out.splitlines()) == len(TRACES.read_text().splitlines())
    assert not (tmp_path / "-").exists()


def test_parquet_rows_to_output_dash_ask_for_a_file(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet rows with ``-o -`` are refused as without ``-o``, not written to a file "-"."""
    monkeypatch.chdir(tmp_path)
    rows = Path(__file__).parents[2] / "examples" / "datasets" / "hermes.parquet"
    run = kp("score", str(rows), "--no-embedder", "--annotate", "-o", "-")
    assert run.code == EXIT_USAGE
    assert "the rows are Parquet, which needs a file: give -o FILE.parquet" in run.err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("split", "--no-embedder", "-o", "-"), "'-o' / '--output'"),
        (("select", "--no-embedder", "--report", "-"), "'--report'"),
        (("redact", "--report", "-"), "'--report'"),
    ],
)
def test_a_dash_where_a_file_or_directory_is_needed_is_refused_not_created(
    kp: KpRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    option: str,
) -> None:
    """--report - and kp split -o - made a file or folder named -: a usage error names it."""
    monkeypatch.chdir(tmp_path)
    run = kp(*args, str(TRACES))
    assert run.code == EXIT_USAGE
    assert f"Invalid value for {option}: - is not accepted here" in run.err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("convert", "--to", "atif", "-o", "out/"), "'-o' / '--output'"),
        (("select", "--no-embedder", "-o", "out/"), "'-o' / '--output'"),
        (("redact", "-o", "out/"), "'-o' / '--output'"),
        (("select", "--no-embedder", "--report", "out/"), "'--report'"),
    ],
)
def test_a_file_option_given_a_folder_name_is_refused_not_written_as_a_file(
    kp: KpRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    option: str,
) -> None:
    """``-o out/`` (no such folder yet) wrote a file named out: the slash says a folder is meant."""
    monkeypatch.chdir(tmp_path)
    run = kp(*args, str(TRACES))
    assert run.code == EXIT_USAGE
    assert f"Invalid value for {option}: 'out/' names a folder" in run.err
    assert not (tmp_path / "out").exists()


def test_an_output_named_gz_is_gzip_that_reads_back_and_the_same_each_time(
    kp: KpRunner, tmp_path: Path
) -> None:
    """``-o x.jsonl.gz`` is gzip (it was plain text under a .gz name), the same bytes each run."""
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for output in (first, second):
        run = kp("convert", str(TRACES), "-o", str(output))
        assert run.code == EXIT_OK, run.err
    with gzip.open(first, "rt", encoding="utf-8") as unpacked:
        written = [json.loads(line) for line in unpacked]
    assert [trace["id"] for trace in written] == [
        json.loads(line)["id"] for line in TRACES.read_text(encoding="utf-8").splitlines()
    ]
    assert first.read_bytes() == second.read_bytes()
    scored = kp("score", str(first), "--no-embedder", "-f", "jsonl")
    assert scored.code == EXIT_OK
    assert len(scored.out.splitlines()) == len(TRACES.read_text().splitlines())


EVALS = Path(__file__).parents[2] / "examples" / "evals"
EVAL = ("eval", str(EVALS / "cases.jsonl"), "-s", str(EVALS / "suite.yaml"))


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (("score", str(TRACES), "--no-embedder"), "scores.arrow"),
        (("score", str(TRACES), "--no-embedder", "-f", "json"), "scores.parquet"),
        (("score", str(TRACES), "--no-embedder"), "scores.md"),
        (EVAL, "report.arrow"),
        ((*EVAL, "-f", "json"), "report.feather"),
        (EVAL, "report.csv"),
    ],
)
def test_a_report_named_as_another_form_is_a_usage_error_before_any_work(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...], name: str
) -> None:
    """-o x.arrow got the report's JSON under an Arrow name: exit 2 naming -o, nothing written."""
    out = tmp_path / name
    run = kp(*command, "-o", str(out))
    assert run.code == EXIT_USAGE
    assert f"-o {name}: this report is not written as {out.suffix}" in run.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("format_given", "name", "told"),
    [
        (
            "json",
            "report.html",
            "-o report.html: .html names the html format, but the report is "
            "written as json (--format json); name the file .json, or write it as html",
        ),
        ("junit", "report.md", "name the file .xml, or write it as markdown"),
        ("table", "report.json", "name the file .txt, or write it as json"),
        ("score json", "scores.html", "name the file .json, or write it as html"),
        ("score jsonl", "scores.csv", "name the file .jsonl, or write it as csv"),
    ],
)
def test_a_report_named_for_another_of_its_formats_than_the_one_given_is_a_usage_error(
    kp: KpRunner, tmp_path: Path, format_given: str, name: str, told: str
) -> None:
    """-f json -o report.html wrote JSON into a page a browser shows as text: exit 2, no file.

    ``kp eval`` and ``kp score`` ("score FORMAT") alike.
    """
    out = tmp_path / name
    command, _, format_given = format_given.rpartition(" ")
    given = ("score", str(TRACES), "--no-embedder") if command else EVAL
    run = kp(*given, "-f", format_given, "-o", str(out))
    assert run.code == EXIT_USAGE
    assert told in run.err
    assert not out.exists()


def test_a_format_the_suffix_agrees_with_or_does_not_name_is_written(
    kp: KpRunner, tmp_path: Path
) -> None:
    """-f junit -o r.xml and -f table -o r.txt are what they say."""
    assert kp(*EVAL, "-f", "junit", "-o", str(tmp_path / "r.xml")).code != EXIT_USAGE
    assert kp(*EVAL, "-f", "table", "-o", str(tmp_path / "r.txt")).code != EXIT_USAGE
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")


def test_a_compressed_report_is_written_in_the_format_its_inner_suffix_names(
    kp: KpRunner, tmp_path: Path
) -> None:
    """-o scores.csv.gz is CSV, gzipped (it was JSON Lines under a .csv name)."""
    out = tmp_path / "scores.csv.gz"
    assert kp("score", str(TRACES), "--no-embedder", "-o", str(out)).code == EXIT_OK
    assert gzip.decompress(out.read_bytes()).decode().startswith("id,")


@pytest.mark.parametrize(
    "args",
    [
        ("score", "-", "-"),
        ("convert", "-", str(TRACES), "-"),
        ("dedupe", "-", "--against", "-"),
        ("compare", "-", "-"),
        ("eval", "-", "-", "--suite", str(EVALS / "suite.yaml")),
        ("eval", "-", "--baseline", "-", "--suite", str(EVALS / "suite.yaml")),
    ],
)
def test_standard_input_given_twice_is_refused_before_any_output(
    kp: KpRunner, args: tuple[str, ...]
) -> None:
    """``-`` twice (as two inputs, or an input and --against or --baseline) is exit 2 and one line
    saying it can be given once; before, the second read found it empty, and kp said so."""
    run = kp(*args, stdin=TRACES.read_text())
    assert (run.code, run.out) == (EXIT_USAGE, "")
    assert run.err == (
        "kp: error: - (standard input) is given more than once, but it can be read only once; "
        "give - once, and the other inputs as files\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("score", "--no-embedder", "-f", "json", "-o", "{p}"),
        ("select", "--no-embedder", "-o", "{p}"),
        ("select", "--no-embedder", "--report", "{p}"),
        ("dedupe", "--no-embedder", "-o", "{p}"),
    ],
)
def test_an_output_naming_the_profiles_file_is_refused_before_any_work(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    """--profiles is read by the run: an output naming it replaced the user's weights, exit 0."""
    monkeypatch.chdir(tmp_path)
    profiles = tmp_path / "profiles.json"
    weights = {"complexity": 0.1, "novelty": 0.2, "tool_diversity": 0.3, "outcome_confidence": 0.4}
    profiles.write_text(json.dumps({"legal": weights}))
    before = profiles.read_bytes()
    named = [arg.format(p=profiles) for arg in args]
    run = kp(*named, "--profiles", str(profiles), str(TRACES))
    assert run.code == EXIT_USAGE
    assert "it is an input of this run, which it would replace" in run.err
    assert profiles.read_bytes() == before
