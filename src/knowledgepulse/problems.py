"""Where a problem is and what it says: the types every layer reports input problems with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record starts: its file, 1-based line, and 0-based index among the file's records."""

    file: str
    line: int | None = None
    index: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}"
        if self.index is not None:
            return f"{self.file}[{self.index}]"
        return self.file

    def at_line(self, line: int | None) -> Location:
        """The same record, pointing at a more precise line when one is known."""
        return self if line is None else Location(self.file, line, self.index)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the input: where, the JSON path inside the record, and why.

    A ``warning`` (a duplicate id, say) is reported and counted but rejects nothing.
    """

    location: Location
    path: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        label = "warning: " if self.warning else ""
        if self.path:
            return f"{self.location}: {label}{self.path}: {self.message}"
        return f"{self.location}: {label}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON reports."""
        return {
            "file": self.location.file,
            "line": self.location.line,
            "index": self.location.index,
            "path": self.path,
            "message": self.message,
            "severity": "warning" if self.warning else "error",
        }
