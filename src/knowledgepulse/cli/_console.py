r"""The streams every command writes through: reports on stdout or ``--output``, the rest on stderr.

Data never goes through rich markup or emoji codes; its control characters are shown escaped
(``\x1b``), and what cannot be encoded (a lone surrogate) as a backslash escape (JSON's own).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import IO

from rich.console import Console

from knowledgepulse._util.stdout import report_stdout, stdout_is_terminal
from knowledgepulse._util.text import printable
from knowledgepulse.reports.terminal import PipeConsole, stderr_console, text_stream
from knowledgepulse.reports.value_formats import suffix_format

REPORT_COLUMNS = 120
"""The width of a table written to a file or a redirected stdout: a log's lines are long."""


def say(message: str, *, one_line: bool = False) -> None:
    """A message on stderr, its control characters shown escaped (data in it cannot drive it)."""
    stderr_console().print(printable(message, one_line=one_line), markup=False, highlight=False)


@contextmanager
def open_output(output: Path | None, *, for_people: bool = False) -> Iterator[IO[str]]:
    """A text stream for a report: stdout, or a file that replaces ``output`` atomically.

    The file appears only when the block completes (an interrupted run leaves the old one).
    UTF-8 whatever the locale: JSON, JUnit (which says so in its header) and Markdown are; but
    ``for_people`` stdout gets the terminal's own encoding, ``?`` for what it lacks.
    """
    if output is not None:
        from knowledgepulse.runs.write import text_output  # noqa: PLC0415 - kp --help stays light

        with text_output(output) as file:
            yield file
        return
    stdout = report_stdout()
    encoding = getattr(stdout, "encoding", None) or "utf-8"
    stream = (
        text_stream(stdout, encoding=encoding, errors="replace")
        if for_people
        else text_stream(stdout)
    )
    try:
        yield stream
    finally:
        stream.flush()


def output_target(output: Path | None) -> AbstractContextManager[Path | IO[str]]:
    """``output``, or a stream on stdout (:func:`open_output`), for a writer that takes either."""
    return nullcontext(output) if output is not None else open_output(None)


def report_format(output: Path | None, formats: Iterable[str], default: str = "json") -> str:
    """A report's default ``--format``: a table on a terminal, else by ``--output``'s suffix.

    ``formats``: those a suffix may pick; any other suffix, or a redirected stdout, gets
    ``default``.
    """
    if output is None:
        return "table" if stdout_is_terminal() else default
    return suffix_format(output, formats, default)


_plain_console = functools.partial(PipeConsole, highlight=False, markup=False, emoji=False)
"""A console that shows data as written."""


@contextmanager
def output_console(
    output: Path | None, *, redirected_width: int | None = None
) -> Iterator[Console]:
    """A console for tables meant for people, on stdout or the ``--output`` file.

    A file gets no colours and :data:`REPORT_COLUMNS` columns; a redirected stdout (a CI log)
    gets ``redirected_width`` columns, unless ``COLUMNS`` says otherwise (rich assumes 80).
    """
    with open_output(output, for_people=True) as stream:
        if output is None:
            redirected = not stdout_is_terminal() and not os.environ.get("COLUMNS")
            yield _plain_console(file=stream, width=redirected_width if redirected else None)
        else:
            yield _plain_console(
                file=stream, width=REPORT_COLUMNS, no_color=True, color_system=None
            )
