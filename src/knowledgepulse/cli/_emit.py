"""Where the trace commands write: ``kp score``'s output as it is scored, and dataset rows.

Rows go out as JSON Lines, or Parquet when the first input is Parquet, or in the form ``-o``'s
suffix names. Parquet needs a file: it cannot be streamed to a pipe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import click

from knowledgepulse._util.atomic import atomic_binary
from knowledgepulse.cli._console import open_output
from knowledgepulse.cli._traces import ProblemSink
from knowledgepulse.reports.rows import SCORE_COLUMNS, RowWriter, jsonl_row, kp_columns, row_format
from knowledgepulse.reports.value import (
    CsvWriter,
    JsonLinesWriter,
    JsonWriter,
    ReportWriter,
    ScoredTrace,
    TableCollector,
    annotated_line,
)
from knowledgepulse.trace.load import LoadedTrace


def parquet_rows(output: Path | None, inputs: Sequence[str]) -> bool:
    """Whether the rows go out as Parquet; a ``click.UsageError`` without ``-o``."""
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


Emit = Callable[[LoadedTrace, ScoredTrace], None]
"""Takes each scored trace as it comes."""

_WRITERS: dict[str, type[JsonWriter | JsonLinesWriter | CsvWriter]] = {
    "json": JsonWriter,
    "jsonl": JsonLinesWriter,
    "csv": CsvWriter,
}


@contextmanager
def emitting(
    output: Path | None,
    output_format: str,
    annotate: bool,
    collector: TableCollector,
    sink: ProblemSink,
    *,
    parquet_inputs: Sequence[str] | None = None,
) -> Iterator[Emit]:
    """``kp score``'s output as it is scored; at the end (not on an error) the report's ending.

    ``parquet_inputs``: the inputs, when ``--annotate`` writes their rows back as Parquet.
    """
    if parquet_inputs is not None:
        with row_output(output, parquet_inputs) as rows:

            def emit_row(loaded: LoadedTrace, result: ScoredTrace) -> None:
                rows.write(loaded.row or loaded.record, kp_columns(result.breakdown))

            yield emit_row
        return
    if output_format == "table":  # rendered by rich at the end, through its own console
        yield lambda _, result: collector.write(result)
        return
    with open_output(output) as stream:
        if annotate:
            yield from _annotated(stream, as_list=output_format == "json")
            return
        writer: ReportWriter
        if output_format == "html":
            from knowledgepulse.reports.html import HtmlWriter  # noqa: PLC0415 - only for html

            writer = HtmlWriter(stream)
        else:
            writer = _WRITERS[output_format](stream)
        yield lambda _, result: writer.write(result)
        writer.close(sink.tally, sink.kept)


def _annotated(stream: IO[str], *, as_list: bool) -> Iterator[Emit]:
    """The traces with ``metadata.quality_score`` (a row: its ``kp_`` columns), JSONL or a list."""
    written = 0

    def emit(loaded: LoadedTrace, result: ScoredTrace) -> None:
        nonlocal written
        if loaded.row is not None:
            line = jsonl_row(loaded.row, kp_columns(result.breakdown))
        else:
            line = annotated_line(loaded.record.value, result.breakdown.score)
        if as_list:
            stream.write(("\n  " if written == 0 else ",\n  ") + line)
        else:
            stream.write(line + "\n")
        written += 1

    if as_list:
        stream.write("[")
    yield emit
    if as_list:
        stream.write("\n]\n" if written else "]\n")
