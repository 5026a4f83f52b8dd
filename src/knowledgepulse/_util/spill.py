"""Numbers by group, kept on disk as a run goes, so that memory stays flat however long it is.

A run's percentiles need every score until the end, and holding a million of them in memory is
8 to 32 MB that grows with the input. :class:`SpilledValues` keeps only the last chunk in memory
and appends the full ones to an unnamed temporary file (12 bytes a value, deleted when the
object goes, at once on Linux); :mod:`knowledgepulse._util.order_stats` reads them back to find
the values at any ranks, exactly, in bounded memory. This module needs no numpy, so a run that
never asks for a summary does not import it.
"""

from __future__ import annotations

import tempfile
import weakref
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import IO

CHUNK = 1 << 13
"""Values held in memory before a chunk goes to the file (96 KB)."""

Chunk = tuple[memoryview, memoryview]
"""One chunk: the group numbers (unsigned 32-bit) and the values (float64), in order."""

Selection = dict[str | None, dict[int, float]]
"""Values found, by group (``None``: all the groups together), then by rank."""


class SpilledValues:
    """Float values, each under a group name, appended as a run goes.

    Only the last ``chunk`` values are in memory; the others are in a temporary file. If no
    temporary file can be made (a read-only or full ``$TMPDIR``), the chunks stay in memory
    instead: the run goes on, only its memory grows.

    Args:
        chunk: how many values are held in memory before they go to the file (small values
            are for tests).
    """

    def __init__(self, chunk: int = CHUNK) -> None:
        self._chunk = chunk
        self._numbers: dict[str, int] = {}
        self._counts: list[int] = []
        # Filled in place and written out whole: no array grows, no chunk is copied.
        self._groups: array[int] = array("I", bytes(4 * chunk))
        self._values: array[float] = array("d", bytes(8 * chunk))
        self._filled = 0
        self._file: IO[bytes] | None = None
        self._held: list[bytes] = []  # the chunks, when there is no file
        self._chunks = 0

    def __len__(self) -> int:
        return self._chunks * self._chunk + self._filled

    def append(self, group: str, value: float) -> None:
        """Keep ``value`` under ``group``.

        Raises:
            ValueError: ``value`` is NaN, which has no rank.
        """
        if value != value:  # noqa: PLR0124 (NaN is the one float unequal to itself)
            raise ValueError("NaN has no rank among the values")
        number = self._numbers.get(group)
        if number is None:
            number = self._numbers[group] = len(self._counts)
            self._counts.append(0)
        self._counts[number] += 1
        filled = self._filled
        self._groups[filled] = number
        self._values[filled] = value + 0.0  # -0.0 becomes 0.0: the two rank as equals
        self._filled = filled + 1
        if filled + 1 == self._chunk:
            self._spill()

    def groups(self) -> dict[str, int]:
        """How many values each group has, in the order the groups first came."""
        return {group: self._counts[number] for group, number in self._numbers.items()}

    def number(self, group: str) -> int:
        """The number that stands for ``group`` in the chunks.

        Raises:
            KeyError: no value was appended under ``group``.
        """
        return self._numbers[group]

    def chunks(self) -> Iterator[Chunk]:
        """Every value with its group's number, chunk by chunk, in the order they came."""
        size = self._chunk * 12
        for index in range(self._chunks):
            if self._file is None:
                data = memoryview(self._held[index])
            else:
                self._file.seek(index * size)
                data = memoryview(self._file.read(size))
            yield data[: self._chunk * 4], data[self._chunk * 4 :]
        # Copies, not views, of the chunk still being filled.
        filled = self._filled
        yield (
            memoryview(self._groups[:filled].tobytes()),
            memoryview(self._values[:filled].tobytes()),
        )

    def order_statistics(self, wanted: Mapping[str | None, Sequence[int]]) -> Selection:
        """The value at each wanted rank (0: the smallest) of each group, in a few passes.

        Args:
            wanted: the ranks to find, by group; ``None`` stands for all the values together.

        Raises:
            IndexError: a rank that the group does not have.
        """
        from knowledgepulse._util.order_stats import select  # noqa: PLC0415 (brings numpy)

        counts = self.groups()
        numbered: dict[int | None, Sequence[int]] = {}
        for group, ranks in wanted.items():
            count = len(self) if group is None else counts.get(group, 0)
            if any(not 0 <= rank < count for rank in ranks):
                raise IndexError(f"{group!r} has {count} values, not ranks {sorted(ranks)}")
            if ranks:
                numbered[None if group is None else self._numbers[group]] = ranks
        found = select(self, numbered)
        names: dict[int | None, str | None] = {n: g for g, n in self._numbers.items()}
        names[None] = None
        selection: Selection = {group: {} for group in wanted}
        for number, values in found.items():
            selection[names[number]] = values
        return selection

    def _spill(self) -> None:
        if self._file is None and not self._held:
            try:
                self._file = tempfile.TemporaryFile(prefix="kp-values-")  # noqa: SIM115
            except OSError:
                pass
            else:
                # Closed with this object (no ResourceWarning); the OS deletes it then.
                weakref.finalize(self, self._file.close)
        if self._file is not None:
            try:
                self._file.seek(self._chunks * self._chunk * 12)
                self._file.write(self._groups)
                self._file.write(self._values)
                self._file.flush()
            except OSError:  # the disk filled up: what was written comes back to memory
                self._unspill()
        if self._file is None:
            self._held.append(self._groups.tobytes() + self._values.tobytes())
        self._chunks += 1
        self._filled = 0

    def _unspill(self) -> None:
        file, self._file = self._file, None
        if file is None:  # pragma: no cover - only called with a file
            return
        size = self._chunk * 12
        file.seek(0)
        self._held = [file.read(size) for _ in range(self._chunks)]
        file.close()
