r"""JSON values and the records that carry them with their location.

A value is parsed by orjson: NaN, Infinity and invalid UTF-8 are refused, the last of two equal
keys wins, integers past 64 bits read as floats, as in ``JSON.parse``. Only a refused document is
parsed again, by ``json``, to say where the problem is; a lone surrogate reads as U+FFFD. A key
repeated in one object is found by :func:`repeated_key` (the value under its first occurrence
is never seen, so a reader says so).
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import decimal
import enum
import functools
import json
import math
import re
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson
from pydantic import ValidationError

from knowledgepulse._util.jsonpath import describe, format_path
from knowledgepulse.errors import Location, Problem

Loc = tuple[str | int, ...]
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
    lines: Mapping[Loc, int] = field(default_factory=dict)
    raw: bytes | None = None

    def locate(self, loc: Sequence[str | int]) -> Location:
        """The most precise location known for a path inside this record."""
        path = tuple(loc)
        while path and path not in self.lines:
            path = path[:-1]
        return self.location.at_line(self.lines[path]) if path else self.location

    def problem(self, loc: Sequence[str | int], message: str, *, warning: bool = False) -> Problem:
        """A problem at a path inside this record."""
        return Problem(self.locate(loc), format_path(loc) if loc else "", message, warning, self)

    def problems_from(self, error: ValidationError) -> list[Problem]:
        """Every error of a pydantic validation of this record's value, located by JSON path."""
        return [self.problem(tuple(item["loc"]), describe(item)) for item in error.errors()]


class JsonError(ValueError):
    """Raised when a document is not valid JSON for us; ``path`` or ``line`` say where, if known."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line


TOO_DEEP = f"nested deeper than {MAX_NESTING} levels; flatten the document"
NOT_FINITE = "NaN and infinite numbers are not valid JSON; use a finite number"
LONE_SURROGATE = "a \\ud800-\\udfff escape without its pair names no character; read as U+FFFD"
PAST_DOUBLE = "a number past a double; write it as a string"
NOT_A_KEY = "an object key that is not a string"
CYCLE = "a value that contains itself (a reference cycle), which JSON cannot hold; give a copy"
"""For a value made in Python (:func:`check_python`): a file cannot hold one."""


def not_a_key(key: Any) -> str:
    """The problem of an object's key made in Python that is no string (a DataFrame's column 0).

    Named, with the string to give instead, as a YAML key read as a number is.
    """
    return (
        f"{NOT_A_KEY}: the key {key!r} is a Python {type(key).__name__}; JSON keys are strings, "
        f"so give {str(key)!r} (a DataFrame's columns: frame.columns = frame.columns.map(str))"
    )


def no_json_value(value: Any) -> str:
    """The problem of a Python value JSON has no value for (a set, bytes, an object)."""
    return (
        f"a Python {type(value).__name__}, which JSON has no value for; give a string, a number, "
        "a list or an object"
    )


Warning = tuple[str, str]
"""What reading a document lost, and where: a JSON path (``""``: the whole) and a message."""


_LONG_INTEGER = re.compile(rb"[:\[,]\s*-?[0-9]{20,}\s*[,\]}]")
"""A JSON number of 20 digits or more, where an integer can pass 64 bits (an OTel SDK's 128-bit
trace id as a pydantic dump writes it): read exactly by ``json``, not rounded to a float."""


def loads(data: bytes, *, missing_cells: bool = True) -> tuple[Any, list[Warning]]:
    """One JSON document from UTF-8 bytes, and what reading it lost (a lone surrogate, a key).

    ``missing_cells``: a NaN as an object's own value is a dataset row's missing value, read as
    null (:func:`_missing_cell`); without, it is refused as it is deeper in (an evaluation case).
    Raises a ``JsonError`` (not one valid JSON document, or too deep) or ``UnicodeDecodeError``.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        value, lone_surrogates = _explain(data, error, missing_cells=missing_cells)
        warnings = [(path, LONE_SURROGATE) for path in lone_surrogates]
    else:
        check_depth(value, data)
        warnings = []
        if _LONG_INTEGER.search(data):  # orjson reads an integer past 64 bits as a float
            value = json.loads(data)
    key = repeated_key(data, value)
    if key is not None:
        warnings.append(("", repeated(key)))
    return value, warnings


