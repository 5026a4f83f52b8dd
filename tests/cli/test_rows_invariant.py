"""Rows in = rows out on every row writer, on every dataset file of the repository (issue 27).

Each file that kp reads as dataset rows (the conformance corpus, the sources' test data, the
examples) gets one row planted that kp cannot read; each command that writes rows back gives
every row back, in order, the planted one with ``kp_error`` saying why and its other ``kp_``
values empty. ``kp select`` writes its picks first (every row: no limit is set) and the rows it
could not judge last; ``kp convert --to messages`` writes training rows, the planted one empty.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse._util.text import counted
from knowledgepulse.records import Record
from knowledgepulse.records.json_values import json_value
from knowledgepulse.records.readers import read_records
from knowledgepulse.reports.messages import MESSAGES_COLUMNS
from tests.builders import without_nulls
from tests.cli.conftest import KpRunner

ROOT = Path(__file__).parents[2]
ROW_FILES = sorted(
    path
    for folder, pattern in (
        ("tests/conformance/files/anthropic", "*.jsonl"),
        ("tests/conformance/files/openai-chat", "*.json*"),
        ("tests/conformance/files/openai-responses", "*.jsonl"),
        ("tests/conformance/files/sharegpt", "*.json"),
        ("tests/sources/data/chat", "*.json*"),
        ("examples/datasets", "*.json*"),
        ("examples/datasets", "*.parquet"),
        ("examples/datasets", "*/*.arrow"),
    )
    for path in (ROOT / folder).glob(pattern)
    if not path.name.endswith(".facts.json")
)
"""Every file of the repository that kp reads as dataset rows (``--from auto``)."""

PLANTED = {"planted": "a row with no conversation in it"}
"""The row kp cannot read: JSON, but none of the row formats' conversation columns."""

COMMANDS = {
    "annotate": ("score", "--from", "auto", "--no-embedder", "--annotate"),
    "redact": ("redact", "--from", "auto"),
    "messages": ("convert", "--from", "auto", "--to", "messages"),
    "select": ("select", "--from", "auto", "--no-embedder"),
    "dedupe": ("dedupe", "--from", "auto", "--no-embedder", "--by", "task"),
    "decontaminate": ("dedupe", "--from", "auto", "--no-embedder", "--against"),
}
"""Each command that writes rows, as it is run (a reference set, the input and ``-o`` follow)."""


def command_line(command: str, folder: Path) -> tuple[str, ...]:
    """``command``'s arguments; ``kp dedupe --against`` a task no dataset copies (none removed)."""
    if command != "decontaminate":
        return COMMANDS[command]
    reference = folder / "reference.txt"
    reference.write_text("Translate the quarterly zebra census into Old Norse verse.\n")
    return (*COMMANDS[command], str(reference))


def without_kp(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if not key.startswith("kp_")}


def planted_copy(source: Path, folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    """``source`` with a row kp cannot read as its second; the copy and its rows, in order."""
    copy = folder / source.name
    if source.suffix == ".parquet":
        table = pq.read_table(source)
        rows = table.to_pylist()
        broken = rows[0] | {
            field.name: None
            for field in table.schema
            if pa.types.is_nested(field.type) or pa.types.is_string(field.type)
        }
        rows.insert(1, broken)
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), copy)
        return copy, rows
    if source.suffix == ".arrow":  # a datasets.save_to_disk file: an Arrow stream
        table = pa.ipc.open_stream(source.read_bytes()).read_all()
        empty = pa.table([pa.nulls(1, field.type) for field in table.schema], schema=table.schema)
        table = pa.concat_tables([table.slice(0, 1), empty, table.slice(1)])
        with pa.ipc.new_stream(copy, table.schema) as stream:
            stream.write_table(table)
        return copy, table.to_pylist()
    if source.suffix == ".json":
        document = json.loads(source.read_text(encoding="utf-8"))
        rows = document if isinstance(document, list) else [document]  # a file of one row
        rows.insert(1, PLANTED)
        copy.write_text(json.dumps(rows), encoding="utf-8")
        return copy, rows
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line]
    rows.insert(1, PLANTED)
    copy.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return copy, rows


def written_rows(out: Path) -> list[dict[str, Any]]:
    if out.suffix == ".parquet":
        rows: list[dict[str, Any]] = pq.read_table(out).to_pylist()
        return rows
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def run_writer(
    kp: KpRunner, command: str, source: Path, folder: Path
) -> tuple[list[dict[str, Any]], str]:
    """Run ``command`` on ``source``: the rows it wrote, and its stderr (exit 1: a bad row)."""
    out = folder / ("out.parquet" if source.suffix == ".parquet" else "out.jsonl")
    run = kp(*command_line(command, folder), str(source), "-o", str(out))
    assert run.code == 1, run.err
    return written_rows(out), run.err


def comparable(row: dict[str, Any]) -> str:
    return json.dumps(without_kp(row), sort_keys=True, default=str)


