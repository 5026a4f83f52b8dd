"""Rows in = rows out: ``kp score --annotate`` gives back every dataset row, read or not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.reports.rows import ANNOTATED_COLUMNS
from tests.cli.conftest import KpRunner

DATASETS = Path(__file__).parents[2] / "examples" / "datasets"
BROKEN_LINE = '{"broken": nope}'
"""A dataset line that is no JSON: kp cannot read it, so it gives no trace. (It breaks before
its end: a first line that breaks at its end is read as a pretty-printed JSON document.)"""


def without_kp(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if not key.startswith("kp_")}


def annotate(kp: KpRunner, source: Path, out: Path) -> str:
    """Run ``kp score --annotate`` on ``source``; its stderr (exit 1: a row was unreadable)."""
    run = kp("score", "--from", "auto", "--no-embedder", "--annotate", str(source), "-o", str(out))
    assert run.code == 1, run.err
    return run.err


@pytest.mark.parametrize("name", sorted(path.name for path in DATASETS.glob("*.jsonl")))
def test_annotate_keeps_a_broken_jsonl_line_in_its_place_with_kp_error(
    kp: KpRunner, tmp_path: Path, name: str
) -> None:
    """An example dataset with a line that is no JSON: as many rows out, the error on that one."""
    lines = (DATASETS / name).read_text().splitlines()
    lines.insert(1, BROKEN_LINE)
    source = tmp_path / name
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    err = annotate(kp, source, out)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == len(lines)
    errors = [row["kp_error"] for row in written]
    assert [error is not None for error in errors] == [index == 1 for index in range(len(lines))]
    assert errors[1].startswith("invalid JSON")
    assert errors[1] in err
    # The line's text is kept (kp_raw), for no column of its own holds it.
    assert written[1] == dict.fromkeys(ANNOTATED_COLUMNS) | {
        "kp_error": errors[1],
        "kp_raw": BROKEN_LINE,
    }
    for line, row in zip(lines, written, strict=True):
        if line != BROKEN_LINE:
            assert row["kp_raw"] is None
            assert without_kp(row) == json.loads(line)
            assert row["kp_score"] is not None


def broken_copy(table: pa.Table) -> dict[str, Any]:
    """The first row with every nested or text column empty (its conversation too): no trace."""
    row: dict[str, Any] = table.slice(0, 1).to_pylist()[0]
    nested = [
        field.name
        for field in table.schema
        if pa.types.is_nested(field.type) or pa.types.is_string(field.type)
    ]
    return row | dict.fromkeys(nested)


@pytest.mark.parametrize("name", sorted(path.name for path in DATASETS.glob("*.parquet")))
def test_annotate_keeps_a_broken_parquet_row_in_its_place_with_kp_error(
    kp: KpRunner, tmp_path: Path, name: str
) -> None:
    """An example Parquet dataset with a row holding no conversation: every row back, in order."""
    table = pq.read_table(DATASETS / name)
    rows = table.to_pylist()
    rows.insert(1, broken_copy(table))
    source = tmp_path / name
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), source)
    out = tmp_path / "out.parquet"
    err = annotate(kp, source, out)
    written = pq.read_table(out)
    assert written.schema.names == table.schema.names + list(ANNOTATED_COLUMNS)
    back = written.to_pylist()
    assert [without_kp(row) for row in back] == rows
    errors = [row["kp_error"] for row in back]
    assert [error is not None for error in errors] == [index == 1 for index in range(len(rows))]
    assert errors[1] in err
    assert all(back[1][name] is None for name in ANNOTATED_COLUMNS if name != "kp_error")


def test_annotate_leaves_a_trace_files_bad_record_out(kp: KpRunner, tmp_path: Path) -> None:
    """A ReasoningTrace file's bad record is no dataset row: a problem on stderr only."""
    traces = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
    lines = traces.read_text().splitlines()
    source = tmp_path / "traces.jsonl"
    source.write_text("\n".join([lines[0], BROKEN_LINE, *lines[1:]]) + "\n")
    out = tmp_path / "out.jsonl"
    err = annotate(kp, source, out)
    assert "invalid JSON" in err
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == len(lines)
    assert all("kp_error" not in document for document in written)


SECRET = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678"


def test_annotate_redact_cleans_a_row_it_cannot_read_too(kp: KpRunner, tmp_path: Path) -> None:
    """--redact: a bad row written back has its secrets redacted as a read row would."""
    lines = (DATASETS / "openai_chat.jsonl").read_text().splitlines()
    lines.insert(1, json.dumps({"token": SECRET, "trajectory": "lost"}))
    source, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    source.write_text("\n".join(lines) + "\n")
    run = kp("score", "--no-embedder", "--annotate", "--redact", str(source), "-o", str(out))
    assert run.code == 1, run.err
    written = out.read_text()
    assert SECRET not in written
    bad = json.loads(written.splitlines()[1])
    assert bad["kp_error"] is not None
    assert bad["token"].startswith("[REDACTED")


