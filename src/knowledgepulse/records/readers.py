r"""Reading input: a file, a compressed file or standard input, opened as bytes, into records.

Bytes, so that JSON Lines splits on ``\\n`` alone (a raw U+2028 in a string is no line break) and
one bad UTF-8 byte costs one line; gzip, xz and bzip2 are read as they are decompressed. A JSON
Lines line is parsed by orjson, a top-level JSON list streamed by ijson (a syntax error keeps the
elements before it), Parquet rows read by pyarrow (the ``[parquet]`` extra) a batch of
:data:`BATCH_ROWS` at a time, and so are Arrow IPC files and a Hugging Face ``save_to_disk``
folder of them (``records.arrow``). A zip is read only as an Inspect AI ``.eval`` log, the one
JSON document it holds (``records.zipped``); an SQLite database (an agent's session store) as
its schema and its rows (``records._sqlite``).
"""

from __future__ import annotations

import bz2
import codecs
import collections
import errno
import glob
import gzip
import io
import json
import lzma
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from itertools import chain, islice
from pathlib import Path
from typing import Any, BinaryIO, Literal

import ijson
import orjson

from knowledgepulse._util.settings import paths_of
from knowledgepulse._util.text import counted
from knowledgepulse.errors import (
    InputFileError,
    Location,
    MissingDependencyError,
    Problem,
    Setting,
    import_optional,
    install_hint,
)
from knowledgepulse.records import arrow, json_values
from knowledgepulse.records._parted import folder_parts, is_parted_folder
from knowledgepulse.records._sqlite import SQLITE_MAGIC, read_sqlite
from knowledgepulse.records.json_values import Record
from knowledgepulse.records.zipped import ZIP_MAGIC, read_zip, unread_zip

Format = Literal["json", "jsonl", "yaml", "parquet", "arrow", "sqlite"]
STDIN = "-"
STDIN_NAME = "<stdin>"
BOM = b"\xef\xbb\xbf"

# Compressed input, known by its first bytes (none of them can start a UTF-8 text, a bzip2 file's
# with its first block's), whatever its name: the standard library reads it as it decompresses.
_DECOMPRESSORS: tuple[tuple[re.Pattern[bytes], Callable[[BinaryIO], Any]], ...] = (
    (re.compile(rb"\x1f\x8b"), lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (re.compile(rb"\xfd7zXZ\x00"), lzma.LZMAFile),
    (re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)"), bz2.BZ2File),
)
# ... and what kp knows but does not read (before Python 3.14, zstd needs a package).
_UNREAD_PACKINGS = ((re.compile(rb"\x28\xb5\x2f\xfd"), "zstd-compressed", "zstd -dc"),)
# ... and text files kp knows but does not read, by their first line that says anything: one
# refusal naming the file, not an "invalid JSON" error a line.
_UNREAD_TEXTS = (
    (
        # Aider's InputOutput opens each run of the CLI with this line ("\n# aider chat started
        # at %Y-%m-%d %H:%M:%S\n\n", aider/io.py), then the chat as Markdown.
        re.compile(rb"# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s*"),
        "Aider's chat history (.aider.chat.history.md: Markdown written for people)",
        "Aider writes no record of its runs that kp reads (its --llm-history-file is text too); "
        "leave it out of the inputs",
    ),
)
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2")
"""The names of compressed files, looked through for the format a name announces."""

SUFFIX_FORMATS: dict[str, Format] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}


@dataclass(frozen=True, slots=True)
class Source:
    """An open input: its display name and its (decompressed) bytes.

    A folder made of parts (a Hugging Face ``save_to_disk`` folder, a persisted OpenHands
    conversation, a tau2-bench run: :mod:`records._parted`) is opened as its files (``parts``),
    read in turn as one input; its own stream is empty.
    """

    name: str
    stream: BinaryIO
    parts: tuple[Path, ...] = ()
    compressed: bool = False
    """Whether ``stream`` is decompressed as it is read (so it can be read once only)."""


def uncompressed_name(name: str) -> str:
    """``name`` without a compressed file's suffix (``.gz``, ``.xz``, ``.bz2``)."""
    lower = name.lower()
    return next((name[: -len(end)] for end in COMPRESSED_SUFFIXES if lower.endswith(end)), name)


def is_compressed_name(name: str) -> bool:
    """Whether a file name is a compressed file's (``.gz``, ``.xz``, ``.bz2``)."""
    return uncompressed_name(name) != name


def format_from_name(name: str) -> Format | None:
    """The format a file name announces, looking through a compressed file's suffix."""
    return SUFFIX_FORMATS.get(Path(uncompressed_name(name)).suffix.lower())


TEXT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".traj")
"""The names of files of JSON text kp finds in a folder (a SWE-agent ``.traj`` is one document)."""


def is_text_name(name: str | Path) -> bool:
    """Whether a file's name says it holds JSON text (:data:`TEXT_SUFFIXES`, compressed too)."""
    return Path(uncompressed_name(str(name))).suffix.lower() in TEXT_SUFFIXES


FOLDER_SUFFIXES = (*TEXT_SUFFIXES, ".eval", ".parquet", ".pq", ".arrow", ".feather")
"""The files of a folder given as an input that are read (each also compressed, as ``.gz``,
``.xz`` or ``.bz2``): traces, runs, Inspect AI logs, exports and dataset rows, not YAML (a
run's configuration, beside its trajectories)."""


def input_files(paths: Iterable[str | Path]) -> list[str | Path]:
    """``paths`` with each folder replaced by the files in it that kp reads, at any depth.

    A folder's files are those named with one of :data:`FOLDER_SUFFIXES`, in path order, names
    starting with a dot left out (``.git``, an editor's files), as ``~/.codex/sessions/`` or a
    Claude Code project's folder holds them; a link to a folder is not followed (it may lead
    back up the tree), a link to a file is read. A folder made of parts (a Hugging Face
    ``save_to_disk`` folder, a persisted OpenHands conversation, a tau2 run) stays one input, at
    any depth (:func:`open_source` reads it as one); so does a file or ``-``.

    Raises:
        InputFileError: a folder holds no file kp reads, or one in it cannot be listed (its
            files would be left out unsaid).
    """
    return [file for file, _ in listed_inputs(paths)]