def identity(row: dict[str, Any]) -> str:
    return str(row.get("trajectory_id"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("source", ROW_FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_row_writer_gives_every_row_back_with_the_bad_one_marked(
    kp: KpRunner, tmp_path: Path, source: Path, command: str
) -> None:
    """A dataset file with a row planted that kp cannot read: as many rows out, in order."""
    planted, rows = planted_copy(source, tmp_path)
    written, err = run_writer(kp, command, planted, tmp_path)
    assert len(written) == len(rows)
    last = command in ("select", "decontaminate")  # what they keep, then what they cannot judge
    bad = len(rows) - 1 if last else 1
    errors = [row.get("kp_error") for row in written]
    assert [error is not None for error in errors] == [i == bad for i in range(len(rows))]
    assert str(errors[bad]) in err
    assert all(
        value is None
        for key, value in written[bad].items()
        if key.startswith("kp_") and key != "kp_error"
    )
    if command == "messages":  # training rows: the planted one has no field
        assert all(written[bad].get(name) is None for name in MESSAGES_COLUMNS)
        assert all(row["messages"] for i, row in enumerate(written) if i != bad)
    elif command == "redact":  # values may be cleaned: the planted row is the second
        assert without_kp(written[bad]) == rows[1]
    else:  # an Arrow file's JSON extension column is read as JSON: its rows told by id
        same = identity if source.suffix == ".arrow" else comparable
        if last:  # every row picked (or kept), in the picks' order
            assert Counter(map(same, written)) == Counter(map(same, rows))
        else:
            assert [same(row) for row in written] == [same(row) for row in rows]


CHAT_ROW = json.loads((ROOT / "examples/datasets/openai_chat.jsonl").read_text().splitlines()[0])


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    good=st.lists(st.booleans(), min_size=1, max_size=10).filter(any),
    command=st.sampled_from(sorted(COMMANDS)),
)
def test_any_mix_of_rows_gives_every_row_back(
    kp: KpRunner, tmp_path_factory: pytest.TempPathFactory, good: list[bool], command: str
) -> None:
    """Generated rows, some unreadable: each row writer gives as many rows back, bad ones marked."""
    folder = tmp_path_factory.mktemp("mix")
    source = folder / "rows.jsonl"
    rows = [
        CHAT_ROW | {"trajectory_id": f"run-{n}", "n": n} if ok else PLANTED | {"n": n}
        for n, ok in enumerate(good)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = folder / "out.jsonl"
    run = kp(*command_line(command, folder), str(source), "-o", str(out))
    assert run.code == (0 if all(good) else 1), run.err
    written = written_rows(out)
    assert len(written) == len(rows)
    marked = [row.get("kp_error") is not None for row in written]
    if command in ("select", "decontaminate"):  # what they keep, then what they cannot judge
        assert marked == sorted(marked)
        assert [row["n"] for row in written if row.get("kp_error")] == [
            n for n, ok in enumerate(good) if not ok
        ]
    elif command == "messages":
        assert marked == [not ok for ok in good]
    else:
        assert [row["n"] for row in written] == list(range(len(rows)))
        assert marked == [not ok for ok in good]
    # The summary says each unread row once: written back, not also "skipped".
    said = [line for line in run.err.splitlines() if "written back with kp_error" in line]
    if all(good):
        assert not said
    else:
        unread = counted(good.count(False), "row")
        assert said == [line for line in said if "skipped" not in line]
        assert len(said) == 1
        assert f"; {unread} that gave no trace written back with kp_error" in said[0]


@pytest.mark.parametrize("command", ["redact", "select", "dedupe", "annotate"])
def test_a_parquet_file_none_of_whose_rows_reads_comes_back_whole_with_its_columns(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """No row reads: every row back, the input's columns first, each row's kp_error set."""
    table = pq.read_table(ROOT / "examples/datasets/openai_chat.parquet")
    emptied = table.drop_columns(["trajectory"]).append_column(
        "trajectory", pa.nulls(table.num_rows, table.schema.field("trajectory").type)
    )
    source = tmp_path / "none.parquet"
    pq.write_table(emptied, source)
    written, _ = run_writer(kp, command, source, tmp_path)
    schema = pq.read_schema(tmp_path / "out.parquet")
    assert schema.names[: len(emptied.schema)] == emptied.schema.names
    assert [without_kp(row) for row in written] == emptied.to_pylist()
    assert all(row["kp_error"] for row in written)


@pytest.mark.parametrize(
    "source",
    [path for path in ROW_FILES if path.suffix in (".json", ".jsonl")],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_every_json_dataset_file_written_to_parquet_gives_every_row_back(
    kp: KpRunner, tmp_path: Path, source: Path
) -> None:
    """JSON rows to ``-o out.parquet``: every row back, each value as kp reads it again.

    Before, 17 of these files stopped the run: a message's content a text in one message and a
    list of blocks in another (Anthropic's, OpenAI Responses'), which no one Parquet type
    holds; such a column is now JSON text. (A struct column reads back with every key of its
    type, null where a row had none: compared without nulls.)
    """
    planted, rows = planted_copy(source, tmp_path)
    out = tmp_path / "out.parquet"
    run = kp(*COMMANDS["annotate"], str(planted), "-o", str(out))
    assert run.code == 1, run.err
    back = [record.value for record in read_records(out) if isinstance(record, Record)]
    assert [without_nulls(without_kp(row)) for row in back] == [
        without_nulls(json_value(row)) for row in rows
    ]
