"""Strict JSON: what RFC 8259 allows and nothing that would silently change a record's meaning.

Python's ``json`` accepts ``NaN`` and ``Infinity``, turns ``1e999`` into infinity, lets the last
of two equal keys win, and raises ``RecursionError`` or a bare ``ValueError`` on absurd input.
Here each of those is a :class:`JsonError` with a message, found while parsing (no second walk
over the document) and located by JSON path afterwards, on the rare record that has one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import orjson

from knowledgepulse._util.jsonpath import format_path

# model.MAX_NESTING is read when used: records.model imports this module (Decoded.record).
from knowledgepulse.records import model


class JsonError(ValueError):
    """Raised when text is not strict JSON; ``path`` is the JSON path when one is known."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line


class _DuplicateKeyError(Exception):
    """Raised by the object hook on a repeated key."""


class _NonFiniteError(Exception):
    """Raised by the number hooks on NaN, Infinity or an overflowing literal."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _DuplicateKeyError
    return value


def _constant(name: str) -> float:
    raise _NonFiniteError(name)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NonFiniteError(text)
    return value


_STRICT = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant, parse_float=_float)


def loads_bytes(data: bytes, notes: list[str] | None = None) -> Any:
    """Parse one JSON document from UTF-8 bytes strictly, fast when it is plainly valid.

    orjson parses and re-serialises the document in C; it is used only when the result is
    provably what :func:`loads` would give: orjson refuses NaN, overflowing numbers, lone
    surrogates and invalid UTF-8 itself (those go to the strict path, which says where), a run of
    19 digits (an integer orjson may read as a float: past 2**64, or below -2**63, which has 19
    digits) goes to the strict path, and a repeated key is caught by counting colons (see
    :func:`_no_key_was_dropped`).

    Raises:
        JsonError: as :func:`loads`.
        UnicodeDecodeError: the bytes are not UTF-8.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        if not _has_long_digit_run(data) and _no_key_was_dropped(data, value):
            if too_nested_to_tell(data) and too_deep(value) is not None:
                return loads(data.decode("utf-8"), notes)  # for the located message
            return value
    return loads(data.decode("utf-8"), notes)


# Digits to "0", everything else to " ": two C-speed passes find a run of 19 digits (a regex
# takes 10 times longer on a typical trace).
_DIGIT_MAP = bytes(
    ord("0") if chr(byte).isdigit() and byte < 128 else ord(" ") for byte in range(256)
)
_LONG_RUN = b"0" * 19


def _has_long_digit_run(data: bytes) -> bool:
    return _LONG_RUN in data.translate(_DIGIT_MAP)


_ESCAPED_COLON = re.compile(rb"\\u003[aA]")


def kept_colons(data: bytes) -> int:
    r"""The colons a re-serialisation of ``data`` that kept every key would write.

    Every key is followed by one colon outside strings, and re-serialising writes every colon of
    every kept string raw, so without a dropped key (a repeated one, say) the output has exactly
    the source's raw colons plus its escaped ones (``\u003a``); a dropped key (and its value) can
    only lower that. An over-count of escapes (``\\u003a`` is not one) only makes a kept
    document look changed, never the other way.
    """
    colons = data.count(b":")
    if b"\\u003" in data:  # rare: a plain search is ten times cheaper than the pattern's
        colons += len(_ESCAPED_COLON.findall(data))
    return colons


def too_nested_to_tell(data: bytes) -> bool:
    """Whether ``data`` may nest deeper than ``MAX_NESTING`` (it opens that many containers)."""
    return data.count(b"{") + data.count(b"[") > model.MAX_NESTING


def _no_key_was_dropped(data: bytes, value: Any) -> bool:
    """Whether parsing kept every key: no object repeated one (see :func:`kept_colons`)."""
    return orjson.dumps(value).count(b":") == kept_colons(data)


def loads(text: str, notes: list[str] | None = None) -> Any:
    """Parse one JSON document strictly (see :func:`raw_decode`).

    Raises:
        JsonError: the text is not strict JSON, is nested too deep, or repeats a key.
    """
    value, end = raw_decode(text, 0, notes)
    end = _skip_space(text, end)
    if end != len(text):
        raise JsonError(
            f"invalid JSON: extra data after the document (column {end + 1})",
            line=text.count("\n", 0, end) + 1,
        )
    return value


