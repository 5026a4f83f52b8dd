"""Records that remember where they came from, and problems that say where they are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from knowledgepulse._util.jsonpath import Loc, format_path
from knowledgepulse.records import strict_json

MAX_NESTING = 100
"""Objects and lists nested deeper than this are refused: no trace or case needs it, and every
recursive consumer downstream (validation, rendering, copying) is safe below it."""


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
    """One thing wrong with the input: where it is, the JSON path inside the record, and why.

    ``warning`` problems (a duplicate id, say) are reported and counted but reject nothing.
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


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed document (a trace, a case) and where it came from.

    Attributes:
        location: where the record starts.
        value: the parsed JSON value.
        lines: for YAML input, the 1-based line of each path inside the record, so a problem deep
            inside can point at its own line.
    """

    location: Location
    value: Any
    lines: Mapping[tuple[str | int, ...], int] = field(default_factory=dict)

    def locate(self, loc: Loc) -> Location:
        """The most precise location known for a path inside this record."""
        path = tuple(loc)
        while path:
            if path in self.lines:
                return self.location.at_line(self.lines[path])
            path = path[:-1]
        return self.location

    def problem(self, loc: Loc, message: str, *, warning: bool = False) -> Problem:
        """A problem at a path inside this record."""
        return Problem(self.locate(loc), format_path(loc) if loc else "", message, warning)


DecodedValue = TypeVar("DecodedValue")


@dataclass(frozen=True, slots=True)
class Decoded(Generic[DecodedValue]):
    """A JSON Lines record a caller's decoder took whole from its bytes.

    See :func:`knowledgepulse.records.read_records_decoding`: the decoder saw the line first
    and returned ``value``; the line is parsed as a :class:`Record` only when asked
    (:meth:`record`).
    """

    location: Location
    raw: bytes
    value: DecodedValue

    def record(self) -> Record:
        """The line parsed as any other record (a decoder takes only lines that parse cleanly)."""
        return Record(self.location, strict_json.loads_bytes(self.raw))
