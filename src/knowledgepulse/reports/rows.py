"""Dataset rows written back in their own form, each with its ``kp_`` columns added.

Every original column is kept as it was. A JSON Lines row is its own line's bytes with the new
keys spliced in before the closing brace (a row that already has a ``kp_`` key is dumped again).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import functools
import json
import logging
import math
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import orjson
import pydantic_core

from knowledgepulse._util.jsonpath import describe_value, format_path
from knowledgepulse._util.text import ENCODING_ERRORS
from knowledgepulse.errors import Location, MissingDependencyError, OutputError
from knowledgepulse.records import Record
from knowledgepulse.records.arrow import ABSENT, NULL_MEANS
from knowledgepulse.records.readers import (
    MAGIC,
    import_pyarrow_parquet,
    is_parquet_name,
    saved_schema,
    starts_with,
)
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.dimensions import DIMENSION_NAMES

RowFormat = Literal["jsonl", "parquet"]
_log = logging.getLogger("knowledgepulse")
BATCH_ROWS = 1024

COLUMN_TYPES = {
    "kp_score": "float64",
    "kp_shareable": "bool",
    "kp_complexity": "float64",
    "kp_novelty": "float64",
    "kp_tool_diversity": "float64",
    "kp_outcome_confidence": "float64",
    "kp_nearest": "string",
    "kp_group": "int64",
    "kp_kept": "bool",
    "kp_error": "string",
    "kp_raw": "string",
}
"""Every ``kp_`` column with its Arrow type: those of a scored row, kp dedupe's, the error."""
DEDUPE_COLUMNS = ("kp_group", "kp_kept")
"""The columns ``kp dedupe`` adds: the row's near-duplicate group, and whether it is kept."""
ERROR_COLUMN = "kp_error"
"""Why a row gave no trace (``kp score --annotate`` keeps it, its other ``kp_`` columns empty);
empty on a row that was read."""
RAW_COLUMN = "kp_raw"
"""The text of a line that is no JSON object (not JSON at all, a list...), which no column of its
row can hold; empty on every other row."""
UNREAD_COLUMNS = (ERROR_COLUMN, RAW_COLUMN)
"""The columns of a row that gave no trace, which go wherever ``kp_error`` goes (empty on a
read row): why, and the text kp could not parse."""
SCORE_COLUMNS = tuple(
    name for name in COLUMN_TYPES if name not in (*DEDUPE_COLUMNS, *UNREAD_COLUMNS)
)
"""The columns every scored row gets, in this order."""
ANNOTATED_COLUMNS = (*SCORE_COLUMNS, *UNREAD_COLUMNS)
"""The columns ``kp score --annotate`` adds to every row, read or not, in this order."""


_DIMENSION_COLUMNS = tuple((name, f"kp_{name}") for name in DIMENSION_NAMES)
"""Each dimension with its column, in the formula's order (named once, not at every row)."""


def kp_columns(breakdown: ValueBreakdown) -> dict[str, Any]:
    """The ``kp_`` columns of a scored row."""
    dimensions = breakdown.dimensions
    return {
        "kp_score": round(breakdown.score, 4),
        "kp_shareable": breakdown.shareable,
        **{column: round(getattr(dimensions, name), 4) for name, column in _DIMENSION_COLUMNS},
        "kp_nearest": breakdown.novelty.nearest_id,
    }


def error_columns(
    message: str, added: Sequence[str] = ANNOTATED_COLUMNS, raw: str | None = None
) -> dict[str, Any]:
    """The ``kp_`` columns of a row that gave no trace: ``kp_error`` says why, the rest empty.

    ``raw``: the row's line as read, when it is no JSON object (:func:`unparsed_text`), in
    ``kp_raw``.
    """
    return {**dict.fromkeys(added), ERROR_COLUMN: message, RAW_COLUMN: raw}


def unparsed_text(record: Record) -> str | None:
    """The line of a record that is no JSON object, as read (its text is lost otherwise).

    ``None`` for an object (its columns are written back) and a record without its line's bytes
    (a JSON file's, a line too long to hold). Bytes that are not UTF-8 are written escaped.
    """
    if record.raw is None or isinstance(record.value, Mapping):
        return None
    return record.raw.decode("utf-8", ENCODING_ERRORS)


def row_format(output: Path | None, inputs: Sequence[str]) -> RowFormat:
    """The form rows go out in: ``-o``'s suffix, else the first input's (Parquet or JSONL)."""
    if output is not None:
        if is_parquet_name(output.name):
            return "parquet"
        if output.suffix.lower() in (".jsonl", ".ndjson", ".json", ".gz"):
            return "jsonl"
    return "parquet" if inputs and starts_with(inputs[0], MAGIC) else "jsonl"


