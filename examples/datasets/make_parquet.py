"""Write each example dataset's JSON Lines rows as Parquet beside it (needs pyarrow).

    python examples/datasets/make_parquet.py

A column whose values one Parquet type cannot hold (Anthropic content that is text in one
message and blocks in another, Responses items of several shapes) is stored as a JSON string,
as such datasets are kept on the hub; ``kp`` reads both forms.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).parent


def table(rows: list[dict[str, object]]) -> pa.Table:
    """The rows as a table; a column pyarrow cannot type becomes JSON text."""
    columns: dict[str, list[object]] = {name: [row.get(name) for row in rows] for name in rows[0]}
    arrays = {}
    for name, values in columns.items():
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[name] = pa.array([json.dumps(value) for value in values])
    return pa.table(arrays)


def main() -> None:
    """Write ``NAME.parquet`` for each ``NAME.jsonl`` here."""
    for source in sorted(HERE.glob("*.jsonl")):
        rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
        pq.write_table(table(rows), source.with_suffix(".parquet"))
        print(f"{source.with_suffix('.parquet').name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
