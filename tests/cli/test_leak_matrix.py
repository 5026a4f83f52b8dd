"""The leak matrix: a secret planted in every place a trace or a row holds text, through every
command that redacts, is found in no output, report or message (issue 28).

Each cell is one small input of two records: the planted one and a clean near-copy (so that
``kp dedupe`` groups them and each is the other's ``kp_nearest``), whose id sorts first, so
that ``kp select --budget 1`` leaves the planted one out, to its report, on a tie. The
documented exception, a secret in a JSON key, is not planted (``docs/redaction.md``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.testing import HashingEmbedder
from tests.builders import trace_json
from tests.cli.conftest import KpRunner

SECRET = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"  # found by its own pattern
NAMED = "q8Zr4Lm2Xv7Np3Kw9Ts6Yb1Hc5Jd0Fg"  # found only by its key's name (api_key)
CHAT = Path(__file__).parents[1] / "sources" / "data" / "chat" / "openai_chat.jsonl"


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command embeds (kp_nearest is written) with the fast fake instead of MiniLM."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


Plant = Callable[[dict[str, Any], str], None]


def _step(document: dict[str, Any], index: int) -> dict[str, Any]:
    step: dict[str, Any] = document["steps"][index]
    return step


TRACE_PLACES: dict[str, Plant] = {
    "objective": lambda d, s: d["task"].update(objective=f"deploy with {s}"),
    "step content": lambda d, s: _step(d, 0).update(content=f"use {s} to push"),
    "tool input nested": lambda d, s: _step(d, 1).update(input={"a": {"b": [f"key {s}"]}}),
    "observation": lambda d, s: _step(d, 2).update(output_summary=f"got {s}"),
    "result summary": lambda d, s: d["outcome"].update(result_summary=f"done {s}"),
    "metadata field": lambda d, s: d["metadata"].update(trace_name=f"run {s}"),
    "metadata agent id": lambda d, s: d["metadata"].update(agent_id=f"bot-{s}"),
    "metadata source": lambda d, s: d["metadata"].update(source={"trace_id": s}),
    "tool name": lambda d, s: _step(d, 1).update(tool={"name": f"call_{s}"}),
    "id": lambda d, s: d.update(id=f"kp:trace:{s}"),
    "rejected field": lambda d, s: d["metadata"].update(success=s),
}


def _row() -> dict[str, Any]:
    row: dict[str, Any] = json.loads(CHAT.read_text().splitlines()[0])
    return row


def _json_string_row(value: str) -> dict[str, Any]:
    arguments = json.dumps({"api_key": value})
    messages = [
        {"role": "user", "content": "Deploy the service"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "deploy", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "deployed"},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip
    return {"id": "r1", "messages": json.dumps(messages)}


ROW_PLACES: dict[str, Plant] = {
    "string column": lambda r, s: r.update(notes=f"key {s}"),
    "nested struct": lambda r, s: r.update(meta={"review": {"note": f"key {s}"}}),
    "list column": lambda r, s: r.update(tags=["ok", f"key {s}"]),
    "message content": lambda r, s: r["trajectory"][1].update(content=f"use {s}"),
    "id column": lambda r, s: r.update(trajectory_id=f"run-{s}"),
    "task column": lambda r, s: r.update(instance_id=f"task {s}"),
}


def _write_traces(path: Path, place: str) -> str:
    planted = trace_json(trace_id="kp:trace:planted", objective="deploy the service")
    planted["steps"][1]["tool"] = {"name": "shell"}
    clean = json.loads(json.dumps(planted))
    clean["id"] = "kp:trace:0-clean"
    TRACE_PLACES[place](planted, SECRET)
    path.write_text(json.dumps(planted) + "\n" + json.dumps(clean) + "\n")
    return SECRET


def _write_rows(path: Path, place: str) -> str:
    if place == "JSON-string messages column":
        planted, clean = _json_string_row(NAMED), _json_string_row("")
        clean["id"] = "0-r2"
        path.write_text(json.dumps(planted) + "\n" + json.dumps(clean) + "\n")
        return NAMED
    if place == "repeated key":
        line = json.dumps(_row())[:-1] + f', "notes": "key {SECRET}", "notes": "clean"}}'
        path.write_text(line + "\n" + json.dumps(dict(_row(), trajectory_id="0-clean")) + "\n")
        return SECRET
    planted, clean = _row(), _row()
    clean["trajectory_id"] = "0-clean"
    ROW_PLACES[place](planted, SECRET)
    path.write_text(json.dumps(planted) + "\n" + json.dumps(clean) + "\n")
    return SECRET


def _write_parquet(path: Path, place: str) -> str:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.Table.from_pylist([_row(), dict(_row(), trajectory_id="0-clean")])
    if place == "map column":
        entries = [[("note", f"key {SECRET}"), ("api_key", NAMED)], [("note", "clean")]]
        table = table.append_column("m", pa.array(entries, pa.map_(pa.string(), pa.string())))
    elif place == "column name":  # a key of every row: the output's schema names it cleaned
        table = table.append_column(f"notes {SECRET}", pa.array(["note", "clean"]))
    elif place == "struct field name":  # a nested key of every row, in a struct and a list's
        meta = pa.array([{"ok": 1, f"notes {SECRET}": "note"}, {"ok": 2, f"notes {SECRET}": ""}])
        table = table.append_column("meta", meta).append_column(
            "calls", pa.array([[{SECRET: 1}]] * 2)
        )
    elif place == "schema metadata":  # the file's own and a column's notes
        repo = table.schema.field("repo").with_metadata({"note": f"key {SECRET}"})
        table = table.set_column(table.schema.get_field_index("repo"), repo, table["repo"])
        table = table.replace_schema_metadata({"exported_with": f"token {SECRET}"})
    else:
        binary = [f"key {SECRET}".encode(), b"clean"]
        table = table.append_column("b", pa.array(binary, pa.binary()))
    pq.write_table(table, path)
    return SECRET


CELLS: list[tuple[str, str]] = [
    *(("trace", place) for place in TRACE_PLACES),
    *(("jsonl", place) for place in ROW_PLACES),
    ("jsonl", "JSON-string messages column"),
    ("jsonl", "repeated key"),
    ("parquet", "map column"),
    ("parquet", "binary column"),
    ("parquet", "schema metadata"),
    ("parquet", "column name"),
    ("parquet", "struct field name"),
]
COMMANDS = [
    "redact",
    "score --annotate",
    "select",
    "select --budget 1",
    "dedupe",
    "dedupe --against",
    "dedupe --against itself",
    "split",
    "convert",
]
UNRELATED = "Bake a loaf of sourdough bread with a long cold overnight proof in the fridge"


def _arguments(command: str, source: Path, out: Path, report: Path, rows: bool) -> list[str]:
    read = ["--from", "auto"] if rows else []
    match command:
        case "redact":
            return ["redact", *read, str(source), "-o", str(out), "--report", str(report)]
        case "score --annotate":
            return ["score", *read, "--annotate", "--redact", str(source), "-o", str(out)]
        case "select":
            return ["select", *read, "--redact", str(source), "-o", str(out)]
        case "select --budget 1":  # the other is in the report, with its id and task
            return ["select", *read, "--redact", "--budget", "1", str(source), "-o", str(out),
                    "--report", str(report)]  # fmt: skip
        case "dedupe":  # every pair a group: their ids are in the groups of traces
            return ["dedupe", *read, "--redact", "--threshold", "-1", str(source), "-o", str(out)]
        case "dedupe --against":  # an unrelated task: both kept, written (n-grams only)
            texts = out.with_name("reference.txt")
            texts.write_text(UNRELATED + "\n")
            return ["dedupe", *read, "--redact", "--against", str(texts), "--no-embedder",
                    str(source), "-o", str(out), "--report", str(report)]  # fmt: skip
        case "dedupe --against itself":  # both removed: in the report, with the REF's ids
            return ["dedupe", *read, "--redact", "--against", str(source), str(source),
                    "-o", str(out), "--report", str(report)]  # fmt: skip
        case "split":  # the sets are files in a directory
            return ["split", *read, "--redact", "--test", "0.5", str(source), "-o", str(out)]
        case _:
            return ["convert", *read, "--redact", str(source), "-o", str(out)]


def _text(path: Path) -> str:
    """What a file holds, as text; a Parquet file's rows with their bytes as text."""
    if not path.exists():
        return ""
    if path.is_dir():
        return "\n".join(_text(part) for part in sorted(path.iterdir()))
    if path.suffix != ".parquet":
        return path.read_text()
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    schema = pq.read_schema(path)
    notes = [schema.metadata, *(field.metadata for field in schema)]
    return json.dumps(rows, default=lambda value: value.decode("latin-1")) + repr(notes)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("kind", "place"), CELLS, ids=[f"{k}:{p}" for k, p in CELLS])
