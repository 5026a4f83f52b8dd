"""Dataset rows back in their own form: original columns unchanged, ``kp_`` columns added."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.cli.main import _PrintableFormatter
from knowledgepulse.records import Location, Record
from knowledgepulse.reports.rows import (
    ANNOTATED_COLUMNS,
    DEDUPE_COLUMNS,
    SCORE_COLUMNS,
    jsonl_row,
)
from knowledgepulse.testing import HashingEmbedder
from tests.builders import without_nulls
from tests.cli.conftest import KpRunner

DATA = Path(__file__).parents[1] / "sources" / "data" / "chat"
TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands embed with the fast fake instead of MiniLM."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


def original_lines(path: Path) -> dict[str, str]:
    return {json.loads(line)["trajectory_id"]: line for line in path.read_text().splitlines()}


def test_select_writes_the_original_jsonl_rows_byte_for_byte_with_kp_columns(
    kp: KpRunner,
) -> None:
    """Each selected line is its input line with the kp_ keys spliced in before the brace."""
    source = DATA / "openai_chat.jsonl"
    run = kp("select", "--from", "auto", "--no-embedder", str(source))
    assert run.code == 0, run.err
    assert "read as openai-chat rows" in run.err
    originals = original_lines(source)
    lines = run.out.splitlines()
    assert len(lines) == 3
    for line in lines:
        row = json.loads(line)
        original = originals[row["trajectory_id"]]
        assert line.startswith(original[:-1] + ",")
        assert list(row)[-len(SCORE_COLUMNS) :] == list(SCORE_COLUMNS)
        assert 0.0 <= row["kp_score"] <= 1.0


def test_select_to_parquet_keeps_the_schema_and_adds_the_kp_columns(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A Parquet input selected into Parquet: the same columns, equal values, then kp_ ones
    (kp_error last, empty: every row was read)."""
    rows = [json.loads(line) for line in (DATA / "openai_chat.jsonl").read_text().splitlines()]
    table = pa.Table.from_pylist(rows)
    source = tmp_path / "rows.parquet"
    pq.write_table(table, source)
    out = tmp_path / "picked.parquet"
    run = kp("select", "--from", "openai-chat", "--budget", "2", str(source), "-o", str(out))
    assert run.code == 0, run.err
    written = pq.read_table(out)
    assert written.schema.names == table.schema.names + list(ANNOTATED_COLUMNS)
    assert written.column("kp_error").null_count == written.num_rows
    for name in table.schema.names:
        assert written.schema.field(name) == table.schema.field(name)
    by_id = {row["trajectory_id"]: row for row in table.to_pylist()}
    for row in written.to_pylist():
        assert {k: row[k] for k in table.schema.names} == by_id[row["trajectory_id"]]
    assert written.num_rows == 2


@pytest.mark.parametrize("source", [["--from", "auto"], []], ids=["from-auto", "no-from"])
def test_score_annotate_on_parquet_writes_every_row_back(
    kp: KpRunner, tmp_path: Path, source: list[str]
) -> None:
    """``kp score --annotate`` on Parquet rows writes Parquet, row for row, in input order.

    Recognised by content, with or without ``--from`` (without it, JSON Lines once went into
    the ``.parquet`` file).

    Anthropic content is text or blocks, which one Parquet type cannot hold: such datasets keep
    the messages as a JSON string column, read as the nested values.
    """
    rows = [json.loads(line) for line in (DATA / "anthropic.jsonl").read_text().splitlines()]
    rows = [{**row, "messages": json.dumps(row["messages"])} for row in rows]
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    out = tmp_path / "scored.parquet"
    run = kp("score", *source, "--annotate", "--no-embedder", str(path), "-o", str(out))
    assert run.code == 0, run.err
    written = pq.read_table(out).to_pylist()
    assert [row["id"] for row in written] == ["msg-run-1", "msg-run-2"]
    assert [row["messages"] for row in written] == [row["messages"] for row in rows]
    assert all(set(SCORE_COLUMNS) <= set(row) for row in written)