def listed_inputs(paths: str | Path | Iterable[str | Path]) -> list[tuple[str | Path, bool]]:
    """:func:`input_files`, each with whether it was found in a folder rather than given.

    A file found in a folder was not chosen by the user: ``~/.codex/`` holds ``auth.json`` and
    a prompt history beside the sessions, and what no source recognises there is not theirs to
    write back.

    One path given alone (a str or a Path) is one input, not a path a character: ``"/"``
    among them was read as the whole file system's folder.

    Raises:
        InputFileError: as :func:`input_files`.
        SettingTypeError: ``paths`` is neither a path nor an iterable of paths.
    """
    files: list[tuple[str | Path, bool]] = []
    for path in paths_of(paths, "paths"):
        # os.path, not a Path made of each: read() expands the files of a folder given again.
        if str(path) == STDIN or not os.path.isdir(path) or is_parted_folder(Path(path)):
            files.append((path, False))
            continue
        found = sorted(_files_in(Path(path)), key=lambda file: file.parts)
        if not found:
            raise InputFileError(
                f"{Location(str(path))}: is a folder holding no file kp reads (any of "
                f"{', '.join(FOLDER_SUFFIXES)}, or {'/'.join(COMPRESSED_SUFFIXES)} of them, at "
                "any depth); name the files themselves if theirs differ"
            )
        files += [(str(file) if isinstance(path, str) else file, True) for file in found]
    return files


SKIPPED_FOLDERS = frozenset({"node_modules"})
"""Folders a walk does not enter, besides those whose name starts with a dot: a JavaScript
project's packages (thousands of ``package.json`` files) hold no run of the user's."""


def _files_in(folder: Path) -> Iterator[Path]:
    # os.walk does not follow a link to a folder, which could lead back up to this one.
    for root, folders, names in os.walk(folder, onerror=partial(_unlisted, folder)):
        parted = [name for name in folders if is_parted_folder(Path(root, name))]
        folders[:] = [
            name
            for name in folders
            if name[:1] != "." and name not in SKIPPED_FOLDERS and name not in parted
        ]
        yield from (Path(root, name) for name in parted if name[:1] != ".")
        for name in names:
            stem = uncompressed_name(name)
            if name[:1] != "." and os.path.splitext(stem)[1].lower() in FOLDER_SUFFIXES:
                yield Path(root, name)


def _unlisted(given: Path, error: OSError) -> None:
    """A folder os.walk cannot list (no permission): an error, as an unreadable file is."""
    raise InputFileError(
        f"{Location(str(error.filename or given))}: is a folder that cannot be read "
        f"({error.strerror}), so its files would be left out of {given}; make it readable, or "
        "name the files and folders to read"
    ) from None


@contextmanager
def open_source(source: str | Path) -> Iterator[Source]:
    """Open a path (``-``: standard input) as bytes, decompressed by its magic; or InputFileError.

    A folder is opened only if it is made of parts (:func:`records._parted.folder_parts`).
    """
    if str(source) == STDIN:
        # A replaced sys.stdin (tests, embedding applications) may be text only.
        raw: BinaryIO = getattr(sys.stdin, "buffer", None) or io.BytesIO(
            sys.stdin.read().encode("utf-8", "surrogatepass")
        )
        yield _opened(STDIN_NAME, raw)
        return
    name = str(source)
    # By the name, not a Path: a run opens each file given, or found in a folder, to check it.
    if os.path.isdir(name):
        yield Source(name, io.BytesIO(), tuple(folder_parts(Path(source))))
        return
    try:
        file = open(name, "rb")  # noqa: SIM115 - closed below, after the caller is done
    except FileNotFoundError:
        raise InputFileError(f"{Location(name)}: {_missing(name)}") from None
    except IsADirectoryError:
        raise InputFileError(
            f"{Location(name)}: is a directory; pass the files inside it"
        ) from None
    except OSError as error:
        raise InputFileError(f"{Location(name)}: cannot be read ({error.strerror})") from None
    with file:
        yield _opened(name, file)


def _missing(name: str) -> str:
    """Why a name opens no file, with a hint when only a shell would have made files of it."""
    if name.startswith("~"):
        home = "~ is your home only unquoted, where the shell expands it; or write $HOME"
        return f"no such file ({home})"
    if any(mark in name for mark in "*?["):
        return _pattern_hint(name)
    return "no such file"


def matching_files(pattern: str) -> list[str]:
    """The files ``pattern`` matches (``**`` any folders deep), sorted; folders left out."""
    return sorted(path for path in glob.glob(pattern, recursive=True) if os.path.isfile(path))


def _pattern_hint(pattern: str) -> str:
    """What a pattern matches from here: quoted, it reached kp unexpanded; else it matched nothing.

    Unquoted, a pattern that matches nothing reaches kp as written too (the shell's default):
    "leave it unquoted" was the advice either way, and sent the user round in circles.
    """
    matches = matching_files(pattern)
    if matches:
        return (
            f"no such file (kp does not expand a pattern; here it matches "
            f"{counted(len(matches), 'file')}: leave it unquoted, for the shell to expand)"
        )
    where = "" if os.path.isabs(pattern) else f", relative to the working directory {os.getcwd()}"
    folder = os.path.dirname(re.split(r"[*?\[]", pattern, maxsplit=1)[0])
    missing = f" (there is no folder {folder})" if folder and not os.path.isdir(folder) else ""
    return (
        f"the pattern matches no file{where}{missing}; fix the pattern, or run kp from the "
        "folder it is relative to"
    )


def check_openable(source: str | Path) -> None:
    """An InputFileError now if a path cannot be opened (missing, a folder, no permission).

    Standard input and a pipe (``<(...)``, a FIFO) are left unopened: they can be read only
    once, and the read to come is the one that counts.
    """
    if reads_once(source):
        return
    with open_source(source):
        pass


