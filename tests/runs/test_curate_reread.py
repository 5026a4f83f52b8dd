"""``select`` and ``dedupe`` with ``reread``: items held apart, the files read again to write."""

from __future__ import annotations

import gc
import gzip
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import InputFileError
from knowledgepulse.reports.rows import DEDUPE_COLUMNS, SCORE_COLUMNS
from knowledgepulse.runs import dedupe, inputs, select
from knowledgepulse.runs.curate import DedupeResult, SelectionResult
from knowledgepulse.runs.write import ItemWriter
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import trace_json

CHAT_ROW = {
    "id": "row-1",
    "messages": [
        {"role": "user", "content": "Refund order 42"},
        {"role": "assistant", "content": "Refunded."},
    ],
}
WORDS = ["refund", "order", "flight", "Oslo", "invoice", "payment", "test", "deploy"]


def scorer(*, embedder: bool = True) -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder() if embedder else None)


@st.composite
def lines(draw: st.DrawFn) -> tuple[str | None, list[str]]:
    """A source and JSON Lines: traces (copies, shared objectives) or chat rows, maybe a bad one."""
    rows = draw(st.booleans())
    count = draw(st.integers(1, 9))
    found = []
    for number in range(count):
        objective = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
        success = draw(st.booleans())
        if rows:
            record: dict[str, Any] = {
                "id": f"row-{draw(st.integers(0, count))}",
                "reward": draw(st.sampled_from([0.0, 0.5, 1.0])),
                "messages": [
                    {"role": "user", "content": objective},
                    {"role": "assistant", "content": f"done {number % 3}"},
                ],
            }
        else:
            record = trace_json(
                trace_id=f"kp:trace:{draw(st.integers(0, count))}",
                objective=objective,
                success=success,
                domain=draw(st.sampled_from(["code", "finance"])),
            )
        found.append(json.dumps(record))
    if draw(st.booleans()):
        found.insert(draw(st.integers(0, len(found))), '{"id": "bad", "messages": null}')
    return ("openai-chat" if rows else None), found


def selected_output(result: SelectionResult, *, rows: bool = False) -> str:
    stream = io.StringIO()
    with ItemWriter(stream, unread=result.unread) as writer:
        for place, scored in result.to_write(rows=rows):
            writer.write(scored, at=place)
    return stream.getvalue()


def deduped_output(result: DedupeResult, *, rows: bool = False) -> str:
    stream = io.StringIO()
    added = SCORE_COLUMNS + DEDUPE_COLUMNS
    with ItemWriter(stream, added=added, unread=result.unread) as writer:
        for scored, columns in zip(result.to_write(rows=rows), result.iter_columns(), strict=True):
            writer.write_row(scored.item, columns)
    groups = [json.dumps(group.to_dict(), default=str) for group in result.groups]
    return stream.getvalue() + "\n".join(groups)


SELECT_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "budget": st.integers(0, 6),
        "max_similarity": st.sampled_from([0.5, 0.95]),
        "per_task": st.integers(1, 2),
        "per_domain": st.booleans(),
        "min_score": st.sampled_from(["p30", "p70"]),
    },
)


RUNS = [(False, False), (True, False), (True, True)]
"""Each run's ``reread``, and whether its rows are written read again unconverted."""


