"""Heavy optional dependencies, imported on first use: a missing one is our error with its extra."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType


def import_optional(name: str, missing: Callable[[ImportError], Exception]) -> ModuleType:
    """The module ``name``, imported now (so that importing knowledgepulse never pays for it).

    Args:
        name: the module's import name (``onnxruntime``, ``torch``, ``ray``...).
        missing: builds the error to raise from the failed import: the caller's own error type,
            with a message that gives the ``pip install "knowledgepulse[extra]"`` line.

    Raises:
        Exception: what ``missing`` builds, without the ``ImportError`` chained (the message
            says everything a user needs, and a traceback would bury it).
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise missing(error) from None