@pytest.mark.parametrize("source", [("--from", "openai-chat"), ("--from", "auto"), ()])
def test_parquet_rows_to_standard_output_are_refused(
    kp: KpRunner, tmp_path: Path, source: tuple[str, ...]
) -> None:
    """Parquet needs a file: without -o the command says so and exits 2 (before reading when
    --from names a dataset's source; once the content says so, else)."""
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([{"messages": [{"role": "user", "content": "x"}]}]), path)
    run = kp("select", *source, "--no-embedder", str(path))
    assert run.code == 2
    assert "-o FILE.parquet" in run.err
    assert run.out == ""


@pytest.mark.parametrize("source", [("--from", "auto"), ()])
def test_a_parquet_table_of_traces_goes_to_standard_output_as_json_lines(
    kp: KpRunner, tmp_path: Path, source: tuple[str, ...]
) -> None:
    """Traces are no dataset rows: --from auto reads them as no --from does, and writes them."""
    path = tmp_path / "traces.parquet"
    assert kp("convert", str(TRACES), "-o", str(path)).code == 0
    run = kp("select", *source, "--budget", "2", "--no-embedder", str(path))
    assert run.code == 0, run.err
    assert [json.loads(line)["@type"] for line in run.out.splitlines()] == ["ReasoningTrace"] * 2


@pytest.mark.parametrize(
    "command",
    [
        ("convert",),
        ("convert", "--to", "atif"),
        ("redact",),
        ("select", "--no-embedder"),
        ("score", "--no-embedder", "--annotate"),
    ],
)
def test_an_arrow_output_is_refused_before_reading_naming_the_forms_written(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """-o x.arrow was written as JSON Lines: it is a usage error naming -o and the suffixes."""
    out = tmp_path / "x.arrow"
    run = kp(*command, str(TRACES), "-o", str(out))
    assert run.code == 2
    assert "-o x.arrow: .arrow is not a form written here" in run.err
    assert ".jsonl" in run.err
    assert not out.exists()


def test_dedupe_on_rows_marks_every_row_with_its_group_and_whether_it_is_kept(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Two runs with the same text are one group; the kept one and the dropped one say so."""
    source = tmp_path / "rows.jsonl"
    row = {
        "messages": [
            {"role": "user", "content": "sum 2 and 2"},
            {"role": "assistant", "content": "4"},
        ]
    }
    other = {
        "messages": [
            {"role": "user", "content": "plan a trip to Oslo in May"},
            {"role": "assistant", "content": "Fly on the 3rd."},
        ]
    }
    source.write_text("\n".join(json.dumps(r) for r in (row, row, other)) + "\n")
    run = kp("dedupe", "--from", "openai-chat", str(source))
    assert run.code == 0, run.err
    written = [json.loads(line) for line in run.out.splitlines()]
    assert len(written) == 3
    assert all(set(SCORE_COLUMNS + DEDUPE_COLUMNS) <= set(r) for r in written)
    assert [r["kp_group"] for r in written] == [0, 0, None]
    assert sorted(r["kp_kept"] for r in written[:2]) == [False, True]
    assert written[2]["kp_kept"] is True


def test_row_options_apply_to_rows_recognised_without_from(kp: KpRunner) -> None:
    """--domain and the row options need no --from: the rows are recognised by content."""
    run = kp(
        "score", "--no-embedder", "-f", "jsonl", "--domain", "coding", str(DATA / "anthropic.jsonl")
    )
    assert run.code == 0, run.err
    assert {json.loads(line)["domain"] for line in run.out.splitlines()} == {"coding"}
    missing = kp("select", "--messages-field", "x", str(DATA / "anthropic.jsonl"))
    assert missing.code == 2  # a column no row has: misspelt, the option's usage error
    assert "--messages-field x: no row has it (misspelt?)" in missing.err


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.text(max_size=6).filter(lambda k: not k.startswith("kp_")), _values, max_size=5
    ),
    st.sampled_from(["", " ", "  "]),
)
def test_a_jsonl_row_keeps_its_own_bytes_and_gains_the_columns(
    row: dict[str, Any], pad: str
) -> None:
    """The written line parses to the row plus the columns, and begins with the row's bytes."""
    raw = (json.dumps(row, separators=(",", pad + ":" + pad)) + pad).encode()
    columns = {"kp_score": 0.5, "kp_nearest": None}
    line = jsonl_row(Record(Location("f", 1, 0), row, raw=raw), columns)
    assert json.loads(line) == {**row, **columns}
    assert line.encode().startswith(raw.rstrip()[:-1])


@pytest.mark.parametrize("form", ["jsonl", "parquet"])
def test_a_jsonl_row_with_a_missing_value_written_as_nan_is_read_as_parquet_reads_it(
    kp: KpRunner, tmp_path: Path, form: str
) -> None:
    """``json.dumps`` of a DataFrame's row writes a missing number as NaN, which is no JSON:
    the row is scored as the same row in Parquet is (NaN there, null here), and written back
    with its own bytes, or with null in Parquet, where the column is text in other rows."""
    lines = (DATA / "openai_chat.jsonl").read_text().splitlines()
    rows = [json.loads(line) | {"note": "checked"} for line in lines]
    rows[1] |= {"reward": float("nan"), "note": float("nan")}
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    parquet = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows[1:2]), parquet)
    out = tmp_path / f"out.{form}"
    run = kp("score", "--no-embedder", "--annotate", str(source), "-o", str(out))
    assert run.code == 0, run.err
    same = kp(
        "score", "--no-embedder", "--annotate", str(parquet), "-o", str(tmp_path / "p.parquet")
    )
    expected = pq.read_table(tmp_path / "p.parquet").to_pylist()[0]["kp_score"]
    if form == "jsonl":
        written = out.read_text().splitlines()
        assert written[1].startswith(json.dumps(rows[1])[:-1] + ",")  # its own bytes: NaN
        assert json.loads(written[1])["kp_score"] == expected
    else:
        table = pq.read_table(out).to_pylist()
        assert [row["note"] for row in table] == ["checked", None, *["checked"] * (len(rows) - 2)]
        assert table[1]["reward"] is None
        assert table[1]["kp_score"] == expected
    assert same.code == 0, same.err