@settings(max_examples=20, deadline=None)
@given(lines(), SELECT_OPTIONS, st.sampled_from(["similarity", "task"]), st.booleans())
def test_reading_again_writes_what_holding_every_item_writes(
    read: tuple[str | None, list[str]], options: dict[str, Any], by: Any, embedder: bool
) -> None:
    """select and dedupe with reread write, choose and report as they do holding the items.

    To a stream and to a file (Parquet for rows: select's picks, given in input order, are put
    aside until their places come).
    """
    source, found = read
    if not embedder:  # what compares vectors needs them
        options.pop("max_similarity", None)
        by = "task"
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "input.jsonl"
        path.write_text("\n".join(found) + "\n")
        results = [
            select(
                [str(path)],
                scorer=scorer(embedder=embedder),
                source=source,
                **options,
                reread=again,
            )
            for again, _ in RUNS
        ]
        assert results[1].corpus.held_apart
        held, apart, unconverted = (
            selected_output(result, rows=rows)
            for result, (_, rows) in zip(results, RUNS, strict=True)
        )
        assert apart == held
        assert unconverted == held
        suffix = ".parquet" if source else ".jsonl"  # traces are written as JSON Lines only
        tables = [Path(scratch) / f"{name}{suffix}" for name in ("held", "apart")]
        for result, table in zip(results, tables, strict=False):
            result.write_to(table, [str(path)])  # kp select's Parquet rows, picks in order
        assert tables[1].read_bytes() == tables[0].read_bytes()
        assert [r.to_dict() for r in results[1].rejected] == [
            r.to_dict() for r in results[0].rejected
        ]
        assert results[1].corpus.breakdowns == results[0].corpus.breakdowns
        deduped = [
            dedupe(
                [str(path)], by=by, scorer=scorer(embedder=embedder), source=source, reread=again
            )
            for again, _ in RUNS
        ]
        held, apart, unconverted = (
            deduped_output(result, rows=rows)
            for result, (_, rows) in zip(deduped, RUNS, strict=True)
        )
        assert apart == held
        assert unconverted == held


def test_the_items_written_are_read_again_from_the_file(tmp_path: Path) -> None:
    """Held apart, the items written are read again: a file changed meanwhile is refused."""
    path = tmp_path / "traces.jsonl"
    traces = [trace_json(trace_id=f"kp:trace:{n}", objective=WORDS[n]) for n in range(3)]
    path.write_text("".join(json.dumps(trace) + "\n" for trace in traces))
    result = select([str(path)], scorer=scorer(), reread=True)
    assert result.corpus.held_apart
    with pytest.raises(AttributeError):
        _ = result.selected[0].trace.id  # what is held has no trace
    assert {scored.trace.id for _, scored in result.to_write()} == {t["id"] for t in traces}
    traces[1]["id"] = "kp:trace:another"
    path.write_text("".join(json.dumps(trace) + "\n" for trace in traces))
    with pytest.raises(InputFileError, match="changed while kp read it"):
        list(result.to_write())


def test_items_and_streams_are_held_whole() -> None:
    """What cannot be read twice (a run's items, a generator) is held whole, reread or not."""
    items = dedupe([trace_json()], scorer=scorer()).corpus.items
    for data in (items, (trace for trace in [trace_json()])):
        result = dedupe(data, scorer=scorer(), reread=True)
        assert not result.corpus.held_apart
        assert result.corpus.items[0].trace.id == trace_json()["id"]


def in_memory(form: str, records: list[dict[str, Any]]) -> Any:
    """``records`` as a table of the kind ``form`` names, or as they are."""
    if form == "arrow":
        return pa.Table.from_pylist(records)
    if form == "pandas":
        return pd.DataFrame(records)
    if form == "datasets":
        return datasets.Dataset.from_list(records)
    return records


@settings(max_examples=15, deadline=None)
@given(lines(), SELECT_OPTIONS, st.sampled_from(["list", "arrow", "pandas", "datasets"]))
def test_rows_in_memory_read_again_write_what_holding_them_writes(
    read: tuple[str | None, list[str]], options: dict[str, Any], form: str
) -> None:
    """Rows in memory (a list, an Arrow table, a DataFrame, a Dataset) held apart and read
    again write, choose and report as holding every item does; traces in a list too."""
    source, found = read
    records = [json.loads(line) for line in found]
    if source is None and form != "list":
        return  # traces come in a list (a table of trace documents is not a kind kp reads)
    data = in_memory(form, records)
    results = [
        select(data, scorer=scorer(), source=source, **options, reread=again) for again, _ in RUNS
    ]
    assert results[1].corpus.held_apart
    assert results[0].corpus.held_apart is False
    held, apart, unconverted = (
        selected_output(result, rows=rows) for result, (_, rows) in zip(results, RUNS, strict=True)
    )
    assert apart == held
    assert unconverted == held
    with tempfile.TemporaryDirectory() as scratch:
        suffix = ".parquet" if source else ".jsonl"
        tables = [Path(scratch) / f"{name}{suffix}" for name in ("held", "apart")]
        for result, table in zip(results, tables, strict=False):
            result.write_to(table)
        assert tables[1].read_bytes() == tables[0].read_bytes()
    deduped = [
        dedupe(data, by="task", scorer=scorer(), source=source, reread=again) for again, _ in RUNS
    ]
    held, apart, unconverted = (
        deduped_output(result, rows=rows) for result, (_, rows) in zip(deduped, RUNS, strict=True)
    )
    assert apart == held
    assert unconverted == held