def test_no_planted_secret_leaves_any_command_that_redacts(
    kp: KpRunner, tmp_path: Path, kind: str, place: str, command: str
) -> None:
    """Output, report, stdout and stderr hold no part of the planted secret."""
    source = tmp_path / f"in.{'parquet' if kind == 'parquet' else 'jsonl'}"
    writer = {"trace": _write_traces, "jsonl": _write_rows, "parquet": _write_parquet}[kind]
    secret = writer(source, place)
    out = tmp_path / ("out.parquet" if kind == "parquet" and command != "convert" else "out.jsonl")
    if command == "split":
        out = tmp_path / "sets"
    report = tmp_path / "report.json"
    run = kp(*_arguments(command, source, out, report, kind != "trace"))
    assert run.code in (0, 1), run.err
    everything = "\n".join([_text(out), _text(report), run.out, run.err])
    if place == "rejected field":
        assert "metadata.success" in run.err  # the record was refused: its message is the place
    elif command == "dedupe --against itself":
        assert '"matched_id"' in _text(report), "nothing was removed: the cell checks nothing"
    else:
        assert _text(out) or run.out, "nothing was written: the cell checks nothing"
    assert secret[:12] not in everything


SOURCES = Path(__file__).parents[1] / "sources" / "data"


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("langfuse/weather_agent_export.json", ("trace", "name")),
        ("langfuse/weather_agent_export.json", ("trace", "id")),
        ("langfuse/weather_agent_export.json", ("trace", "metadata", "kp.task_domain")),
        ("langfuse/weather_agent_export.json",
         ("observations", 1, "output", "tool_calls", 0, "function", "name")),
        ("tempo/trace_by_id.json", ("batches", 0, "instrumentationLibrarySpans", 0, "spans", 0,
                                    "attributes", 1, "value", "stringValue")),
        ("langchain/tracer_nested_run.json", ("serialized", "name")),
    ],
)  # fmt: skip
def test_kp_convert_redact_cleans_what_a_source_puts_in_ids_names_and_metadata(
    kp: KpRunner, tmp_path: Path, name: str, path: tuple[str | int, ...]
) -> None:
    """A trace name, a span attribute, an id or a tool name holding a secret: none is kept."""
    document = json.loads((SOURCES / name).read_text())
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] += f" {SECRET}"
    source = tmp_path / Path(name).name
    source.write_text(json.dumps(document))
    run = kp("convert", "--redact", str(source))
    assert run.code == 0, run.err
    assert run.out
    assert SECRET[:12] not in run.out + run.err


