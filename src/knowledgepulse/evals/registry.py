"""Scorers by type name: the built-ins, the user's own, and third-party entry points.

Built-ins register through the same decorator users call; the ``knowledgepulse.scorers``
entry points are loaded the first time a name is looked up and not found.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TypeVar

from knowledgepulse.errors import UnknownScorerError
from knowledgepulse.evals.scorer import Scorer

ENTRY_POINT_GROUP = "knowledgepulse.scorers"
_BUILTIN_MODULE = "knowledgepulse.evals.scorers"

_log = logging.getLogger("knowledgepulse")
S = TypeVar("S", bound=type[Scorer])

_registry: dict[str, type[Scorer]] = {}
_lock = threading.Lock()
_builtins_loaded = False
_entry_points_loaded = False


def register_scorer(type_name: str) -> Callable[[S], S]:
    """Class decorator: make a scorer usable from suites as ``type: <type_name>``.

    Raises:
        ValueError: the name is empty or taken by a different class.
    """
    if not type_name or type_name != type_name.strip():
        raise ValueError(
            f"scorer type names must be non-empty without spaces around: {type_name!r}"
        )

    def decorate(cls: S) -> S:
        # Built-ins first, so a plugin that takes a built-in's name is the one refused (by
        # name, at its import), never the built-in loaded after it (an internal error).
        if not cls.__module__.startswith(f"{_BUILTIN_MODULE}."):
            _load_builtins()
        with _lock:
            existing = _registry.get(type_name)
            # The same class imported again (its module forgotten and re-imported, as pytester
            # and notebooks do) replaces itself; another class under the name is a clash.
            if existing is not None and _qualified(existing) != _qualified(cls):
                raise ValueError(
                    f"scorer type {type_name!r} is already registered by "
                    f"{_qualified(existing)}; choose another type name"
                )
            cls.type_name = type_name
            _registry[type_name] = cls
        return cls

    return decorate


def unregister_scorer(type_name: str) -> None:
    """Remove a registered scorer (for tests and notebooks that redefine one)."""
    with _lock:
        _registry.pop(type_name, None)


def get_scorer_class(type_name: str) -> type[Scorer]:
    """The scorer class registered under ``type_name`` (UnknownScorerError lists the known)."""
    _load_builtins()
    if type_name not in _registry:
        _load_entry_points()
    try:
        return _registry[type_name]
    except KeyError:
        raise UnknownScorerError(unknown_scorer_message(type_name)) from None


def scorer_types() -> list[str]:
    """Every registered type name, sorted (built-ins, the user's own, and entry points)."""
    _load_builtins()
    _load_entry_points()
    return sorted(_registry)


def builtin_scorer_types() -> tuple[str, ...]:
    """The type names of the scorers that ship with knowledgepulse, in registration order."""
    _load_builtins()
    prefix = f"{_BUILTIN_MODULE}."
    return tuple(name for name, cls in _registry.items() if cls.__module__.startswith(prefix))


def unknown_scorer_message(type_name: str) -> str:
    """Say that a type is unknown, which exist, which is closest, and how to add one."""
    known = scorer_types()
    closest = difflib.get_close_matches(type_name, known, n=1)
    hint = f" Did you mean {closest[0]!r}?" if closest else ""
    return (
        f"unknown scorer type {type_name!r}.{hint} Known types: {', '.join(known)}. "
        f"To add your own, decorate a Scorer subclass with @register_scorer({type_name!r}) "
        f"or publish it under the {ENTRY_POINT_GROUP!r} entry-point group."
    )


def _load_builtins() -> None:
    global _builtins_loaded  # noqa: PLW0603 - a process-wide, load-once flag
    if not _builtins_loaded:
        importlib.import_module(_BUILTIN_MODULE)
        _builtins_loaded = True


def _load_entry_points() -> None:
    global _entry_points_loaded  # noqa: PLW0603 - a process-wide, load-once flag
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in _registry:
            continue
        try:
            loaded = entry_point.load()
        except (Exception, SystemExit) as error:  # a broken plugin must not break the others
            _log.warning("scorer plugin %r could not be loaded: %s", entry_point.value, error)
            continue
        if not (isinstance(loaded, type) and issubclass(loaded, Scorer)):
            _log.warning("scorer plugin %r is not a Scorer subclass; ignored", entry_point.value)
            continue
        register_scorer(entry_point.name)(loaded)


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
