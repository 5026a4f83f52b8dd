"""runs.annotate gives every row back: one that gives no trace in its place, kp_error set."""

from __future__ import annotations

import copy
import io
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem, Record
from knowledgepulse.reports.rows import ANNOTATED_COLUMNS
from knowledgepulse.runs import annotate, dedupe, redact, select
from knowledgepulse.runs.score_files import score_files
from knowledgepulse.sources import Source, TraceOptions, register_source
from knowledgepulse.sources._registry import unregister_source
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer
from tests.trace.strategies import json_values

CHAT = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
CHAT_ROW = json.loads(CHAT.read_text().splitlines()[0])
TRACE_LINES = (Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl").read_text()


def made(kind: str, number: int) -> Any:
    """A good chat row, a row whose conversation is lost, a row no JSON file could hold (an
    infinite number), or a value that is no row."""
    if kind == "good":
        return CHAT_ROW | {"trajectory_id": f"run-{number}", "n": number}
    if kind == "no-conversation":
        return CHAT_ROW | {"trajectory": "lost", "n": number}
    if kind == "not-finite":
        return CHAT_ROW | {"trajectory_id": f"run-{number}", "n": number, "cost": math.inf}
    return number  # a bare number: no row at all


def ignore(_: Problem) -> None:
    """Problems are not this test's subject."""


@settings(max_examples=30, deadline=None)
@given(
    kinds=st.lists(
        st.sampled_from(["good", "no-conversation", "not-finite", "no-row"]), max_size=12
    )
)
def test_annotate_gives_every_row_dict_back_in_order(kinds: list[str]) -> None:
    """Any mix of good and bad row dicts: as many dicts back, in order, kp_error on bad ones."""
    rows = [made(kind, number) for number, kind in enumerate(kinds)]
    back = annotate(rows, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    assert len(back) == len(rows)
    assert [row.get("n") for row in back] == [
        None if kind == "no-row" else number for number, kind in enumerate(kinds)
    ]
    assert [row["kp_error"] is not None for row in back] == [kind != "good" for kind in kinds]
    for row, kind in zip(back, kinds, strict=True):
        assert list(row)[-len(ANNOTATED_COLUMNS) :] == list(ANNOTATED_COLUMNS)
        assert (row["kp_score"] is None) == (kind != "good")


def test_annotate_keeps_a_bad_row_of_a_dataframe_at_its_index() -> None:
    """A DataFrame comes back whole, its index kept, the bad row's kp_error set."""
    rows = [made("good", 0), made("no-conversation", 1), made("good", 2)]
    frame = pd.DataFrame(rows, index=["a", "b", "c"])
    back = annotate(frame, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    assert list(back.index) == ["a", "b", "c"]
    assert back["kp_error"].notna().tolist() == [False, True, False]
    assert back["kp_score"].isna().tolist() == [False, True, False]


@pytest.mark.parametrize("table", ["DataFrame", "Table"])
def test_annotate_reads_a_tables_row_with_an_infinite_number_in_its_place(table: str) -> None:
    """A table's float column holding ``inf`` is its value, read as the Parquet file of the same
    table is (``kp score``), its row scored in its place, its columns as they were. (Row dicts
    are JSON values: one with ``inf`` is kept with kp_error, as the test above checks.)"""
    rows = [made("good", 0) | {"cost": 0.5}, made("not-finite", 1), made("good", 2) | {"cost": 1}]
    data = pd.DataFrame(rows) if table == "DataFrame" else pa.Table.from_pylist(rows)
    back = annotate(data, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    if table == "Table":
        back = back.to_pandas()
    assert back["n"].tolist() == [0, 1, 2]
    assert back["kp_error"].notna().tolist() == [False, False, False]
    assert back["cost"].tolist()[1] == math.inf


def test_annotate_keeps_every_row_of_a_table_none_of_which_reads() -> None:
    """A DataFrame whose rows all fail comes back whole, each row's kp_error set."""
    frame = pd.DataFrame([made("no-conversation", 0), made("no-conversation", 1)])
    back = annotate(frame, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    assert back["n"].tolist() == [0, 1]
    assert back["kp_error"].notna().all()


def test_score_files_keeps_every_row_of_a_file_no_source_recognises(tmp_path: Path) -> None:
    """Rows of an unknown shape come back annotated, kp_error naming --from and the sources."""
    rows = [{"question": "q", "n": 0}, {"question": "r", "n": 1}]
    path = tmp_path / "unknown.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = io.StringIO()
    done = score_files([str(path)], out, annotate=True, no_embedder=True)
    back = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["n"] for row in back] == [0, 1]
    assert all(row["kp_score"] is None for row in back)
    assert all("kp: --from" in row["kp_error"] and "openai-chat" in row["kp_error"] for row in back)
    assert done.tally.invalid == 2


def test_score_files_keeps_a_trace_files_unrecognised_line_a_problem_only(tmp_path: Path) -> None:
    """A stray first line of a trace file is not written among its traces (stderr says it)."""
    path = tmp_path / "traces.jsonl"
    path.write_text('{"stray": 1}\n' + TRACE_LINES)
    out = io.StringIO()
    done = score_files([str(path)], out, annotate=True, no_embedder=True)
    back = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all("stray" not in row for row in back)
    assert len(back) == done.tally.scored > 0


class SilentRows(Source):
    """A third party's source of rows whose convert() gives nothing for any of them."""

    reads_rows = True

    def recognises(self, value: Any) -> bool:
        return isinstance(value, dict) and "silent" in value

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        yield from (record for record in records if isinstance(record, Problem))


def test_annotate_gives_back_the_rows_a_plugin_source_gave_nothing_for() -> None:
    """Rows in, rows out with a plugin too: each row it passed over has kp_error naming it.

    Before, three rows such a plugin read gave no row back.
    """
    register_source("silent-rows")(SilentRows)
    try:
        rows = [{"silent": True, "n": number} for number in range(3)]
        back = annotate(rows, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    finally:
        unregister_source("silent-rows")
    assert [row["n"] for row in back] == [0, 1, 2]
    assert all("source 'silent-rows' (the plugin " in row["kp_error"] for row in back)


@settings(max_examples=30, deadline=None)
@given(columns=st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=3), max_size=6))
def test_annotate_leaves_every_column_of_a_row_as_it_was(columns: list[dict[str, Any]]) -> None:
    """Whatever JSON a row's other columns hold, its row comes back with them unchanged, in
    their order, and only the kp_ columns after them."""
    rows = [
        {key: value for key, value in extra.items() if not key.startswith("kp_")}
        | CHAT_ROW
        | {"trajectory_id": f"run-{number}"}
        for number, extra in enumerate(columns)
    ]
    given_rows = copy.deepcopy(rows)
    back = annotate(rows, scorer=TraceValueScorer(embedder=None), on_problem=ignore)
    assert rows == given_rows  # the caller's rows are not touched
    assert [
        {key: value for key, value in row.items() if key not in ANNOTATED_COLUMNS} for row in back
    ] == rows
    assert [list(row)[: -len(ANNOTATED_COLUMNS)] for row in back] == [list(row) for row in rows]


def test_a_row_no_writer_could_write_goes_out_as_an_empty_row_with_its_error(
    tmp_path: Path,
) -> None:
    """A row that holds itself (a cycle) is written by select's write_to as an empty row with
    kp_error, after the picks, and the others as they were; nothing raises."""
    looped: list[Any] = []
    looped.append(looped)
    rows = [made("good", 0), CHAT_ROW | {"n": 1, "loop": looped}]
    target = tmp_path / "picked.jsonl"
    select(rows, scorer=TraceValueScorer(embedder=None), on_problem=ignore).write_to(target)
    written = [json.loads(line) for line in target.read_text().splitlines()]
    assert [row.get("n") for row in written] == [0, None]
    assert written[1]["kp_error"].startswith("loop[0]: a value that contains itself")


BROKEN_LINE = '{"id": broken line'
"""A line that is no JSON: its text is all there is of its row."""


def with_a_broken_line(tmp_path: Path) -> Path:
    """The chat dataset with a line that is no JSON second."""
    lines = CHAT.read_text().splitlines()
    lines.insert(1, BROKEN_LINE)
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(lines) + "\n")
    return source


def test_annotate_on_a_file_keeps_the_text_of_a_line_that_is_no_json_in_kp_raw(
    tmp_path: Path,
) -> None:
    """runs.annotate on a file: the broken line's row has its text in kp_raw, the rest None."""
    scorer = TraceValueScorer(embedder=None)
    back = annotate(str(with_a_broken_line(tmp_path)), scorer=scorer, on_problem=ignore)
    assert [row["kp_raw"] for row in back[:3]] == [None, BROKEN_LINE, None]
    assert back[1]["kp_error"].startswith("invalid JSON")


@pytest.mark.parametrize("run", ["select", "dedupe"])
def test_a_curated_files_write_to_keeps_the_text_of_a_line_that_is_no_json(
    tmp_path: Path, run: str
) -> None:
    """select's and dedupe's write_to give the broken line back with its text in kp_raw."""
    source, target = str(with_a_broken_line(tmp_path)), tmp_path / "out.jsonl"
    scorer = TraceValueScorer(embedder=None)
    if run == "select":
        select(source, scorer=scorer, on_problem=ignore).write_to(target)
    else:
        dedupe(source, by="task", scorer=scorer, on_problem=ignore).write_to(target)
    written = [json.loads(line) for line in target.read_text().splitlines()]
    assert [row.get("kp_raw") for row in written].count(BROKEN_LINE) == 1


def test_redact_on_a_file_gives_the_text_of_a_line_that_is_no_json_back_cleaned(
    tmp_path: Path,
) -> None:
    """runs.redact's data: the broken line as its text in kp_raw, its secret redacted."""
    secret = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678"
    lines = CHAT.read_text().splitlines()
    lines.insert(1, f'{{"token": "{secret}", broken')
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(lines) + "\n")
    data = redact(str(source), on_problem=ignore).data
    assert len(data) == len(lines)
    assert data[1] == {"kp_raw": '{"token": "[REDACTED:api_key]", broken'}
