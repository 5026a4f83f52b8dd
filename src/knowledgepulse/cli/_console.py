"""The consoles every command writes through: reports on stdout, diagnostics on stderr."""

from __future__ import annotations

import functools
import sys

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
