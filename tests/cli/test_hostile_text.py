"""Text from data never reaches a terminal raw: every command shows control characters escaped.

A trace id, case id, file name, domain or content holding an escape sequence (clear the screen,
set the window title) is printed as ``\\x1b`` in tables, ``--explain``, problem messages and
summaries, on stdout and stderr alike. JSON escapes them itself; CSV is data for spreadsheets
and keeps the id as written, so it is not a text output here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.builders import trace_json
from tests.cli.conftest import KpRunner

EVALS = Path(__file__).parents[2] / "examples" / "evals"
# ... and U+202E, which shows the text after it reversed ("evil\u202etxt.exe": "evilexe.txt").
HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x9b31m\r\x08<img src=x onerror=alert(1)>\u202e\x00"
RAW_HTML = "<img src=x"
# What may appear raw in text output: newlines and tabs (in the expected places) only.
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# JSON escapes C0 controls itself and keeps DEL and C1 as data (they are not its controls).
RAW_IN_JSON = re.compile("[\x00-\x08\x0b-\x1f]")


def assert_no_raw_control(*texts: str, pattern: re.Pattern[str] = RAW_CONTROL) -> None:
    for text in texts:
        found = pattern.search(text)
        assert found is None, (
            f"raw {found.group()!r} in {text[max(found.start() - 80, 0) :][:160]!r}"
        )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A directory whose own name holds an escape sequence, so every FILE: prefix is hostile."""
    path = tmp_path / f"d{HOSTILE.replace(chr(0), '')}"
    path.mkdir()
    return path


def hostile_traces(folder: Path) -> Path:
    good: dict[str, Any] = trace_json(trace_id=f"kp:trace:{HOSTILE}")
    good["metadata"]["task_domain"] = f"finance{HOSTILE}"
    good["task"]["objective"] = f"objective {HOSTILE}"
    good["steps"][1]["tool"] = {"name": f"tool{HOSTILE}"}
    good["steps"][1]["input"] = {
        f"{HOSTILE}password": "hunter2-hunter2"
    }  # kp redact names the path
    invalid = trace_json(trace_id=f"kp:trace:bad{HOSTILE}")
    invalid["steps"][0]["type"] = f"type{HOSTILE}"
    newline = trace_json(trace_id="kp:trace:\n", domain="newline")
    path = folder / f"traces{HOSTILE.replace(chr(0), '')}.jsonl"
    lines = [json.dumps(d) for d in (good, invalid, newline)] + ['{"id": "kp:trace:\\u001b[2J",']
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def hostile_cases(folder: Path) -> Path:
    cases = [json.loads(line) for line in (EVALS / "cases.jsonl").read_text("utf-8").splitlines()]
    for case in cases:
        case["id"] = f"{case['id']}{HOSTILE}"
        case["description"] = f"{case.get('description', '')}{HOSTILE}"
    cases[0]["actual"]["operations"][0]["content"] = f"content {HOSTILE}"
    cases.append({"id": f"broken{HOSTILE}", "actual": {f"key{HOSTILE}": 1}})
    path = folder / f"cases{HOSTILE.replace(chr(0), '')}.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases) + '{"id": "\\u001b",\n', "utf-8")
    return path


def hostile_suite(folder: Path) -> Path:
    text = (EVALS / "suite.yaml").read_text("utf-8")
    text = text.replace("name: bulk-edit", f'name: "bulk-edit{json.dumps(HOSTILE)[1:-1]}"')
    path = folder / "suite.yaml"
    path.write_text(text, "utf-8")
    return path


def test_kp_score_table_explain_and_messages_show_escapes(kp: KpRunner, folder: Path) -> None:
    """The score table, --explain, problems (file name and id) and the summary are escaped."""
    traces = str(hostile_traces(folder))
    profiles = folder / "profiles.json"
    weights = {"complexity": 0.25, "novelty": 0.25, "tool_diversity": 0.25}
    profiles.write_text(json.dumps({f"finance{HOSTILE}": weights | {"outcome_confidence": 0.25}}))
    for args in (
        ("-f", "table", "--explain"),
        ("-f", "table", "--profiles", str(profiles)),
        (
            "-f",
            "json",
        ),
        ("-f", "jsonl", "--annotate"),
        ("-f", "html"),
    ):
        run = kp("score", traces, "--no-embedder", *args)
        assert run.code == 1, run.err
        assert "\\x1b" in run.err
        assert_no_raw_control(run.err)
        shown = "table" in args or "html" in args
        assert_no_raw_control(run.out, pattern=RAW_CONTROL if shown else RAW_IN_JSON)
        assert "html" not in args or RAW_HTML not in run.out
        assert "table" not in args or "kp:trace:\\n " in run.out  # a valid id, shown escaped
        assert "--explain" not in args or "\nkp:trace:\\n: score" in run.out  # one line
    run = kp("profiles", "--profiles", str(profiles))
    assert run.code == 0, run.err
    assert "finance\\x1b[2J" in run.out
    assert_no_raw_control(run.out, run.err)


def test_kp_validate_select_dedupe_and_convert_show_escapes(kp: KpRunner, folder: Path) -> None:
    """Problem messages and summaries of the other trace commands are escaped too."""
    traces = str(hostile_traces(folder))
    for args in (
        ("validate", traces),
        ("validate", traces, "-f", "json"),
        ("select", traces, "--no-embedder", "--budget", "1", "--report", str(folder / "r")),
        ("dedupe", traces, "--no-embedder", "--similarity-histogram"),
        ("convert", traces),
        ("convert", traces, "--redact"),
        ("redact", traces),
        ("score", str(folder / f"missing{HOSTILE.replace(chr(0), '')}.jsonl")),
    ):
        run = kp(*args)
        assert run.code != 3, run.err
        assert_no_raw_control(run.err)
        assert_no_raw_control(run.out, pattern=RAW_IN_JSON)  # traces, groups or a report
        assert args[0] != "redact" or "\\x00password']: redacted 1 password" in run.err
    rows = folder / "rows.jsonl"
    rows.write_bytes((EVALS.parent / "datasets" / "sharegpt.jsonl").read_bytes())
    run = kp("score", "--from", "auto", "--no-embedder", "-f", "table", str(rows))
    assert "\\x1b[2J" in run.err
    assert "read as sharegpt" in run.err
    assert_no_raw_control(run.out, run.err)


def test_kp_eval_and_compare_show_escapes(kp: KpRunner, folder: Path) -> None:
    """Case ids, contents, suite names and file names are escaped in every text format."""
    cases, suite = str(hostile_cases(folder)), str(hostile_suite(folder))
    base = folder / "base.json"
    assert kp("eval", cases, "--suite", suite, "-o", str(base)).code == 1
    for fmt in ("table", "json", "junit", "markdown", "html"):
        run = kp("eval", cases, "--suite", suite, "-f", fmt)
        assert run.code == 1, run.err
        assert_no_raw_control(run.err)
        assert_no_raw_control(run.out, pattern=RAW_IN_JSON if fmt == "json" else RAW_CONTROL)
        assert fmt != "html" or RAW_HTML not in run.out
    run = kp("eval", cases, "--suite", suite, "--dry-run")
    assert_no_raw_control(run.err)
    assert_no_raw_control(run.out, pattern=RAW_IN_JSON)  # the resolved suite, as JSON
    for fmt in ("table", "json", "markdown"):
        run = kp("compare", str(base), str(base), "-f", fmt)
        assert run.code == 0, run.err
        assert_no_raw_control(run.err)
        assert_no_raw_control(run.out, pattern=RAW_IN_JSON if fmt == "json" else RAW_CONTROL)
