"""The ``.npz`` cache file: uncompressed, written atomically, read with suspicion.

A crash, a full disk or another program can leave anything at a cache's path, so reading checks
a declared size against the bytes there, never unpickles, checks the zip's CRCs and every part
of the header: loading gives a valid cache or one :class:`~knowledgepulse.errors.CacheFileError`.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
from numpy.lib import format as npy_format
from numpy.typing import NDArray

from knowledgepulse._util.atomic import atomic_binary
from knowledgepulse._util.settings import optional_duration_ms
from knowledgepulse.errors import CacheFileError, Location, ScorerParameterError
from knowledgepulse.novelty.cache.ring_file import (
    MAX_DIMENSIONS,
    damaged,
    newer_format,
    not_a_cache,
    unopenable,
)

CACHE_FILE_FORMAT = "knowledgepulse-vector-cache/1"
_PARTS = ("header", "vectors", "added_at")
_HEADER_READERS = {
    (1, 0): npy_format.read_array_header_1_0,
    (2, 0): npy_format.read_array_header_2_0,
}


@dataclass(frozen=True, slots=True)
class CacheFileContents:
    """What a cache file holds, checked: the saved cache's settings and entries, oldest first."""

    model_id: str | None
    dimensions: int
    max_elements: int
    ttl_ms: float | None
    ids: list[str | None]
    vectors: NDArray[np.float32]
    added_at: NDArray[np.float64]


def write_cache_file(path: Path, contents: CacheFileContents) -> None:
    """Write ``contents`` to ``path`` atomically (an OutputError when it cannot be created)."""
    header = {
        "format": CACHE_FILE_FORMAT,
        "model_id": contents.model_id,
        "dimensions": contents.dimensions,
        "max_elements": contents.max_elements,
        "ttl_ms": contents.ttl_ms,
        "ids": contents.ids,
    }
    with atomic_binary(path) as file:
        np.savez(
            file,
            header=np.array(json.dumps(header)),
            vectors=contents.vectors,
            added_at=contents.added_at,
        )


def read_cache_file(path: Path) -> CacheFileContents:
    """Read and check a file written by :func:`write_cache_file`; any fault: CacheFileError."""
    try:
        if path.is_dir():
            raise CacheFileError(
                f"{Location(str(path))}: is a directory, not a cache file; give a file path"
            )
        file = path.open("rb")
    except OSError as error:
        raise unopenable(path, error) from None
    with file:
        size = os.fstat(file.fileno()).st_size
        if size == 0:
            raise not_a_cache(path, "the file is empty")
        try:
            with zipfile.ZipFile(file) as archive:
                parts = {name: _read_part(path, archive, name, size) for name in _PARTS}
        except CacheFileError:
            raise
        except Exception as error:  # zipfile raises a dozen kinds of error on damaged archives
            raise not_a_cache(path, f"not a readable .npz archive: {_one_line(error)}") from None
    return _check(path, _header(path, parts["header"]), parts["vectors"], parts["added_at"])


def _read_part(path: Path, archive: zipfile.ZipFile, name: str, size: int) -> NDArray[Any]:
    """One ``.npy`` member, its declared shape checked against its bytes before any allocation."""
    try:
        info = archive.getinfo(f"{name}.npy")
    except KeyError:
        raise not_a_cache(path, f"it has no {name!r} array") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise not_a_cache(path, f"its {name!r} array is compressed; knowledgepulse never does")
    if info.file_size > size or info.compress_size > size:
        claimed = max(info.file_size, info.compress_size)
        raise damaged(path, f"its {name!r} array claims {claimed} bytes in a file of {size}")
    with archive.open(info) as member:
        data = member.read()  # zipfile checks the CRC once the member is read to its end
    buffer = io.BytesIO(data)
    try:
        version = npy_format.read_magic(buffer)
        if version not in _HEADER_READERS:
            raise ValueError(f".npy format {version}, not 1.0 or 2.0")
        shape, fortran_order, dtype = _HEADER_READERS[version](buffer)
    except ValueError as error:
        raise damaged(path, f"its {name!r} array is not a .npy array: {_one_line(error)}") from None
    if dtype.hasobject:
        raise not_a_cache(
            path, f"its {name!r} array holds pickled Python objects, which are never loaded"
        )
    count = math.prod(shape)
    if any(length < 0 for length in shape) or count * dtype.itemsize != len(data) - buffer.tell():
        raise damaged(
            path,
            f"its {name!r} array declares shape {shape} of {dtype} but holds "
            f"{len(data) - buffer.tell()} bytes",
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=buffer.tell())
    return flat.reshape(shape, order="F" if fortran_order else "C")


