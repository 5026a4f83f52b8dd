"""Arrow data as rows: Arrow IPC files and a Hugging Face ``save_to_disk`` folder of them.

``datasets.Dataset.save_to_disk`` writes a folder of ``data-NNNNN-of-NNNNN.arrow`` files (Arrow
IPC streams) listed in its ``state.json``; pyarrow reads them, so ``datasets`` is not needed.
A column ``datasets`` could give no one Arrow type is stored as JSON text (Arrow's ``arrow.json``
type): its values are read as the JSON they hold, as ``datasets`` itself reads them. A timestamp
without a time zone (what Arrow's JSON reader, and so ``datasets.Dataset.from_json``, makes of
``2024-11-23T01:23:33Z``) is read as UTC, as the chat readers read a time column.

Arrow data held by another library (a Polars DataFrame, a DuckDB relation, a pyarrow
``RecordBatchReader``) is read through the Arrow PyCapsule interface (``__arrow_c_stream__``),
one definition for all of them, none imported: :func:`gives_arrow`, :func:`arrow_stream`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from knowledgepulse.errors import (
    InputFileError,
    Location,
    MissingDependencyError,
    Setting,
    SettingTypeError,
    import_optional,
    install_hint,
)

STREAM_MAGIC = b"\xff\xff\xff\xff"
"""The bytes an Arrow IPC stream starts with (a continuation marker): what ``datasets`` writes."""
FILE_MAGIC = b"ARROW1"
"""The bytes an Arrow IPC file (Feather v2) starts with."""
_STATE = "state.json"
_DICT_STATE = "dataset_dict.json"


def is_arrow_name(name: str) -> bool:
    """Whether a file name says Arrow IPC."""
    return Path(name).suffix.lower() in (".arrow", ".feather")


def is_dataset_folder(folder: Path) -> bool:
    """Whether ``folder`` is what ``save_to_disk`` wrote: a ``Dataset``'s or a ``DatasetDict``'s."""
    return (folder / _STATE).is_file() or (folder / _DICT_STATE).is_file()


def dataset_files(folder: Path) -> list[Path]:
    """The data files of a ``save_to_disk`` folder, in its order; InputFileError for another folder.

    A ``DatasetDict``'s folder (``dataset_dict.json``, a folder per split) is refused with the
    split folders to pass instead.
    """
    name = str(folder)
    if (folder / _DICT_STATE).is_file():
        splits = sorted(child.name for child in folder.iterdir() if (child / _STATE).is_file())
        example = f"{folder / splits[0]}" if splits else f"{folder}/SPLIT"
        raise InputFileError(
            f"{Location(name)}: a Hugging Face DatasetDict folder (splits: "
            f"{', '.join(splits) or 'none'}); "
            f"pass one split's folder, e.g. {example}"
        )
    state = folder / _STATE
    if not state.is_file():
        raise InputFileError(f"{Location(name)}: is a directory; pass the files inside it")
    try:
        listed = json.loads(state.read_bytes())["_data_files"]
        files = [folder / entry["filename"] for entry in listed]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputFileError(
            f"{state}: not the state.json save_to_disk writes ({type(error).__name__}: {error}); "
            "pass the folder's .arrow files instead"
        ) from None
    # A name is joined to the folder: "../x" or "/x" would read a file outside it (a service
    # reading uploaded folders would show another user's data, or its own files).
    inside = folder.resolve()
    outside = [
        str(entry["filename"])
        for entry, file in zip(listed, files, strict=True)
        if not _resolved(file).is_relative_to(inside)
    ]
    if outside:
        raise InputFileError(
            f"{state}: lists data files outside the folder: {', '.join(map(repr, outside))}; "
            "save_to_disk lists the file names inside it: write those, or pass the .arrow files"
        )
    missing = [str(file) for file in files if not file.is_file()]
    if missing:
        raise InputFileError(f"{state}: lists data files the folder lacks: {', '.join(missing)}")
    return files


def _resolved(path: Path) -> Path:
    """``path`` with its links followed; as it is if they loop (it is then no file: "lacks")."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # a symlink loop: RuntimeError before Python 3.13
        return path.absolute()


