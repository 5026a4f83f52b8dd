"""The process's stdout kept for a report while user code runs; silenced when its reader goes.

While user code runs its prints go to stderr: what a task or plugin prints must not corrupt a
report on stdout (``kp eval -f json | jq``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

_held: IO[str] | None = None


def report_stdout() -> IO[str]:
    """The stream a report on stdout goes to: stdout, or the one held back from user code."""
    return _held if _held is not None else sys.stdout


def stdout_is_terminal() -> bool:
    """Whether a person is reading the report's stdout (then a table is the default view)."""
    return report_stdout().isatty()


@contextmanager
def stdout_for_the_report() -> Iterator[None]:
    """While entered, ``print`` (and descriptor 1) go to stderr; reports use :func:`report_stdout`.

    What a task or plugin prints must not corrupt a report on stdout (``kp eval -f json | jq``).
    """
    global _held  # noqa: PLW0603 - one stdout per process, like sys.stdout itself
    original = sys.stdout
    saved_fd = _duplicate_fd_one(original)
    if saved_fd is None:  # a replaced sys.stdout (tests, notebooks): Python's prints only
        _held = original
    else:
        _held = open(  # noqa: SIM115 - closed in the finally below
            saved_fd,
            "w",
            encoding=original.encoding,
            errors=original.errors,
            closefd=False,
        )
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = original
        held, _held = _held, None
        if saved_fd is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: main says nothing
                held.close()
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _duplicate_fd_one(stream: IO[str]) -> int | None:
    """A copy of descriptor 1, which then points at stderr; ``None`` when stdout is not fd 1."""
    try:
        if stream.fileno() != 1:
            return None
        stream.flush()
        sys.stderr.flush()
        saved = os.dup(1)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    try:
        os.dup2(sys.stderr.fileno(), 1)
    except (AttributeError, OSError, ValueError):
        os.close(saved)
        return None
    return saved


def stdout_to_devnull() -> None:
    """Point the report's stdout at ``os.devnull`` once its reader has gone (``kp ... | head``).

    Python flushes stdout at exit, which with the reader gone would fail again ("Exception
    ignored ... BrokenPipeError"). The descriptor is :func:`report_stdout`'s: while user code
    runs, descriptor 1 is stderr.
    """
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), report_stdout().fileno())


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """Around a report written after its run: a reader that leaves (``| head``) loses the rest.

    The run still ends with its summary and its exit code (a gate's verdict).
    """
    try:
        yield
    except BrokenPipeError:
        stdout_to_devnull()


def reopen_closed_streams() -> None:
    """A standard stream the process started without (``kp score <&-``) becomes ``os.devnull``.

    Python leaves it ``None`` (which ``print`` writes nothing to); so does kp, instead of failing
    on it. In the lowest free descriptor, the closed one's, so that no file opened later takes
    its number and is written as stdout.
    """
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115 - for good
