"""SQLite databases, the stores agents keep their sessions in (goose's ``sessions.db``), as records.

A database is read as its schema, then its rows: a first record ``{"sqlite_tables": {table:
[column, ...]}}``, then one record a row, ``{"sqlite_table": table, "row": {column: value}}``,
table by table in name order and each table's rows in ``rowid`` order (a ``WITHOUT ROWID`` table
in its key's). A source recognises a store by its tables and reads the rows it needs. A ``BLOB``
is read as text where it is UTF-8, else as base64.

The user's database is never opened: its bytes (and a ``-wal`` file beside it, where a running
agent keeps its latest writes until it checkpoints them) are copied to a temporary folder and
that copy is read, so that kp neither locks a store an agent is writing nor leaves a ``-shm``
file beside it. A row's place is ``FILE:TABLE:ROWID``.
"""

from __future__ import annotations

import base64
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, BinaryIO

from knowledgepulse.errors import Location, Problem
from knowledgepulse.records.json_values import Record

SQLITE_MAGIC = b"SQLite format 3\x00"
SCHEMA_KEY = "sqlite_tables"
TABLE_KEY = "sqlite_table"
ROW_KEY = "row"
_CHUNK = 1 << 20


def is_schema(value: Any) -> bool:
    """Whether a record is a database's schema, the first record :func:`read_sqlite` gives."""
    return (
        isinstance(value, dict)
        and set(value) == {SCHEMA_KEY}
        and isinstance(value[SCHEMA_KEY], dict)
    )


def holds(value: Any, tables: Mapping[str, Iterable[str]]) -> bool:
    """Whether a schema record names each of ``tables`` with at least the columns given."""
    return is_schema(value) and all(
        isinstance(columns := value[SCHEMA_KEY].get(table), list) and set(wanted) <= set(columns)
        for table, wanted in tables.items()
    )


def read_sqlite(stream: BinaryIO, name: str) -> Iterator[Record | Problem]:
    """The schema, then every row of every table, of the database ``stream`` holds."""
    with tempfile.TemporaryDirectory(prefix="kp-sqlite-") as folder:
        copy = Path(folder) / "copy.db"
        with copy.open("wb") as out:
            shutil.copyfileobj(stream, out, _CHUNK)
        wal = Path(f"{name}-wal")
        if wal.is_file():
            shutil.copyfile(wal, Path(f"{copy}-wal"))
        try:
            with closing(sqlite3.connect(copy)) as database:
                yield from _records(database, name)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            # A damaged schema's text can be no UTF-8, and sqlite3 decodes SQLite's message on it.
            yield Problem(Location(name), "", f"cannot be read as an SQLite database: {error}")


def _records(database: sqlite3.Connection, name: str) -> Iterator[Record]:
    database.text_factory = bytes  # a TEXT that is no UTF-8 is read, not an error
    tables = [
        _text(row[0])
        for row in database.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    columns = {table: _columns(database, table) for table in tables}
    yield Record(Location(name), {SCHEMA_KEY: columns})
    for table in tables:
        quoted = _quoted(table)
        try:
            rows = database.execute(f"SELECT rowid, * FROM {quoted} ORDER BY rowid")
            with_rowid = True
        except sqlite3.OperationalError:  # a WITHOUT ROWID table
            rows = database.execute(f"SELECT * FROM {quoted}")
            with_rowid = False
        for number, row in enumerate(rows, 1):
            rowid, values = (row[0], row[1:]) if with_rowid else (number, row)
            value = dict(zip(columns[table], map(_value, values), strict=True))
            location = Location(f"{name}:{table}", rowid if isinstance(rowid, int) else number)
            yield Record(location, {TABLE_KEY: table, ROW_KEY: value})


def _columns(database: sqlite3.Connection, table: str) -> list[str]:
    return [_text(row[1]) for row in database.execute(f"PRAGMA table_info({_quoted(table)})")]


def _quoted(table: str) -> str:
    """A table's name as an SQL identifier (any name a database holds)."""
    return '"' + table.replace('"', '""') + '"'


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _value(value: Any) -> Any:
    """A cell as a JSON value: a TEXT or BLOB as text (base64 where it is no UTF-8)."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(value).decode("ascii")


__all__ = [
    "ROW_KEY",
    "SCHEMA_KEY",
    "SQLITE_MAGIC",
    "TABLE_KEY",
    "holds",
    "is_schema",
    "read_sqlite",
]