def test_convert_takes_the_row_options_and_says_them(kp: KpRunner) -> None:
    """--messages-field, --id-field and --success-field with a threshold reach the reader."""
    run = kp(
        "convert",
        "--from",
        "openai-responses",
        "--messages-field",
        "input",
        "--id-field",
        "task",
        "--success-field",
        "reward",
        "--success-threshold",
        "0.95",
        str(DATA / "openai_responses.jsonl"),
    )
    assert run.code == 0, run.err
    traces = [json.loads(line) for line in run.out.splitlines()]
    assert [t["id"] for t in traces] == ["kp:trace:order-status", "kp:trace:news"]
    assert [t["metadata"]["success"] for t in traces] == [False, False]
    assert "messages from 'input' then 'output'; id from 'task'" in run.err


def test_select_per_task_on_rows_reads_the_task_column(kp: KpRunner) -> None:
    """--per-task 1 on dataset rows keeps one row of each task column value (instance_id here)."""
    source = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
    tasks = [json.loads(line)["instance_id"] for line in source.read_text().splitlines()]
    run = kp("select", "--from", "openai-chat", "--no-embedder", "--per-task", "1", str(source))
    assert run.code == 0, run.err
    kept = [json.loads(line)["instance_id"] for line in run.out.splitlines()]
    assert sorted(kept) == sorted(set(tasks))
    assert "covered (by the dataset's task column)" in run.err


def test_select_on_rows_names_the_task_column_it_was_given(kp: KpRunner, tmp_path: Path) -> None:
    """--task-field on rows: the summary names that column, and rows without it are one task."""
    source = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    rows[0]["tier"] = "gold"
    tiered = tmp_path / "tiered.jsonl"
    tiered.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    run = kp(
        "select", "--from", "openai-chat", "--no-embedder", "--task-field", "tier", str(tiered)
    )
    assert run.code == 0, run.err
    assert "2 of 2 tasks covered (by tier), 2 traces without tier taken as one task" in run.err


