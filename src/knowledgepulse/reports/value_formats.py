"""The ``kp score`` reports by format name: each a writer that streams the scores as they come.

And the format a report file's suffix names (``.csv``, ``.md``...), for every command.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

from knowledgepulse.reports.value import CsvWriter, JsonLinesWriter, JsonWriter, ReportWriter

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


def suffix_format(output: Path, formats: Iterable[str], default: str = "json") -> str:
    """The report format ``output``'s suffix names, if among ``formats``; else ``default``."""
    found = _SUFFIX_FORMATS.get(output.suffix.lower(), default)
    return found if found in formats else default


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
