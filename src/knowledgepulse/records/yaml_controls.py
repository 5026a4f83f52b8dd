"""Control characters in YAML text: stood in for, so that only the record holding one is refused."""

from __future__ import annotations

import bisect
import re

from yaml.reader import Reader

_CONTROL = re.compile(Reader.NON_PRINTABLE.pattern)


class Controls:
    """The control characters of a text, each replaced by one stand-in PyYAML accepts.

    PyYAML refuses the whole text on the first one; with stand-ins the text parses, and only
    the record whose span holds one is refused (in a comment between records: the file).
    """

    def __init__(self, text: str) -> None:
        self.positions = [match.start() for match in _CONTROL.finditer(text)]
        self.originals = {position: text[position] for position in self.positions}
        self.reported: set[int] = set()
        self.text = text
        self._line_starts: list[int] | None = None
        self.stand_in = ""
        if self.positions:
            self.stand_in = next(
                chr(code) for code in range(0xF0000, 0xFFFFE) if chr(code) not in text
            )
            self.text = _CONTROL.sub(self.stand_in, text)

    def within(self, start: int, end: int) -> list[int]:
        """The positions in ``[start, end)``, marked as reported."""
        low = bisect.bisect_left(self.positions, start)
        high = bisect.bisect_left(self.positions, end)
        found = self.positions[low:high]
        self.reported.update(found)
        return found

    def line(self, position: int) -> int:
        """The 1-based line of a position."""
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        return bisect.bisect_right(self._line_starts, position)

    def message(self, position: int, more: int = 0) -> str:
        """Why the character at ``position`` is refused, and how to write it instead."""
        line = self.line(position)
        line_start = self._line_starts[line - 1] if self._line_starts else 0
        code = ord(self.originals[position])
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        others = f" (and {more} more)" if more else ""
        return (
            f"control character U+{code:04X} at column {position - line_start + 1}{others} is "
            f'not allowed in YAML; remove it, or write it as "{escape}" in a double-quoted string'
        )

    def unreported(self) -> list[int]:
        """The positions no record's span held."""
        return [position for position in self.positions if position not in self.reported]
