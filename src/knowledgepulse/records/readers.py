"""The three readers: JSON Lines line by line, a JSON document or list, YAML documents."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, overload

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import strict_json
from knowledgepulse.records.model import Decoded, Location, Problem, Record
from knowledgepulse.records.source import Format, ReadError, Source, lines, read_all

Progress = Callable[[int], object]
Decode = Callable[[bytes], Any]
"""A JSON Lines line's bytes to a value, or ``None`` to have the line parsed as usual."""


def read_stream(
    source: Source,
    allowed: tuple[Format, ...],
    progress: Progress | None = None,
    decode: Decode | None = None,
) -> Iterator[Record | Problem | Decoded[Any]]:
    """Every record of an open source, in order (see :func:`knowledgepulse.records.read_records`).

    Raises:
        InputFileError: the format is not among ``allowed``.
    """
    fmt = source.suffix_format
    if fmt is not None:
        _check_format(source.name, fmt, allowed)
        if fmt == "jsonl":
            yield from _read_jsonl(lines(source.stream), source.name, progress, decode)
            return
        yield from _read_whole(source, fmt, progress)
        return
    # No telling name: sniff the first line, then go on with the right reader.
    line_iter = lines(source.stream)
    try:
        first = next(line_iter, None)
    except ReadError as failure:
        yield Problem(Location(source.name), "", str(failure))
        return
    if first is None:
        return
    fmt = _sniff(first, allowed)
    _check_format(source.name, fmt, allowed)
    if fmt == "jsonl":
        yield from _read_jsonl(chain([first], line_iter), source.name, progress, decode)
        return
    try:
        rest = b"\n".join(line_iter)
    except ReadError as failure:
        yield Problem(Location(source.name), "", str(failure))
        return
    if progress is not None:
        progress(len(first) + 1 + len(rest))
    yield from _parse_bytes(first + b"\n" + rest, source.name, fmt)


def parse_records(text: str, name: str, fmt: Format) -> Iterator[Record | Problem]:
    """Parse text already read into records and problems."""
    if fmt == "jsonl":
        yield from _read_jsonl(
            (line.encode("utf-8", "surrogatepass") for line in text.split("\n")), name
        )
    elif fmt == "json":
        yield from _parse_json(text, name)
    else:
        yield from _parse_yaml(text, name)


def _check_format(name: str, fmt: Format, allowed: tuple[Format, ...]) -> None:
    if fmt not in allowed:
        expected = ", ".join(allowed)
        raise InputFileError(f"{name}: {fmt.upper()} input is not accepted here (use {expected})")


def _sniff(first_line: bytes, allowed: tuple[Format, ...]) -> Format:
    """Guess the format from the first line: JSON, JSON Lines or (if allowed) YAML."""
    stripped = first_line.lstrip()
    if stripped.startswith(b"["):
        return "json"
    if stripped.startswith(b"{"):
        try:
            json.loads(stripped)
        except ValueError:
            return "json"  # a pretty-printed document spans several lines
        return "jsonl" if "jsonl" in allowed else "json"
    if not stripped.strip():
        # Blank first line: JSON Lines skips it; JSON and YAML are read whole.
        return "jsonl" if "jsonl" in allowed else ("yaml" if "yaml" in allowed else "json")
    return "yaml" if "yaml" in allowed else "json"


@overload
def _read_jsonl(
    raw_lines: Iterator[bytes],
    name: str,
    progress: Progress | None = None,
    decode: None = None,
) -> Iterator[Record | Problem]: ...


@overload
def _read_jsonl(
    raw_lines: Iterator[bytes], name: str, progress: Progress | None, decode: Decode | None
) -> Iterator[Record | Problem | Decoded[Any]]: ...


def _read_jsonl(
    raw_lines: Iterator[bytes],
    name: str,
    progress: Progress | None = None,
    decode: Decode | None = None,
) -> Iterator[Record | Problem | Decoded[Any]]:
    index = 0
    line_number = 0
    try:
        for raw in raw_lines:
            line_number += 1
            if progress is not None:
                progress(len(raw) + 1)
            if not raw.strip():
                continue
            location = Location(name, line_number, index)
            index += 1
            if decode is not None:
                decoded = decode(raw)
                if decoded is not None:
                    yield Decoded(location, raw, decoded)
                    continue
            notes: list[str] = []
            try:
                value = strict_json.loads_bytes(raw, notes)
            except UnicodeDecodeError as error:
                yield Problem(location, "", _utf8_message(raw, error))
                continue
            except strict_json.JsonError as problem:
                yield Problem(location, problem.path, problem.message)
                continue
            yield from _surrogate_warnings(location, notes)
            yield Record(location, value)
    except ReadError as failure:
        yield Problem(Location(name, line_number + 1), "", str(failure))


def _surrogate_warnings(location: Location, paths: list[str]) -> Iterator[Problem]:
    for path in paths:
        yield Problem(
            location,
            path,
            "a \\ud800-\\udfff escape without its pair names no character; read as U+FFFD",
            warning=True,
        )