def test_rows_in_memory_changed_before_they_are_read_again_are_refused() -> None:
    """Rows in memory are read again when written: a list changed meanwhile is refused."""
    rows = chat_rows(8)
    result = select(rows, scorer=scorer(), source="openai-chat", reread=True)
    rows[0]["id"] = "another"
    with pytest.raises(InputFileError, match="changed while kp read it"):
        list(result.to_write())
    del rows[5:]
    with pytest.raises(InputFileError, match="changed while kp read it"):
        list(result.to_write(rows=True))


def test_without_a_choice_only_large_files_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reread=None reads files again from REREAD_FROM_BYTES (.gz, .parquet 4x), never below."""
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(trace_json()) + "\n")
    size = path.stat().st_size
    monkeypatch.setattr(inputs, "REREAD_FROM_BYTES", size + 1)
    assert not select([str(path)], scorer=scorer(), reread=None).corpus.held_apart
    assert select([str(path)], scorer=scorer(), reread=True).corpus.held_apart
    packed = tmp_path / "traces.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    monkeypatch.setattr(inputs, "REREAD_FROM_BYTES", packed.stat().st_size * 4)
    assert select([str(packed)], scorer=scorer(), reread=None).corpus.held_apart
    columns = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([CHAT_ROW]), columns)
    monkeypatch.setattr(inputs, "REREAD_FROM_BYTES", columns.stat().st_size * 4)
    assert dedupe([str(columns)], by="task", scorer=scorer(), reread=None).corpus.held_apart
    monkeypatch.setattr(inputs, "REREAD_FROM_BYTES", size)
    assert dedupe([str(path)], scorer=scorer(), reread=None).corpus.held_apart
    assert not dedupe([str(path)], scorer=scorer(), reread=False).corpus.held_apart


def test_without_a_choice_only_many_rows_in_memory_are_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """reread=None reads rows in memory again from REREAD_FROM_ROWS rows, never below."""
    rows = chat_rows(8)
    monkeypatch.setattr(inputs, "REREAD_FROM_ROWS", len(rows) + 1)
    for data in (rows, pa.Table.from_pylist(rows)):
        assert not select(
            data, scorer=scorer(), source="openai-chat", reread=None
        ).corpus.held_apart
    monkeypatch.setattr(inputs, "REREAD_FROM_ROWS", len(rows))
    for data in (rows, pa.Table.from_pylist(rows)):
        assert select(data, scorer=scorer(), source="openai-chat", reread=None).corpus.held_apart


def test_a_parquet_file_of_many_rows_is_read_again_however_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chat rows compress ten times or more in Parquet: its rows decide too, from its footer."""
    rows = chat_rows(8)
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    monkeypatch.setattr(inputs, "REREAD_FROM_BYTES", path.stat().st_size * 4 + 1)
    monkeypatch.setattr(inputs, "REREAD_FROM_ROWS", len(rows) + 1)
    held = select([str(path)], scorer=scorer(), source="openai-chat", reread=None)
    assert not held.corpus.held_apart
    monkeypatch.setattr(inputs, "REREAD_FROM_ROWS", len(rows))
    apart = select([str(path)], scorer=scorer(), source="openai-chat", reread=None)
    assert apart.corpus.held_apart
    assert apart.picks == held.picks


