"""The line of a user's own code an exception came from, for one-line errors about plugins."""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path


def raised(error: BaseException, owner: type) -> str:
    """``Type: message (at file:line, in function)``, the line ``owner``'s module raised it from."""
    where = raised_in(error, owner)
    return f"{type(error).__name__}: {error}" + (f" (at {where})" if where is not None else "")


def raised_in(error: BaseException, owner: type) -> str | None:
    """``rag_scorers.py:14, in evaluate``: the deepest frame of ``error`` in ``owner``'s module.

    Without the line, ``KeyError: 'citations'`` in a report leaves the user to guess which lookup
    failed. The deepest, so a helper of the module that raised is named rather than the method
    that called it; frames elsewhere (the standard library, a package the user calls) are
    skipped, as the user's own line is the one to fix. The file is relative to the working
    directory when it lies under it, so a report written from the same place is the same bytes.
    ``None`` when no frame is in that module (or it has no file).
    """
    source = getattr(sys.modules.get(owner.__module__), "__file__", None)
    if source is None:
        return None
    wanted = os.path.realpath(source)
    found = deepest_frame(error, lambda file: os.path.realpath(file) == wanted)
    return None if found is None else f"{shown_path(wanted)}:{found[1]}, in {found[2]}"


def deepest_frame(
    error: BaseException, wanted: Callable[[str], bool]
) -> tuple[str, int, str] | None:
    """The file, line and function of the deepest frame of ``error`` whose file is ``wanted``."""
    found = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        if wanted(frame.f_code.co_filename):
            found = (frame.f_code.co_filename, line, frame.f_code.co_name)
    return found


def user_frame(error: BaseException) -> tuple[str, int, str] | None:
    """The file, line and function of the deepest frame of ``error`` in the user's own code.

    The user's code is a file that is neither Python's, an installed package's nor kp's: an
    error raised inside a library the user calls is named at the user's line that called it.
    """
    paths = sysconfig.get_paths()
    theirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    theirs.add(str(Path(__file__).resolve().parents[1]))  # knowledgepulse itself
    roots = tuple(os.path.realpath(root) + os.sep for root in theirs)

    def users(file: str) -> bool:
        return not file.startswith("<") and not os.path.realpath(file).startswith(roots)

    return deepest_frame(error, users)


def shown_path(file: str) -> str:
    """``file`` relative to the working directory when it lies under it, else absolute.

    So a message (or a report) written from the same place is the same bytes on any machine.
    """
    absolute = os.path.realpath(file)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith(os.pardir) else relative
