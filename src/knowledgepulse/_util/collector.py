"""Python's cyclic garbage collector held to its young generations while a corpus is held.

A run that holds a whole corpus (``kp select``, ``kp dedupe``) keeps millions of small objects,
and each full collection walks every one of them. Objects that live a little while (a batch of
traces waiting for the embedder, a row being written) keep setting full collections off: at
50,000 generated traces they took a fifth of the CPU time of reading and embedding, and two
fifths of ``kp select``'s time in collections while it wrote its choice. Young collections
still free cyclic garbage as it is made; only garbage that grew old waits for the block's end.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_OLDEST = 2**31 - 1
"""A full collection's threshold that is never reached (the C ``int`` Python keeps it in)."""

_lock = threading.Lock()
_holders = 0
_threshold: tuple[int, int, int] | None = None


@contextmanager
def young_collections_only() -> Iterator[None]:
    """In this block (a decorator too) no full collection runs; the thresholds come back after.

    Nested blocks and blocks in several threads are counted: the thresholds found by the first
    to enter are put back by the last to leave.
    """
    global _holders, _threshold  # noqa: PLW0603 - the process's collector is one
    with _lock:
        if _holders == 0:
            _threshold = gc.get_threshold()
            gc.set_threshold(_threshold[0], _threshold[1], _OLDEST)
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _threshold is not None:
                gc.set_threshold(*_threshold)
