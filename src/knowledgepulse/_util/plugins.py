"""A registry of plugin classes by name: a decorator, built-ins from one module, entry points.

The built-ins are imported before any other class registers: they come first, and a plugin that
takes a built-in's name is the one refused. The entry points are read once, when a name is
missing or every name is asked for.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from knowledgepulse.errors import ScorerParameterError

T = TypeVar("T")
C = TypeVar("C", bound=type[Any])

_log = logging.getLogger("knowledgepulse")
_RENAMED = (
    "%s, registered as %r, is %r now: a class has one name (give its decorator and its entry "
    "point the same one)"
)


def _subclass(cls: object, base: type) -> bool:
    """Whether ``cls`` is a class derived from ``base`` (a function or an instance is not)."""
    return isinstance(cls, type) and issubclass(cls, base)


@dataclass
class Registry(Generic[T]):
    """Subclasses of ``base`` by name, in the order they registered."""

    kind: str
    """What a plugin is, in log lines and its decorator's name (``source``: ``register_source``)."""
    base: type[T]
    name_attr: str
    """The class attribute set to the name a class registers under."""
    builtins: str
    """The module whose import registers the built-ins (a package: the modules under it too)."""
    group: str
    """The entry-point group third parties publish under."""
    taken: str
    """The error when another class holds a name, with ``{name}`` and ``{holder}``."""
    check_name: Callable[[str], None]
    """Raises ScorerParameterError for a name that may not be registered."""
    classes: dict[str, type[T]] = field(default_factory=dict)
    entry_points_loaded: bool = False
    _builtins_loaded: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, name: str) -> Callable[[C], C]:
        """Class decorator: register the class under ``name`` and set its ``name_attr``.

        Raises:
            ScorerParameterError: ``check_name`` refuses the name, another class holds it, or
                the class is not a subclass of ``base`` (which an entry point is ignored for).
        """
        self.check_name(name)

        def decorate(cls: C) -> C:
            if not _subclass(cls, self.base):
                # Registered, it was listed as known and ended the run when a suite used it.
                shown = cls.__name__ if isinstance(cls, type) else type(cls).__name__
                raise ScorerParameterError(
                    f"@register_{self.kind}({name!r}) decorates {shown}, which is not a "
                    f"{self.base.__name__} subclass; write class {shown}({self.base.__name__})"
                )
            if not self.is_builtin(cls):
                self.load_builtins()
            with self._lock:
                existing, qualified = self.classes.get(name), _qualified(cls)
                # The same class imported again (its module forgotten and re-imported, as
                # pytester and notebooks do) replaces itself; another class is a clash.
                if existing is not None and _qualified(existing) != qualified:
                    taken = self.taken.format(name=name, holder=_qualified(existing))
                    raise ScorerParameterError(taken)
                # A class has one name: under two (a decorator's and an entry point's, or a
                # notebook cell renamed and run again), it would be its own rival in detection.
                for other in [n for n, c in self.classes.items() if _qualified(c) == qualified]:
                    if other != name:
                        del self.classes[other]
                        _log.warning(_RENAMED, qualified, other, name)
                setattr(cls, self.name_attr, name)
                self.classes[name] = cls
            return cls

        return decorate

    def unregister(self, name: str) -> None:
        """Forget the class registered under ``name``, if any."""
        with self._lock:
            self.classes.pop(name, None)

    def get(self, name: str) -> type[T] | None:
        """The class registered under ``name`` (the entry points read if needed), or ``None``."""
        self.load_builtins()
        if name not in self.classes:
            self.load_entry_points()
        return self.classes.get(name)

    def items(self) -> list[tuple[str, type[T]]]:
        """Every name and its class, built-ins and entry points loaded, in registration order."""
        self.load_builtins()
        self.load_entry_points()
        with self._lock:
            return list(self.classes.items())

    def is_builtin(self, cls: type) -> bool:
        """Whether ``cls`` is defined in the built-ins' module (or a module under it)."""
        module: str = cls.__module__
        return module == self.builtins or module.startswith(f"{self.builtins}.")

    def load_builtins(self) -> None:
        """Import the built-ins' module, once."""
        if not self._builtins_loaded:
            importlib.import_module(self.builtins)
            self._builtins_loaded = True

    def load_entry_points(self) -> None:
        """Register the group's entry points, once; log and skip each broken one."""
        if self.entry_points_loaded:
            return
        self.entry_points_loaded = True
        for entry_point in entry_points(group=self.group):
            if entry_point.name in self.classes:
                continue
            plugin = _named(self.kind, entry_point)
            try:
                loaded = entry_point.load()
            except (Exception, SystemExit) as error:  # a broken plugin must not break the others
                _log.warning(
                    "%s could not be loaded, so it is skipped: %s: %s; fix or uninstall it",
                    plugin,
                    type(error).__name__,
                    error,
                )
                continue
            if not (isinstance(loaded, type) and issubclass(loaded, self.base)):
                _log.warning("%s is not a %s subclass; ignored", plugin, self.base.__name__)
                continue
            self.register(entry_point.name)(loaded)

    def package_of(self, cls: type) -> str | None:
        """The installed package that publishes ``cls`` as an entry point (``acme-kp 0.1.0``).

        ``None`` when none does: a class registered by its decorator alone (a script's).
        """
        for entry_point in entry_points(group=self.group):
            value = f"{cls.__module__}:{cls.__qualname__}"  # or re-exported, under its name:
            named = entry_point.value == value or self.classes.get(entry_point.name) is cls
            if named and (package := _package(entry_point)):
                return package
        return None

    def how_to_add(self, name: str) -> str:
        """The sentence that ends a lookup miss: how to register a plugin under ``name``."""
        return (
            f"To add your own, decorate a {self.base.__name__} subclass with "
            f"@register_{self.kind}({name!r}) "
            f"or publish it under the {self.group!r} entry-point group."
        )


def _named(kind: str, entry_point: EntryPoint) -> str:
    """``source plugin 'acme-log' (acme.sources:AcmeLog, of acme-kp 0.1.0)``: whose to fix."""
    package = _package(entry_point)
    of = f", of {package}" if package else ""
    return f"{kind} plugin {entry_point.name!r} ({entry_point.value}{of})"


def _package(entry_point: EntryPoint) -> str | None:
    """The name and version of the installed package that publishes ``entry_point``."""
    package = entry_point.dist
    return None if package is None else f"{package.name} {package.version}"


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
