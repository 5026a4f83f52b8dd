"""What a worker process of kp's does so that it never outlives the process that started it."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading


def exit_with_parent() -> None:
    """End this worker process as soon as its parent has gone, however it went.

    A worker waits for batches on a queue whose write end it holds too, so a parent killed
    (SIGKILL, or SIGTERM's default) would leave it running, its model in memory, for ever. The
    parent process's sentinel, the read end of a pipe only the parent writes to, becomes readable
    when the parent dies; unlike Linux's PR_SET_PDEATHSIG, it works on every platform and does
    not fire when merely the thread that started the worker ends.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def wait_for_parent() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=wait_for_parent, name="kp-parent-watch", daemon=True).start()