def raw_decode(text: str, position: int, notes: list[str] | None = None) -> tuple[Any, int]:
    r"""Parse one strict JSON value starting at ``position``; return it and where it ends.

    A ``\ud800``-style escape of half a surrogate pair is valid JSON syntax but names no
    character, so no UTF-8 output or validator can carry it: such a string gets U+FFFD in its
    place, and the string's JSON path is appended to ``notes`` (for a warning).

    Raises:
        JsonError: as :func:`loads`.
    """
    try:
        value, end = _STRICT.raw_decode(text, position)
    except json.JSONDecodeError as error:
        raise JsonError(
            f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno
        ) from None
    except _DuplicateKeyError:
        path, key = _find_duplicate(text, position)
        raise JsonError(
            f"the key {key!r} appears twice in one object; keep one (which one was meant "
            "is unknowable)",
            path=path,
        ) from None
    except _NonFiniteError:
        raise JsonError(
            "NaN and infinite numbers are not valid JSON; use a finite number",
            path=_find_non_finite(text, position),
        ) from None
    except RecursionError:
        raise JsonError(
            f"nested deeper than {model.MAX_NESTING} levels; flatten the document"
        ) from None
    except ValueError as error:  # only int() past sys.get_int_max_str_digits() raises this
        raise JsonError(
            f"a number too long to read ({_first_line(error)}); write it as a string"
        ) from None
    if "\\ud" in text or "\\uD" in text:
        found: list[str] = []
        value = _without_lone_surrogates(value, (), found)
        if notes is not None:
            notes.extend(found)
    if _may_nest_deeper(text, position, end):
        deep = too_deep(value)
        if deep is not None:
            raise JsonError(
                f"nested deeper than {model.MAX_NESTING} levels; flatten the document", path=deep
            )
    return value, end


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any, loc: tuple[str | int, ...], found: list[str]) -> Any:
    # json has already joined every valid pair, so any surrogate left is a lone one.
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        found.append(format_path(loc) if loc else "$")
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {
            _without_lone_surrogates(key, loc, found): _without_lone_surrogates(
                child, (*loc, key), found
            )
            for key, child in value.items()
        }
    if isinstance(value, list):
        return [
            _without_lone_surrogates(child, (*loc, index), found)
            for index, child in enumerate(value)
        ]
    return value


def _first_line(error: Exception) -> str:
    return str(error).split(";", 1)[0].split("\n", 1)[0]


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _may_nest_deeper(text: str, start: int, end: int) -> bool:
    # Counting brackets is C-fast and bounds the depth from above; only a document with more
    # than MAX_NESTING of them is walked for its real depth.
    return text.count("{", start, end) + text.count("[", start, end) > model.MAX_NESTING


def too_deep(value: Any, at: tuple[str | int, ...] = ()) -> str | None:
    """The path of the first value nested past ``MAX_NESTING``, walking without recursion.

    ``at`` is where ``value`` sits in its document, for a part checked on its own.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, at)]
    while stack:
        item, loc = stack.pop()
        if len(loc) > model.MAX_NESTING:
            return format_path(loc[: model.MAX_NESTING])
        if isinstance(item, dict):
            stack.extend((child, (*loc, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (*loc, index)) for index, child in enumerate(item))
    return None


# The slow paths below run only for a document already known to be bad, to say where.


class _Pairs(list[tuple[str, Any]]):
    """An object as parsed, duplicates kept."""


class _NonFiniteMark:
    pass


def _permissive(text: str, position: int) -> Any:
    decoder = json.JSONDecoder(object_pairs_hook=_Pairs, parse_constant=lambda _: _NonFiniteMark())
    return decoder.raw_decode(text, position)[0]


def _walk(
    value: Any, loc: tuple[str | int, ...] = ()
) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    yield value, loc
    if isinstance(value, _Pairs):
        for key, child in value:
            yield from _walk(child, (*loc, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _walk(child, (*loc, index))


def _find_duplicate(text: str, position: int) -> tuple[str, str]:
    for item, loc in _walk(_permissive(text, position)):
        if isinstance(item, _Pairs):
            seen: set[str] = set()
            for key, _ in item:
                if key in seen:
                    return format_path((*loc, key)), key
                seen.add(key)
    return "", "?"


def _find_non_finite(text: str, position: int) -> str:
    for item, loc in _walk(_permissive(text, position)):
        if isinstance(item, _NonFiniteMark) or (isinstance(item, float) and math.isinf(item)):
            return format_path(loc) if loc else ""
    return ""
