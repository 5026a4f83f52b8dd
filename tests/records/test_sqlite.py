"""SQLite databases as records: the schema first, then each table's rows; the file never written."""

from __future__ import annotations

import gzip
import random
import sqlite3
from contextlib import closing
from pathlib import Path

from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records


def values(path: Path) -> list[object]:
    return [item.value if isinstance(item, Record) else item for item in read_records(path)]


def test_the_schema_then_every_row_table_by_table_in_rowid_order(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with closing(sqlite3.connect(path)) as database:
        database.execute("CREATE TABLE b (x TEXT, y BLOB)")
        database.execute("CREATE TABLE a (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID")
        database.executemany("INSERT INTO b VALUES (?, ?)", [("one", b"\xff\x00"), ("two", b"ok")])
        database.execute("INSERT INTO a VALUES ('k', 1)")
        database.commit()
    items = list(read_records(path))
    assert [item.value for item in items if isinstance(item, Record)] == [
        {"sqlite_tables": {"a": ["k", "v"], "b": ["x", "y"]}},
        {"sqlite_table": "a", "row": {"k": "k", "v": 1}},
        {"sqlite_table": "b", "row": {"x": "one", "y": "/wA="}},  # no UTF-8: base64
        {"sqlite_table": "b", "row": {"x": "two", "y": "ok"}},
    ]
    assert [str(item.location) for item in items[2:]] == [f"{path}:b:1", f"{path}:b:2"]


def test_writes_a_running_agent_keeps_in_its_wal_are_read_and_nothing_is_left_beside_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.db"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE t (n INTEGER)")
    writer.execute("INSERT INTO t VALUES (1)")
    writer.commit()  # in live.db-wal only, while the writer holds the database open
    names = sorted(p.name for p in tmp_path.iterdir())
    before = {name: (tmp_path / name).read_bytes() for name in names}
    try:
        assert values(path)[1:] == [{"sqlite_table": "t", "row": {"n": 1}}]
        assert sorted(p.name for p in tmp_path.iterdir()) == names
        assert {name: (tmp_path / name).read_bytes() for name in names} == before
    finally:
        writer.close()


def test_a_compressed_database_is_read_and_a_damaged_one_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with closing(sqlite3.connect(path)) as database:
        database.execute("CREATE TABLE t (n INTEGER)")
        database.execute("INSERT INTO t VALUES (7)")
        database.commit()
    packed = tmp_path / "store.db.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert values(packed)[1:] == [{"sqlite_table": "t", "row": {"n": 7}}]
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(path.read_bytes()[:100] + b"\x00" * 50)
    (problem,) = list(read_records(damaged))
    assert isinstance(problem, Problem)
    assert "cannot be read as an SQLite database" in problem.message


def test_damaged_bytes_anywhere_give_records_and_problems_only(tmp_path: Path) -> None:
    """Bytes changed at random past the header (seeded): never an exception (found: a damaged
    schema whose text is no UTF-8 raised UnicodeDecodeError)."""
    path = tmp_path / "store.db"
    with closing(sqlite3.connect(path)) as database:
        database.execute("CREATE TABLE t (n INTEGER, s TEXT)")
        database.executemany("INSERT INTO t VALUES (?, ?)", [(n, "x" * n) for n in range(50)])
        database.commit()
    whole = path.read_bytes()
    chance = random.Random(5)
    for _ in range(150):
        damaged = bytearray(whole)
        for _ in range(chance.randint(1, 20)):
            damaged[chance.randrange(16, len(damaged))] = chance.randrange(256)
        path.write_bytes(bytes(damaged))
        assert all(isinstance(item, Record | Problem) for item in read_records(path))
