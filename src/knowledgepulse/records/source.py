r"""Opening an input as bytes: a file, a gzip file, or standard input, with its display name.

Bytes, so that JSON Lines splits on ``\\n`` alone (a raw U+2028 in a string is no line break),
one bad UTF-8 byte costs one line, and gzip is read as it is decompressed, never whole.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from knowledgepulse.errors import InputFileError

Format = Literal["json", "jsonl", "yaml", "parquet"]
STDIN = "-"
STDIN_NAME = "<stdin>"
BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"

SUFFIX_FORMATS: dict[str, Format] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}


@dataclass(frozen=True, slots=True)
class Source:
    """An open input: its display name and its (decompressed) bytes."""

    name: str
    stream: BinaryIO


def format_from_name(name: str) -> Format | None:
    """The format a file name announces, looking through a ``.gz`` suffix."""
    path = Path(name)
    if path.suffix.lower() == ".gz":
        path = path.with_suffix("")
    return SUFFIX_FORMATS.get(path.suffix.lower())


@contextmanager
def open_source(source: str | Path) -> Iterator[Source]:
    """Open a path (``-`` is standard input) for reading bytes, decompressing gzip by its magic.

    Raises:
        InputFileError: the file is missing, a directory, or cannot be opened.
    """
    if str(source) == STDIN:
        # A replaced sys.stdin (tests, embedding applications) may be text only.
        raw: BinaryIO = getattr(sys.stdin, "buffer", None) or io.BytesIO(
            sys.stdin.read().encode("utf-8", "surrogatepass")
        )
        yield Source(STDIN_NAME, _maybe_gunzip(raw))
        return
    name = str(source)
    try:
        file = Path(source).open("rb")  # noqa: SIM115 - closed below, after the caller is done
    except FileNotFoundError:
        raise InputFileError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{name}: is a directory; pass the files inside it") from None
    except OSError as error:
        raise InputFileError(f"{name}: cannot be read ({error.strerror})") from None
    with file:
        yield Source(name, _maybe_gunzip(file))


def _maybe_gunzip(stream: BinaryIO) -> BinaryIO:
    buffered: io.BufferedReader = (
        stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)  # type: ignore[arg-type]
    )
    if buffered.peek(2)[:2] == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    return buffered


class ReadError(Exception):
    """Raised when the stream breaks mid-way (a truncated gzip, an I/O error)."""


def lines(stream: BinaryIO) -> Iterator[bytes]:
    r"""The stream's lines split on ``\\n`` only, each without its line ending; BOM dropped.

    Raises:
        ReadError: the bytes cannot be read past some point; the lines before were yielded.
    """
    try:
        for number, line in enumerate(stream):
            own = line.removeprefix(BOM) if number == 0 else line
            yield own.removesuffix(b"\n").removesuffix(b"\r")
    except Exception as error:  # raised by the reading, never by the consumer's code
        raise ReadError(_reason(error)) from None


def read_all(stream: BinaryIO) -> bytes:
    """The whole stream, BOM dropped.

    Raises:
        ReadError: the bytes cannot be read.
    """
    try:
        data = stream.read()
    except Exception as error:
        raise ReadError(_reason(error)) from None
    return data.removeprefix(BOM)


def _reason(error: BaseException) -> str:
    if isinstance(error, EOFError):
        return "the compressed stream ends early (a truncated .gz file?)"
    if isinstance(error, gzip.BadGzipFile | OSError) and not isinstance(error, FileNotFoundError):
        return f"cannot be read further ({error})"
    return f"cannot be read further ({type(error).__name__}: {error})"
