"""Undoing what a test's user code did to the process: imported modules, sys.path, scorers."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from knowledgepulse.evals import scorer as registry


@contextmanager
def user_code_forgotten() -> Iterator[None]:
    """Afterwards, the tasks and plugins imported inside are forgotten and the registry restored.

    Only modules from outside the installed packages and this project's source are forgotten:
    a library the test happened to import first stays (numpy cannot be imported twice).
    """
    registry.get_scorer_class("operation-accuracy")  # the built-ins are in the snapshot
    saved = dict(registry._scorers.classes)
    path = list(sys.path)
    before = set(sys.modules)
    try:
        yield
    finally:
        for name in set(sys.modules) - before:
            origin = str(getattr(sys.modules[name], "__file__", None) or "")
            if "site-packages" not in origin and f"src{os.sep}knowledgepulse" not in origin:
                del sys.modules[name]
        sys.path[:] = path
        registry._scorers.classes.clear()
        registry._scorers.classes.update(saved)