def jsonl_row(row: Record, columns: Mapping[str, Any]) -> str:
    """A row as one JSON line with ``columns`` added; its own bytes kept when it has them."""
    value = row.value
    raw = row.raw.rstrip() if row.raw is not None else None
    if raw is not None and raw.endswith(b"}") and not any(key in value for key in columns):
        added = orjson.dumps(dict(columns), default=_json_default)[1:-1]
        joiner = b"," if value and added else b""
        return (raw[:-1] + joiner + added + b"}").decode("utf-8", "surrogateescape")
    merged = {**value, **columns}
    try:
        return orjson.dumps(merged, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:  # an integer past 64 bits, which a file (and kp) may hold
        return json.dumps(merged, default=_json_default, ensure_ascii=False, separators=(",", ":"))


def _inferred_schema(
    pa: Any, rows: list[tuple[Location, dict[str, Any]]]
) -> tuple[Any, tuple[str, ...], dict[str, str]]:
    """The Arrow schema of rows from JSON (``None`` for none), and its columns of empty objects.

    An integer from 2**63 to 2**64 - 1 makes its column unsigned; an object that is empty
    wherever it appears (a struct with no field, which Parquet cannot hold) becomes null. A
    column whose values no one Arrow type holds (a text in one row, an object in another; a
    message's ``content`` a text, then a list of blocks) is JSON text: the third item names
    each, with where its values first differ, for a warning.

    Raises:
        MissingDependencyError: such a column, where pyarrow has no JSON type (before 19).
    """
    if not rows:
        return None, (), {}
    fields, emptied, as_json = [], [], {}
    for name in dict.fromkeys(key for _, row in rows for key in row):
        values = [row.get(name) for _, row in rows]
        try:
            found = _column_type(pa, values)
        except (ArithmeticError, TypeError, ValueError) as error:
            as_json[name] = _unfit_column(pa, name, rows, error)
            found = _json_type(pa)
        else:
            # A type pyarrow found by changing values ([0.5, true] as numbers) holds them not.
            check = _misfit(found)
            for location, value in zip((at for at, _ in rows), values, strict=True):
                if value is not None and check is not None and (misfit := check(value)):
                    as_json[name] = f"{location}: {format_path((name, *misfit[0]))} is {misfit[1]}"
                    found = _json_type(pa)
                    break
        writable = _without_empty_structs(pa, found)
        fields.append(pa.field(name, writable))
        if writable != found:
            emptied.append(name)
    return pa.schema(fields), tuple(emptied), as_json


def _warn_as_json(as_json: Mapping[str, str]) -> None:
    for name, where in as_json.items():
        _log.warning(
            "warning: %s; so the column %r is written as JSON text (Parquet's JSON type, which "
            "datasets and kp read back as the values written, pyarrow as their JSON text), in "
            "every row",
            where,
            name,
        )


def _widens(pa: Any, schema: Any, field: Any) -> bool:
    """Whether ``schema``'s column of ``field``'s name widens to take ``field``'s values."""
    try:
        pa.unify_schemas(
            [pa.schema([schema.field(field.name)]), pa.schema([field])], promote_options="default"
        )
    except (TypeError, ValueError):  # ArrowTypeError, ArrowInvalid
        return False
    return True


def _column_type(pa: Any, values: list[Any]) -> Any:
    """The Arrow type of one column's values (pyarrow's error if none holds them all)."""
    try:
        return pa.array(values).type
    except OverflowError:  # beyond int64: uint64 holds it (or refuses a negative beside it)
        return pa.array(values, type=pa.uint64()).type


def _unfit_column(
    pa: Any, name: str, rows: list[tuple[Location, dict[str, Any]]], error: Exception
) -> str:
    """Where and how a column stops fitting one type: the row where it does, and the place.

    That row is the first that no type holds together with the rows before it, found by
    halving: a prefix with no type is followed by longer ones with none.
    """
    values = [row.get(name) for _, row in rows]
    fits, fails = 0, len(values)  # values[:fits] have a type; values[:fails] have none
    while fails - fits > 1:
        middle = (fits + fails) // 2
        try:
            _column_type(pa, values[:middle])
            fits = middle
        except (ArithmeticError, TypeError, ValueError):
            fails = middle
    location, value = rows[fails - 1][0], values[fails - 1]
    column = f"the column {name!r} holds {describe_value(value)} here"
    earlier = next((v for v in values[: fails - 1] if v is not None), None)
    clash = _first_clash(values[:fails])
    if clash is not None and clash[1]:  # inside the values: a message's content, a call
        index, path, value, (_, first, at, met) = clash
        location, there = rows[index][0], format_path((name, *path))
        before = f"at {format_path((name, *at))}" if first == index else "there in an earlier row"
        what = (
            f"{there} is {describe_value(value)} here and {describe_value(met)} {before}: a "
            "Parquet column holds one type at each place"
        )
    elif earlier is None:
        what = f"{column}, which no one Parquet type holds"
    else:
        what = (
            f"{column} and {describe_value(earlier)} in an earlier row: a Parquet column holds "
            "one type"
        )
    return f"{location}: {what} ({error})"


Loc = tuple[str | int, ...]
Clash = tuple[int, Loc, Any, tuple[str, int, Loc, Any]]


def _first_clash(values: list[Any]) -> Clash | None:
    """The first value met where an earlier one at its place was of another kind; ``None``: none.

    Its row index, path and value, and the earlier one's kind, row, path and value; the items
    of a list are one place, as a list column has one item type. pyarrow says only ``cannot
    mix list and non-list`` of a column of chat messages whose
    ``content`` is a text in one message and a list of blocks in another.
    """
    seen: dict[tuple[Any, ...], tuple[str, int, Loc, Any]] = {}

    def walk(index: int, value: Any, path: Loc, place: tuple[Any, ...]) -> Clash | None:
        if value is None:
            return None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        kind = "number" if number else type(value).__name__
        first = seen.setdefault(place, (kind, index, path, value))
        if first[0] != kind:
            return index, path, value, first
        inner: list[tuple[str | int, Any, Any]] = []
        if isinstance(value, dict):
            inner = [(key, key, item) for key, item in value.items()]
        elif isinstance(value, list):  # every item is one place: a list column has one type
            inner = [(number, None, item) for number, item in enumerate(value)]
        for key, where, item in inner:
            if found := walk(index, item, (*path, key), (*place, where)):
                return found
        return None

    for index, value in enumerate(values):
        if found := walk(index, value, (), ()):
            return found
    return None


def _without_empty_structs(pa: Any, found: Any) -> Any:
    """``found`` with each struct that has no field, wherever it is, made the null type."""
    if pa.types.is_struct(found):
        if found.num_fields == 0:
            return pa.null()
        return pa.struct(
            [field.with_type(_without_empty_structs(pa, field.type)) for field in found]
        )
    if pa.types.is_list(found) or pa.types.is_large_list(found):
        item = found.value_field.with_type(_without_empty_structs(pa, found.value_type))
        return pa.large_list(item) if pa.types.is_large_list(found) else pa.list_(item)
    return found


def _with_fields(pa: Any, kind: Any, fields: Callable[[list[Any]], list[Any]]) -> Any:
    """``kind`` with its child fields (a struct's, a list's item, a map's item) ``fields(...)``.

    The one walk of nested types that :func:`_renamed` and :func:`_storage` rebuild through;
    a type with no child fields is returned as it is.
    """
    types = pa.types
    if types.is_struct(kind):
        return pa.struct(fields(list(kind)))
    if types.is_fixed_size_list(kind):
        return pa.list_(fields([kind.value_field])[0], kind.list_size)
    if types.is_list(kind) or types.is_large_list(kind):
        make = pa.large_list if types.is_large_list(kind) else pa.list_
        return make(fields([kind.value_field])[0])
    if types.is_map(kind):  # a map's keys are values, cleaned as values; its items may be structs
        return pa.map_(kind.key_field, fields([kind.item_field])[0])
    return kind


def _renamed(
    pa: Any,
    kind: Any,
    names: Callable[[list[str]], list[str]],
    metadata: Callable[[Any], Any],
) -> Any:
    """``kind`` with every struct's fields in it renamed by ``names``, at any depth.

    Each nested field's key-value ``metadata`` is cleaned too, as a column's is.
    """

    def renamed(children: list[Any]) -> list[Any]:
        given = [field.name for field in children]
        new = names(given) if pa.types.is_struct(kind) else given
        return [
            field.with_name(name)
            .with_type(_renamed(pa, field.type, names, metadata))
            .with_metadata(metadata(field.metadata))
            for field, name in zip(children, new, strict=True)
        ]

    return _with_fields(pa, kind, renamed)


def _empty_objects_as_null(value: Any) -> Any:
    """``value`` with each empty object in it, at any depth, ``None``."""
    if isinstance(value, dict):
        return {key: _empty_objects_as_null(inner) for key, inner in value.items()} or None
    if isinstance(value, list):
        return [_empty_objects_as_null(inner) for inner in value]
    return value


TEXT_KEYS = ("@context", "@type", "id", "source_skill")
"""A trace document's keys that hold text: its own columns in a table of traces; every other
key is a JSON column."""


def _document_schema(pa: Any, rows: list[dict[str, Any]]) -> Any:
    """The schema of a table of trace documents: a column a top-level key, in first-seen order.

    A text key is a string column; any other (metadata, steps: objects and lists) is JSON text
    (Parquet's JSON type), which reads back as exactly the value written, where a struct column
    would give each step's tool input every key of every other one's (null) and refuse the
    inputs whose values differ in type. pyarrow reads JSON columns back as values, and so do
    ``datasets`` (its ``Json`` feature) and kp, which reads a null here as the key absent.
    """
    json_type = _json_type(pa)
    names = dict.fromkeys(key for row in rows for key in row)
    # A trace that lacks a key another has is null there: marked to read back without it.
    absent = {NULL_MEANS: ABSENT}
    return pa.schema(
        [
            pa.field(name, pa.string() if name in TEXT_KEYS else json_type, metadata=absent)
            for name in names
        ]
    )


def _json_type(pa: Any) -> Any:
    """Parquet's JSON type, which pyarrow has from 19 on."""
    if not hasattr(pa, "json_"):
        raise MissingDependencyError(
            "Parquet's JSON columns (a table of traces, a column of values of no one type) need "
            "pyarrow 19 or later; install it with: pip install 'pyarrow>=19' (or write JSON "
            "Lines: -o FILE.jsonl)"
        )
    return pa.json_()


def _json_text(key: str, value: Any) -> Any:
    """A document's value as its column holds it: text as it is, anything else as JSON text."""
    if key in TEXT_KEYS or value is None:
        return value
    return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()


Encode = Callable[[Any], Any]


def _encoder(kind: Any) -> Encode | None:
    """How a value read from a column of Arrow type ``kind`` goes back in; ``None``: as it is.

    The mirror of the reader's ``records.arrow`` decoder: JSON text (``datasets``' ``Json``
    feature, which it gives messages of differing shapes) was read as its value, at any depth,
    so it is written as JSON text again; pyarrow takes no Python value for the JSON type.
    """
    from pyarrow import types  # noqa: PLC0415 - pyarrow is loaded: Parquet is being written

    if getattr(kind, "extension_name", None) == "arrow.json":
        return _as_json_text
    if types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        item = _encoder(kind.value_type)
        if item is None:
            return None
        return lambda value: value if not isinstance(value, list) else [item(v) for v in value]
    if types.is_struct(kind):
        fields = {field.name: encode for field in kind if (encode := _encoder(field.type))}
        if not fields:
            return None
        return lambda value: (
            value
            if not isinstance(value, dict)
            else {key: fields[key](got) if key in fields else got for key, got in value.items()}
        )
    return None


def _storage(pa: Any, kind: Any) -> Any:
    """``kind`` with each JSON type at any depth as its text: what pyarrow builds from Python.

    pyarrow takes text for a JSON column, not for JSON inside a list or a struct; a table of
    these types is built, then cast to the schema's.
    """
    if getattr(kind, "extension_name", None) == "arrow.json":
        return kind.storage_type
    return _with_fields(
        pa, kind, lambda children: [f.with_type(_storage(pa, f.type)) for f in children]
    )


Misfit = Callable[[Any], "tuple[Loc, str] | None"]


def _misfit(kind: Any) -> Misfit | None:
    """What finds where a value does not fit Arrow type ``kind``; ``None``: every value does.

    Each finds the path in the value and what is there, or ``None``. It looks for what
    pyarrow would lose without a word: an object's key the struct has no field for (dropped),
    a fraction in an integer column (truncated), ``true`` in a number column (made 1.0); and a
    value where the first rows held only nulls (refused, but without naming the row). Any
    other misfit pyarrow refuses itself. A JSON column takes any value.
    """
    from pyarrow import types  # noqa: PLC0415 - pyarrow is loaded: Parquet is being written

    if getattr(kind, "extension_name", None) == "arrow.json":
        return None
    if types.is_null(kind):
        return lambda value: (
            None if value is None else ((), "a value where the first rows had none")
        )
    if types.is_integer(kind) or types.is_timestamp(kind) or types.is_duration(kind):
        return _fraction
    if types.is_floating(kind):
        return _boolean
    if types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        return functools.partial(_in_items, _misfit(kind.value_type))
    if types.is_struct(kind):
        names = frozenset(field.name for field in kind)
        checks = {field.name: check for field in kind if (check := _misfit(field.type))}
        # partial, not a lambda: no Python frame of its own at each of a row's values.
        return functools.partial(_in_fields, names, checks)
    if types.is_map(kind):
        check = _misfit(kind.item_type)
        return None if check is None else functools.partial(_in_map, check)
    return None


def _fraction(value: Any) -> tuple[Loc, str] | None:
    # NaN and infinity pyarrow refuses; a fraction it truncates.
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        return (), f"{value!r}, a fraction in a column of integers"
    return None


def _boolean(value: Any) -> tuple[Loc, str] | None:
    return ((), f"{str(value).lower()} in a column of numbers") if isinstance(value, bool) else None


def _in_items(item: Misfit | None, value: Any) -> tuple[Loc, str] | None:
    if isinstance(value, str | bytes):
        # pyarrow takes a text as a list of its characters ('ab' as ['a', 'b']), without a word.
        return (), f"{describe_value(value)} where the column has a list"
    if item is not None and isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            if found := item(inner):
                return (index, *found[0]), found[1]
    return None


def _in_fields(
    names: frozenset[str], checks: Mapping[str, Misfit], value: Any
) -> tuple[Loc, str] | None:
    # dict first: an ABC's isinstance is a Python call, at each of a row's objects.
    if not isinstance(value, dict) and not isinstance(value, Mapping):
        # pyarrow takes a list, or a text, as a struct's fields in order ([] and '' as all
        # null), without a word.
        return None if value is None else ((), f"{describe_value(value)} where it has objects")
    if not names.issuperset(value):
        key = next(key for key in value if key not in names)
        return (key,), "a field the column's type does not have"
    for key, check in checks.items():
        # A null fits every column (most of a message's fields are): no call to find so.
        if value.get(key) is not None and (found := check(value[key])):
            return (key, *found[0]), found[1]
    return None


def _in_map(check: Misfit, value: Any) -> tuple[Loc, str] | None:
    # pyarrow takes a map as a dict or as (key, item) pairs, which is how it reads one back.
    pairs = list(value.items()) if isinstance(value, Mapping) else value
    for pair in pairs if isinstance(pairs, list | tuple) else ():
        if isinstance(pair, list | tuple) and len(pair) == 2 and (found := check(pair[1])):
            return (str(pair[0]), *found[0]), found[1]
    return None


def _refusal(pa: Any, kind: Any, value: Any) -> tuple[Loc, Any, Any, Exception] | None:
    """Where in ``value`` pyarrow refuses Arrow type ``kind``; ``None``: the value fits.

    The deepest field or item it can name, the value and the type there, and pyarrow's error.
    """
    try:
        pa.array([value], type=kind)
    except (ArithmeticError, TypeError, ValueError) as error:
        inner: list[tuple[str | int, Any, Any]] = []
        if pa.types.is_struct(kind) and isinstance(value, Mapping):
            inner = [(f.name, f.type, value[f.name]) for f in kind if f.name in value]
        elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and isinstance(
            value, list | tuple
        ):
            inner = [(index, kind.value_type, item) for index, item in enumerate(value)]
        for key, inner_kind, item in inner:
            if found := _refusal(pa, inner_kind, item):
                return (key, *found[0]), *found[1:]
        return (), value, kind, error
    return None


def _as_json_text(value: Any) -> Any:
    # A text too: a JSON column holds JSON ("hi" is '"hi"'), which every reader of it parses.
    if value is None:
        return value
    try:
        return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:  # an integer past 64 bits, which a file (and kp) may hold
        return json.dumps(value, default=_json_default, ensure_ascii=False, separators=(",", ":"))


def _json_default(value: Any) -> Any:
    # What a Parquet row may hold and JSON has no word for (a Decimal is written as text).
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    # A subclass orjson does not take (pandas' Timestamp, a nanosecond column's): RFC 3339, as
    # orjson writes a datetime, rather than str's space for the T.
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):  # a duration column's: ISO 8601 (PT1.5S), as pydantic
        return pydantic_core.to_jsonable_python(value)  # writes it; str's 0:00:01.5 is read by none
    return str(value)


