"""Writing files so that an interrupted run never leaves a truncated one behind.

A temporary file beside the destination is flushed, given the mode of the file it replaces (the
umask's for a new one), then renamed over it; a killed process's temporary is removed by the next
save. A device or a FIFO (``-o /dev/null``, ``-o >(gzip)``) is written in place: a rename would
replace the device. The files of one run (a split's sets, an output and its report) can be made
to take effect together (:func:`together`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import glob
import gzip
import io
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from knowledgepulse.errors import OutputError

_SUFFIX = ".kp-tmp"

_staged: ContextVar[list[tuple[Path | None, Path]] | None] = ContextVar("_staged", default=None)
"""In a :func:`together` block: each file's temporary and its path (``None``: to remove)."""


def check_destination(
    path: Path, *, what: str = "output", inputs: Iterable[object] = (), read_only: bool = False
) -> None:
    """Fail fast, before any work, with an ``OutputError`` when ``path`` cannot be written.

    ``inputs``: what the run reads (paths among them); ``path`` may not be one of them, which
    the output would replace. ``read_only``: this run only reads ``path`` (a frozen cache), so
    its directory need not be writable; it is still never one of the inputs.
    """
    directory = path.parent
    if path.is_dir():
        raise OutputError(f"{what} {path} is a directory; give a file path")
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise OutputError(f"cannot write the {what} {path}: no permission to write it")
        return
    if any(is_same_file(path, source) for source in inputs):
        raise OutputError(
            f"cannot write the {what} {path}: it is an input of this run, which it would "
            "replace; write to another file"
        )
    if read_only:
        return
    if not directory.is_dir():
        raise OutputError(f"cannot write the {what} {path}: {missing_directory(directory)}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write the {what} {path}: no permission to write in {directory}")


def missing_directory(directory: Path) -> str:
    """Why a file cannot be made in ``directory``, which is no directory, and what to do."""
    existing = next((folder for folder in (directory, *directory.parents) if folder.exists()), None)
    if existing is not None and not existing.is_dir():  # a file where a folder should be
        return f"{existing} is not a directory; give a path inside one"
    return f"the directory {directory} does not exist; create it first"


def check_destinations(paths: Iterable[Path | None], *, inputs: Iterable[object] = ()) -> None:
    """:func:`check_destination` for each path given, and no two of them one file.

    Two outputs of one run naming one file would leave only the one written last (``-o`` and
    ``--report`` alike); a device (``/dev/null``) may take several.
    """
    sources = tuple(inputs)
    earlier: list[Path] = []
    for path in paths:
        if path is None:
            continue
        check_destination(path, inputs=sources)
        if not _is_special(path) and any(same_name(path, other) for other in earlier):
            raise OutputError(
                f"cannot write two outputs of this run to {path}: the one written last would "
                "replace the other; give each its own file"
            )
        earlier.append(path)


def same_name(path: Path, other: Path) -> bool:
    """Whether two paths name one file, whether it exists yet or not."""
    return is_same_file(path, other) or path.resolve() == other.resolve()


@contextmanager
def atomic_text(path: Path, *, errors: str = "strict") -> Iterator[IO[str]]:
    r"""A text file (UTF-8, ``\n`` line endings) that replaces ``path`` when the block succeeds.

    A name ending in ``.gz`` is written gzip-compressed, as kp and every other tool read it (with
    no time in its header, so that the same text gives the same bytes).
    """
    with atomic_binary(path) as raw:
        packed = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if path.suffix == ".gz" else None
        text = io.TextIOWrapper(packed or raw, encoding="utf-8", errors=errors, newline="\n")
        yield text
        text.flush()
        text.detach()
        if packed is not None:
            packed.close()  # ends the gzip stream; ``raw`` stays open for atomic_binary


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""A write refused for want of room: the system's error names no file, which ours then does."""