def _utf8_message(raw: bytes, error: UnicodeDecodeError) -> str:
    column = len(raw[: error.start].decode("utf-8", "replace")) + 1
    return (
        f"not UTF-8 text: byte 0x{raw[error.start]:02x} at column {column} ({error.reason}); "
        "save the file as UTF-8"
    )


def _read_whole(
    source: Source, fmt: Format, progress: Progress | None
) -> Iterator[Record | Problem]:
    try:
        data = read_all(source.stream)
    except ReadError as failure:
        yield Problem(Location(source.name), "", str(failure))
        return
    if progress is not None:
        progress(len(data))
    yield from _parse_bytes(data, source.name, fmt)


def _parse_bytes(data: bytes, name: str, fmt: Format) -> Iterator[Record | Problem]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        yield Problem(
            Location(name, line), "", _utf8_message(data[line_start:], _shifted(error, line_start))
        )
        return
    if fmt == "json":
        yield from _parse_json(text, name)
    else:
        yield from _parse_yaml(text, name)


def _parse_yaml(text: str, name: str) -> Iterator[Record | Problem]:
    # PyYAML takes longer to import than a one-trace run of ``kp score`` takes to score: it
    # loads only for YAML input.
    from knowledgepulse.records.yaml import parse_yaml  # noqa: PLC0415

    yield from parse_yaml(text, name)


def _shifted(error: UnicodeDecodeError, offset: int) -> UnicodeDecodeError:
    return UnicodeDecodeError(
        error.encoding,
        error.object[offset:],
        error.start - offset,
        error.end - offset,
        error.reason,
    )


def _parse_json(text: str, name: str) -> Iterator[Record | Problem]:
    """A JSON document; a top-level list yields one record per element, each with its line."""
    start = _skip_space(text, 0)
    if start == len(text):
        return
    if text[start] != "[":
        yield from _parse_documents(text, start, name)
        return
    # Decode the list element by element so that each record knows the line it starts on; the
    # line count advances with the position, so a long list costs linear time.
    position = _skip_space(text, start + 1)
    line = text.count("\n", 0, position) + 1
    index = 0
    if position < len(text) and text[position] == "]":
        return
    while True:
        location = Location(name, line, index)
        notes: list[str] = []
        try:
            value, end = strict_json.raw_decode(text, position, notes)
        except strict_json.JsonError as problem:
            if problem.path or problem.line is None:
                # The element is well-formed JSON with a bad value: skip just it.
                yield Problem(location, problem.path, problem.message)
                skipped = _element_end(text, position)
                if skipped is None:
                    return
                end = skipped
            else:
                yield Problem(Location(name, problem.line), "", problem.message)
                return
        else:
            yield from _surrogate_warnings(location, notes)
            yield Record(location, value)
        index += 1
        after = _skip_space(text, end)
        line += text.count("\n", position, after)
        position = after
        if position < len(text) and text[position] == ",":
            after = _skip_space(text, position + 1)
            line += text.count("\n", position, after)
            position = after
            continue
        if (
            position < len(text)
            and text[position] == "]"
            and _skip_space(text, position + 1) == len(text)
        ):
            return
        found = "the end of the file" if position >= len(text) else repr(text[position])
        yield Problem(
            Location(name, line),
            "",
            f"invalid JSON: expected ',' or ']' after a list element, found {found}",
        )
        return


def _parse_documents(text: str, start: int, name: str) -> Iterator[Record | Problem]:
    """One JSON document, or several objects one after another (a JSON text sequence).

    Pretty-printing exporters (OpenTelemetry's console exporter, say) write one indented object
    per span with nothing between them but a newline: each object is a record.
    """
    position, index = start, 0
    while True:
        notes: list[str] = []
        line = text.count("\n", 0, position) + 1
        try:
            value, end = strict_json.raw_decode(text, position, notes)
        except strict_json.JsonError as problem:
            yield Problem(
                Location(name, problem.line or line, index), problem.path, problem.message
            )
            return
        location = Location(name, line, index)
        yield from _surrogate_warnings(location, notes)
        yield Record(location, value)
        after = _skip_space(text, end)
        if after == len(text):
            return
        if not isinstance(value, dict) or text[after] != "{":
            yield Problem(
                Location(name, text.count("\n", 0, after) + 1),
                "",
                f"invalid JSON: extra data after the document (column {_column(text, after)})",
            )
            return
        position, index = after, index + 1


def _column(text: str, position: int) -> int:
    return position - (text.rfind("\n", 0, position) + 1) + 1


def _element_end(text: str, position: int) -> int | None:
    """Where a syntactically valid element ends, parsing leniently (used after a value problem)."""
    try:
        return json.JSONDecoder(parse_constant=float).raw_decode(text, position)[1]
    except (ValueError, RecursionError):
        return None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position
