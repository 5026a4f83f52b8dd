"""Parquet files as records: one record per row, read one row group batch at a time.

pyarrow is an optional extra (``knowledgepulse[parquet]``), imported when the first Parquet file
is read. Rows come out of :meth:`pyarrow.parquet.ParquetFile.iter_batches`, a batch of
:data:`BATCH_ROWS` at a time, so memory stays flat in the number of rows; nested columns (lists,
structs, maps) become Python lists and dicts. A row is located as ``FILE:ROW`` (``ROW`` from 1,
as a JSON Lines file's line) and its index counts from 0, as a dataset's does.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from knowledgepulse._util.optional import import_optional
from knowledgepulse.errors import MissingDependencyError
from knowledgepulse.records.model import Location, Problem, Record

MAGIC = b"PAR1"
"""The four bytes a Parquet file starts (and ends) with."""
BATCH_ROWS = 1024
"""Rows converted to Python at a time: small enough for flat memory, large enough for speed."""
SUFFIXES = (".parquet", ".pq")


def import_pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, or our error with the ``pip install`` line.

    Raises:
        MissingDependencyError: pyarrow is not installed.
    """
    return import_optional(
        "pyarrow.parquet",
        lambda error: MissingDependencyError(
            f"reading or writing Parquet needs pyarrow, which is not installed ({error}); "
            'install it with: pip install "knowledgepulse[parquet]"'
        ),
    )


def is_parquet_name(name: str) -> bool:
    """Whether a file name says Parquet."""
    return Path(name).suffix.lower() in SUFFIXES


def read_parquet(source: str | Path | bytes, name: str) -> Iterator[Record | Problem]:
    """Every row of a Parquet file (a path, or its bytes from standard input) as a record.

    A file that pyarrow cannot open, or a row group it cannot decode, is one problem; the rows
    read before it are kept.

    Raises:
        MissingDependencyError: pyarrow is not installed.
    """
    pq = import_pyarrow_parquet()
    index = 0
    try:
        file = pq.ParquetFile(io.BytesIO(source) if isinstance(source, bytes) else source)
        with file:
            for batch in file.iter_batches(batch_size=BATCH_ROWS):
                for row in batch.to_pylist():
                    yield Record(Location(name, index + 1, index), row)
                    index += 1
    except (OSError, ValueError, ArithmeticError, TypeError) as error:
        # pyarrow's errors (ArrowInvalid, ArrowIOError...) derive from these.
        where = Location(name, index + 1, index) if index else Location(name)
        yield Problem(where, "", f"not a readable Parquet file: {_first_line(error)}")


def _first_line(error: BaseException) -> str:
    return (str(error).strip().split("\n", 1)[0] or type(error).__name__)[:300]