def repeated_key(data: bytes | str, value: Any) -> str | None:
    r"""A key that appears twice in one object of ``data`` (the JSON text ``value`` was read from).

    ``None`` when none does. orjson keeps the last of two equal keys and cannot tell; a text
    without a repeated key has exactly the colons of ``value``'s own JSON (one a key, and those in
    strings, ``\u003a`` counted as one), so only a text with more is parsed again, by ``json``.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    with contextlib.suppress(orjson.JSONEncodeError):
        if colons(raw) == orjson.dumps(value).count(b":"):
            return None
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        counts = Counter(key for key, _ in items)
        if not found and len(counts) < len(items):
            found.append(next(key for key, count in counts.items() if count > 1))
        return dict(items)

    with contextlib.suppress(ValueError, RecursionError):
        json.loads(data, object_pairs_hook=pairs)
    return found[0] if found else None


def colons(data: bytes) -> int:
    r"""The colons of a JSON text, a ``\u003a`` escape counted as one (see :func:`repeated_key`)."""
    return data.count(b":") + data.count(b"\\u003a") + data.count(b"\\u003A")


REPEATED_ENDING = "; the last value is used, the first ignored"


def repeated(key: str) -> str:
    """The warning for a key repeated in one object (it ends with :data:`REPEATED_ENDING`)."""
    return f"the key {key!r} appears twice in one object{REPEATED_ENDING}"


def check_depth(value: Any, text: bytes | None = None) -> None:
    """A ``JsonError`` if a value nests past ``MAX_NESTING``, naming the path where it does.

    Only a value whose JSON text (``text``, else orjson's) opens more objects and lists is walked.
    """
    if text is None:
        with contextlib.suppress(orjson.JSONEncodeError):  # past orjson's limit: walked below
            text = orjson.dumps(value)
    if text is not None and text.count(b"{") + text.count(b"[") <= MAX_NESTING:
        return
    for item, loc in nodes(value):
        if len(loc) >= MAX_NESTING and isinstance(item, dict | list):
            raise JsonError(TOO_DEEP, path=format_path(loc))


def nodes(value: Any, lists: type | tuple[type, ...] = list) -> Iterator[tuple[Any, Loc]]:
    """Every value under ``value`` (itself first) with its path, in document order; no recursion.

    ``lists``: the types walked as lists (a value made in Python may hold tuples).
    """
    stack: list[tuple[Any, Loc]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        yield item, loc
        if isinstance(item, dict):
            stack.extend((child, (*loc, key)) for key, child in reversed(item.items()))
        elif isinstance(item, lists):
            held = cast("Sequence[Any]", item)
            stack.extend((held[at], (*loc, at)) for at in range(len(held) - 1, -1, -1))


def _explain(
    data: bytes, error: orjson.JSONDecodeError, *, missing_cells: bool
) -> tuple[Any, list[str]]:
    """Why orjson refused ``data``; or its value, when it held lone surrogates or a row's NaN."""
    text = data.decode("utf-8")
    syntax = JsonError(f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno)
    try:
        # json reads NaN, Infinity and 1e999 and keeps lone surrogates: each is found by path.
        value = json.loads(text, parse_float=_number)
    except json.JSONDecodeError:
        raise syntax from None
    except RecursionError:
        raise JsonError(TOO_DEEP) from None
    except ValueError as failure:  # int() past sys.get_int_max_str_digits()
        reason = str(failure).split(";", 1)[0].split("\n", 1)[0]
        raise JsonError(f"a number too long to read ({reason}); write it as a string") from None
    missing = missing_cells and isinstance(value, dict) and any(map(_missing, value.values()))
    value, found = checked(value, missing_cells=missing_cells)
    if not found and not missing:
        raise syntax  # a number orjson cannot hold, say
    return value, found


class _Overflowed(float):
    """A number written in digits that a float cannot hold (``1e999``): infinite, its text kept.

    Valid JSON, unlike ``NaN`` or ``Infinity``: its problem is its size, and is told so.
    """

    text: str


def _number(text: str) -> float:
    """A JSON number with a fraction or an exponent, as ``json`` reads it, an overflow marked."""
    number = float(text)
    if math.isfinite(number):
        return number
    overflowed = _Overflowed(number)
    overflowed.text = text
    return overflowed


def _missing_cell(item: Any, loc: Loc) -> bool:
    """Whether ``item`` at ``loc`` is a row's missing value (:func:`_missing`) in its own column.

    A DataFrame's rows hold NaN (or ``pd.NA``) for it, Parquet rows NaN, and Python's
    ``json.dumps`` writes it so in JSON Lines (``"reward": NaN``), where it is read as null (as
    pandas' ``to_json`` writes it): one dataset reads alike in any form, and a row written back
    to JSON Lines keeps its own bytes. NaN deeper in, or an infinite number, is still refused.
    """
    return len(loc) == 1 and isinstance(loc[0], str) and _missing(item)


def too_large(text: str) -> str:
    """The problem of a number too large for a float, showing it (its first digits if long)."""
    shown = text if len(text) <= 24 else f"{text[:20]}..."
    return f"a number too large for a float ({shown}); write it as a string or a smaller number"


def checked(value: Any, *, missing_cells: bool = True) -> tuple[Any, list[str]]:
    """A value ``json`` read, as orjson reads it, and the paths of its lone surrogates.

    Raises a ``JsonError`` at the path of what orjson refuses: a nesting too deep, NaN or an
    infinite number, an integer past a double. With ``missing_cells``, a NaN as a record's own
    column is read as null: a dataset row's missing value (:func:`_missing_cell`).
    """
    check_depth(value)  # first: json_value recurses
    for item, loc in nodes(value):
        if (
            isinstance(item, float)
            and not math.isfinite(item)
            and not (missing_cells and _missing_cell(item, loc))
        ):
            told = too_large(item.text) if isinstance(item, _Overflowed) else NOT_FINITE
            raise JsonError(told, path=format_path(loc) if loc else "")
    # In a string, or in a key of an object; json has joined every valid pair already.
    found = [
        format_path(loc)
        for item, loc in nodes(value)
        if any(
            isinstance(text, str) and SURROGATE.search(text)
            for text in (item if isinstance(item, dict) else [item])
        )
    ]
    return json_value(value, missing_cells=missing_cells), found


SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: Python text can hold one, UTF-8 and orjson cannot."""


def without_lone_surrogates(value: Any) -> tuple[Any, list[str]]:
    r"""``value`` with each lone surrogate of its texts (and keys) read as U+FFFD, and their paths.

    What a file's ``"\ud83d"`` reads as (:data:`LONE_SURROGATE`), for a value made in Python
    (``json.loads`` keeps one); the value itself when it holds none.
    """
    found: list[str] = []

    def fixed(item: Any, loc: Loc) -> Any:
        if isinstance(item, str):
            if SURROGATE.search(item) is None:
                return item
            found.append(format_path(loc))
            return SURROGATE.sub("\ufffd", item)
        if isinstance(item, dict):
            return {fixed(key, loc): fixed(inner, (*loc, key)) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [fixed(inner, (*loc, index)) for index, inner in enumerate(item)]
        return item

    result = fixed(value, ())
    return (result, list(dict.fromkeys(found))) if found else (value, [])


def leniently_read(data: bytes) -> Any:
    """What a refused line says, as Python's ``json`` reads it (NaN and infinities kept); else None.

    Only to name what a refused record is about (a case's id): the value is no JSON value for us.
    """
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # not JSON even so, or not UTF-8
        return None


def python_literal(text: str) -> Any:
    """A Python literal producers write for JSON (``str(dict)``, ``None``); else a ValueError."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as error:
        raise ValueError(f"not a Python literal: {error}") from None
    return json_value(value)


def parsed_json(text: str) -> Any:
    """JSON text as a JSON value: :func:`json_value` of ``json.loads(text)``, the same value.

    orjson reads it when it can (about ten times faster): it refuses what :func:`json_value`
    refuses or changes (NaN, an infinite number, a lone surrogate) and reads integers past 64
    bits as floats, as it does; a text it refuses, or that may nest past :data:`MAX_NESTING`,
    is read by ``json`` (which accepts NaN, so that :func:`json_value` says why it refuses it).
    A ``ValueError`` if the text is no JSON value for us.
    """
    if text.count("{") + text.count("[") <= MAX_NESTING:
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(text)
    return json_value(json.loads(text))


def json_value(value: Any, depth: int = 0, *, missing_cells: bool = False) -> Any:
    """``value`` as a JSON value: tuples as lists, a lone surrogate as U+FFFD.

    A ``ValueError`` if it holds what JSON cannot (a set, bytes, infinity) or nests too deep;
    with ``missing_cells``, an object's own NaN is read as null (a row's missing value, see
    :func:`_missing_cell`).
    """
    if depth > MAX_NESTING:
        raise ValueError(TOO_DEEP)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a finite number")
    if isinstance(value, int) and not -(2**63) <= value < 2**64:  # a float, as orjson reads it
        try:
            return float(value)
        except OverflowError:
            raise JsonError(PAST_DOUBLE) from None
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list | tuple):
        return [json_value(child, depth + 1) for child in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise ValueError(NOT_A_KEY)
        return {
            json_value(key): None
            if missing_cells and _missing(child)
            else json_value(child, depth + 1)
            for key, child in value.items()
        }
    raise ValueError(no_json_value(value))


_LEAVES = (
    str,
    bool,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    enum.Enum,
    uuid.UUID,
    type(None),
)
"""Values made in Python that stand for a JSON value (a datetime as its ISO text, as orjson and
pydantic write it; a duration, an Arrow ``duration`` column's or pandas' ``Timedelta``, as ISO
8601's ``PT1.5S``, as pydantic writes it), besides numbers."""


def check_python(value: Any, *, bytes_ok: bool = False, nan_ok: bool = False) -> None:
    """A ``JsonError`` at the path of what a value made in Python holds that a JSON file cannot.

    The checks of a file's values (:func:`loads`): NaN or an infinite number (a row's own column
    may be NaN: pandas' missing value, read as none), an integer past a double, a nesting past
    :data:`MAX_NESTING`; and what only Python can make: a reference cycle, a set, an object.
    Kept: datetimes, ``Decimal``, NumPy and pandas values, and with ``bytes_ok`` bytes (an Arrow
    binary column). With ``nan_ok`` (a table's row) a NaN or infinite float is kept at any
    depth: a float column's own value, or pandas' missing one in a list (a list of integers
    with a null is a float array with NaN), read as the Parquet file of the same table is.
    orjson vets a value at C speed; only one it refuses, or that may hold a NaN (written as
    ``null``) or nest too deep, is walked in Python to say where.
    """
    try:
        text = orjson.dumps(
            value,
            default=_LEAF_OF[bytes_ok],
            option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_PASSTHROUGH_DATACLASS,
        )
    except orjson.JSONEncodeError:
        text = None
    if text is None or text.count(b"{") + text.count(b"[") > MAX_NESTING:
        _walk_python(value, bytes_ok=bytes_ok, nan_ok=nan_ok)
    elif b"null" in text and not nan_ok:
        # orjson writes NaN as null: json's encoder (C too) refuses one, a row's missing cells
        # aside; 5 times faster than the walk, which runs only when it does.
        try:
            json.dumps(_present(value), allow_nan=False, check_circular=False, default=_as_listed)
        except ValueError:
            _walk_python(value, bytes_ok=bytes_ok, nan_ok=nan_ok)


def json_text(value: Any) -> str:
    """Compact JSON text, UTF-8 as is: orjson's, else the standard library's.

    orjson refuses what Python's own JSON reader gives: an integer past 64 bits.
    """
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def writable(value: Any) -> bool:
    """Whether a JSON writer can write ``value`` at all (a NaN as null, a set as text).

    Not a reference cycle, an integer past 64 bits or a nesting past orjson's limit.
    """
    try:
        orjson.dumps(
            value, default=str, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
        )
    except orjson.JSONEncodeError:
        return False
    return True


def _present(value: Any) -> Any:
    """A row without its missing cells (:func:`_missing`); any other value as it is."""
    if isinstance(value, dict) and any(map(_missing, value.values())):
        return {key: cell for key, cell in value.items() if not _missing(cell)}
    return value


def is_numpy(value: Any) -> bool:
    """Whether ``value`` is a NumPy scalar or array (one with ``tolist``), NumPy not imported."""
    return type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None))


