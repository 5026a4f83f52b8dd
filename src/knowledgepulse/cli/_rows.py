"""Where ``kp select``, ``kp dedupe`` and ``kp score --annotate`` write dataset rows back.

Rows go out in the input's form (JSON Lines, or Parquet when the first input is Parquet), or in
the form ``-o``'s suffix names. Parquet needs a file: it cannot be streamed to a pipe.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from knowledgepulse._util.atomic import atomic_binary
from knowledgepulse.cli._console import open_output
from knowledgepulse.reports.rows import SCORE_COLUMNS, RowWriter, row_format


def parquet_rows(output: Path | None, inputs: Sequence[str]) -> bool:
    """Whether the rows go out as Parquet; refused without ``-o`` (checked before reading).

    Raises:
        click.UsageError: Parquet would go to standard output.
    """
    if row_format(output, inputs) != "parquet":
        return False
    if output is None:
        raise click.UsageError(
            "the rows are Parquet, which needs a file: give -o FILE.parquet (or -o FILE.jsonl "
            "for JSON Lines)"
        )
    return True


@contextmanager
def row_output(
    output: Path | None, inputs: Sequence[str], added: tuple[str, ...] = SCORE_COLUMNS
) -> Iterator[RowWriter]:
    """A writer of rows in the input's form or ``-o``'s, finished (atomically) at the end."""
    if parquet_rows(output, inputs):
        assert output is not None  # parquet_rows refuses standard output
        with atomic_binary(output) as stream, RowWriter("parquet", stream, added) as writer:
            yield writer
        return
    with open_output(output) as text, RowWriter("jsonl", text, added) as writer:
        yield writer
