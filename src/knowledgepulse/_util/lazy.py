"""Names a package exports but imports on first use (PEP 562), so that importing it stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str,
    home_of: Mapping[str, str],
    namespace: dict[str, Any],
    *,
    submodules: Sequence[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names that live in other modules.

    Args:
        package: the package's ``__name__`` (for the error message).
        home_of: each lazily exported name and the module that defines it.
        namespace: the package's ``globals()``: a name, once imported, is kept there, so that
            the next lookup is an ordinary one.
        submodules: the package's own modules that ``package.name`` gives without an import
            line (``kp.integrations.langchain``).
    """

    def exported(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def listed() -> list[str]:
        return sorted({*namespace, *home_of, *submodules})

    return exported, listed