def test_a_secret_straddling_the_output_summary_s_limit_leaves_no_part(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A tool result is cut at 500 characters for output_summary: not inside the secret."""
    row = _row()
    row["trajectory"][3]["content"] = "." * 480 + f" {SECRET} and more output"
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row) + "\n")
    run = kp("convert", "--redact", str(source))
    assert run.code == 0, run.err
    assert '"output_summary":"...' in run.out  # the cut summary is there, checked
    assert SECRET[:12] not in run.out + run.err


def test_a_named_secret_in_escaped_json_of_a_cut_tool_result_leaves_no_part(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A JSON body kept as a string (a Lambda's) in a tool result cut for output_summary: the
    cut text is no JSON to parse, and its names are escaped (\\"access_token\\": \\"...\\")."""
    body = json.dumps({"access_token": NAMED, "expires_in": 3600})
    result = json.dumps({"statusCode": 200, "body": body, "log": "." * 600})
    row = _row()
    row["trajectory"][3]["content"] = f"Lambda returned: {result}"
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row) + "\n")
    run = kp("convert", "--redact", str(source))
    assert run.code == 0, run.err
    assert '\\\\\\"access_token\\\\\\": \\\\\\"[REDACTED:password]' in run.out
    assert NAMED[:12] not in run.out + run.err
