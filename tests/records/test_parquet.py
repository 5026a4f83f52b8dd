"""Parquet files as records: one per row, nested columns as Python values, read in batches."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Problem, Record
from knowledgepulse.records import readers as parquet_records
from knowledgepulse.records.readers import read_records

ROWS: list[dict[str, object]] = [
    {"id": "a", "messages": [{"role": "user", "content": "hi"}], "reward": 0.5},
    {"id": "b", "messages": [{"role": "user", "content": "yo"}], "reward": None},
]


def write(path: Path, rows: list[dict[str, object]], **kwargs: Any) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path, **kwargs)
    return path


def test_each_row_is_a_record_located_as_file_and_row(tmp_path: Path) -> None:
    """Rows come out in order, nested columns as lists and dicts, located FILE:ROW."""
    path = write(tmp_path / "d.parquet", ROWS)
    records = list(read_records(path))
    assert [r.value for r in records if isinstance(r, Record)] == ROWS
    assert [str(r.location) for r in records] == [f"{path}:1", f"{path}:2"]
    assert [r.location.index for r in records] == [0, 1]


def test_parquet_is_recognised_by_content_whatever_the_name(tmp_path: Path) -> None:
    """A Parquet file saved as ``.jsonl`` is read as Parquet (its PAR1 magic), not as lines."""
    path = write(tmp_path / "d.jsonl", ROWS)
    assert [r.value for r in read_records(path) if isinstance(r, Record)] == ROWS


def test_many_row_groups_are_read_batch_by_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small batches and row groups give every row once, in order."""
    monkeypatch.setattr(parquet_records, "BATCH_ROWS", 7)
    rows: list[dict[str, object]] = [{"n": i, "tags": [str(i)] * (i % 3)} for i in range(100)]
    path = write(tmp_path / "d.parquet", rows, row_group_size=10)
    assert [r.value for r in read_records(path) if isinstance(r, Record)] == rows


def test_parquet_from_a_named_pipe_is_read_once(tmp_path: Path) -> None:
    """``kp score <(cat d.parquet)``: the pipe is read as it was opened, never opened again.

    Opened again, it waited for a writer for ever; here a writer comes after the data, so that
    the bug ends the read (with nothing to read) instead of hanging the test.
    """
    data = write(tmp_path / "d.parquet", ROWS).read_bytes()
    pipe = tmp_path / "d.pipe.parquet"
    os.mkfifo(pipe)
    done = threading.Event()

    def writer() -> None:
        pipe.write_bytes(data)
        while not done.wait(0.01):
            try:  # succeeds only while a reader waits on a second open of the pipe
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader waits
                continue
            return

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        records = list(read_records(pipe))
    finally:
        done.set()
        thread.join()
    assert [r.value for r in records] == ROWS  # type: ignore[union-attr]


def test_a_broken_parquet_file_is_one_problem(tmp_path: Path) -> None:
    """Garbage after the magic is a located problem, not an exception."""
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1 not really parquet")
    (problem,) = list(read_records(path))
    assert isinstance(problem, Problem)
    assert "not a readable Parquet file" in problem.message


def test_parquet_where_only_json_is_accepted_says_so(tmp_path: Path) -> None:
    """Trace loading takes JSON and JSONL; a Parquet file is refused, naming ``source``."""
    path = write(tmp_path / "d.parquet", ROWS)
    with pytest.raises(InputFileError, match=r"rows is read by naming its format \(source\)$"):
        list(read_records(path, formats=("json", "jsonl")))


def test_a_column_name_given_twice_is_one_problem_not_a_row_missing_a_column(
    tmp_path: Path,
) -> None:
    """Two columns of one name cannot both be a row's: the file is refused, saying which."""
    path = tmp_path / "d.parquet"
    table = pa.table([pa.array(["a"]), pa.array(["b"])], names=["note", "note"])
    pq.write_table(table, path)
    (problem,) = list(read_records(path))
    assert isinstance(problem, Problem)
    assert problem.message.startswith("the column 'note' appears twice")