CHAT_ROW = json.loads((DATASETS / "openai_chat.jsonl").read_text().splitlines()[0])


def mixed_line(kind: str, number: int) -> str:
    """A good chat row, a line that is no JSON, or a row without a conversation (``n``: its
    number, where it is a row)."""
    if kind == "good":
        return json.dumps(CHAT_ROW | {"trajectory_id": f"run-{number}", "n": number})
    if kind == "no-conversation":
        return json.dumps(CHAT_ROW | {"trajectory": "lost", "n": number})
    return BROKEN_LINE


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(["good", "no-json", "no-conversation"]), max_size=12).filter(
        lambda kinds: "good" in kinds  # a file none of whose rows reads is not known as rows
    )
)
def test_annotate_gives_every_row_back_in_order_whatever_the_mix(
    kp: KpRunner, tmp_path_factory: pytest.TempPathFactory, kinds: list[str]
) -> None:
    """Any mix of good and bad rows: rows in = rows out, in input order, kp_error on bad ones."""
    folder = tmp_path_factory.mktemp("mix")
    source, out = folder / "rows.jsonl", folder / "out.jsonl"
    lines = [mixed_line(kind, number) for number, kind in enumerate(kinds)]
    source.write_text("".join(line + "\n" for line in lines))
    run = kp("score", "--from", "auto", "--no-embedder", "--annotate", str(source), "-o", str(out))
    assert run.code == (0 if set(kinds) == {"good"} else 1), run.err
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == len(kinds)
    assert [row.get("n") for row in written] == [
        None if kind == "no-json" else number for number, kind in enumerate(kinds)
    ]
    assert [row["kp_error"] is not None for row in written] == [kind != "good" for kind in kinds]


ROW_WRITERS = {
    "annotate": ("score", "--annotate", "--no-embedder"),
    "redact": ("redact",),
    "select": ("select", "--no-embedder"),
    "dedupe": ("dedupe", "--by", "task", "--no-embedder"),
    "messages": ("convert", "--to", "messages"),
}
"""Each command that writes rows back, before ``--from openai-chat FILE -o OUT``."""


def written_rows(out: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines or Parquet output."""
    if out.suffix == ".parquet":
        rows: list[dict[str, Any]] = pq.read_table(out).to_pylist()
        return rows
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("command", sorted(ROW_WRITERS))
def test_every_row_writer_keeps_the_text_of_a_line_that_is_no_json_in_kp_raw(
    kp: KpRunner, tmp_path: Path, command: str, suffix: str
) -> None:
    """A line kp cannot parse comes back with its text in kp_raw; no read row has one."""
    lines = (DATASETS / "openai_chat.jsonl").read_text().splitlines()
    lines.insert(1, BROKEN_LINE)
    source, out = tmp_path / "rows.jsonl", tmp_path / f"out{suffix}"
    source.write_text("\n".join(lines) + "\n")
    run = kp(*ROW_WRITERS[command], "--from", "openai-chat", str(source), "-o", str(out))
    assert run.code == 1, run.err
    written = written_rows(out)
    assert len(written) == len(lines)
    raw = [row.get("kp_raw") for row in written]
    assert sorted(raw, key=lambda text: text is None) == [BROKEN_LINE] + [None] * (len(lines) - 1)
    assert written[raw.index(BROKEN_LINE)]["kp_error"].startswith("invalid JSON")


@pytest.mark.parametrize("command", ["redact", "annotate"])
def test_a_line_that_is_no_json_has_its_secret_redacted_in_kp_raw(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """kp redact and --redact clean the text of a line kp cannot parse as any other text."""
    lines = (DATASETS / "openai_chat.jsonl").read_text().splitlines()
    lines.insert(1, f'{{"token": "{SECRET}", broken')
    source, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    source.write_text("\n".join(lines) + "\n")
    redacting = ("--redact",) if command == "annotate" else ()
    run = kp(
        *ROW_WRITERS[command], *redacting, "--from", "openai-chat", str(source), "-o", str(out)
    )
    assert run.code == 1, run.err
    assert SECRET not in out.read_text()
    raw = written_rows(out)[1]["kp_raw"]
    assert raw.startswith('{"token": "[REDACTED')
    assert raw.endswith('", broken')


def test_annotating_kps_own_rows_again_keeps_a_lines_text_in_kp_raw(
    kp: KpRunner, tmp_path: Path
) -> None:
    """The row kp wrote of a line that is no JSON keeps its kp_raw when annotated again."""
    lines = (DATASETS / "openai_chat.jsonl").read_text().splitlines()
    lines.insert(1, BROKEN_LINE)
    source, once, twice = tmp_path / "rows.jsonl", tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    source.write_text("\n".join(lines) + "\n")
    annotate(kp, source, once)
    annotate(kp, once, twice)
    assert written_rows(twice)[1]["kp_raw"] == BROKEN_LINE
