r"""The terminal's side of a run: the stderr console, and progress bars for the library's callbacks.

The bars draw what a run reports as it goes (bytes read, task calls made), on a terminal only.

Text that cannot be encoded (a lone surrogate) is written as a backslash escape (JSON's own), so
a message about bad data never fails on the data.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from knowledgepulse._util.text import ENCODING_ERRORS
from knowledgepulse.records.readers import STDIN, is_compressed_name

if TYPE_CHECKING:
    from knowledgepulse.evals.evaluate import TaskProgress


class PipeConsole(Console):
    """A console on stdout that lets a reader's leaving (``kp score -f table | head``) be handled.

    rich's own answer is ``SystemExit(1)``, which reads as "bad records" in kp's exit codes;
    the broken pipe is raised instead, for the CLI to end the run as for any other report.
    """

    def on_broken_pipe(self) -> None:
        """The ``BrokenPipeError`` rich is handling, raised again."""
        raise  # noqa: PLE0704 - called in rich's ``except BrokenPipeError``: that error again


def stderr_console() -> Console:
    """Problems, progress and summaries: never mixed into the report on stdout."""
    return _console_on(sys.stderr)


class _StderrConsole(Console):
    """The messages' console: when their reader leaves (``2>&1 | head``), the run goes on."""

    def on_broken_pipe(self) -> None:
        """No more messages; rich's own answer, ``SystemExit(1)``, would lose the run's output."""
        self.quiet = True
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())


@functools.lru_cache(maxsize=4)
def _console_on(stream: IO[str]) -> Console:
    # Keyed on the stream, so a replaced sys.stderr (pytest's capture) gets its own console.
    return _StderrConsole(
        file=text_stream(stream), stderr=True, soft_wrap=True, highlight=False, emoji=False
    )


def text_stream(
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


class ReadProgress:
    """A bar of bytes read (plain files) or traces done (stdin, gzip), drawn on a terminal only.

    ``total_bytes`` is what the bar measures against, or ``None`` (a count of traces); ``bar``
    is the bar on screen, if any. It is redrawn at most ten times a second.
    """

    def __init__(self, total_bytes: int | None) -> None:
        self.total_bytes = total_bytes
        self._bytes = self._done = 0
        self._next_draw = 0.0
        self.bar: Progress | None = None
        self._task = TaskID(0)

    @classmethod
    def for_sources(cls, sources: Sequence[str]) -> ReadProgress:
        """A progress for these inputs: sized when every one is a plain, uncompressed file."""
        paths = [Path(source) for source in sources]
        sized = all(
            source != STDIN and not is_compressed_name(source) and path.is_file()
            for source, path in zip(sources, paths, strict=True)
        )
        return cls(sum(path.stat().st_size for path in paths) if sized else None)

    def __enter__(self) -> ReadProgress:
        if sys.stderr.isatty():
            columns = [TextColumn("{task.fields[done]} traces"), BarColumn(), TimeElapsedColumn()]
            if self.total_bytes:
                columns.append(TimeRemainingColumn())
            self.bar = Progress(*columns, console=stderr_console(), transient=True)
            self.bar.start()
            self._task = self.bar.add_task("reading", total=self.total_bytes or None, done=0)
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def advance(self, count: int) -> None:
        """``count`` more bytes were read."""
        self._bytes += count
        self._draw()

    def scored(self, done: int) -> None:
        """``done`` traces have been processed so far."""
        self._done = done
        self._draw()

    def _draw(self) -> None:
        if self.bar is not None and (now := time.monotonic()) >= self._next_draw:
            self._next_draw = now + 0.1
            self.bar.update(self._task, completed=self._bytes, done=self._done)


class TaskBar:
    """``kp eval --task``'s bar: outputs in, of how many, and the cache hits among them.

    Given to ``evaluate(progress=...)``; drawn on stderr when it is a terminal, from the first
    report of a run with calls to make, until the block ends.
    """

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self._wanted = False
        self._task = TaskID(0)

    def __enter__(self) -> TaskBar:
        isatty = getattr(sys.stderr, "isatty", None)
        self._wanted = bool(isatty and isatty())
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, progress: TaskProgress) -> None:
        """Show how far the calls are."""
        if self.bar is None:
            if not self._wanted or progress.total == 0:
                return
            self.bar = Progress(
                TextColumn("outputs"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[cached]} cached"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=stderr_console(),
                transient=True,
            )
            self.bar.start()
            self._task = self.bar.add_task("outputs", total=progress.total, cached=0)
        self.bar.update(self._task, completed=progress.done, cached=progress.cached)
