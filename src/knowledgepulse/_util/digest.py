"""Stable 64-bit hashes of strings, and a set of strings kept as them (about 8 bytes each)."""

from __future__ import annotations

import hashlib
import heapq
from array import array
from bisect import bisect_left


def stable_hash64(text: str) -> int:
    """The 8-byte BLAKE2b digest of ``text``, as an int: unlike ``hash``, the same in every run."""
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


_BATCH = 65_536


class SeenIds:
    """A set of strings kept as their 64-bit hashes (two ids share one with odds ~n²/2⁶⁵).

    A ``set`` of 200,000 hashes takes 17 MB (memory must stay flat within 1.5x from 10k to 200k
    traces): they live in a sorted ``array('Q')``, the newest merged in :data:`_BATCH` at a time.
    """

    def __init__(self) -> None:
        self._sorted: array[int] = array("Q")
        self._newest: set[int] = set()

    def add(self, item: str) -> bool:
        """Remember ``item``; return whether it had been seen before."""
        digest = stable_hash64(item)
        at = bisect_left(self._sorted, digest)
        if digest in self._newest or (at < len(self._sorted) and self._sorted[at] == digest):
            return True
        self._newest.add(digest)
        if len(self._newest) >= _BATCH:
            self._sorted = array("Q", heapq.merge(self._sorted, sorted(self._newest)))
            self._newest = set()
        return False
