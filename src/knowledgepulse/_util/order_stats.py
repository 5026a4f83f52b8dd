"""Exact order statistics of spilled values in bounded memory, by radix selection.

Each wanted rank starts as a range of keys (the floats' bits, in order) over its whole group.
A pass reads every chunk once: a range small enough (at most :data:`GATHER` values) is read
whole and sorted, which answers its ranks; a bigger one is counted in 4096 buckets, and the
bucket that holds a rank becomes that rank's range for the next pass. A range shrinks by 2¹² a
pass, so a rank takes at most seven passes (a score in [0, 1], two or three). A pass holds at
most :data:`GATHER` values and 16 bucket counts (about 1 MB), however many values there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from knowledgepulse._util.spill import SpilledValues

GATHER = 1 << 15
"""Values a pass reads into memory at most."""

_SPLIT_BITS = 12
_TALLIES = 16
_TOP = np.uint64(1 << 63)
_LAST_KEY = (1 << 64) - 1

Found = dict[int | None, dict[int, float]]


def select(values: SpilledValues, wanted: Mapping[int | None, Sequence[int]]) -> Found:
    """The value at each wanted rank of each group (by number; ``None``: all groups).

    Every rank must be one the group has (:meth:`SpilledValues.order_statistics` checks).
    """
    counts = values.groups()
    sizes = {values.number(group): count for group, count in counts.items()}
    found: Found = {group: {} for group in wanted}
    pending = [
        _Range(group, 0, _LAST_KEY, len(values) if group is None else sizes[group], ranks)
        for group, ranks in wanted.items()
    ]
    while pending:
        batch, pending = _batch(pending)
        pending += _pass(values, len(counts), batch, found)
    return found


@dataclass(slots=True, eq=False)
class _Range:
    """A group's values with keys in [low, high], and the ranks to find among them."""

    group: int | None
    low: int
    high: int
    count: int
    asked: Iterable[int] = ()
    ranks: dict[int, list[int]] = field(default_factory=dict)  # rank here -> ranks in group
    parts: list[npt.NDArray[np.float64]] = field(default_factory=list)
    tally: npt.NDArray[np.intp] | None = None

    def __post_init__(self) -> None:
        for rank in self.asked:
            self.ranks.setdefault(rank, []).append(rank)

    @property
    def whole_group(self) -> bool:
        """Whether this is a whole group small enough to gather (picked out by a table)."""
        return self.group is not None and self.low == 0 and self.high == _LAST_KEY and not self.big

    @property
    def big(self) -> bool:
        """Whether a pass counts this range in buckets, it being too big to read whole."""
        return self.count > GATHER

    @property
    def shift(self) -> int:
        return max(0, (self.high - self.low).bit_length() - _SPLIT_BITS)

    def scan(self, keys: npt.NDArray[np.uint64], values: npt.NDArray[np.float64]) -> None:
        """Take this range's share of one chunk of its group's keys and values."""
        inside = (keys >= np.uint64(self.low)) & (keys <= np.uint64(self.high))
        if not self.big:
            self.parts.append(values[inside])
            return
        buckets = ((self.high - self.low) >> self.shift) + 1
        bucket = (keys[inside] - np.uint64(self.low)) >> np.uint64(self.shift)
        counts = np.bincount(bucket.astype(np.intp), minlength=buckets)
        self.tally = counts if self.tally is None else self.tally + counts

    def pick(self, ordered: npt.NDArray[np.float64], found: Found) -> None:
        """Record the wanted ranks, given this range's values in order."""
        for rank, asked in self.ranks.items():
            for original in asked:
                found[self.group][original] = float(ordered[rank])

    def finish(self, found: Found) -> list[_Range]:
        """After a pass: record what is found, and return the narrower ranges left to read."""
        if not self.big:
            self.pick(np.sort(np.concatenate(self.parts)), found)
            return []
        if self.tally is None:  # pragma: no cover - every pass reads the chunk in memory
            raise AssertionError("a range was never scanned")
        ends = np.cumsum(self.tally)
        children: dict[int, _Range] = {}
        for rank, asked in self.ranks.items():
            bucket = int(np.searchsorted(ends, rank, side="right"))
            before = int(ends[bucket - 1]) if bucket else 0
            low = self.low + (bucket << self.shift)
            high = min(self.high, low + (1 << self.shift) - 1)
            if low == high:  # one key: every value in the bucket is the same number
                for original in asked:
                    found[self.group][original] = _value(low)
                continue
            child = children.get(bucket)
            if child is None:
                child = _Range(self.group, low, high, int(self.tally[bucket]))
                children[bucket] = child
            child.ranks.setdefault(rank - before, []).extend(asked)
        return list(children.values())


def _batch(pending: list[_Range]) -> tuple[list[_Range], list[_Range]]:
    """The ranges one pass takes (:data:`GATHER` values, 32 bucket counts), and the rest."""
    batch: list[_Range] = []
    rest: list[_Range] = []
    room, tallies = GATHER, _TALLIES
    for part in pending:
        if part.big and tallies:
            tallies -= 1
        elif not part.big and (part.count <= room or not batch):
            room -= part.count
        else:
            rest.append(part)
            continue
        batch.append(part)
    return batch, rest


def _pass(values: SpilledValues, groups: int, batch: list[_Range], found: Found) -> list[_Range]:
    """Read every chunk once for ``batch``; return the narrower ranges left to read."""
    # Small whole groups are picked out by one table lookup a chunk, however many there are;
    # the other ranges (narrowed, or over all groups) are few, and tested one by one.
    whole = [part for part in batch if part.whole_group]
    slots = np.full(groups + 1, -1, np.intp)
    for index, part in enumerate(whole):
        slots[part.group or 0] = index  # a whole group always has a number
    others: dict[int | None, list[_Range]] = {}
    for part in batch:
        if not part.whole_group:
            others.setdefault(part.group, []).append(part)
    picked: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = []
    for raw_groups, raw_values in values.chunks():
        numbers = np.frombuffer(raw_groups, np.uint32)
        chunk = np.frombuffer(raw_values, np.float64)
        if whole:
            at = slots[numbers]
            inside = at >= 0
            picked.append((at[inside], chunk[inside]))
        if others:
            keys = _keys(chunk)
            for group, parts in others.items():
                mine = slice(None) if group is None else numbers == group
                group_keys, group_values = keys[mine], chunk[mine]
                for part in parts:
                    part.scan(group_keys, group_values)
    if whole:
        owners = np.concatenate([s for s, _ in picked])
        value = np.concatenate([v for _, v in picked])
        ordered = value[np.lexsort((value, owners))]
        start = 0
        for part in whole:
            part.pick(ordered[start : start + part.count], found)
            start += part.count
    narrower: list[_Range] = []
    for parts in others.values():
        for part in parts:
            narrower += part.finish(found)
    return narrower


def _keys(values: npt.NDArray[np.float64]) -> npt.NDArray[np.uint64]:
    """Unsigned integers in the order of the floats (their bits; a negative's all flipped)."""
    bits = values.view(np.uint64)
    return np.where(bits & _TOP, ~bits, bits | _TOP)


def _value(key: int) -> float:
    """The float a key stands for (the inverse of :func:`_keys`)."""
    bits = key ^ (1 << 63) if key >> 63 else key ^ _LAST_KEY
    return float(np.array(bits, np.uint64).view(np.float64))
