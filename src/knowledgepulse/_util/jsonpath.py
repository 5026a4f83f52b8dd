"""JSON paths as users read them: ``steps[3].type``, ``metadata.success``, ``[2].id``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

_PLAIN_KEY = re.compile(r"^[A-Za-z_@$][\w@$-]*$")

Loc = Sequence[str | int]


def format_path(loc: Loc) -> str:
    """Render a location tuple such as ``("steps", 3, "type")`` as ``steps[3].type``.

    Keys that are not plain identifiers are quoted (``["two words"]``); the empty location is
    rendered as ``$`` (the document itself).
    """
    parts: list[str] = []
    for key in loc:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _PLAIN_KEY.match(key):
            parts.append(f".{key}" if parts else key)
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts) or "$"


def describe_value(value: Any) -> str:
    """What a parsed JSON value is, for a message: ``an object with keys a, b``, ``a JSON int``."""
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return f"an object with keys {', '.join(sorted(map(str, value))[:6])}"
    return f"a JSON {type(value).__name__}"


def non_finite_numbers(
    value: Any, loc: tuple[str | int, ...] = ()
) -> Iterator[tuple[str | int, ...]]:
    """Yield the location of every NaN or infinite float inside a parsed JSON value.

    Python's ``json`` accepts ``NaN``, ``Infinity`` and overflowing literals such as ``1e999``;
    JSON itself does not, and a NaN would poison every score it touches.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            yield loc
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from non_finite_numbers(item, (*loc, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from non_finite_numbers(item, (*loc, index))