def _as_listed(value: Any) -> Any:
    """The ``default`` of json, once orjson took a value: NumPy's as lists, others as null."""
    return value.tolist() if is_numpy(value) else None


def _leaf(value: Any, *, bytes_ok: bool) -> None:
    """The ``default`` of orjson: ``None`` for a value :func:`_problem` keeps, else a TypeError."""
    if _problem(value, bytes_ok=bytes_ok) is not None or isinstance(value, Mapping | list | tuple):
        raise TypeError
    # Its own text does not matter: orjson only tells whether the whole can be written.


_LEAF_OF = {ok: functools.partial(_leaf, bytes_ok=ok) for ok in (False, True)}


def _problem(value: Any, *, bytes_ok: bool) -> str | None:
    """What is wrong with one value as JSON (its children aside), or ``None``."""
    if isinstance(value, _LEAVES) or (bytes_ok and isinstance(value, bytes | bytearray)):
        return None
    if isinstance(value, int):
        return None if -(2**63) <= value < 2**64 or _fits(value) else PAST_DOUBLE
    if isinstance(value, float):
        return None if math.isfinite(value) else NOT_FINITE
    if isinstance(value, decimal.Decimal):
        return None if value.is_finite() else NOT_FINITE
    if type(value).__module__ == "numpy":
        # A NumPy scalar or array: a float one may be NaN, an object array holds anything.
        items = value.ravel().tolist() if hasattr(value, "ravel") else [value.item()]
        return next((told for item in items if (told := _problem(item, bytes_ok=bytes_ok))), None)
    if isinstance(value, dict | list | tuple):
        return None
    return no_json_value(value)


