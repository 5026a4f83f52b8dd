"""Remembering which ids a run has seen, in a few bytes each, so a million stay cheap."""

from __future__ import annotations

from array import array

_EMPTY = 0


class SeenIds:
    """A set of strings kept as 64-bit digests in an open-addressing table (8-16 bytes an id).

    A Python ``set`` of a million trace ids costs about 100 MB; this costs 16 MB. Two different
    ids share a digest with probability about n²/2⁶⁵ (3e-8 for a million), which for a warning
    about duplicates is no risk worth a byte more.
    """

    def __init__(self, capacity: int = 1024) -> None:
        size = 1
        while size < capacity * 2:
            size *= 2
        self._table = array("Q", [_EMPTY]) * size
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, item: str) -> bool:
        """Remember ``item``; return whether it had been seen before."""
        digest = _digest(item)
        table = self._table
        mask = len(table) - 1
        slot = digest & mask
        while True:
            held = table[slot]
            if held == _EMPTY:
                break
            if held == digest:
                return True
            slot = (slot + 1) & mask
        table[slot] = digest
        self._count += 1
        if self._count * 2 > len(table):
            self._grow()
        return False

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        digest = _digest(item)
        table = self._table
        mask = len(table) - 1
        slot = digest & mask
        while (held := table[slot]) != _EMPTY:
            if held == digest:
                return True
            slot = (slot + 1) & mask
        return False

    def _grow(self) -> None:
        old = self._table
        self._table = array("Q", [_EMPTY]) * (2 * len(old))
        mask = len(self._table) - 1
        for digest in old:  # one int at a time: no list of a million ints while growing
            if digest == _EMPTY:
                continue
            slot = digest & mask
            while self._table[slot] != _EMPTY:
                slot = (slot + 1) & mask
            self._table[slot] = digest


def _digest(item: str) -> int:
    # Python's own string hash (SipHash, 64 bits, salted per process) is all a run needs;
    # 0 marks an empty slot, so it is moved to 1.
    return (hash(item) & 0xFFFF_FFFF_FFFF_FFFF) or 1
