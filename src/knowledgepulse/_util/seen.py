"""Remembering which ids a run has seen, in about 6.5 bytes each, so a million stay cheap."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right

from knowledgepulse._util.digest import stable_hash64

_MASK = 0xFFFF_FFFF_FFFF_FFFF
_PAGE_BITS = 10
_BUCKET_FILL = 512
_NO_HIGHS: array[int] = array("H")
_NO_LOWS: array[int] = array("I")


class SeenIds:
    """A set of strings kept as 58-bit fingerprints in small sorted buckets (6.5 bytes an id).

    A Python ``set`` of a million trace ids costs about 100 MB; this costs 6.5 MB of resident
    memory. An id's fingerprint is 58 bits of its 64-bit digest: the top 10 pick one of 1024
    pages and are implied by where it is kept, so only 48 are stored (16 in one array, 32 in
    another). Two different ids share a fingerprint with probability about n²/2⁵⁹ (2e-6 for a
    million ids, 2e-4 for ten million): a false "repeated id" warning is not a risk worth more
    memory. A page splits into buckets by the stored bits as it fills, so buckets stay small.

    Memory stays close to the stored bytes because every insert builds the bucket's arrays anew
    at their exact size: growing them in place leaves freed blocks behind each reallocation,
    which cost a fifth more memory. That makes an add about 2.5 µs (a million: 2.5 s).

    Args:
        bucket_fill: how many ids a bucket holds on average before every bucket is split in
            two (larger: a little less memory, slower adds; small values are for tests).
    """

    def __init__(self, bucket_fill: int = _BUCKET_FILL) -> None:
        # Bucket i holds the ids whose page is i >> extra and whose stored high half starts
        # with the extra bits of i; inside, sorted by (high half, low half) for bisect.
        self._highs: list[array[int]] = [_NO_HIGHS] * (1 << _PAGE_BITS)
        self._lows: list[array[int]] = [_NO_LOWS] * (1 << _PAGE_BITS)
        self._extra = 0
        self._fill = bucket_fill
        self._limit = bucket_fill << _PAGE_BITS
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, item: str) -> bool:
        """Remember ``item``; return whether it had been seen before."""
        index, high, low = self._place(item)
        highs = self._highs[index]
        lows = self._lows[index]
        at, found = _search(highs, lows, high, low)
        if found:
            return True
        self._highs[index] = _inserted(highs, at, high)
        self._lows[index] = _inserted(lows, at, low)
        self._count += 1
        if self._count > self._limit and self._extra < 16:
            self._split()
        return False

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        index, high, low = self._place(item)
        return _search(self._highs[index], self._lows[index], high, low)[1]

    def _place(self, item: str) -> tuple[int, int, int]:
        """The bucket, the stored high half (16 bits) and low half (32 bits) of ``item``."""
        digest = _digest(item)
        high = (digest >> 32) & 0xFFFF
        extra = self._extra
        return ((digest >> 54) << extra) | (high >> (16 - extra)), high, digest & 0xFFFF_FFFF

    def _split(self) -> None:
        # Bucket i becomes 2i and 2i + 1, parted at the next bit of the high half. Each old
        # bucket is dropped as soon as it is split: the memory in flight is one bucket.
        shift = 15 - self._extra
        mask = (1 << self._extra) - 1
        old_highs, self._highs = self._highs, []
        old_lows, self._lows = self._lows, []
        old_highs.reverse()
        old_lows.reverse()
        while old_highs:
            prefix = (len(self._highs) >> 1) & mask
            highs, lows = old_highs.pop(), old_lows.pop()
            middle = bisect_left(highs, ((prefix << 1) | 1) << shift)
            self._highs += (highs[:middle], highs[middle:])
            self._lows += (lows[:middle], lows[middle:])
        self._extra += 1
        self._limit = self._fill * len(self._highs)


def _search(highs: array[int], lows: array[int], high: int, low: int) -> tuple[int, bool]:
    """Where (high, low) is in a bucket sorted by (high, low), or would go; whether it is."""
    start = bisect_left(highs, high)
    if start == len(highs) or highs[start] != high:  # the common case: no id shares the half
        return start, False
    end = bisect_right(highs, high, start)
    at = bisect_left(lows, low, start, end)
    return at, at < end and lows[at] == low


def _inserted(values: array[int], at: int, value: int) -> array[int]:
    """``values`` with ``value`` inserted at ``at``, as a new array of the exact size."""
    if at < len(values):
        grown = values[: at + 1] + values[at:]
    elif values:
        grown = values + values[-1:]
    else:
        return array(values.typecode, (value,))
    grown[at] = value
    return grown


def _python_hash(item: str) -> int:
    # Python's own string hash (SipHash, 64 bits, salted per process) is all a run needs.
    return hash(item) & _MASK


# Where Python's hash has fewer than 64 bits (32-bit builds), collisions would not be rare.
_digest = _python_hash if sys.hash_info.width >= 64 else stable_hash64