def _missing(value: Any) -> bool:
    """Whether a row's column holds pandas' missing value: NaN, ``pd.NA`` or ``NaT``."""
    return type(value).__name__ in ("NAType", "NaTType") or (
        isinstance(value, float) and math.isnan(value)
    )


def without_missing_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A row made in Python with its own missing cells (:func:`_missing`) as null.

    As a file's ``"reward": NaN`` is read (:func:`_missing_cell`): row dicts from
    ``DataFrame.to_dict`` read as their JSON Lines do, and are written so, a text column's
    NaN as null (not as a number that made the column JSON text in Parquet), a time
    column's ``NaT`` as null (not the text ``"NaT"``). The row itself when it has none.
    """
    if not any(map(_missing, row.values())):
        return row
    return {key: None if _missing(cell) else cell for key, cell in row.items()}


def _fits(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _walk_python(value: Any, *, bytes_ok: bool, nan_ok: bool = False) -> None:
    """:func:`check_python`'s walk: the first problem in document order, raised at its path."""
    for item, loc in nodes(value, lists=(list, tuple)):
        if isinstance(item, dict) and not all(isinstance(key, str) for key in item):
            key = next(key for key in item if not isinstance(key, str))
            raise JsonError(not_a_key(key), path=format_path(loc))
        if len(loc) >= MAX_NESTING and isinstance(item, dict | list | tuple):
            told, where = _cycle_or_deep(value, loc)
            raise JsonError(told, path=format_path(where))
        problem = _problem(item, bytes_ok=bytes_ok)
        if problem == NOT_FINITE and nan_ok:
            continue
        if problem is not None and not _missing_cell(item, loc):
            raise JsonError(problem, path=format_path(loc) if loc else "")


def _cycle_or_deep(value: Any, loc: Loc) -> tuple[str, Loc]:
    """Why a value nests past :data:`MAX_NESTING` at ``loc``, and where.

    Where a reference cycle first comes back to a value it is inside; else ``loc`` (too deep).
    """
    seen: set[int] = set()
    for depth, key in enumerate(loc):
        if id(value) in seen:
            return CYCLE, loc[:depth]
        seen.add(id(value))
        value = value[key]
    return TOO_DEEP, loc
