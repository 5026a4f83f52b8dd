"""A new ring file, made beside its path and linked (or renamed) there whole, or not at all."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from knowledgepulse._util.atomic import (
    fsync_path,
    new_file_mode,
    remove_stale_temporaries,
    temporary_beside,
)
from knowledgepulse.errors import CacheFileError
from knowledgepulse.novelty.ring_file import (
    COMMIT_OFFSETS,
    PAGE,
    CommitHeader,
    RingLayout,
    Superblock,
    encode_commit,
    encode_superblock,
)


def create_ring_file(
    path: Path,
    layout: RingLayout,
    *,
    model_id: str | None,
    ttl_ms: float | None,
    replace: bool,
    fill: Callable[[Path], None] | None,
) -> None:
    """Make an empty ring file at ``path`` atomically; ``fill``, given, saves into it first.

    ``fill`` is called with the temporary file's path before it is published, so that a reader
    never sees the file without its first entries. Without ``replace``, a file another process
    made at ``path`` meanwhile is kept.

    Raises:
        CacheFileError: the directory is not writable or the disk too full for the file.
    """
    remove_stale_temporaries(path)
    try:
        free = shutil.disk_usage(path.parent if str(path.parent) else ".").free
        if free < layout.journal_offset:
            raise CacheFileError(
                f"{path}: a cache of {layout.capacity} vectors needs "
                f"{layout.journal_offset / 2**30:.2f} GiB and the disk has "
                f"{free / 2**30:.2f} GiB free; give a smaller --cache-size or another disk"
            )
        descriptor, temporary = temporary_beside(path)
    except OSError as error:
        raise CacheFileError(f"{path}: cannot create the cache file ({error})") from None
    try:
        superblock = encode_superblock(Superblock(layout, model_id)).ljust(PAGE, b"\0")
        os.pwrite(descriptor, superblock, 0)
        for generation, offset in enumerate(COMMIT_OFFSETS):
            empty = CommitHeader(generation, 0, 0, 0, ttl_ms)
            os.pwrite(descriptor, encode_commit(empty), offset)
        os.ftruncate(descriptor, layout.journal_offset)
        os.close(descriptor)
        if fill is not None:
            fill(temporary)
        fsync_path(temporary)
        os.chmod(temporary, new_file_mode())
        if replace:
            os.replace(temporary, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
    except OSError as error:
        raise CacheFileError(f"{path}: cannot write the cache file ({error})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    fsync_path(path.parent if str(path.parent) else Path())
