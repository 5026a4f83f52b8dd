r"""The consoles and streams every command writes through.

Reports go to stdout or, atomically, to ``--output``; problems go to stderr. Data never goes
through rich markup or emoji codes: a trace id such as ``[bold]x`` or a file name holding
``:100:`` is printed as it is, and its control characters as escapes (``\x1b``), by
:func:`~knowledgepulse._util.text.printable`. Text that cannot be encoded (a lone surrogate
from a ``\ud800`` escape) is written as a backslash escape, which inside JSON strings is exactly
JSON's own escape, instead of crashing the run.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from rich.console import Console

from knowledgepulse._util.atomic import atomic_text
from knowledgepulse._util.text import printable
from knowledgepulse.cli._stdout import report_stdout

ENCODING_ERRORS = "backslashreplace"
REPORT_COLUMNS = 120
"""The width of a table written to a file or a redirected stdout: a log's lines are long."""


def stderr_console() -> Console:
    """Problems, progress and summaries: never mixed into the report on stdout."""
    return _console_on(sys.stderr)


@functools.lru_cache(maxsize=4)
def _console_on(stream: IO[str]) -> Console:
    # Keyed on the stream, so a replaced sys.stderr (pytest's capture) gets its own console.
    return Console(
        file=_text_stream(stream), stderr=True, soft_wrap=True, highlight=False, emoji=False
    )


def say(message: str, *, one_line: bool = False) -> None:
    """A message on stderr, its control characters shown escaped (data in it cannot drive it)."""
    stderr_console().print(printable(message, one_line=one_line), markup=False, highlight=False)


def stdout_is_terminal() -> bool:
    """Whether a person is reading stdout (then the table view is the default)."""
    return report_stdout().isatty()


def stderr_is_terminal() -> bool:
    """Whether progress bars are worth drawing."""
    return sys.stderr.isatty()


@contextmanager
def open_output(output: Path | None) -> Iterator[IO[str]]:
    """A text stream for a report: stdout, or a file that replaces ``output`` atomically.

    The file appears only when the block completes, so an interrupted run leaves the previous
    file as it was; stdout is written as the report goes, for pipes.
    """
    if output is None:
        stream = _text_stream(report_stdout())
        try:
            yield stream
        finally:
            stream.flush()
        return
    with atomic_text(output, errors=ENCODING_ERRORS) as file:
        yield file


def write_output(text: str | Iterable[str], output: Path | None) -> None:
    """A rendered report (or its chunks) to stdout, or atomically to the ``--output`` file.

    UTF-8 whatever the locale: JSON, JUnit (which says so in its header) and Markdown are.
    """
    with open_output(output) as stream:
        for chunk in [text] if isinstance(text, str) else text:
            stream.write(chunk)


_SUFFIX_FORMATS = {
    ".json": "json",
    ".xml": "junit",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}


def report_format(output: Path | None, formats: Iterable[str]) -> str:
    """A report's default ``--format``: a table on a terminal, else by ``--output``'s suffix."""
    if output is None:
        return "table" if stdout_is_terminal() else "json"
    found = _SUFFIX_FORMATS.get(output.suffix.lower(), "json")
    return found if found in formats else "json"


@contextmanager
def output_console(
    output: Path | None, *, redirected_width: int | None = None
) -> Iterator[Console]:
    """A console for tables meant for people, on stdout or the ``--output`` file.

    Markup and emoji are off, so data is shown as written. On stdout it writes in the terminal's
    own encoding, with ``?`` for what that lacks (a table is for reading, not parsing); a file
    gets UTF-8, no colours and :data:`REPORT_COLUMNS` columns. A redirected stdout (a CI log)
    gets ``redirected_width`` columns if given, unless ``COLUMNS`` says otherwise (rich would
    assume 80).
    """
    if output is None:
        stdout = report_stdout()
        encoding = getattr(stdout, "encoding", None) or "utf-8"
        stream = _text_stream(stdout, encoding=encoding, errors="replace")
        redirected = not stdout_is_terminal() and not os.environ.get("COLUMNS")
        try:
            yield Console(
                file=stream,
                width=redirected_width if redirected else None,
                highlight=False,
                markup=False,
                emoji=False,
            )
        finally:
            stream.flush()
        return
    with atomic_text(output, errors=ENCODING_ERRORS) as file:
        yield Console(
            file=file,
            width=REPORT_COLUMNS,
            no_color=True,
            color_system=None,
            highlight=False,
            markup=False,
            emoji=False,
        )


def _text_stream(
    stream: IO[str], *, encoding: str = "utf-8", errors: str = ENCODING_ERRORS
) -> IO[str]:
    """The same stream, in ``encoding``, never failing on an unencodable character."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a replaced sys.stdout (tests, notebooks) takes str as it is
        return stream
    stream.flush()  # what was written through the original stream comes first
    return _Unclosable(buffer, encoding=encoding, errors=errors, line_buffering=True)


class _Unclosable(io.TextIOWrapper):
    """Wraps stdout/stderr's buffer without closing it when collected."""

    def close(self) -> None:
        self.flush()

    def __del__(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.flush()