def file_schema(path: str | Path) -> Any | None:
    """The schema of an Arrow IPC file or stream, or of a ``save_to_disk`` folder's first file.

    ``None`` for anything else, or what pyarrow cannot read (its reader says why). The schema
    keeps ``datasets``' metadata (its ``Features``: a ``ClassLabel``, an ``Image``), so rows
    written back to Parquet are typed as they came, not as their Python values would be.
    """
    folder = Path(path)
    try:
        if folder.is_dir():
            files = dataset_files(folder)
            return file_schema(files[0]) if files else None
        with folder.open("rb") as file:
            head = file.read(len(FILE_MAGIC))
        if not head.startswith((STREAM_MAGIC, FILE_MAGIC)):
            return None
        import pyarrow as pa  # noqa: PLC0415 - read when Arrow rows were, so installed

        with pa.memory_map(str(folder)) as data:
            opened = pa.ipc.open_file if head == FILE_MAGIC else pa.ipc.open_stream
            return opened(data).schema
    except (InputFileError, OSError, ValueError, ImportError):
        return None


def gives_arrow(data: Any) -> bool:
    """Whether ``data`` exports Arrow data by the PyCapsule interface (``__arrow_c_stream__``).

    Polars' and pandas' DataFrames, DuckDB relations and pyarrow's tables, batches and readers
    do; told by the method, so that none of those libraries is imported to ask.
    """
    return hasattr(data, "__arrow_c_stream__")


def arrow_stream(data: Any, name: str = "data") -> Any:
    """The ``pyarrow.RecordBatchReader`` of ``data``'s Arrow data (:func:`gives_arrow`).

    One export, read once, a batch at a time: a reader gives its rows once, and a query (a
    DuckDB relation) runs again at each export, its rows perhaps in another order.

    Raises:
        MissingDependencyError: pyarrow is not installed (Polars and DuckDB work without it).
        SettingTypeError: ``data`` (the parameter ``name``) is a column, not rows: a Polars
            ``Series``, a ``ChunkedArray`` of numbers.
    """
    pa = import_optional(
        "pyarrow",
        lambda error: MissingDependencyError(
            f"reading a {type(data).__name__} (Arrow data) needs pyarrow, which is not "
            f"installed ({error}); install it with: {install_hint('parquet')}"
        ),
    )
    try:
        return pa.RecordBatchReader.from_stream(data)
    except pa.ArrowInvalid as error:  # a column's stream: its type is no struct of fields
        raise SettingTypeError(
            Setting(name),
            f" (a {type(data).__name__}) is one column of Arrow data, not rows ({error}): give "
            "a table, each column a field of the rows",
        ) from None


def without_views(table: Any) -> Any:
    """A pyarrow ``Table`` with its view columns (``string_view``, at any depth) as plain ones.

    Polars and DuckDB export text as ``string_view``, of which pyarrow cannot take rows
    (``take`` has no kernel for it); its large type holds the same values, as Polars'
    ``to_arrow()`` gives them. A table without a view column is the same table.
    """
    plain = _plain_type(table.schema)
    return table if plain is None else table.cast(plain)


