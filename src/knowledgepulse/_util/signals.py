"""SIGTERM handled as Ctrl-C is, so that a terminated run cleans up as an interrupted one does.

SIGTERM is what ``kill PID``, ``timeout``, systemd and a cancelled CI job send. Its default ends
the process at once: no temporary output removed, no worker process stopped, no word said.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated:
    """Whether SIGTERM arrived in a :func:`sigterm_as_ctrl_c` block (``seen``).

    The interrupt it raised looks like a Ctrl-C's; the exit code tells them apart (143, 130).
    """

    def __init__(self) -> None:
        self.seen = False


@contextmanager
def sigterm_as_ctrl_c(terminated: Terminated | None = None) -> Iterator[None]:
    """In this block SIGTERM does what Ctrl-C does (``KeyboardInterrupt``, by default).

    Only the main thread may handle a signal, and a handler of the program's own is kept: in
    either case nothing changes. The previous handling comes back when the block ends. A
    SIGTERM that arrives is noted in ``terminated``.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    previous = signal.signal(signal.SIGTERM, functools.partial(_as_ctrl_c, terminated))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Interrupted(Exception):  # noqa: N818 - no error: a Ctrl-C, caught where its context is known
    """A Ctrl-C caught and raised again with what it stopped (``args``: a command's parameters).

    Not a ``KeyboardInterrupt``, which click answers with a blank line on stderr, even in a log
    or below a progress bar that has cleared its line (and the ``^C`` echoed on it).
    """


def _as_ctrl_c(terminated: Terminated | None, signum: int, frame: FrameType | None) -> None:
    if terminated is not None:
        terminated.seen = True
    # Whatever handles Ctrl-C now: asyncio.run's handler cancels its task, as on a Ctrl-C.
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):  # Ctrl-C ignored (a background job): SIGTERM must still stop it
        handler = signal.default_int_handler
    handler(signal.SIGINT, frame)
