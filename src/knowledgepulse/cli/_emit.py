"""Writing ``kp score``'s output as it is scored: report rows, or the annotated traces."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Protocol

from knowledgepulse.cli._console import open_output
from knowledgepulse.cli._rows import row_output
from knowledgepulse.records import Problem
from knowledgepulse.reports.rows import RowWriter, jsonl_row, kp_columns
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


class Emitter(Protocol):
    """Takes each scored trace as it comes, then closes the output."""

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None: ...

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None: ...


class _ReportEmitter:
    """Writes the report's row for each trace."""

    def __init__(self, writer: ReportWriter) -> None:
        self._writer = writer

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        self._writer.write(result)

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        self._writer.close(tally, problems)


class _AnnotateEmitter:
    """Writes the traces themselves back, each with its score in ``metadata.quality_score``."""

    def __init__(self, stream: IO[str], *, as_list: bool) -> None:
        self._stream = stream
        self._as_list = as_list
        self._first = True
        if as_list:
            stream.write("[")

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        if loaded.row is not None:  # a dataset row: itself, with its kp_ columns
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
    """Writes dataset rows back as Parquet, each with its ``kp_`` columns."""

    def __init__(self, writer: RowWriter) -> None:
        self._writer = writer

    def emit(self, loaded: LoadedTrace, result: ScoredTrace) -> None:
        self._writer.write(loaded.row or loaded.record, kp_columns(result.breakdown))

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        self._writer.close()


@contextmanager
def emitting(
    output: Path | None,
    output_format: str,
    annotate: bool,
    collector: TableCollector,
    *,
    parquet_rows: Sequence[str] | None = None,
) -> Iterator[Emitter]:
    """The emitter for ``kp score``'s output, its stream opened (and closed at the end).

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
            writers: dict[str, type[JsonWriter | JsonLinesWriter | CsvWriter]] = {
                "json": JsonWriter,
                "jsonl": JsonLinesWriter,
                "csv": CsvWriter,
            }
            yield _ReportEmitter(writers[output_format](stream))
