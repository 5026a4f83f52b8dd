"""A progress bar for long runs that covers reading as well as scoring.

With plain files the bar measures bytes read against their total size (so it moves while a big
file is being read and validated, not only while scoring); with standard input or gzip it counts
traces against the clock. It is drawn only on a terminal, at most ten times a second.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from knowledgepulse.cli._console import stderr_console
from knowledgepulse.records import STDIN

_REFRESH_SECONDS = 0.1


class ReadProgress:
    """Counts bytes read and traces done; draws them when enabled (see the module docstring)."""

    def __init__(self, total_bytes: int | None, *, enabled: bool) -> None:
        self._total = total_bytes
        self._enabled = enabled
        self._bytes = 0
        self._done = 0
        self._next_draw = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    @classmethod
    def for_sources(cls, sources: Sequence[str], *, enabled: bool) -> ReadProgress:
        """A progress for these inputs: sized when every one is a plain, uncompressed file."""
        total: int | None = 0
        for source in sources:
            path = Path(source)
            if source == STDIN or path.suffix.lower() == ".gz" or not path.is_file():
                total = None
                break
            total = (total or 0) + path.stat().st_size
        return cls(total, enabled=enabled)

    @property
    def total_bytes(self) -> int | None:
        """What the bar measures against: the inputs' size, or ``None`` (a count of traces)."""
        return self._total

    @property
    def drawing(self) -> bool:
        """Whether a bar is on screen."""
        return self._progress is not None

    def __enter__(self) -> ReadProgress:
        if self._enabled:
            columns = [TextColumn("{task.fields[done]} traces"), BarColumn(), TimeElapsedColumn()]
            if self._total:
                columns.append(TimeRemainingColumn())
            self._progress = Progress(*columns, console=stderr_console(), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("reading", total=self._total or None, done=0)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, count: int) -> None:
        """``count`` more bytes were read."""
        self._bytes += count
        self._maybe_draw()

    def scored(self, done: int) -> None:
        """``done`` traces have been processed so far."""
        self._done = done
        self._maybe_draw()

    def _maybe_draw(self) -> None:
        if self._progress is None or self._task is None:
            return
        now = time.monotonic()
        if now < self._next_draw:
            return
        self._next_draw = now + _REFRESH_SECONDS
        self._progress.update(self._task, completed=self._bytes, done=self._done)
