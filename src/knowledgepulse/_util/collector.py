"""Python's cyclic garbage collector: held to its young generations, or collecting less often.

A run that holds a whole corpus (``kp select``, ``kp dedupe``) keeps millions of small objects,
and each full collection walks every one of them. Objects that live a little while (a batch of
traces waiting for the embedder, a row being written) keep setting full collections off: at
50,000 generated traces they took a fifth of the CPU time of reading and embedding, and two
fifths of ``kp select``'s time in collections while it wrote its choice. Young collections
still free cyclic garbage as it is made; only garbage that grew old waits for the block's end.

A ``kp`` command's process collects its youngest generation less often (see
:data:`YOUNG_ALLOCATIONS`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_OLDEST = 2**31 - 1
"""A full collection's threshold that is never reached (the C ``int`` Python keeps it in)."""
YOUNG_ALLOCATIONS = 10_000
"""The allocations (less deallocations) between young collections in a ``kp`` process: Python's
700 promoted each batch of rows a writer holds (1,024 rows), and the full collections they set
off walked every object the imports made, again and again (about 6 % of ``kp score --annotate``
on dataset rows, in the collector's time). Cyclic garbage is still collected, a little later."""

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


@contextmanager
def fewer_young_collections(allocations: int = YOUNG_ALLOCATIONS) -> Iterator[None]:
    """In this block a young collection waits for ``allocations`` (or Python's own threshold).

    The thresholds found come back after.
    """
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], allocations), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
