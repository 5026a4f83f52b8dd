"""Zip archives: an Inspect AI ``.eval`` log read as the one JSON log it holds; any other refused.

``inspect eval`` writes its log as a zip by default: ``header.json`` (the ``EvalLog`` without
its samples; only ``_journal/start.json`` while the run is going or after it crashed) and one
``samples/<id>_epoch_<n>.json`` a sample. :func:`read_zip` puts them together as Inspect's own
reader does (``inspect log convert --to json`` writes the same document): the header, a
``status`` of ``started`` where it has none, and ``samples`` sorted by epoch, then id (a
numeric id as a number); a member written twice (a re-run sample) counts once, its last copy.
A member that cannot be read (damaged) or is not JSON is a problem naming it, and the other
samples are read. Inspect AI packs its members with Zstandard (zip method 93) in its later
versions (0.3.211 does): the standard library unpacks that from Python 3.14 on, and before it
:func:`_unzstd` does with the ``zstandard`` package where it is installed.
"""

from __future__ import annotations

import importlib
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from knowledgepulse.errors import Location, Problem
from knowledgepulse.records.json_values import Record

ZIP_MAGIC = b"PK\x03\x04"
_HEADER = "header.json"
_START = "_journal/start.json"
_SAMPLES = "samples/"
_UNZIP = "is a zip archive, which kp does not read: give it decompressed, as standard input"
_BROKEN = (
    zipfile.BadZipFile,  # a bad CRC, a cut archive
    zipfile.LargeZipFile,
    zlib.error,  # damaged deflated data
    NotImplementedError,  # a packing zipfile does not read (a newer method, strong encryption)
    RuntimeError,  # an encrypted member
    EOFError,
    OSError,
)
"""What reading a damaged zip, or one packed as the standard library cannot unpack, raises."""
ZSTD_METHOD = 93
"""Zstandard's zip compression method (PKWARE's APPNOTE 4.4.5)."""
_LOCAL_HEADER = struct.Struct("<4s22xHH")
"""A zip member's local header: its signature, then (past 22 bytes) its name's and extra
field's lengths, which its data follows."""
_NO_ZSTD = (
    "is packed with Zstandard, which Python unpacks from 3.14 on: install the zstandard "
    "package (pip install zstandard), or give kp the log as JSON (inspect log convert --to json)"
)


def read_zip(stream: BinaryIO, name: str) -> Iterator[Record | Problem]:
    """The Inspect AI log in a zip as one record, located at the file; else one problem."""
    try:
        with zipfile.ZipFile(_seekable(stream)) as archive:
            members = list(dict.fromkeys(archive.namelist()))
            header = next((member for member in (_HEADER, _START) if member in members), None)
            if header is None:
                yield unread_zip(name)
                return
            log, problems = _log(archive, header, members, name)
    except (*_BROKEN, ValueError) as error:
        yield Problem(Location(name), "", f"is a zip archive that cannot be read ({error})")
        return
    yield from problems
    if log is not None:
        yield Record(Location(name), log)


def unread_zip(name: str) -> Problem:
    """A zip that is no Inspect log (or where no JSON is read): how to read its members."""
    shown = "FILE" if name.startswith("<") else name
    return Problem(Location(name), "", f"{_UNZIP}: unzip -p {shown} | kp ... -")


def _log(
    archive: zipfile.ZipFile, header: str, members: list[str], name: str
) -> tuple[dict[str, Any] | None, list[Problem]]:
    problems: list[Problem] = []

    def member(path: str) -> Any:
        try:
            data = _read(archive, path)
        except _BROKEN as error:  # a damaged member (its data, its CRC) or an unread packing
            problems.append(Problem(Location(name), path, f"cannot be read ({error})"))
            return None
        try:
            return json.loads(data)
        except ValueError as error:  # not JSON, or not UTF-8
            problems.append(Problem(Location(name), path, f"is not a JSON document ({error})"))
            return None

    log = member(header)
    if not isinstance(log, dict):
        if log is not None:
            problems.append(Problem(Location(name), header, "is not a JSON object"))
        return None, problems
    log.setdefault("status", "started")  # EvalLog's default: a run that has not finished
    paths = [path for path in members if path.startswith(_SAMPLES) and path.endswith(".json")]
    samples = [sample for path in paths if (sample := member(path)) is not None]
    log["samples"] = sorted(samples, key=_sample_order)
    return log, problems


def _read(archive: zipfile.ZipFile, path: str) -> bytes:
    """A member's bytes; one packed with Zstandard where this Python's zipfile cannot unpack it."""
    try:
        return archive.read(path)
    except NotImplementedError:
        info = archive.getinfo(path)
        if info.compress_type != ZSTD_METHOD:
            raise
        return _unzstd(archive, info)


def _unzstd(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A Zstandard-packed member unpacked with the ``zstandard`` package, its size and CRC checked.

    Raises:
        NotImplementedError: the package is not installed (how to read the log said).
        zipfile.BadZipFile: the member's header, size or CRC is not what the archive says.
    """
    try:
        zstandard: Any = importlib.import_module("zstandard")
    except ImportError:
        raise NotImplementedError(_NO_ZSTD) from None
    stream = archive.fp
    if stream is None:  # the archive is closed: nothing to read
        raise zipfile.BadZipFile(f"{info.filename}: the archive is closed")
    stream.seek(info.header_offset)
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(stream.read(_LOCAL_HEADER.size))
    if signature != ZIP_MAGIC:
        raise zipfile.BadZipFile(f"{info.filename}: bad local header")
    stream.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    packed = stream.read(info.compress_size)
    try:
        # At most one byte past the size the archive gives: a member lying about it (a bomb)
        # is refused by the size check below without being unpacked whole.
        with zstandard.ZstdDecompressor().stream_reader(packed) as reader:
            data: bytes = reader.read(info.file_size + 1)
    except zstandard.ZstdError as error:
        raise zipfile.BadZipFile(f"{info.filename}: {error}") from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 or size for file {info.filename!r}")
    return data


def _sample_order(sample: Any) -> tuple[str, str]:
    """Inspect's ``sort_samples``: by epoch, then id, a numeric id zero-filled to sort as one."""
    if not isinstance(sample, dict):
        return ("", "")
    id_ = sample.get("id")
    return (str(sample.get("epoch")).zfill(20), id_ if isinstance(id_, str) else str(id_).zfill(20))


def _seekable(stream: BinaryIO) -> BinaryIO:
    """The stream, or its bytes in memory where it cannot seek (a pipe, a decompressed file)."""
    try:
        if stream.seekable():
            return stream
    except (AttributeError, OSError, ValueError):
        pass
    return io.BytesIO(stream.read())
