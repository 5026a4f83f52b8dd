"""Reading JSON, JSON Lines, YAML and Parquet input into records that remember where they came from.

Every record carries a :class:`Location` (file, line, index) so that a problem found later can be
reported as ``FILE:LINE: PATH: message``. A part of the input that cannot be parsed becomes a
:class:`Problem` in the stream, in input order; the records around it are still read. JSON Lines
is read line by line, so memory stays flat however long the file; a JSON list is parsed one
element at a time; ``.gz`` files (and gzipped standard input) are decompressed as they are read.
:class:`Location` and :class:`Problem` live in :mod:`knowledgepulse.problems`, below every layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from knowledgepulse.records.model import Location, Problem, Record
from knowledgepulse.records.readers import parse_records, read_stream
from knowledgepulse.records.source import STDIN, STDIN_NAME, Format, open_source

__all__ = [
    "STDIN",
    "STDIN_NAME",
    "Format",
    "Location",
    "Problem",
    "Record",
    "parse_records",
    "read_records",
]


def read_records(
    source: str | Path,
    *,
    formats: Iterable[Format] = ("json", "jsonl", "parquet"),
    progress: Callable[[int], object] | None = None,
) -> Iterator[Record | Problem]:
    """Read every record of a file (or ``-`` for standard input), in order, as it is read.

    A JSON file holds one document or a list of them; a JSON Lines file one document a line
    (blank lines are skipped); a YAML file one document, a list, or several ``---`` documents.
    An element of a JSON list is located by its index (``FILE[3]``): the streaming parser does
    not say on which line it starts. A Parquet file (``knowledgepulse[parquet]``) gives one
    record per row, located as ``FILE:ROW``, read a batch at a time. The format comes from the
    content for Parquet (its ``PAR1`` magic), else from the suffix (through ``.gz``), and is
    sniffed from the first line for standard input and unknown suffixes. ``progress``, when
    given, is called with the number of (decompressed) bytes consumed as reading goes on.

    Raises:
        InputFileError: the file cannot be opened, or its format is not among ``formats``.
    """
    allowed = tuple(formats)
    with open_source(source) as opened:
        yield from read_stream(opened, allowed, progress)