def test_select_refuses_a_task_column_no_row_has(kp: KpRunner) -> None:
    """A --task-field no row has is misspelt: refused, not every row one task."""
    source = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
    run = kp(
        "select", "--from", "openai-chat", "--no-embedder", "--task-field", "nosuch", str(source)
    )
    assert run.code == 2
    assert "--task-field nosuch: no trace has it (misspelt?)" in run.err


@pytest.mark.parametrize(
    "command",
    [
        ("score", "--annotate", "--no-embedder"),
        ("select", "--no-embedder"),
        ("dedupe", "--by", "task", "--no-embedder"),
        ("redact",),
    ],
    ids=lambda c: c[0],
)
def test_rows_of_which_none_gives_a_trace_all_come_back_with_their_error(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Rows in = rows out when no row of a JSON Lines file can be read: each with kp_error."""
    source = tmp_path / "bad.jsonl"
    rows = [{"messages": [], "n": 1}, {"messages": [{"role": "user", "content": "hi"}], "n": 2}]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    run = kp(*command, "--from", "openai-chat", str(source), "-o", str(output))
    assert run.code == 1, run.err
    back = [json.loads(line) for line in output.read_text().splitlines()]
    assert [row["n"] for row in back] == [1, 2]
    assert all(row["kp_error"] for row in back)


@pytest.mark.parametrize(
    "command", [("select", "--no-embedder"), ("dedupe",), ("redact",)], ids=lambda c: c[0]
)
def test_no_row_read_still_gives_a_readable_parquet_file(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """An input of no row, -o FILE.parquet: a valid Parquet file of no row, not 0 bytes."""
    source = tmp_path / "empty.parquet"
    rows = [json.loads(line) for line in (DATA / "openai_chat.jsonl").read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows).slice(0, 0), source)
    output = tmp_path / "out.parquet"
    run = kp(*command, "--from", "auto", str(source), "-o", str(output), "--allow-empty")
    assert run.code == 0, run.err
    assert pq.read_table(output).num_rows == 0


@pytest.mark.parametrize("command", [("score", "--annotate", "--no-embedder"), ("redact",)])
def test_a_struct_key_new_after_the_first_batch_widens_the_parquet_output(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """``metadata: {a}`` then ``{a, b}`` past the first batch: ``b`` is added, null before.

    Before, pyarrow dropped ``b`` without a word; then the run stopped at that row (exit 2).
    """
    monkeypatch.setattr("knowledgepulse.reports.rows.BATCH_ROWS", 2)
    turns = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]
    metadata = [{"a": 1}, {"a": 2}, {"a": 3, "b": "x"}]
    source = tmp_path / "rows.jsonl"
    source.write_text(
        "".join(json.dumps({"messages": turns, "metadata": m}) + "\n" for m in metadata)
    )
    out = tmp_path / "out.parquet"
    run = kp(*command, str(source), "-o", str(out))
    assert run.code == 0, run.err
    assert pq.read_table(out).column("metadata").to_pylist() == [
        {"a": 1, "b": None},
        {"a": 2, "b": None},
        {"a": 3, "b": "x"},
    ]


@pytest.mark.parametrize("command", [("score", "--annotate", "--no-embedder"), ("redact",)])
def test_a_value_of_another_type_after_the_first_batch_makes_its_column_json_text(
    kp: KpRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    command: tuple[str, ...],
) -> None:
    """``metadata.a`` an integer, then a text past the first batch: every row is written, the
    column as JSON text, and a warning names the row.

    Before, the run stopped there with exit 2 and no file: rows in != rows out.
    """
    monkeypatch.setattr("knowledgepulse.reports.rows.BATCH_ROWS", 2)
    turns = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]
    metadata = [{"a": 1}, {"a": 2}, {"a": "three", "b": "x"}]
    source = tmp_path / "rows.jsonl"
    source.write_text(
        "".join(json.dumps({"messages": turns, "metadata": m}) + "\n" for m in metadata)
    )
    out = tmp_path / "out.parquet"
    run = kp(*command, str(source), "-o", str(out))
    assert run.code == 0, run.err
    said = run.err + caplog.text  # the warning, as kp logs it
    assert f"{source}:3: metadata.a is a string, where the earlier rows' int64 is" in said
    assert "the column 'metadata' is written as JSON text" in said
    texts = pq.read_table(out).column("metadata").to_pylist()
    assert [json.loads(text) for text in texts] == metadata


def _chat_row(index: int, late: str) -> dict[str, Any]:
    """Row ``index`` of 1,100: a user turn and an answer; from row 1,050 with ``late``'s extra."""
    row: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": f"fix bug {index}"},
            {"role": "assistant", "content": f"fixed {index}"},
        ]
    }
    if index < 1050:
        return row
    if late in {"column", "both"}:
        row["source"] = f"shard-{index % 3}"
    if late in {"tool call", "both"}:
        call = {
            "id": f"c{index}",
            "type": "function",
            "function": {"name": "ls", "arguments": "{}"},
        }
        row["messages"][1:1] = [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{index}", "name": "ls", "content": "a.py"},
        ]
    return row


