"""The consoles every command writes through: reports on stdout or --output, problems on stderr."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console


@functools.cache
def stderr_console() -> Console:
    """Problems, progress and summaries: never mixed into the report on stdout."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


def stdout_is_terminal() -> bool:
    """Whether a person is reading stdout (then the table view is the default)."""
    return sys.stdout.isatty()


def stderr_is_terminal() -> bool:
    """Whether progress bars are worth drawing."""
    return sys.stderr.isatty()


def write_output(text: str, output: Path | None) -> None:
    """A rendered report to stdout, or to the ``--output`` file (UTF-8)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        output.write_text(text, encoding="utf-8")


@contextmanager
def output_console(output: Path | None) -> Iterator[Console]:
    """A console on stdout, or on the ``--output`` file (no colours, 120 columns)."""
    if output is None:
        yield Console(highlight=False)
        return
    with output.open("w", encoding="utf-8") as file:
        yield Console(file=file, width=120, no_color=True, color_system=None, highlight=False)