def check_stdin_once(*inputs: object) -> None:
    """An InputFileError when standard input (``-``) is among ``inputs`` more than once.

    ``inputs``: each a path, or a list or tuple of them (anything else is no path). It can be
    read only once: a second read would find it empty, and report an empty input.
    """
    paths = [
        path for given in inputs for path in (given if isinstance(given, list | tuple) else [given])
    ]
    if sum(isinstance(path, str | Path) and str(path) == STDIN for path in paths) > 1:
        raise InputFileError(
            "- (standard input) is given more than once, but it can be read only once; give - "
            "once, and the other inputs as files"
        )


def reads_once(source: str | Path) -> bool:
    """Whether ``source`` is standard input or a pipe (``<(...)``, a FIFO): read once only."""
    if str(source) == STDIN:
        return True
    try:
        mode = os.stat(source).st_mode  # once, for each input a run checks
    except OSError as error:
        if error.errno in _MISSING:
            return False
        raise
    except ValueError:  # a NUL in the name: no such file
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
"""The errors of a stat that mean no such file, as ``Path.exists`` takes them (others raise)."""


def _opened(name: str, raw: BinaryIO) -> Source:
    stream, compressed = _decompressed(raw, name)
    return Source(name, _as_utf8(stream, name), compressed=compressed)


def _decompressed(stream: BinaryIO, name: str) -> tuple[BinaryIO, bool]:
    """The stream's bytes, decompressed if its first bytes say it is compressed; and whether."""
    buffered: io.BufferedReader = (
        stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)  # type: ignore[arg-type]
    )
    head = buffered.peek(10)[:10]
    for magic, packing, unpack in _UNREAD_PACKINGS:
        if magic.match(head):
            shown = "FILE" if name == STDIN_NAME else name
            failure = UnreadInputError(
                f"is {packing}, which kp does not read: give it decompressed, as standard "
                f"input: {unpack} {shown} | kp ... -"
            )
            return io.BufferedReader(_Failing(failure)), True
    opener = next((open_ for magic, open_ in _DECOMPRESSORS if magic.match(head)), None)
    if opener is None:
        return buffered, False
    unpacked = opener(buffered)
    try:
        unpacked.peek(1)
    except Exception as error:
        # A stream whose first read failed reads as empty after: the file would give no record
        # and no problem. Keep the failure for the reader to report.
        return io.BufferedReader(_Failing(error)), True
    return unpacked, True


class UnreadInputError(Exception):
    """Why an input is not read at all: its message is told as it is."""


