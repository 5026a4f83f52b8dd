"""The source interface (a format kp reads: recognise it, convert it) and the registry.

Sources are registered by name: the built-ins through the same decorator third parties call,
and the ``knowledgepulse.sources`` entry points, loaded the first time a name is not found or a
record's source is detected. The registry's order is the one list detection asks in: the
built-ins (``_builtin.py``, a ``ReasoningTrace`` first), then the others as they registered.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib.metadata import entry_points
from typing import Any, ClassVar, TypeVar

from knowledgepulse._util.text import counted
from knowledgepulse.errors import UnknownSourceError
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.trace import TraceItem

ENTRY_POINT_GROUP = "knowledgepulse.sources"
REASONING_TRACE = "reasoning-trace"
"""The source of this tool's own documents: a ``ReasoningTrace`` is always read as itself."""
_BUILTIN_MODULE = "knowledgepulse.sources._builtin"

_log = logging.getLogger("knowledgepulse")


class Source:
    """Base class of every source, built-in or a third party's.

    A subclass is made with no arguments, holds no state, and implements :meth:`recognises`
    and :meth:`convert`; :meth:`describe` says what it read. Register it with
    :func:`register_source`.
    """

    name: ClassVar[str] = ""
    """The name ``--from`` takes (set by :func:`register_source`)."""
    shapes: ClassVar[str] = ""
    """One line saying what the source reads, for ``--from``'s help (``Pydantic AI's
    all_messages() JSON``)."""
    content_hint: ClassVar[str] = ""
    """How to make the producer record message text, for when its traces hold none."""
    overrides: ClassVar[tuple[str, ...]] = ()
    """The sources this one is a special case of: when both recognise a record, this one reads
    it (Hermes rows are ShareGPT or chat rows whose text holds tool-call tags)."""

    def recognises(self, value: Any) -> bool:
        """Whether a file's first record (a parsed JSON value, or a row) is in this format.

        Cheap and exact: detection asks every source about every file.
        """
        raise NotImplementedError(f"{type(self).__qualname__} must implement recognises()")

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        """Every trace in one file's records, and a located problem for each part it cannot read.

        The problems among ``records`` are passed on where they are. Each item is located where
        its source trace starts and carries what reading noticed (``warnings``), the row it was
        made from and the task the row names, if any.
        """
        raise NotImplementedError(f"{type(self).__qualname__} must implement convert()")

    def describe(self, first: Any, count: int, options: TraceOptions) -> str | None:
        """One line saying what was read from a file (``read as otlp (3 traces)``), or ``None``.

        Args:
            first: the file's first record, as :meth:`recognises` saw it.
            count: how many traces the file gave.
            options: the options it was read with.
        """
        return f"read as {self.name} ({counted(count, 'trace')})"


S = TypeVar("S", bound=type[Source])

_registry: dict[str, Source] = {}
_lock = threading.Lock()
_entry_points_loaded = False


def register_source(name: str) -> Callable[[S], S]:
    """Class decorator: make a source readable by name (``--from <name>``) and by detection.

    Raises:
        ValueError: the name is empty or taken by a different class.
    """
    if not name or name != name.strip() or name == "auto":
        raise ValueError(
            f"source names must be non-empty, without spaces around, not auto: {name!r}"
        )

    def decorate(cls: S) -> S:
        # Built-ins first, so a plugin that takes a built-in's name is the one refused (by
        # name, at its import), and the built-ins keep the front of the detection order.
        if cls.__module__ != _BUILTIN_MODULE:
            _load_builtins()
        with _lock:
            existing = _registry.get(name)
            # The same class imported again (its module forgotten and re-imported, as pytester
            # and notebooks do) replaces itself; another class under the name is a clash.
            if existing is not None and _qualified(type(existing)) != _qualified(cls):
                raise ValueError(
                    f"source {name!r} is already registered by {_qualified(type(existing))}; "
                    "choose another name"
                )
            cls.name = name
            _registry[name] = cls()
        return cls

    return decorate


def unregister_source(name: str) -> None:
    """Remove a registered source (for tests and notebooks that redefine one)."""
    with _lock:
        _registry.pop(name, None)


def get_source(name: str) -> Source:
    """The source registered under ``name`` (UnknownSourceError lists the known ones)."""
    _load_builtins()
    if name not in _registry:
        _load_entry_points()
    try:
        return _registry[name]
    except KeyError:
        raise UnknownSourceError(unknown_source_message(name)) from None


def source_names() -> tuple[str, ...]:
    """Every registered source name, in detection order (built-ins, then the others)."""
    return tuple(source.name for source in _sources())


def detect(value: Any) -> list[Source]:
    """The sources that read a record: those that recognise it, less those another overrides.

    A ``ReasoningTrace`` is always read as itself. One source: it reads the file; none: no
    source knows the record; several: the record is ambiguous, and the user must name one.
    """
    found: list[Source] = []
    for source in _sources():
        try:
            recognised = source.recognises(value)
        except Exception as error:  # a broken plugin must not stop every read
            _log.warning("source %r failed to recognise a record: %r", source.name, error)
            continue
        if recognised and source.name == REASONING_TRACE:
            return [source]
        if recognised:
            found.append(source)
    overridden = {name for source in found for name in source.overrides}
    return [source for source in found if source.name not in overridden]


def unknown_source_message(name: str) -> str:
    """Say that a source is unknown, which exist, which is closest, and how to add one."""
    known = source_names()
    closest = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {closest[0]!r}?" if closest else ""
    return (
        f"unknown source {name!r}.{hint} Known sources: auto, {', '.join(known)}. "
        f"To add your own, decorate a Source subclass with @register_source({name!r}) "
        f"or publish it under the {ENTRY_POINT_GROUP!r} entry-point group."
    )


def _sources() -> list[Source]:
    _load_builtins()
    _load_entry_points()
    with _lock:
        return list(_registry.values())


@cache
def _load_builtins() -> None:
    importlib.import_module(_BUILTIN_MODULE)


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
            _log.warning("source plugin %r could not be loaded: %s", entry_point.value, error)
            continue
        if not (isinstance(loaded, type) and issubclass(loaded, Source)):
            _log.warning("source plugin %r is not a Source subclass; ignored", entry_point.value)
            continue
        register_source(entry_point.name)(loaded)


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


__all__ = [
    "ENTRY_POINT_GROUP",
    "REASONING_TRACE",
    "Source",
    "detect",
    "get_source",
    "register_source",
    "source_names",
    "unknown_source_message",
    "unregister_source",
]
