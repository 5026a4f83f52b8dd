"""Heavy optional dependencies, imported on first use: a missing one is our error with its extra."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType


def import_optional(name: str, missing: Callable[[ImportError], Exception]) -> ModuleType:
    """The module ``name``, imported now, on first use rather than with knowledgepulse.

    Raises:
        Exception: what ``missing`` builds from the ``ImportError`` (the caller's error, with
            the ``pip install`` line), unchained: a traceback would bury that line.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise missing(error) from None
