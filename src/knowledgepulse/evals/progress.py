"""A progress bar for task runs, drawn on stderr only when a person is watching it.

Calling a model over a dataset takes minutes, so ``evaluate()`` shows how many outputs are done
(and how many came from the cache). It is drawn only when stderr is a terminal, never into a
log or a pipe; rich, which draws it, is imported only then. Rich is otherwise kept to the
reports and the CLI: this is the one place the library draws, because ``evaluate()`` is meant
to be called from a script as well as from ``kp eval``.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class TaskProgress:
    """Counts outputs done; draws a bar while entered, when enabled."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.cached = 0
        self._enabled = enabled and total > 0
        self._bar: Any = None
        self._task: Any = None

    @classmethod
    def auto(cls, total: int, wanted: bool | None) -> TaskProgress:
        """Drawn when ``wanted``, or, when ``wanted`` is ``None``, when stderr is a terminal."""
        if wanted is None:
            isatty = getattr(sys.stderr, "isatty", None)
            wanted = bool(isatty and isatty())
        return cls(total, enabled=wanted)

    @property
    def drawing(self) -> bool:
        """Whether a bar is on screen."""
        return self._bar is not None

    def __enter__(self) -> TaskProgress:
        if self._enabled:
            from rich.console import Console  # noqa: PLC0415 - only when a bar is drawn
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("outputs"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[cached]} cached"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr, stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("outputs", total=self.total, cached=0)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def advance(self, *, cached: bool = False) -> None:
        """One more output is in."""
        self.done += 1
        self.cached += cached
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, cached=self.cached)
