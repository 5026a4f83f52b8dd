"""Dataset rows written back in their own form, each with its ``kp_`` columns added.

Every original column is kept as it was. A JSON Lines row is its own line's bytes with the new
keys spliced in before the closing brace (a row that already has a ``kp_`` key is dumped again).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from knowledgepulse.errors import OutputError
from knowledgepulse.records import Record
from knowledgepulse.records.readers import MAGIC, import_pyarrow_parquet, is_parquet_name
from knowledgepulse.value.breakdown import ValueBreakdown

RowFormat = Literal["jsonl", "parquet"]
BATCH_ROWS = 1024

COLUMN_TYPES = {
    "kp_score": "float64",
    "kp_shareable": "bool",
    "kp_complexity": "float64",
    "kp_novelty": "float64",
    "kp_tool_diversity": "float64",
    "kp_outcome_confidence": "float64",
    "kp_nearest": "string",
    "kp_group": "int64",
    "kp_kept": "bool",
}
"""Every ``kp_`` column with its Arrow type: first those of a scored row, then kp dedupe's."""
DEDUPE_COLUMNS = ("kp_group", "kp_kept")
"""The columns ``kp dedupe`` adds: the row's near-duplicate group, and whether it is kept."""
SCORE_COLUMNS = tuple(name for name in COLUMN_TYPES if name not in DEDUPE_COLUMNS)
"""The columns every scored row gets, in this order."""


def kp_columns(breakdown: ValueBreakdown) -> dict[str, Any]:
    """The ``kp_`` columns of a scored row."""
    dimensions = breakdown.dimensions.to_dict(rounding=lambda value: round(value, 4))
    return {
        "kp_score": round(breakdown.score, 4),
        "kp_shareable": breakdown.shareable,
        **{f"kp_{name}": value for name, value in dimensions.items()},
        "kp_nearest": breakdown.novelty.nearest_id,
    }


def row_format(output: Path | None, inputs: Sequence[str]) -> RowFormat:
    """The form rows go out in: ``-o``'s suffix, else the first input's (Parquet or JSONL)."""
    if output is not None:
        if is_parquet_name(output.name):
            return "parquet"
        if output.suffix.lower() in (".jsonl", ".ndjson", ".json", ".gz"):
            return "jsonl"
    return "parquet" if inputs and _is_parquet(inputs[0]) else "jsonl"


def _is_parquet(name: str) -> bool:
    try:
        with Path(name).open("rb") as file:
            return file.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def jsonl_row(row: Record, columns: Mapping[str, Any]) -> str:
    """A row as one JSON line with ``columns`` added; its own bytes kept when it has them."""
    value = row.value
    raw = row.raw.rstrip() if row.raw is not None else None
    if raw is not None and raw.endswith(b"}") and not any(key in value for key in columns):
        added = orjson.dumps(dict(columns), default=_json_default)[1:-1]
        joiner = b"," if value and added else b""
        return (raw[:-1] + joiner + added + b"}").decode("utf-8", "surrogateescape")
    merged = {**value, **columns}
    return orjson.dumps(merged, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _json_default(value: Any) -> Any:
    # What a Parquet row may hold and JSON has no word for (a Decimal is written as text).
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


class RowWriter:
    """Rows out with their ``kp_`` columns, in JSON Lines (a text stream) or Parquet (binary).

    Parquet is written a batch at a time. Its schema is the first row's input file's if that is
    Parquet, else inferred from the first batch; the ``kp_`` columns follow it (replacing any of
    the same name).
    """

    def __init__(
        self, fmt: RowFormat, stream: IO[str] | IO[bytes], added: tuple[str, ...] = SCORE_COLUMNS
    ) -> None:
        self._stream: Any = stream
        self._parquet = fmt == "parquet"
        self._added = added
        self._pending: list[dict[str, Any]] = []
        self._schema: Any = None
        self._writer: Any = None
        if self._parquet:
            self._pq = import_pyarrow_parquet()
            import pyarrow  # noqa: PLC0415 - installed with pyarrow.parquet, checked above

            self._pa = pyarrow

    def write(self, row: Record, columns: Mapping[str, Any]) -> None:
        """Write one row with its ``kp_`` columns (Parquet: once a batch is full)."""
        if not self._parquet:
            self._stream.write(jsonl_row(row, columns) + "\n")
            return
        if self._schema is None:
            name = row.location.file
            try:
                self._schema = self._pq.read_schema(name) if _is_parquet(name) else False
            except (OSError, ValueError):
                self._schema = False
        self._pending.append({**row.value, **columns})
        if len(self._pending) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pa = self._pa
        try:
            if self._writer is None:
                # Rows from JSON: the columns of every row of the first batch, not the first's.
                base = self._schema or pa.Table.from_struct_array(pa.array(self._pending)).schema
                kept = [field for field in base if field.name not in self._added]
                added = [pa.field(name, COLUMN_TYPES[name]) for name in self._added]
                self._schema = pa.schema(kept + added, metadata=base.metadata)
                self._writer = self._pq.ParquetWriter(self._stream, self._schema)
            table = pa.Table.from_pylist(self._pending, schema=self._schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as error:
            raise OutputError(
                f"the rows do not fit one Parquet schema ({error}); write JSON Lines instead "
                "(-o FILE.jsonl)"
            ) from None
        self._writer.write_table(table)
        self._pending.clear()

    def close(self) -> None:
        """Finish the output: Parquet's last batch and footer."""
        if not self._parquet:
            return
        self._flush()
        if self._writer is not None:
            self._writer.close()
        else:  # no row at all: an empty file with the kp_ columns alone
            pa = self._pa
            schema = pa.schema([pa.field(name, COLUMN_TYPES[name]) for name in self._added])
            self._pq.ParquetWriter(self._stream, schema).close()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