def _header(path: Path, array: NDArray[Any]) -> dict[str, Any]:
    if array.dtype.kind != "U" or array.shape != ():
        raise not_a_cache(path, f"its header is a {array.dtype} array, not a JSON string")
    try:
        header = json.loads(str(array[()]))
    except (ValueError, RecursionError) as error:
        raise damaged(path, f"its header is not JSON: {_one_line(error)}") from None
    written = header.get("format") if isinstance(header, dict) else None
    family, _, version = str(written).rpartition("/")
    if family == CACHE_FILE_FORMAT.rpartition("/")[0] and version.isdigit() and int(version) > 1:
        raise newer_format(path, f"format {written!r}; this one reads {CACHE_FILE_FORMAT!r}")
    if not isinstance(header, dict) or written != CACHE_FILE_FORMAT:
        raise not_a_cache(path, f"its header does not say format {CACHE_FILE_FORMAT!r}")
    return header


def _check(
    path: Path, header: dict[str, Any], vectors: NDArray[Any], added_at: NDArray[Any]
) -> CacheFileContents:
    model_id = header.get("model_id")
    dimensions = header.get("dimensions")
    max_elements = header.get("max_elements")
    ttl_ms = header.get("ttl_ms")
    ids = header.get("ids")
    if model_id is not None and not isinstance(model_id, str):
        raise damaged(path, f"its model_id is {model_id!r}, not a string")
    if not _is_int(dimensions) or not 1 <= dimensions <= MAX_DIMENSIONS:
        raise damaged(path, f"its dimensions is {dimensions!r}, not a width from 1 to 65536")
    if not _is_int(max_elements) or max_elements < 1:
        raise damaged(path, f"its max_elements is {max_elements!r}, not a positive integer")
    try:
        optional_duration_ms(ttl_ms)
    except ScorerParameterError:
        what = f"its ttl_ms is {ttl_ms!r}, not a positive number of milliseconds"
        raise damaged(path, what) from None
    if not isinstance(ids, list) or not all(i is None or isinstance(i, str) for i in ids):
        raise damaged(path, "its ids are not a list of strings")
    if len(ids) > max_elements:
        raise damaged(path, f"it holds {len(ids)} vectors but max_elements is {max_elements}")
    if vectors.dtype.kind != "f" or vectors.shape != (len(ids), dimensions):
        raise damaged(
            path,
            f"its vectors are a {vectors.dtype} array of shape {vectors.shape}, expected float32 "
            f"of shape ({len(ids)}, {dimensions})",
        )
    if added_at.dtype.kind != "f" or added_at.shape != (len(ids),):
        raise damaged(
            path,
            f"its times are a {added_at.dtype} array of shape {added_at.shape}, expected float64 "
            f"of shape ({len(ids)},)",
        )
    with np.errstate(over="ignore"):  # a value past float32's range becomes inf, refused below
        vectors32 = vectors.astype(np.float32)
    times64 = added_at.astype(np.float64)
    if not (np.isfinite(vectors32).all() and np.isfinite(times64).all()):
        raise damaged(path, "it holds NaN or infinite numbers")
    return CacheFileContents(model_id, dimensions, max_elements, ttl_ms, ids, vectors32, times64)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