@contextmanager
def atomic_binary(path: Path) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` when the block succeeds; else ``path`` is untouched.

    A full disk's error (raised by a write or a flush, and naming no file) is given ``path``.
    The file may be read back as it is written (Parquet's rows writer rewrites it to add a
    column); a device or a FIFO may not.
    """
    try:
        with _atomic_binary(path) as file:
            yield file
    except OSError as error:
        if error.filename is None and error.errno in _FULL:
            error.filename = str(path)
        raise


@contextmanager
def _atomic_binary(path: Path) -> Iterator[IO[bytes]]:
    if _is_special(path):
        try:
            special = open(path, "wb")  # noqa: SIM115 - closed below, after the block's writes
        except OSError as error:
            raise OutputError(f"cannot write {path}: {error.strerror}") from None
        with special:
            yield special
        return
    named, path = path, through_links(path)
    remove_stale_temporaries(path)
    try:
        descriptor, temporary = temporary_beside(path)
    except OSError as error:
        raise OutputError(f"cannot write {named}: {error.strerror}") from None
    try:
        with os.fdopen(descriptor, "w+b") as file:  # read back by RowWriter._rewrite
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode_for(path))
        if (staged := _staged.get()) is not None:
            staged.append((temporary, path))
            return
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_path(path.parent)


@contextmanager
def together() -> Iterator[None]:
    """The atomic writes (and :func:`remove_together`) in this block take effect all or none.

    Each file is written to its temporary as usual; the renames wait for the block to succeed
    and are made with Ctrl-C and SIGTERM held off (then delivered), so an interrupted run has
    written every file or none. An error or an interrupt in the block removes the temporaries.
    A block inside another joins it.
    """
    if _staged.get() is not None:
        yield
        return
    staged: list[tuple[Path | None, Path]] = []
    token = _staged.set(staged)
    try:
        yield
        directories = {path.parent for _, path in staged}
        with _signals_held():
            while staged:  # each one done leaves the list: the rest are removed on a failure
                temporary, path = staged.pop(0)
                if temporary is None:
                    path.unlink(missing_ok=True)
                else:
                    os.replace(temporary, path)
    finally:
        _staged.reset(token)
        for temporary, _ in staged:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
    for directory in directories:
        fsync_path(directory)


@contextmanager
def made_directory(directory: Path) -> Iterator[None]:
    """``directory`` made if it is missing, with its parents.

    Removed again, with the parents made, when the block fails and they are empty: a stopped
    run leaves nothing behind.
    """
    missing = [path for path in (directory, *directory.parents) if not path.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for path in missing:  # the deepest first; one that is not empty stays, and its parents
            try:
                path.rmdir()
            except OSError:
                break
        raise


def remove_together(path: Path) -> None:
    """Remove ``path`` (if there) when the :func:`together` block commits; at once outside one."""
    if (staged := _staged.get()) is not None:
        staged.append((None, path))
    else:
        path.unlink(missing_ok=True)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM deferred to the block's end (only the main thread may defer them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = [signal.signal(signum, lambda signum, _: caught.append(signum)) for signum in held]
    try:
        yield
    finally:
        for signum, handler in zip(held, previous, strict=True):
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    for number in caught[:1]:  # now handled as it would have been
        signal.raise_signal(number)


def check_stdout(stdout: IO[str], inputs: Iterable[object]) -> None:
    """Fail with an ``OutputError`` when ``stdout`` is a file among ``inputs`` (``> a.jsonl``).

    The shell opens it before the run: ``>`` has emptied the input already, and with ``>>`` the
    run would read what it writes, for ever (GNU cat refuses this too).
    """
    try:
        out = os.fstat(stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a replaced stdout (tests, notebooks)
        return
    for source in inputs if stat.S_ISREG(out.st_mode) else ():
        if isinstance(source, str | Path) and str(source) != "-" and _stat_is(source, out):
            raise OutputError(
                f"standard output is {source}, an input of this run: '>' emptied it before kp "
                "started, and with '>>' kp would read its own output for ever; write to "
                "another file (-o FILE)"
            )


def _stat_is(path: str | Path, known: os.stat_result) -> bool:
    try:
        return os.path.samestat(os.stat(path), known)
    except (OSError, ValueError):  # missing: not that file
        return False


def is_same_file(path: Path, source: object) -> bool:
    """Whether ``source`` (a run's input: a path, ``-``, or data) is the file at ``path``."""
    if not isinstance(source, str | Path) or str(source) == "-":
        return False
    try:
        return os.path.samefile(path, source)
    except (OSError, ValueError):  # either missing: not the same existing file
        return False


def _is_special(path: Path) -> bool:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def through_links(path: Path) -> Path:
    """The file a write to ``path`` replaces: a symbolic link's final target, else ``path``.

    Renaming over the link itself would make it a plain file and leave its target (the shared
    copy the link points at) as it was.
    """
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def temporary_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, named with this process's id (for cleaning up)."""
    descriptor, name = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=f".{os.getpid()}{_SUFFIX}"
    )
    return descriptor, Path(name)


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporaries of saves to ``path`` whose process is gone."""
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*{_SUFFIX}"))
    except OSError:
        return
    for candidate in candidates:
        pid = candidate.name.removesuffix(_SUFFIX).rpartition(".")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                candidate.unlink()


_KILL_ASKS = os.name != "nt"
"""Whether ``os.kill(pid, 0)`` only asks after a process: Windows' terminates it, whatever the
signal, so there a temporary's writer is taken as alive and its file kept."""


def _alive(pid: int) -> bool:
    if not _KILL_ASKS:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        pass
    return True


def mode_for(path: Path) -> int:
    """The mode ``path`` has (a file kept private stays private), else a new file's."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return new_file_mode()


@functools.cache
def new_file_mode() -> int:
    """The mode the user's umask gives a new file (read once per process)."""
    # The only portable way to read the umask is to set it and put it back.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def fsync_path(path: Path) -> None:
    """Flush a file, or a directory's entries (making a rename durable), to disk; best effort."""
    # Not every platform lets a directory be opened.
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
