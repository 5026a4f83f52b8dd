"""Reading JSON, JSON Lines and YAML input into records that remember where they came from.

Every record carries a :class:`Location` (file, line, index) so that a problem found later can be
reported as ``FILE:LINE: PATH: message``. A part of the input that cannot be parsed becomes a
:class:`Problem` in the stream, in input order; the records around it are still read.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from knowledgepulse._util.jsonpath import Loc, format_path, non_finite_numbers
from knowledgepulse.errors import InputFileError

Format = Literal["json", "jsonl", "yaml"]
STDIN = "-"
STDIN_NAME = "<stdin>"

_SUFFIX_FORMATS: Mapping[str, Format] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}


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
    """One thing wrong with the input: where it is, the JSON path inside the record, and why."""

    location: Location
    path: str
    message: str

    def __str__(self) -> str:
        return (
            f"{self.location}: {self.path}: {self.message}"
            if self.path
            else (f"{self.location}: {self.message}")
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON reports."""
        return {
            "file": self.location.file,
            "line": self.location.line,
            "index": self.location.index,
            "path": self.path,
            "message": self.message,
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

    def problem(self, loc: Loc, message: str) -> Problem:
        """A problem at a path inside this record."""
        return Problem(self.locate(loc), format_path(loc) if loc else "", message)


def read_text(source: str | Path) -> tuple[str, str]:
    """Read a whole input, returning its display name and text (``-`` reads standard input)."""
    if str(source) == STDIN:
        return STDIN_NAME, sys.stdin.read()
    path = Path(source)
    try:
        return str(source), path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{source}: is a directory; pass the files inside it") from None
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{source}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    except OSError as error:
        raise InputFileError(f"{source}: cannot be read ({error.strerror})") from None


def read_records(
    source: str | Path, *, formats: Iterable[Format] = ("json", "jsonl")
) -> Iterator[Record | Problem]:
    """Read every record of a file (or ``-`` for standard input), in order.

    A JSON file holds one document or a list of them; a JSON Lines file one document a line
    (blank lines are skipped); a YAML file one document, a list, or several ``---`` documents.
    The format comes from the suffix, and is sniffed from the text for standard input and
    unknown suffixes.

    Raises:
        InputFileError: the file cannot be read, or its format is not among ``formats``.
    """
    name, text = read_text(source)
    allowed = tuple(formats)
    fmt = _SUFFIX_FORMATS.get(Path(name).suffix.lower()) if name != STDIN_NAME else None
    if fmt is None:
        fmt = sniff_format(text, allowed)
    if fmt not in allowed:
        expected = ", ".join(allowed)
        raise InputFileError(f"{name}: {fmt.upper()} input is not accepted here (use {expected})")
    yield from parse_records(text, name, fmt)


def sniff_format(text: str, allowed: tuple[Format, ...]) -> Format:
    """Guess the format of text with no telling suffix: JSON, JSON Lines or (if allowed) YAML."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0].strip()
        try:
            json.loads(first_line)
        except json.JSONDecodeError:
            return "json"  # a pretty-printed document spans several lines
        return "jsonl" if "jsonl" in allowed else "json"
    return "yaml" if "yaml" in allowed else "json"


def parse_records(text: str, name: str, fmt: Format) -> Iterator[Record | Problem]:
    """Parse text already read into records and problems (see :func:`read_records`)."""
    if fmt == "jsonl":
        yield from _parse_jsonl(text, name)
    elif fmt == "json":
        yield from _parse_json(text, name)
    else:
        yield from _parse_yaml(text, name)


def _checked(record: Record) -> Record | Problem:
    """The record itself, or a problem at its first NaN or infinite number."""
    for loc in non_finite_numbers(record.value):
        return record.problem(
            loc, "NaN and infinite numbers are not valid JSON; use a finite number"
        )
    return record


def _parse_jsonl(text: str, name: str) -> Iterator[Record | Problem]:
    index = 0
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        location = Location(name, line_number, index)
        index += 1
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            yield Problem(location, "", f"invalid JSON: {error.msg} (column {error.colno})")
            continue
        yield _checked(Record(location, value))


def _parse_json(text: str, name: str) -> Iterator[Record | Problem]:
    """Parse a JSON document; a top-level list yields one record per element, each with its line."""
    decoder = json.JSONDecoder()
    start = _skip_space(text, 0)
    if start == len(text):
        return
    if text[start] != "[":
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            yield _json_problem(name, error)
            return
        if _skip_space(text, end) != len(text):
            line = text.count("\n", 0, end) + 1
            yield Problem(
                Location(name, line),
                "",
                "invalid JSON: extra data after the document (one document a line? use .jsonl)",
            )
            return
        yield _checked(Record(Location(name, text.count("\n", 0, start) + 1, 0), value))
        return
    # Decode the list element by element so that each record knows the line it starts on.
    position = _skip_space(text, start + 1)
    index = 0
    if position < len(text) and text[position] == "]":
        return
    while True:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            yield _json_problem(name, error)
            return
        yield _checked(Record(Location(name, text.count("\n", 0, position) + 1, index), value))
        index += 1
        position = _skip_space(text, end)
        if position < len(text) and text[position] == ",":
            position = _skip_space(text, position + 1)
            continue
        if (
            position < len(text)
            and text[position] == "]"
            and _skip_space(text, position + 1) == len(text)
        ):
            return
        unexpected = json.JSONDecodeError(
            "Expecting ',' or ']' after a list element", text, position
        )
        yield _json_problem(name, unexpected)
        return


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _json_problem(name: str, error: json.JSONDecodeError) -> Problem:
    return Problem(
        Location(name, error.lineno), "", f"invalid JSON: {error.msg} (column {error.colno})"
    )


def _parse_yaml(text: str, name: str) -> Iterator[Record | Problem]:
    """Parse YAML safely (no object construction), keeping the line of every key and item."""
    loader = yaml.SafeLoader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            value = loader.construct_document(node)
            lines: dict[tuple[str | int, ...], int] = {}
            _node_lines(node, (), lines)
            if isinstance(node, yaml.SequenceNode):
                for position, item in enumerate(node.value):
                    item_lines = {
                        path[1:]: line for path, line in lines.items() if path[:1] == (position,)
                    }
                    location = Location(name, item.start_mark.line + 1, index)
                    index += 1
                    yield _checked(Record(location, value[position], item_lines))
            else:
                yield _checked(
                    Record(Location(name, node.start_mark.line + 1, index), value, lines)
                )
                index += 1
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        yield Problem(Location(name, line), "", f"invalid YAML: {error.problem or error}")
    except yaml.YAMLError as error:
        yield Problem(Location(name), "", f"invalid YAML: {error}")
    finally:
        loader.dispose()


def _node_lines(
    node: yaml.Node, loc: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int]
) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*loc, str(key_node.value))
            _node_lines(value_node, key, lines)
            lines[key] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            _node_lines(item, (*loc, position), lines)
