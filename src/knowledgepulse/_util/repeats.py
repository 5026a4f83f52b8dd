"""Lines of one kind shown a few times, the rest counted: a flood told in one line."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass


@dataclass
class Repeats:
    """The lines of one kind past the first few: how many, where the first and last were."""

    count: int = 0
    first: str = ""
    last: str = ""


class RepeatDigest:
    """Shows the first ``first`` lines of each kind; the rest are counted, where they were kept.

    ``tell``: how :meth:`close` words the lines not shown of a kind, given the kind and its
    :class:`Repeats`.
    """

    def __init__(
        self,
        show: Callable[[str], object],
        tell: Callable[[Hashable, Repeats], str],
        first: int = 3,
    ) -> None:
        self._show, self._tell, self._first = show, tell, first
        self._seen: dict[Hashable, Repeats] = {}

    def __call__(self, kind: Hashable, line: str, where: str) -> None:
        """Show ``line`` if few of ``kind`` were shown, else count it as at ``where``."""
        seen = self._seen.setdefault(kind, Repeats())
        seen.count += 1
        if seen.count <= self._first:
            self._show(line)
        elif seen.count == self._first + 1:
            seen.first = seen.last = where
        else:
            seen.last = where

    def close(self) -> None:
        """Show one line for each kind with lines not shown; forget them."""
        for kind, seen in self._seen.items():
            if seen.count > self._first:
                self._show(
                    self._tell(kind, Repeats(seen.count - self._first, seen.first, seen.last))
                )
        self._seen.clear()