def chat_rows(count: int) -> list[dict[str, Any]]:
    """``count`` chat rows of three tasks, every fourth unreadable (no messages)."""
    return [
        {
            "id": f"row-{n}",
            "task_id": f"task-{n % 3}",
            "reward": n / count,
            "messages": None
            if n % 4 == 3
            else [
                {"role": "user", "content": f"{WORDS[n % len(WORDS)]} number {n}"},
                {"role": "assistant", "content": f"Done {n}: {'ok ' * (n % 5)}"},
            ],
        }
        for n in range(count)
    ]


@pytest.mark.parametrize("form", ["jsonl", "parquet"])
def test_rows_read_again_unconverted_are_the_rows_converted_again(
    tmp_path: Path, form: str
) -> None:
    """Dataset rows held apart are read again without converting them: the same rows out.

    Byte for byte what converting every row again writes (and holding every item), select's
    picks out of input order and the unreadable rows included: rows in = rows out.
    """
    path = tmp_path / f"rows.{form}"
    rows = chat_rows(12)
    if form == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:  # spacing and key order of their own, which the rows written back keep
        path.write_text(
            "".join(json.dumps(row, indent=None, separators=(", ", ":")) + "\n" for row in rows)
        )

    def chosen(again: bool) -> SelectionResult:  # a result's unread rows are written once
        return select([str(path)], scorer=scorer(embedder=False), budget=5, reread=again)

    def deduped(again: bool) -> DedupeResult:
        return dedupe([str(path)], by="task", scorer=scorer(embedder=False), reread=again)

    assert chosen(True).corpus.rows_again is not None
    assert chosen(False).picks != tuple(sorted(chosen(False).picks))  # out of input order
    unconverted = selected_output(chosen(True), rows=True)
    assert unconverted == selected_output(chosen(True)) == selected_output(chosen(False))
    unconverted = deduped_output(deduped(True), rows=True)
    assert unconverted == deduped_output(deduped(True)) == deduped_output(deduped(False))
    assert len(unconverted.splitlines()) == len(rows) + len(deduped(True).groups)
    for name, run in (("select", chosen), ("dedupe", deduped)):
        outputs = [tmp_path / f"{name}-{again}.{form}" for again in (False, True)]
        for again, output in zip((False, True), outputs, strict=True):
            run(again).write_to(output, [str(path)])
        assert outputs[1].read_bytes() == outputs[0].read_bytes()
    written = tmp_path / "dedupe-True.jsonl"
    deduped(True).write_to(written, [str(path)])
    assert [json.loads(line)["id"] for line in written.read_text().splitlines()] == [
        row["id"] for row in rows
    ]


def test_a_row_file_changed_before_its_rows_are_read_again_is_refused(tmp_path: Path) -> None:
    """Rows read again unconverted are checked by the file's size and time: a change is refused."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in chat_rows(4)))
    result = dedupe([str(path)], by="task", scorer=scorer(embedder=False), reread=True)
    assert result.corpus.rows_again is not None
    changed = path.read_text().replace("number 1", "number 9")
    path.write_text(changed)  # the same size, another row
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    with pytest.raises(InputFileError, match="changed while kp read it"):
        list(result.to_write(rows=True))


def test_rows_redacted_are_converted_again_to_be_written(tmp_path: Path) -> None:
    """With redaction the rows read again are converted and redacted, not taken as they are."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in chat_rows(4)))
    result = dedupe([str(path)], by="task", scorer=scorer(embedder=False), redact=True, reread=True)
    assert result.corpus.held_apart
    assert result.corpus.rows_again is None


def test_a_run_and_its_writing_give_the_collectors_thresholds_back(tmp_path: Path) -> None:
    """Full collections are held off while a corpus is read, scored and written, then the
    caller's thresholds come back, whatever they were."""
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(CHAT_ROW) + "\n")
    before = gc.get_threshold()
    gc.set_threshold(500, 7, 9)
    try:
        chosen = select([str(path)], scorer=scorer(), reread=True)
        grouped = dedupe([str(path)], scorer=scorer(), reread=True)
        assert gc.get_threshold() == (500, 7, 9)
        chosen.write_to(tmp_path / "chosen.jsonl")
        grouped.write_to(tmp_path / "grouped.jsonl")
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*before)
    assert (tmp_path / "chosen.jsonl").read_text().count("\n") == 1
