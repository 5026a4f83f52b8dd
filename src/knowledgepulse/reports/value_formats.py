"""The ``kp score`` reports by format name: each a writer that streams the scores as they come.

And the format a report file's suffix names (``.csv``, ``.md``...), for every command.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

from knowledgepulse.errors import ParameterConflictError, Setting
from knowledgepulse.reports.value import CsvWriter, JsonLinesWriter, JsonWriter, ReportWriter

SCORE_FORMATS = ("table", "json", "jsonl", "csv", "html")
"""The formats of ``kp score``'s report."""
EXPLAINED_FORMATS = ("table", "json", "jsonl")
"""The report formats that can carry each score's explanation in words (``--explain``)."""


_SUFFIX_FORMATS = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".csv": "csv",
    ".xml": "junit",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}


TABLE_SUFFIXES = (".arrow", ".feather", ".ipc", ".csv", ".tsv", ".xlsx", ".xls", ".orc", ".avro")
"""Suffixes of tables of data (Arrow, spreadsheets...)."""
DOCUMENT_SUFFIXES = (
    ".html",
    ".htm",
    ".xml",
    ".yaml",
    ".yml",
    ".zip",
    ".bz2",
    ".xz",
    ".zst",
    ".tar",
)
"""Suffixes of documents and archives."""
_DATA_FORMS = frozenset((*TABLE_SUFFIXES, *DOCUMENT_SUFFIXES, ".parquet", ".pq"))


def suffix_format(output: Path, formats: Iterable[str], default: str = "json") -> str:
    """The report format ``output``'s suffix names, if among ``formats``; else ``default``.

    A compressed file's format is named by the suffix before ``.gz`` (``scores.csv.gz``).
    """
    found = _SUFFIX_FORMATS.get(_format_suffix(output), default)
    return found if found in formats else default


def check_report_name(
    output: Path | None, formats: Iterable[str], chosen: str | None = None
) -> None:
    """Refuse a report file whose suffix names a form the report is not written in (``x.arrow``).

    ``formats``: those the report can be written in; a name without a suffix, or with one of
    no known form (``.txt``, ``.log``), takes any of them. ``chosen``: the format it is written
    in, when given (``--format``): a suffix that names another of ``formats`` is refused too
    (``-f json -o report.html`` wrote JSON into a page a browser shows as text).

    Raises:
        ParameterConflictError: naming the output and the suffixes of ``formats``.
    """
    if output is None:
        return
    suffix = _format_suffix(output)
    named = _SUFFIX_FORMATS.get(suffix)
    formats = tuple(formats)
    if chosen is not None and named in formats and named != chosen:
        fitting = [s for s, form in _SUFFIX_FORMATS.items() if form == chosen][:1]
        raise ParameterConflictError(
            Setting("output"),
            f" {output.name}: {suffix} names the {named} format, but the report is written as "
            f"{chosen} (",
            Setting("output_format", chosen),
            f"); name the file {fitting[0] if fitting else '.txt'}, or write it as {named}",
        )
    if named in formats or (named is None and suffix not in _DATA_FORMS):
        return
    *others, last = [s for s, form in _SUFFIX_FORMATS.items() if form in formats]
    raise ParameterConflictError(
        Setting("output"),
        f" {output.name}: this report is not written as {suffix} (its formats: "
        f"{', '.join(formats)}); name the file {', '.join(others)} or {last}",
    )


def _format_suffix(output: Path) -> str:
    suffix = output.suffix.lower()
    return Path(output.stem).suffix.lower() if suffix == ".gz" else suffix


def report_writer(output_format: str, stream: IO[str], *, explain: bool = False) -> ReportWriter:
    """The streaming writer of a report format: ``json``, ``jsonl``, ``csv`` or ``html``.

    ``explain`` (``json`` and ``jsonl`` only) adds each score's explanation in words.
    """
    if output_format == "html":  # its percentiles need numpy: loaded for this format only
        from knowledgepulse.reports.html import HtmlWriter  # noqa: PLC0415

        return HtmlWriter(stream)
    if output_format == "csv":
        return CsvWriter(stream)
    writer = JsonWriter if output_format == "json" else JsonLinesWriter
    return writer(stream, explain=explain)
