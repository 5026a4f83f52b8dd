"""Where the trace commands write: ``kp score``'s output as it is scored, and dataset rows.

Rows go out as JSON Lines, or Parquet when the first input is Parquet, or in the form ``-o``'s
suffix names. Parquet needs a file: it cannot be streamed to a pipe.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import click

from knowledgepulse._util.atomic import atomic_binary
from knowledgepulse.cli._console import open_output
from knowledgepulse.records import Problem
from knowledgepulse.reports.rows import SCORE_COLUMNS, RowWriter, jsonl_row, kp_columns, row_format
from knowledgepulse.reports.value import (
    CsvWriter,
    JsonLinesWriter,
    JsonWriter,
    ReportWriter,
    RunTally,
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


class _ReportEmitter:
    def __init__(self, writer: ReportWriter) -> None:
        self._writer = writer

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        self._writer.write(result)

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        self._writer.close(tally, problems)


class _AnnotateEmitter:
    """The traces with ``metadata.quality_score`` (a row: its ``kp_`` columns), JSONL or a list."""

    def __init__(self, stream: IO[str], *, as_list: bool) -> None:
        self._stream = stream
        self._as_list = as_list
        self._first = True
        if as_list:
            stream.write("[")

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        if loaded.row is not None:
            line = jsonl_row(loaded.row, kp_columns(result.breakdown))
        else:
            line = annotated_line(loaded.record.value, result.breakdown.score)
        if self._as_list:
            line = ("\n  " if self._first else ",\n  ") + line
        else:
            line += "\n"
        self._first = False
        self._stream.write(line)

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        if self._as_list:
            self._stream.write("\n]\n" if not self._first else "]\n")


class _RowEmitter:
    def __init__(self, writer: RowWriter) -> None:
        self._writer = writer

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        self._writer.write(loaded.row or loaded.record, kp_columns(result.breakdown))

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        self._writer.close()


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
    *,
    parquet_rows: Sequence[str] | None = None,
) -> Iterator[_ReportEmitter | _AnnotateEmitter | _RowEmitter]:
    """What takes ``kp score``'s traces as they are scored, its stream closed at the end.

    ``parquet_rows``: the inputs, when ``--annotate`` writes their rows back as Parquet.
    """
    if parquet_rows is not None:
        with row_output(output, parquet_rows) as writer:
            yield _RowEmitter(writer)
        return
    if output_format == "table":  # rendered by rich at the end, through its own console
        yield _ReportEmitter(collector)
        return
    with open_output(output) as stream:
        if output_format == "html":
            from knowledgepulse.reports.html import HtmlWriter  # noqa: PLC0415 - only for html

            yield _ReportEmitter(HtmlWriter(stream))
        elif annotate:
            yield _AnnotateEmitter(stream, as_list=output_format == "json")
        else:
            yield _ReportEmitter(_WRITERS[output_format](stream))
