"""Records that remember where they came from, and the bound on how deep a record may nest."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import Loc, format_path
from knowledgepulse.problems import Location, Problem

__all__ = ["MAX_NESTING", "Location", "Problem", "Record"]

MAX_NESTING = 100
"""Objects and lists nested deeper than this are refused, in every input format: no trace or case
needs it, and every recursive consumer downstream (validation, rendering, copying, orjson's
writer with its limit of 254) is safe below it."""


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed document (a trace, a case) and where it came from.

    ``lines``: for YAML, the line of each path inside the record. ``raw``: for JSON Lines, the
    line's own bytes, so that a row written back keeps its values byte for byte.
    """

    location: Location
    value: Any
    lines: Mapping[tuple[str | int, ...], int] = field(default_factory=dict)
    raw: bytes | None = None

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