@pytest.mark.parametrize("late", ["column", "tool call", "both"])
def test_rows_with_a_column_or_a_tool_call_after_the_first_batch_go_to_parquet_whole(
    kp: KpRunner, tmp_path: Path, late: str
) -> None:
    """1,050 plain chat rows, then 50 with a new column, a message's new keys, or both:
    1,100 rows out, the new column and keys null in the rows before, every value as the JSON
    Lines output of the same command has it.

    Before, the run stopped at row 1,051 (``the column 'source' is not in the Parquet
    output``, ``messages[1].tool_calls is a field the column's type does not have``).
    """
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(_chat_row(n, late)) + "\n" for n in range(1100)))
    out, lines = tmp_path / "out.parquet", tmp_path / "out.jsonl"
    for output in (out, lines):
        run = kp("score", "--annotate", "--no-embedder", str(source), "-o", str(output))
        assert run.code == 0, run.err
    table = pq.read_table(out)
    expected = [json.loads(line) for line in lines.read_text().splitlines()]
    assert table.num_rows == len(expected) == 1100
    assert table.schema.names[-len(ANNOTATED_COLUMNS) :] == list(ANNOTATED_COLUMNS)
    back = table.to_pylist()
    assert [without_nulls(row) for row in back] == [without_nulls(row) for row in expected]
    if late != "tool call":
        assert [row["source"] for row in back[1049:1051]] == [None, "shard-0"]
    if late != "column":
        assert back[0]["messages"][1]["tool_calls"] is None
        assert back[-1]["messages"][1]["tool_calls"][0]["id"] == "c1099"


@pytest.mark.parametrize(
    "command",
    [
        ("score", "--no-embedder"),
        ("score", "--annotate", "--no-embedder"),
        ("validate",),
        ("redact",),
        ("convert",),
    ],
)
@pytest.mark.parametrize(
    ("name", "field", "keys"),
    [
        ("datasets/openai_chat.jsonl", "nosuch", "rows have exit_status, "),
        ("datasets/openai_chat.jsonl", "repo", None),
        ("traces/traces.jsonl", "metadata.nosuch", "traces have @context, "),
        ("traces/traces.jsonl", "source_skill", None),  # one of the eight traces has it
    ],
)
def test_a_run_needing_no_task_warns_of_a_task_field_no_item_has(  # noqa: PLR0917 - parameters
    kp: KpRunner,
    caplog: pytest.LogCaptureFixture,
    command: tuple[str, ...],
    name: str,
    field: str,
    keys: str | None,
) -> None:
    """Its task is written (convert's metadata.source.task) but not needed: warned, not refused.

    An item has the field as select reads it: a row's column, else the trace's JSON's path.
    The warning is logged with the error as its argument, which kp's log format spells with
    the option's name (``kp: --task-field nosuch: ...``; tests/cli/test_error_flags.py).
    """
    source = Path(__file__).parents[2] / "examples" / name
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        run = kp(*command, "--task-field", field, str(source))
    assert run.code == 0, run.err
    warned = [
        _PrintableFormatter("%(message)s").format(record)
        for record in caplog.records
        if "no trace has it" in record.getMessage()
    ]
    expected = f"kp: --task-field {field}: no trace has it (misspelt?); the {keys}"
    assert [said.startswith(expected) for said in warned] == ([] if keys is None else [True])