class _Failing(io.RawIOBase):
    """A stream whose every read raises the error it was made with (a broken .gz file's)."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        raise self._error


# UTF-32's little-endian mark starts with UTF-16's: it comes first.
_UNICODE_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _as_utf8(stream: BinaryIO, name: str) -> BinaryIO:
    """The stream, or the UTF-8 of a UTF-16 or UTF-32 text known by its byte-order mark.

    Such a text (Windows PowerShell's ``>`` writes UTF-16) is read whole, as ``json`` reads it;
    bytes that only start like one are read as they are (each line then says where it is not
    UTF-8).
    """
    head = _head(stream, 4)
    encoding = next((code for mark, code in _UNICODE_MARKS if head.startswith(mark)), None)
    encoding = encoding or _markless_utf16(head)
    if encoding is None:
        return stream
    try:
        data = read_all(stream)
    except ReadError as failure:  # a truncated .gz
        raise InputFileError(f"{Location(name)}: {failure}") from None
    try:
        return io.BytesIO(data.decode(encoding).encode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return io.BytesIO(data)


def _markless_utf16(head: bytes) -> str | None:
    """The UTF-16 of a JSON text without a byte-order mark, known by its ``{`` or ``[`` and NULs.

    Without it every line would be one "invalid JSON" error. A third byte that is not NUL rules
    out UTF-32 and binary formats whose first word is a small number (an old Arrow stream).
    """
    if len(head) == 4 and head[0] in b"{[" and head[1] == 0 and head[2] != 0 and head[3] == 0:
        return "utf-16-le"
    if len(head) == 4 and head[0] == 0 and head[1] in b"{[" and head[2] == 0 and head[3] != 0:
        return "utf-16-be"
    return None


class ReadError(Exception):
    """Raised when the stream breaks mid-way (a truncated gzip, an I/O error)."""


MAX_LINE_BYTES = 256 << 20
"""A JSON Lines line longer than this (256 MiB) is refused unread, in bounded memory: no agent's
trace but a runaway line (a gzip bomb's gigabyte of zeros, a device read by mistake), which would
otherwise be held whole, then parsed and scored at tens of times its size."""
_SKIP_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Overlong:
    """A line longer than the limit :func:`lines` was given, skipped unread."""

    size: int
    """Its length in bytes, without its line ending."""


def lines(stream: BinaryIO, max_bytes: int | None = None) -> Iterator[bytes | Overlong]:
    r"""The lines split on ``\\n`` only, without endings or BOM; a ReadError where it breaks.

    A line longer than ``max_bytes`` is read past (never held) and given as an :class:`Overlong`.
    """
    limit = -1 if max_bytes is None else max_bytes + 1  # one more: "\n" ends a line of max_bytes
    try:
        number = 0
        while line := stream.readline(limit):
            own = line.removeprefix(BOM) if number == 0 else line
            number += 1
            if limit < 0 or len(line) < limit or line.endswith(b"\n"):
                yield own.removesuffix(b"\n").removesuffix(b"\r")
                continue
            size = len(line)
            while not line.endswith(b"\n") and (line := stream.readline(_SKIP_CHUNK)):
                size += len(line)
            yield Overlong(size - line.endswith(b"\n"))
    except Exception as error:  # raised by the reading, never by the consumer's code
        raise ReadError(_reason(error)) from None


def read_all(stream: BinaryIO, *, at_start: bool = True) -> bytes:
    """The whole stream (its rest), BOM dropped at its start; a ReadError if it cannot be read."""
    try:
        data = stream.read()
    except Exception as error:
        raise ReadError(_reason(error)) from None
    return data.removeprefix(BOM) if at_start else data


def _reason(error: BaseException) -> str:
    if isinstance(error, UnreadInputError):
        return str(error)
    if isinstance(error, EOFError):
        return "the compressed stream ends early (a truncated compressed file?)"
    if isinstance(error, gzip.BadGzipFile | lzma.LZMAError | OSError) and not isinstance(
        error, FileNotFoundError
    ):
        return f"cannot be read further ({error})"
    return f"cannot be read further ({type(error).__name__}: {error})"


Progress = Callable[[int], object]
MAGIC = b"PAR1"
"""The four bytes a Parquet file starts (and ends) with."""


def saved_schema(path: str | Path) -> Any | None:
    """The schema of a Parquet file, an Arrow file or a ``save_to_disk`` folder; else ``None``.

    ``None`` too for one pyarrow cannot read (its rows say why as they are read). The schema
    keeps ``datasets``' features (a ``ClassLabel``'s names) in its ``huggingface`` metadata.
    """
    try:
        if Path(path).is_file() and starts_with(path, MAGIC):
            return import_pyarrow_parquet().read_schema(path)
        return arrow.file_schema(path)
    except (MissingDependencyError, OSError, ValueError):
        return None


def starts_with(path: str | Path, magic: bytes) -> bool:
    """Whether the file at ``path`` starts with ``magic`` (a missing file does not)."""
    try:
        with Path(path).open("rb") as file:
            return file.read(len(magic)) == magic
    except OSError:
        return False


BATCH_ROWS = 1024
"""Parquet rows converted to Python at a time: small for flat memory, large for speed."""
_TEXT_SPACE = re.compile(r"[ \t\r\n]*")
LIST_DEPTH = 1024
"""A JSON list is read only up to an element nesting deeper than this (orjson's own limit): ijson
keeps the path of every open level, a cost growing with the square of the depth (100,000 ``[``
would take GBs). Shallower elements past ``MAX_NESTING`` are refused one by one."""
_NOT_MARKS = bytes(sorted(set(range(256)) - set(b'"[]{},')))
_STEPS = bytes(1 if byte in b"[{" else 255 if byte in b"]}" else 0 for byte in range(256))
"""A translation of ``[`` and ``{`` to 1, ``]`` and ``}`` to -1 (as a signed byte), others to 0."""
_SCAN_CHUNK = 1 << 20


def read_records(
    source: str | Path,
    *,
    formats: Iterable[Format] = ("json", "jsonl", "parquet", "arrow", "sqlite"),
    progress: Progress | None = None,
    key_lines: bool = False,
) -> Iterator[Record | Problem]:
    """Read every record of a file (or ``-`` for standard input), in order, as it is read.

    A JSON file holds one document or a list of them (an element located by its index,
    ``FILE[3]``), JSON Lines one a line, YAML one, a list, or several ``---`` documents, Parquet
    one a row (``FILE:ROW``), Arrow IPC too (a Hugging Face ``save_to_disk`` folder: each of
    its data files in turn). Parquet and Arrow are known by their magic, the rest by the suffix
    (through ``.gz``, ``.xz``, ``.bz2``), else by the first line. ``progress`` is called with the
    bytes consumed. An ``InputFileError`` if the file cannot be opened or its format is not
    among ``formats``.
    ``key_lines``: a JSON document's record keeps the line of each path in it, as YAML's does
    (:func:`~knowledgepulse.records.yaml.with_key_lines`), so that a problem names the key's
    line: for files people write (suites, cases), at the cost of a second parse. A JSON
    document (or list element) refused then carries what was read of it, as a YAML one does, so
    that its problem can name it (a case by its id); and a NaN as a JSON record's own value is
    refused as one deeper in is, not read as a dataset row's missing value (null, as pandas
    writes it): a case or a suite is no row with missing cells.
    """
    with open_source(source) as opened:
        yield from read_stream(opened, tuple(formats), progress, key_lines=key_lines)


def read_stream(
    source: Source,
    allowed: tuple[Format, ...],
    progress: Progress | None = None,
    *,
    key_lines: bool = False,
) -> Iterator[Record | Problem]:
    """Every record of an open source, in order (see :func:`read_records`)."""
    if source.parts:
        yield from _read_parts(source, allowed, progress, key_lines=key_lines)
        return
    if arrow.is_arrow_name(source.name) or ("arrow" in allowed and _starts_arrow(source.stream)):
        _check_format(source.name, "arrow", allowed)
        yield from _read_arrow(source)
        return
    if "sqlite" in allowed and _head(source.stream, len(SQLITE_MAGIC)) == SQLITE_MAGIC:
        # An agent's session store; where no database is read (a suite), its bytes are text's.
        yield from read_sqlite(source.stream, source.name)
        return
    if _head(source.stream, len(ZIP_MAGIC)) == ZIP_MAGIC:  # an Inspect AI .eval log, a JSON
        yield from (
            read_zip(source.stream, source.name) if "json" in allowed else [unread_zip(source.name)]
        )
        return
    fmt = format_from_name(source.name)
    if is_parquet_name(source.name) or ("parquet" in allowed and _starts_parquet(source.stream)):
        # By content as well as by name: a Parquet file saved as .jsonl is still read.
        _check_format(source.name, "parquet", allowed)
        yield from _read_parquet(source)
        return
    if fmt is not None:
        _check_format(source.name, fmt, allowed)
    if fmt in ("json", "yaml"):
        read = partial(read_all, source.stream)
        yield from _read_whole(read, source.name, fmt, progress, key_lines=key_lines)
        return
    yield from _read_lines(source, fmt, allowed, progress, key_lines=key_lines)


def _read_lines(
    source: Source,
    fmt: Format | None,
    allowed: tuple[Format, ...],
    progress: Progress | None,
    *,
    key_lines: bool,
) -> Iterator[Record | Problem]:
    """JSON Lines, or a document its first line shows (an input named neither .json nor .yaml)."""
    line_iter = lines(source.stream, MAX_LINE_BYTES)
    head: list[bytes] = []
    peeked: list[bytes] = []  # after a first line that may open a document
    cut_short = False
    if fmt is None or "json" in allowed:
        # Sniff the first line (for a .jsonl name: is it a pretty-printed JSON document?).
        try:
            for line in line_iter:
                if isinstance(line, Overlong):
                    # Too long to sniff: JSON Lines, where it is one record refused.
                    if "jsonl" not in allowed:
                        yield Problem(Location(source.name, len(head) + 1), "", _overlong(line))
                        return
                    lines_read = chain(head, [line], line_iter)
                    yield from _read_jsonl(lines_read, source.name, progress, key_lines=key_lines)
                    return
                head.append(line)
                if line.strip() or fmt is None:
                    break
            if not head:
                return
            fmt = (
                _sniff(head[-1], allowed)
                if fmt is None
                else ("json" if _continues(head[-1]) else fmt)
            )
            # A first object that does not end on its line opens a pretty-printed document, or
            # is a JSON Lines record cut short (a write cut off), whose loss must not take the
            # rest: the next line and then the first value decide (below).
            cut_short = (
                fmt == "json"
                and "jsonl" in allowed
                and head[-1].lstrip()[:1] == b"{"
                and _next_is_a_record(source.stream, peeked)
            )
        except ReadError as failure:
            yield Problem(Location(source.name), "", str(failure))
            return
        _check_format(source.name, fmt, allowed)
    if fmt == "jsonl":
        yield from _read_jsonl(chain(head, line_iter), source.name, progress, key_lines=key_lines)
        return
    if head and (unread := _unread_text(source.name, head[-1])) is not None:
        yield unread
        return
    read = partial(_rest_joined, source.stream, [*head, *peeked])
    if cut_short:  # unless the object goes on ("messages": [{...},  then  {...}, ...]}
        data = read()
        if not _opens_a_value(data):
            rest = lines(io.BytesIO(data), MAX_LINE_BYTES)
            yield from _read_jsonl(rest, source.name, progress, key_lines=key_lines)
            return
        read = partial(bytes, data)
    yield from _read_whole(read, source.name, fmt, progress, key_lines=key_lines)


def _rest_joined(stream: BinaryIO, read: list[bytes]) -> bytes:
    """The lines already read and the rest of ``stream``, a document to read whole.

    Its lines however long; nothing joined after the last (an empty line there would be where
    a parse error of a one-line file is said to be).
    """
    rest = read_all(stream, at_start=False)
    return b"\n".join([*read, rest] if rest else read)


def _opens_a_value(data: bytes) -> bool:
    """Whether ``data`` opens with a whole JSON value (a document's first, or its only one)."""
    text = data.decode("utf-8", errors="replace").lstrip()
    try:
        json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return False
    return True


def _read_parts(
    source: Source, allowed: tuple[Format, ...], progress: Progress | None, *, key_lines: bool
) -> Iterator[Record | Problem]:
    """A parted folder's records, each at its place in the whole (``FOLDER:ROW``).

    A dataset's rows; a conversation's events (then its state).
    """
    index = 0
    for part in source.parts:
        with open_source(part) as opened:
            for read in read_stream(opened, allowed, progress, key_lines=key_lines):
                if isinstance(read, Record):
                    yield replace(read, location=Location.of_row(source.name, index))
                    index += 1
                else:
                    yield read


def _check_format(name: str, fmt: Format, allowed: tuple[Format, ...]) -> None:
    if fmt not in allowed:
        hint = (
            (
                "; a dataset of conversation rows is read by naming its format (",
                Setting("source"),
                ")",
            )
            if fmt in ("parquet", "arrow")
            else ()
        )
        raise InputFileError(
            f"{Location(name)}: {fmt.upper()} input is not accepted here (use "
            f"{', '.join(allowed)})",
            *hint,
        )


def _sniff(first_line: bytes, allowed: tuple[Format, ...]) -> Format:
    stripped = first_line.lstrip()
    if stripped.startswith(b"["):
        return "json"
    if stripped.startswith(b"{"):
        # A pretty-printed document goes on past its first line; a broken line is one bad record.
        return "jsonl" if "jsonl" in allowed and not _continues(stripped) else "json"
    if not stripped.strip():
        # Blank first line: JSON Lines skips it; JSON and YAML are read whole.
        return "jsonl" if "jsonl" in allowed else ("yaml" if "yaml" in allowed else "json")
    return "yaml" if "yaml" in allowed else "json"


def _next_is_a_record(stream: BinaryIO, peeked: list[bytes]) -> bool:
    """Whether the next line that says anything is a JSON object alone, as a record's is.

    A pretty-printed document's is not (a key, ``"id": 1,``, or a lone brace) unless a value
    starts its line. The lines read are added to ``peeked``, whole however long: a document
    is read whole.
    """
    try:
        while line := stream.readline():
            line = line.removesuffix(b"\n").removesuffix(b"\r")
            peeked.append(line)
            if line.strip():
                try:
                    return isinstance(orjson.loads(line), dict)
                except orjson.JSONDecodeError:
                    return False
    except Exception as error:  # raised by the reading (a broken gzip), as in lines()
        raise ReadError(_reason(error)) from None
    return False


def _continues(line: bytes) -> bool:
    """Whether a line opens a JSON value that goes on past it: it fails at its end, not inside."""
    stripped = line.strip()
    if stripped[:1] not in (b"{", b"["):
        return False
    try:  # a whole value, as nearly every first line is, told by orjson, many times faster
        orjson.loads(stripped)
    except orjson.JSONDecodeError:
        pass
    else:
        return False
    try:
        json.loads(stripped)
    except RecursionError:
        return False
    except ValueError as error:
        return isinstance(error, json.JSONDecodeError) and error.pos >= len(error.doc.rstrip())
    return False


def _unread_text(name: str, line: bytes) -> Problem | None:
    """The refusal of a file whose first line that says anything is a known text's (Aider's)."""
    for header, what, advice in _UNREAD_TEXTS:
        if header.fullmatch(line.strip()):
            return Problem(Location(name), "", f"is {what}, not a trace file kp reads: {advice}")
    return None


def _read_jsonl(
    raw_lines: Iterator[bytes | Overlong], name: str, progress: Progress | None, *, key_lines: bool
) -> Iterator[Record | Problem]:
    index = line_number = 0
    try:
        for raw in raw_lines:
            # The first line that says anything may name a known text kp does not read.
            refused = None if index or isinstance(raw, Overlong) else _unread_text(name, raw)
            if refused is not None:
                yield refused
                return
            line_number += 1
            if progress is not None:
                progress((raw.size if isinstance(raw, Overlong) else len(raw)) + 1)
            if isinstance(raw, Overlong):
                location = Location(name, line_number, index)
                index += 1
                yield Problem(location, "", _overlong(raw), record=Record(location, None))
                continue
            if not raw.strip():
                continue
            location = Location(name, line_number, index)
            index += 1
            try:
                value, warnings = json_values.loads(raw, missing_cells=not key_lines)
            except UnicodeDecodeError as error:
                message = _utf8_message(raw, error.start, error.reason)
                yield Problem(location, "", message, record=Record(location, None, raw=raw))
                continue
            except json_values.JsonError as problem:
                unparsed = Record(location, None, raw=raw)  # its text is written back (kp_raw)
                yield Problem(location, problem.path, problem.message, record=unparsed)
                continue
            for path, message in warnings:
                yield Problem(location, path, message, warning=True)
            # A line with a repeated key holds a value never read: its bytes are not written back.
            unread = any(message != json_values.LONE_SURROGATE for _, message in warnings)
            yield Record(location, value, raw=None if unread else raw)
    except ReadError as failure:
        yield Problem(Location(name, line_number + 1), "", str(failure))


def _overlong(line: Overlong) -> str:
    return (
        f"a line of {line.size:,} bytes, more than the {MAX_LINE_BYTES:,} a record may have; "
        "skipped unread (a runaway line? else split the record, one trace a line)"
    )


def _utf8_message(line: bytes, start: int, reason: str) -> str:
    column = len(line[:start].decode("utf-8", "replace")) + 1
    return (
        f"not UTF-8 text: byte 0x{line[start]:02x} at column {column} ({reason}); "
        "save the file as UTF-8"
    )


def _utf8_problem(data: bytes, name: str, error: UnicodeDecodeError) -> Problem:
    line_start = data.rfind(b"\n", 0, error.start) + 1
    message = _utf8_message(data[line_start:], error.start - line_start, error.reason)
    return Problem(Location(name, data.count(b"\n", 0, error.start) + 1), "", message)


def _read_whole(
    read: Callable[[], bytes],
    name: str,
    fmt: Format,
    progress: Progress | None,
    *,
    key_lines: bool,
) -> Iterator[Record | Problem]:
    try:
        data = read()
    except ReadError as failure:
        yield Problem(Location(name), "", str(failure))
        return
    if progress is not None:
        progress(len(data))
    body = data.lstrip(b" \t\r\n")
    if fmt == "json" and body.startswith(b"["):
        # From the bytes: a bad one loses no element before it.
        listed = _parse_list(data, name, key_lines=key_lines)
        yield from _with_element_lines(listed, data) if key_lines else listed
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        yield _utf8_problem(data, name, error)
        return
    if fmt == "json":
        if body:
            yield from _parse_documents(text, len(data) - len(body), name, key_lines=key_lines)
        return
    # PyYAML takes longer to import than ``kp score`` takes to score one trace.
    from knowledgepulse.records.yaml import parse_yaml  # noqa: PLC0415

    yield from parse_yaml(text, name)


def _with_element_lines(
    items: Iterator[Record | Problem], data: bytes
) -> Iterator[Record | Problem]:
    """A JSON list's elements at their lines (``FILE:LINE``), each key's line kept, as YAML's.

    JSON is YAML's flow style: read as YAML, the list gives each element's line and its keys'.
    An element read otherwise there (a number YAML reads another way) keeps its index only.
    """
    from knowledgepulse.records.yaml import parse_yaml  # noqa: PLC0415 - for files people write

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        yield from items
        return
    name = "<list>"
    # An element YAML refuses too (1e999) is what was read of it, at its line.
    records = (item if isinstance(item, Record) else item.record for item in parse_yaml(text, name))
    read = {
        record.location.index: record
        for record in records
        if record is not None and record.location.index is not None
    }
    for item in items:
        found = read.get(item.location.index or 0)
        if isinstance(item, Record) and found is not None and found.value == item.value:
            location = item.location.at_line(found.location.line)
            yield replace(item, location=location, lines=found.lines)
        elif isinstance(item, Problem) and item.record is not None and found is not None:
            # An element refused (a NaN, which YAML reads as text): at its line, as a line of
            # JSON Lines is; its keys' lines are not known.
            at = item.record.location.at_line(found.location.line)
            yield replace(item, location=at, record=replace(item.record, location=at))
        else:
            yield item


def _parse_list(data: bytes, name: str, *, key_lines: bool) -> Iterator[Record | Problem]:
    index = colons = 0  # colons: those of the elements read, as orjson writes them
    too_deep = _too_deep_element(data)
    # use_float: int and float, not Decimal; an int past 64 bits is an error, not a slow parse.
    # Before a too deep element, small buffers: ijson parses a whole buffer ahead of what it yields.
    buffer = 64 * 1024 if too_deep is None else LIST_DEPTH
    elements = ijson.items(io.BytesIO(data), "item", use_float=True, buf_size=buffer)
    try:
        for value in elements if too_deep is None else islice(elements, too_deep):
            location = Location(name, None, index)
            index += 1
            try:
                text = orjson.dumps(value)
            except orjson.JSONEncodeError:  # too deep for orjson, or a lone surrogate
                text, colons = None, -1
            try:
                json_values.check_depth(value, text)
            except json_values.JsonError as problem:
                yield Problem(location, problem.path, problem.message)
                continue
            if text is not None and colons >= 0:
                colons += text.count(b":")
            yield Record(location, value)
    except (ijson.JSONError, UnicodeDecodeError) as error:  # yajl checks UTF-8 less than orjson
        # What ijson refuses, json may read (NaN, an integer past 64 bits): the rest is read by it.
        rest = _python_list(data)
        if rest is None:
            yield _list_syntax_problem(data, name, index, error)
            return
        yield from _elements(rest, index, name, key_lines=key_lines)
        yield from _repeated_keys(rest, name)
        return
    if too_deep is not None:
        yield Problem(Location(name, None, too_deep), "", json_values.TOO_DEEP)
    # A key repeated: its first value is in the text, not the records.
    if colons != json_values.colons(data):
        yield from _repeated_keys(_python_list(data) or [], name)


class _Repeated(dict[str, Any]):
    """An object that had a key twice (``key``; the last value kept), as ``json`` reads it."""

    key = ""


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(items)
    if len(value) == len(items):
        return value
    repeated = _Repeated(value)
    repeated.key = next(key for key, _ in items if sum(k == key for k, _ in items) > 1)
    return repeated


def _python_list(data: bytes) -> list[Any] | None:
    """The list ``json`` reads from ``data`` (objects with a repeated key marked); else None."""
    try:
        value = json.loads(data, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):  # not JSON even for json, too deep, a number too long
        return None
    return value if isinstance(value, list) else None


def _elements(
    values: list[Any], start: int, name: str, *, key_lines: bool
) -> Iterator[Record | Problem]:
    """The elements of a list from ``start`` on, each checked as orjson reads a document."""
    for index in range(start, len(values)):
        location = Location(name, None, index)
        try:
            value, lone_surrogates = json_values.checked(values[index], missing_cells=not key_lines)
        except json_values.JsonError as problem:
            read = Record(location, values[index]) if key_lines else None
            yield Problem(location, problem.path, problem.message, record=read)
            continue
        for path in lone_surrogates:
            yield Problem(location, path, json_values.LONE_SURROGATE, warning=True)
        yield Record(location, value)


def _repeated_keys(values: list[Any], name: str) -> Iterator[Problem]:
    """A warning for each element of a list holding an object with a repeated key."""
    for index, element in enumerate(values):
        found = next(
            (item for item, _ in json_values.nodes(element) if isinstance(item, _Repeated)), None
        )
        if found is not None:
            message = json_values.repeated(found.key)
            yield Problem(Location(name, None, index), "", message, warning=True)


def _too_deep_element(data: bytes) -> int | None:
    """The index of the first element of a JSON list nesting past :data:`LIST_DEPTH` levels.

    One vectorised pass, linear in the text: escapes dropped, a quote opening or closing a string,
    the brackets outside strings counted up and down (the list is level 1), a comma at level 1
    ending an element. Exact for valid JSON and for the valid start of a broken text (what ijson
    reads before it stops); ``None`` if the list closes first.
    """
    marks = without_escaped_marks(data).translate(None, _NOT_MARKS)
    if marks.count(b"[") + marks.count(b"{") <= LIST_DEPTH:
        return None  # it cannot nest deeper than it has brackets
    import numpy as np  # noqa: PLC0415 - a list with over a thousand brackets is worth the import

    codes = np.frombuffer(marks, np.uint8)
    steps = np.frombuffer(marks.translate(_STEPS), np.int8)
    level, in_string, index = 0, False, 0
    for start in range(0, len(codes), _SCAN_CHUNK):  # in chunks: memory a few times the chunk's
        chunk = codes[start : start + _SCAN_CHUNK]
        inside = np.bitwise_xor.accumulate(chunk == ord('"')) ^ in_string
        # int32: a chunk adds at most its length to a level that is at most LIST_DEPTH.
        chunk_steps = np.where(inside, 0, steps[start : start + _SCAN_CHUNK])
        levels = level + np.cumsum(chunk_steps, dtype=np.int32)
        ends = (chunk == ord(",")) & ~inside & (levels == 1)
        stops = np.flatnonzero((levels > LIST_DEPTH) | (levels == 0))
        if stops.size:
            first = stops[0]
            return None if levels[first] == 0 else index + int(np.count_nonzero(ends[:first]))
        level, in_string = int(levels[-1]), bool(inside[-1])
        index += int(np.count_nonzero(ends))
    return None


def without_escaped_marks(data: bytes) -> bytes:
    r"""``data`` without its escaped backslashes, then without each mark a backslash escapes.

    What a string's quotes and brackets are once its escapes are gone, as dropping every
    ``\x`` pair left to right gives, less what is no mark (:data:`_NOT_MARKS`, dropped next).
    A regular expression's substitution held a piece for each escape: 900 MB for a 60 MB list.
    """
    data = data.replace(b"\\\\", b"")  # each backslash left now escapes what follows it
    for mark in b'"[]{},':
        data = data.replace(b"\\" + bytes([mark]), b"")
    return data


def _list_syntax_problem(data: bytes, name: str, index: int, error: Exception) -> Problem:
    """Where a list stops being valid JSON: its line and column, from orjson's byte offset.

    orjson stops where ijson does, but reads an integer past 64 bits (then only the index is known).
    """
    reason = str(error).split("\n", 1)[0]
    if "integer overflow" in reason:
        return Problem(
            Location(name, None, index),
            "",
            "invalid JSON: an integer past 64 bits; write it as a string",
        )
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as located:
        if "UTF-8" in located.msg:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad_byte:
                return _utf8_problem(data, name, bad_byte)
        message = f"invalid JSON: {located.msg} (column {located.colno})"
        return Problem(Location(name, located.lineno), "", message)
    return Problem(Location(name, None, index), "", f"invalid JSON: {reason}")


def _parse_documents(
    text: str, start: int, name: str, *, key_lines: bool
) -> Iterator[Record | Problem]:
    """One JSON document, or several objects one after another, each a record.

    Pretty-printing exporters (OpenTelemetry's console one) write objects back to back; the
    standard library's ``raw_decode`` says where each ends, orjson then reads it.
    """
    if key_lines:  # PyYAML loads lazily, for the files people write only
        from knowledgepulse.records.yaml import with_key_lines  # noqa: PLC0415

    decoder = json.JSONDecoder()
    position = start  # the bytes before it are ASCII spaces: as many characters
    line = text.count("\n", 0, position) + 1
    index = 0
    while True:
        location = Location(name, line, index)
        try:
            end = decoder.raw_decode(text, position)[1]
        except json.JSONDecodeError as error:
            message = f"invalid JSON: {error.msg} (column {error.colno})"
            yield Problem(Location(name, error.lineno, index), "", message)
            return
        except (RecursionError, ValueError):
            end = len(text)  # too deep, or a number too long: orjson says which below
        document = text[position:end].encode("utf-8")
        try:
            value, warnings = json_values.loads(document, missing_cells=not key_lines)
        except json_values.JsonError as problem:
            at = location if problem.line is None else location.at_line(line + problem.line - 1)
            read = json_values.leniently_read(document) if key_lines else None
            refused = None if read is None else Record(location, read)
            yield Problem(at, problem.path, problem.message, record=refused)
        else:
            for path, message in warnings:
                yield Problem(location, path, message, warning=True)
            record = Record(location, value)
            yield with_key_lines(record, text[position:end]) if key_lines else record
        after = _TEXT_SPACE.match(text, end).end()  # type: ignore[union-attr] # always matches
        if after == len(text):
            return
        line += text.count("\n", position, after)
        if text[position] != "{" or text[after] != "{":
            column = after - text.rfind("\n", 0, after)
            message = f"invalid JSON: extra data after the document (column {column})"
            yield Problem(Location(name, line), "", message)
            return
        position, index = after, index + 1


def import_pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, or a MissingDependencyError with the ``pip install`` line."""
    return _import_pyarrow("pyarrow.parquet", "reading or writing Parquet")


def _import_pyarrow(module: str, doing: str) -> Any:
    return import_optional(
        module,
        lambda error: MissingDependencyError(
            f"{doing} needs pyarrow, which is not installed ({error}); "
            f"install it with: {install_hint('parquet')}"
        ),
    )


def is_parquet_name(name: str) -> bool:
    """Whether a file name says Parquet."""
    return Path(name).suffix.lower() in (".parquet", ".pq")


def _starts_parquet(stream: BinaryIO) -> bool:
    return _head(stream, len(MAGIC)) == MAGIC


def _head(stream: BinaryIO, size: int) -> bytes:
    """The first ``size`` bytes of a stream, left in it."""
    try:
        return bytes(stream.peek(size)[:size])  # type: ignore[attr-defined]
    except Exception:  # no peek(), or a broken gzip stream (the reader reports it)
        return b""


def _read_parquet(source: Source) -> Iterator[Record | Problem]:
    """Every row as a record; what pyarrow cannot read is one problem, after the rows before it."""
    pq = import_pyarrow_parquet()

    def batches(data: Any) -> Iterator[Any]:
        with pq.ParquetFile(data) as file:
            yield from file.iter_batches(batch_size=BATCH_ROWS)

    yield from _read_batches(source, batches, "Parquet")


def _starts_arrow(stream: BinaryIO) -> bool:
    return _head(stream, len(arrow.FILE_MAGIC)).startswith((arrow.STREAM_MAGIC, arrow.FILE_MAGIC))


def _read_arrow(source: Source) -> Iterator[Record | Problem]:
    """Every row of an Arrow IPC stream (``datasets``' files) or IPC file as a record."""
    ipc = _import_pyarrow("pyarrow.ipc", "reading Arrow files")
    ipc_file = _head(source.stream, len(arrow.FILE_MAGIC)) == arrow.FILE_MAGIC

    def batches(data: Any) -> Iterator[Any]:
        if not ipc_file:
            with ipc.open_stream(data) as stream:
                yield from stream
            return
        with ipc.open_file(data) as file:
            yield from (file.get_batch(index) for index in range(file.num_record_batches))

    yield from _read_batches(source, batches, "Arrow")


def _read_batches(
    source: Source, batches: Callable[[Any], Iterator[Any]], kind: str
) -> Iterator[Record | Problem]:
    """Every row of a columnar file (Parquet, Arrow) as a record, in order.

    What pyarrow cannot read is one problem, after the rows before it.
    """
    name, index = source.name, 0
    try:
        # Read from a path (footer first, or memory-mapped); what can be read only once (standard
        # input, compressed, a pipe: opening it again would wait for a writer for ever) whole first.
        whole = source.compressed or not Path(name).is_file()
        for batch in batches(io.BytesIO(read_all(source.stream)) if whole else name):
            counts = collections.Counter(batch.schema.names)
            if twice := sorted(column for column, count in counts.items() if count > 1):
                # A row is a dict: one of the two would be dropped, the other written twice.
                yield Problem(
                    Location(name),
                    "",
                    f"the column {twice[0]!r} appears twice; a row holds one value a column "
                    "name: rename one of them",
                )
                return
            for row in arrow.batch_rows(batch):
                yield Record(Location.of_row(name, index), row)
                index += 1
    except ReadError as failure:
        yield Problem(Location(name), "", str(failure))
    except (OSError, ValueError, ArithmeticError, TypeError) as error:
        # pyarrow's errors (ArrowInvalid, ArrowIOError...) derive from these.
        where = Location.of_row(name, index) if index else Location(name)
        reason = (str(error).strip().split("\n", 1)[0] or type(error).__name__)[:300]
        yield Problem(where, "", f"not a readable {kind} file: {reason}")