_WRITE_JSONL = "write JSON Lines instead (-o FILE.jsonl), which keeps every row as it is"
_TYPES_FIXED = (
    "a Parquet column keeps, at each place in its values, the type of the first values written "
    "there (or of its Parquet files)"
)
"""Why a value of another type stops a Parquet output, where a new column or key widens it."""


class RowWriter:
    """Rows out with their ``kp_`` columns, in JSON Lines (a text stream) or Parquet (binary).

    Parquet is written a batch at a time, its columns first those of the first batch: those of
    its rows' Parquet and Arrow files (a ``save_to_disk`` folder's: their types and metadata,
    ``datasets``' features among them), and of its other rows' values, unified; the ``kp_``
    columns follow (replacing any of the same name). JSON columns at any depth are written
    as the JSON text they were read from. A later row with a column outside them, or an
    object's key (at any depth) their struct lacks, widens the schema: the file so far is
    written again with that column or key null in its rows (a ``stream`` that can be read back
    and sought: a file; :meth:`_widen`). A column whose values share no one type (a message's
    ``content`` a text in one row and a list of blocks in another; a fraction, or a text, in a
    column of integers) is written as JSON text (Parquet's JSON type), in every row, with a
    warning; where the file cannot be written again (a pipe), such a later value stops the run
    with an ``OutputError`` rather than losing it. ``fields`` (given the pyarrow
    module) fixes the columns before the ``kp_`` ones instead (training rows); ``schema``
    (a ``pyarrow.Schema``) is that of the table in memory the rows came from, a Dataset's. ``clean``
    (``--redact``'s, as a row's) cleans the key-value metadata the schema keeps from the rows'
    Parquet files, its own and each column's: a producer's notes are text as any other.
    :meth:`write_document` writes trace documents instead: a table of traces, without the
    ``kp_`` columns (:func:`_document_schema`). ``inputs``: the files the rows are read from,
    whose columns (``schema``'s, for a table in memory) a Parquet output of no row keeps.
    """

    def __init__(
        self,
        fmt: RowFormat,
        stream: IO[str] | IO[bytes],
        added: tuple[str, ...] = SCORE_COLUMNS,
        fields: Callable[[Any], list[Any]] | None = None,
        clean: Callable[[Record], Record] | None = None,
        *,
        schema: Any = None,
        inputs: Sequence[str | Path] = (),
    ) -> None:
        self._stream: Any = stream
        self._parquet = fmt == "parquet"
        self._given = schema  # the in-memory table's the rows came from (a Dataset's)
        self._inputs = tuple(str(name) for name in inputs)
        self._added = added
        self._fields = fields
        self._clean = clean
        self._pending: list[tuple[Location, dict[str, Any]]] = []
        self._schema: Any = None
        self._emptied: tuple[str, ...] = ()  # columns where an empty object is written as null
        self._encoders: dict[str, Encode] = {}  # the columns of JSON text, at any depth
        self._misfits: dict[str, Misfit] = {}  # the columns whose values pyarrow may cut
        self._writer: Any = None
        self._documents: bool | None = None  # trace documents, rows, or nothing written yet
        if self._parquet:
            self._pq = import_pyarrow_parquet()
            import pyarrow  # noqa: PLC0415 - installed with pyarrow.parquet, checked above

            self._pa = pyarrow

    def write(self, row: Record, columns: Mapping[str, Any]) -> None:
        """Write one row with its ``kp_`` columns (Parquet: once a batch is full)."""
        if not self._parquet:
            self._stream.write(jsonl_row(row, columns) + "\n")
            return
        self._add(row.location, {**row.value, **columns}, documents=False)

    def write_document(self, location: Location, document: Mapping[str, Any]) -> None:
        """Write one trace document as a row of a table of traces (Parquet only).

        Raises:
            OutputError: dataset rows were written to the same file.
        """
        self._add(location, dict(document), documents=True)

    def _add(self, location: Location, row: dict[str, Any], *, documents: bool) -> None:
        if self._documents is None:
            self._documents = documents
        elif self._documents != documents:
            raise OutputError(
                f"{location}: trace documents and dataset rows do not go in one Parquet file; "
                "write the traces and the rows to separate files, or JSON Lines (-o FILE.jsonl)"
            )
        self._pending.append((location, row))
        if len(self._pending) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        try:
            table = self._table()
        except BaseException:
            self.discard()
            raise
        self._writer.write_table(table)
        self._pending.clear()

    def _table(self) -> Any:
        """The pending rows as a table of the output's schema (fixed by the first batch)."""
        pa = self._pa
        storage = None  # the types the rows are built as, once the schema is fixed
        try:
            if self._writer is None:
                schema, self._emptied = self._first_schema()
                self._use(schema)
                self._writer = self._pq.ParquetWriter(self._stream, self._schema)
            try:
                rows = self._fitted_rows()
            except OutputError as refusal:
                self._widen(refusal)
                rows = self._fitted_rows()
            storage = self._storage()
            try:
                table = pa.Table.from_pylist(rows, schema=storage)
            except (ArithmeticError, TypeError, ValueError) as error:
                # A value pyarrow refuses for its column's type (a text where it has numbers).
                self._widen(OutputError(self._refused(storage) or str(error)))
                rows, storage = self._fitted_rows(), self._storage()
                table = pa.Table.from_pylist(rows, schema=storage)
            return self._typed(table, storage)
        # pyarrow's ArrowInvalid and ArrowTypeError are ValueError and TypeError; an integer
        # out of a column's range is an OverflowError.
        except (ArithmeticError, TypeError, ValueError) as error:
            where = self._refused(storage) if storage is not None else None
            raise OutputError(
                where
                or f"the rows do not fit one Parquet schema ({error}); write JSON Lines "
                "instead (-o FILE.jsonl)"
            ) from None

    def _storage(self) -> Any:
        """The schema the rows are built as: the output's, with its JSON types as their text."""
        if not self._encoders:
            return self._schema
        return self._pa.schema(
            [field.with_type(_storage(self._pa, field.type)) for field in self._schema],
            metadata=self._schema.metadata,
        )

    def _typed(self, table: Any, storage: Any) -> Any:
        """``table``, built as ``storage``, in the output's types: its JSON as JSON columns.

        Column by column, only those whose type differs: pyarrow 26's cast of a list of nulls
        (at any depth) to the same type gives an invalid array.
        """
        if storage is self._schema:
            return table
        columns = [
            column if built.type == field.type else column.cast(field.type)
            for column, built, field in zip(table.columns, storage, self._schema, strict=True)
        ]
        return self._pa.Table.from_arrays(columns, schema=self._schema)

    def _use(self, schema: Any) -> None:
        """Write under ``schema`` from now on, with its JSON columns' encoders and its checks."""
        self._schema = schema
        if not self._documents:
            self._encoders = {
                field.name: encode for field in schema if (encode := _encoder(field.type))
            }
            self._misfits = {
                field.name: misfit for field in schema if (misfit := _misfit(field.type))
            }

    def _widen(self, refusal: OutputError) -> None:
        """Widen the output's schema to take the pending rows, or raise ``refusal``.

        A column or an object's key (at any depth) that no row before had is added, null in
        those rows, and a type where they held only nulls is taken: pyarrow's unification, with
        its default options, allows nothing else. A column whose values no longer share one
        type (a list where it held text, a text or a fraction where it held integers) is made
        JSON text, as a first batch of no one type is, with a warning naming the place. The new
        columns go before the ``kp_`` ones. The row groups written are then written again
        (:meth:`_rewrite`): the cost of a widening, which a batch that fits never pays.

        Raises:
            OutputError: ``refusal``, when the columns are fixed, or when the output cannot be
                read back (a pipe, a device).
        """
        pa, stream = self._pa, self._stream
        rereadable = getattr(stream, "readable", None) and stream.readable() and stream.seekable()
        if self._fields is not None or not rereadable:
            raise refusal
        unfit = self._unfit_columns()
        names = dict.fromkeys([*self._widening(), *unfit])
        rows = [(at, {key: row[key] for key in names if key in row}) for at, row in self._pending]
        emptied: tuple[str, ...] = ()
        as_json: dict[str, str] = {}
        if self._documents:
            batch = _document_schema(pa, [row for _, row in rows])
        else:
            batch, emptied, as_json = _inferred_schema(pa, rows)
        # A column the batch gives a type the output's does not widen to: JSON text.
        for field in batch:
            if field.name in self._schema.names and not _widens(pa, self._schema, field):
                as_json.setdefault(field.name, unfit.get(field.name, str(refusal)))
        base = self._schema
        if as_json:
            json_type = _json_type(pa)
            fields = [f.with_type(json_type) if f.name in as_json else f for f in base]
            base = pa.schema(fields, metadata=base.metadata)
            made = [name for name in as_json if name in base.names]  # JSON in the output now
            batch = pa.schema([field for field in batch if field.name not in made])
        merged = pa.unify_schemas([base, batch], promote_options="default")
        fields = sorted(merged, key=lambda field: field.name in self._added)  # a stable sort
        schema = pa.schema(fields, metadata=merged.metadata)
        # A column of nulls that now has empty objects keeps its type: they are written null.
        nulled = tuple(dict.fromkeys((*self._emptied, *emptied)))
        if schema.equals(self._schema, check_metadata=True):
            if nulled == self._emptied:
                raise refusal
        else:
            changed = tuple(name for name in as_json if name in self._schema.names)
            self._use(schema)
            self._rewrite(as_json=changed)
            _warn_as_json(as_json)
        self._emptied = nulled

    def _unfit_columns(self) -> dict[str, str]:
        """The columns where a pending value does not fit the schema, each with its first place."""
        storage = self._storage()
        unfit: dict[str, str] = {}
        for location, row in self._pending:
            for field in storage:
                value = row.get(field.name)
                if value is None or field.name in unfit or field.name in self._added:
                    continue
                # What pyarrow refuses first (the text where integers are), then what it would
                # take and change (a key beside it that the struct lacks, a fraction).
                misfit = self._misfits.get(field.name)
                if refused := _refusal(self._pa, field.type, self._encoded(field.name, value)):
                    path, got, kind, _ = refused
                    unfit[field.name] = (
                        f"{location}: {format_path((field.name, *path))} is "
                        f"{describe_value(got)}, where the earlier rows' {kind} is"
                    )
                elif misfit is not None and (found := misfit(value)):
                    path, what = found
                    unfit[field.name] = f"{location}: {format_path((field.name, *path))} is {what}"
        return unfit

    def _encoded(self, name: str, value: Any) -> Any:
        """``value`` of column ``name`` as the rows are built: its JSON as text."""
        encode = self._encoders.get(name)
        return value if encode is None else encode(value)

    def _widening(self) -> list[str]:
        """The pending rows' columns that the schema lacks, or whose values do not fit it."""
        names, found = set(self._schema.names), dict[str, None]()
        for _, row in self._pending:
            for name, value in row.items():
                misfit = self._misfits.get(name)
                if name not in names:
                    found[name] = None
                elif misfit is not None and value is not None:
                    fitted = _empty_objects_as_null(value) if name in self._emptied else value
                    if fitted is not None and misfit(fitted):
                        found[name] = None
        return list(found)

    def _rewrite(self, as_json: tuple[str, ...] = ()) -> None:
        """The row groups written so far written again under the schema (new fields null).

        A Parquet file's row groups share its one schema. The file so far (its footer written
        to close it) is copied aside and read back a row group at a time, so memory holds one.
        Each is built again from its Python values, as it was first: pyarrow 26's cast of a list
        of nulls (at any depth) to the same type gives an invalid array.
        """
        pa, pq, stream = self._pa, self._pq, self._stream
        self._writer.close()
        storage = self._storage()
        with tempfile.TemporaryFile() as aside:
            stream.seek(0)
            shutil.copyfileobj(stream, aside)
            stream.seek(0)
            stream.truncate()
            self._writer = pq.ParquetWriter(stream, self._schema)
            written = pq.ParquetFile(aside)
            for index in range(written.num_row_groups):
                rows = written.read_row_group(index).to_pylist()
                for row in rows:  # the columns now JSON text: their values as it
                    for name in as_json:
                        row[name] = _as_json_text(row[name])
                table = pa.Table.from_pylist(rows, schema=storage)
                self._writer.write_table(self._typed(table, storage))

    def _first_schema(self) -> tuple[Any, tuple[str, ...]]:
        """The output's schema, from the first batch; the columns whose empty objects are null."""
        pa = self._pa
        if self._documents:
            return _document_schema(pa, [row for _, row in self._pending]), ()
        if self._fields is not None:
            return self._fixed_schema(), ()
        by_file: dict[str, list[tuple[Location, dict[str, Any]]]] = {}
        schemas, others = [], []
        for location, row in self._pending:
            if location.in_memory:  # its name is no file's: a file of that name is not its
                others.append((location, row))
            else:
                by_file.setdefault(location.file, []).append((location, row))
        for name, rows in by_file.items():
            schemas.append(saved_schema(name))
            if schemas[-1] is None:
                others += rows
        # Rows of a table given in memory have its types, not those of their values.
        inferred, emptied, as_json = (
            (self._given, (), {}) if self._given else _inferred_schema(pa, others)
        )
        _warn_as_json(as_json)
        found = [schema for schema in [*schemas, inferred] if schema is not None]
        base = pa.unify_schemas(found)  # every file's columns; a name typed two ways: an error
        kept = [field for field in base if field.name not in self._added]
        schema = pa.schema(kept + self._added_fields(), metadata=found[0].metadata)
        return schema if self._clean is None else self._cleaned(schema), emptied

    def _empty_schema(self) -> Any:
        """The schema of an output of no row: its rows' columns where known, then ``kp_``'s.

        A set no row went to (a split's empty validation set, ``kp select`` choosing none) is
        read with the others: written with the ``kp_`` columns alone, it had none of the
        dataset's, and loading the sets together failed on their differing schemas. The
        columns are those of the table in memory the rows came from, else of the input files
        (Parquet, Arrow), as a batch of their rows would have had; none known (JSON rows,
        training rows' fixed columns): the ``kp_`` columns alone, as before.
        """
        known = self._given
        if known is None and self._fields is None:
            found = [schema for schema in map(saved_schema, self._inputs) if schema]
            try:
                known = self._pa.unify_schemas(found) if found else None
            except (TypeError, ValueError):  # a column typed two ways: no one schema
                known = None
        if known is None or self._fields is not None:
            return self._fixed_schema()
        kept = [field for field in known if field.name not in self._added]
        schema = self._pa.schema(kept + self._added_fields(), metadata=known.metadata)
        where = Location(self._inputs[0] if self._inputs else "rows")
        return schema if self._clean is None else self._cleaned(schema, where)

    def _fixed_schema(self) -> Any:
        """The columns ``fields`` fixes (if any), then the ``kp_`` ones."""
        fixed = self._fields(self._pa) if self._fields is not None else []
        return self._pa.schema(fixed + self._added_fields())

    def _added_fields(self) -> list[Any]:
        return [self._pa.field(name, COLUMN_TYPES[name]) for name in self._added]

    def _cleaned(self, schema: Any, location: Location | None = None) -> Any:
        """``schema`` with its metadata, its fields' and its columns' names cleaned by ``clean``.

        ``location``: where the problems of cleaning are told (default: the first row's).
        """
        location = self._pending[0][0] if location is None else location
        clean = self._clean
        if clean is None:
            return schema

        def cleaned(metadata: Mapping[bytes, bytes] | None) -> Any:
            if not metadata:
                return metadata
            named = {
                key.decode("utf-8", "surrogateescape"): value for key, value in metadata.items()
            }
            value = clean(Record(location, named)).value
            return {key.encode("utf-8", "surrogateescape"): item for key, item in value.items()}

        def names(given: list[str]) -> list[str]:
            found = list(clean(Record(location, dict.fromkeys(given))).value)
            # Two names cleaned to one: kept, so the rows say which is outside (OutputError).
            return found if len(found) == len(given) else given

        # A column's name is a row's key, which the rows lose their secrets in too ({"sk-...":
        # ...}), a struct's field a nested one's: the schema names what the cleaned rows have.
        fields = [
            field.with_name(name)
            .with_type(_renamed(self._pa, field.type, names, cleaned))
            .with_metadata(cleaned(field.metadata))
            for field, name in zip(schema, names(schema.names), strict=True)
        ]
        return self._pa.schema(fields, metadata=cleaned(schema.metadata))

    def _fitted_rows(self) -> list[dict[str, Any]]:
        """The pending rows as the schema takes them; OutputError for a column outside it."""
        names = set(self._schema.names)
        rows = []
        for location, row in self._pending:
            if not names.issuperset(row):
                outside = [key for key in row if key not in names]
                raise OutputError(
                    f"{location}: the column {outside[0]!r} is not in the Parquet output, whose "
                    f"columns are those of the first {BATCH_ROWS:,} rows (and their Parquet "
                    "files); write JSON Lines instead (-o FILE.jsonl), which keeps every row's "
                    "columns"
                )
            # A copy: the rows may be fitted again, to a schema their misfits changed.
            fitted = dict(row) if self._emptied or self._encoders else row
            for name in self._emptied:
                if name in fitted:
                    fitted[name] = _empty_objects_as_null(fitted[name])
            self._check(location, fitted)
            if self._documents:
                rows.append({key: _json_text(key, value) for key, value in fitted.items()})
                continue
            for name, encode in self._encoders.items():
                if name in fitted:
                    fitted[name] = encode(fitted[name])
            rows.append(fitted)
        return rows

    def _check(self, location: Location, row: Mapping[str, Any]) -> None:
        """Refuse a value of ``row`` that pyarrow would drop or cut without a word.

        Raises:
            OutputError: a struct's key the schema lacks, a fraction in an integer column...
        """
        for name, misfit in self._misfits.items():
            if row.get(name) is not None and (found := misfit(row[name])):
                path, what = found
                raise OutputError(
                    f"{location}: {format_path((name, *path))} is {what}, so the Parquet output "
                    f"cannot hold it: {_TYPES_FIXED}; {_WRITE_JSONL}"
                )

    def _refused(self, schema: Any) -> str | None:
        """The message of the first pending value pyarrow refuses for its column's type.

        pyarrow's own error names neither the row nor the column (``Could not convert 'text'
        with type str: tried to convert to int64``): a later batch's text in a column the
        first made integers, in a dataset of thousands of rows, would be found by hand.
        """
        for location, row in self._pending:
            for field in schema:
                if field.name in row and (found := _refusal(self._pa, field.type, row[field.name])):
                    path, value, kind, error = found
                    return (
                        f"{location}: {format_path((field.name, *path))} is "
                        f"{describe_value(value)}, which the Parquet "
                        f"output's {kind} there cannot hold ({error}): {_TYPES_FIXED}; "
                        f"{_WRITE_JSONL}"
                    )
        return None

    def close(self) -> None:
        """Finish the output: Parquet's last batch and footer."""
        if not self._parquet:
            return
        self._flush()
        if self._writer is not None:
            self._writer.close()
        else:  # no row at all: an empty file of the rows' columns (:meth:`_empty_schema`)
            self._pq.ParquetWriter(self._stream, self._empty_schema()).close()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()

    def discard(self) -> None:
        """After a failure: let Parquet's writer go now, while its stream is still open."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError, ValueError):
                writer.close()