def _plain_type(kind: Any) -> Any:
    """``kind`` (a schema or a type) with each view type its large type; ``None``: no view."""
    import pyarrow as pa  # noqa: PLC0415 - loaded already: a table is in hand

    if isinstance(kind, pa.Schema):
        fields = [_plain_type(field.type) for field in kind]
        if all(field is None for field in fields):
            return None
        return pa.schema(
            [f if t is None else f.with_type(t) for f, t in zip(kind, fields, strict=True)],
            metadata=kind.metadata,
        )
    if pa.types.is_string_view(kind):
        return pa.large_string()
    if pa.types.is_binary_view(kind):
        return pa.large_binary()
    if pa.types.is_struct(kind):
        inner = [_plain_type(field.type) for field in kind]
        if all(t is None for t in inner):
            return None
        return pa.struct(
            [f if t is None else f.with_type(t) for f, t in zip(kind, inner, strict=True)]
        )
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        item = _plain_type(kind.value_type)
        if item is None:
            return None
        field = kind.value_field.with_type(item)
        return pa.list_(field) if pa.types.is_list(kind) else pa.large_list(field)
    if pa.types.is_dictionary(kind):  # Polars' Categorical and Enum: views for values
        value = _plain_type(kind.value_type)
        return None if value is None else pa.dictionary(kind.index_type, value, kind.ordered)
    return None


def stream_rows(reader: Any) -> Iterator[dict[str, Any]]:
    """The rows of a ``pyarrow.RecordBatchReader``, a batch at a time (:func:`batch_rows`)."""
    return (row for batch in reader for row in batch_rows(batch))


NULL_MEANS = b"knowledgepulse.null"
"""A column's metadata key saying what its nulls are: :data:`ABSENT`, or (without it) nulls."""
ABSENT = b"absent"
"""A null in the column is a key the row lacks (a table of traces: a field one trace has)."""


def batch_rows(batch: Any) -> Iterator[dict[str, Any]]:
    """The rows of a pyarrow ``RecordBatch`` as dicts, JSON-typed values parsed.

    A null of a column marked :data:`ABSENT` is left out of its row.
    """
    absent = [
        field.name for field in batch.schema if (field.metadata or {}).get(NULL_MEANS) == ABSENT
    ]
    for row in decoded(batch.schema, batch.to_pylist()):
        for column in absent:
            if row[column] is None:
                del row[column]
        yield row


def decoded(
    schema: Any, rows: Iterable[dict[str, Any]], *, json_text: bool = True
) -> Iterator[dict[str, Any]]:
    """``rows``, Python values of a table of ``schema``, with naive timestamps in UTC.

    With ``json_text``, JSON text is parsed too (``False``: the rows' JSON is parsed already,
    ``datasets``' ``Json``). Each row is changed in place; as it is when the schema has neither.
    """
    decoders = {
        field.name: decode for field in schema if (decode := _decoder(field.type, json_text))
    }
    for row in rows:
        for column, decode in decoders.items():
            if column in row:
                row[column] = decode(row[column])
        yield row


Decode = Callable[[Any], Any]


def _decoder(kind: Any, json_text: bool = True) -> Decode | None:
    """How to read the Python values of an Arrow type; ``None``: as they are.

    JSON text (with ``json_text``) is parsed, a naive timestamp put in UTC, at any depth.
    """
    from pyarrow import types  # noqa: PLC0415 - pyarrow is loaded already when batches are read

    if getattr(kind, "extension_name", None) == "arrow.json":
        return _parsed if json_text else None
    if types.is_timestamp(kind) and kind.tz is None:
        return _in_utc
    if types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        item = _decoder(kind.value_type, json_text)
        if item is None:
            return None
        return lambda value: None if value is None else [item(element) for element in value]
    if types.is_struct(kind):
        fields = {
            field.name: decode for field in kind if (decode := _decoder(field.type, json_text))
        }
        if not fields:
            return None
        return lambda value: (
            None
            if value is None
            else {key: fields[key](got) if key in fields else got for key, got in value.items()}
        )
    return None


def _in_utc(value: Any) -> Any:
    """A naive datetime as UTC (Arrow's JSON reader drops the ``Z`` it read)."""
    return value.replace(tzinfo=UTC) if isinstance(value, datetime) else value


def _parsed(text: str | None) -> Any:
    """JSON text as its value; text that is not JSON stays text (the reader of the row says so)."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
