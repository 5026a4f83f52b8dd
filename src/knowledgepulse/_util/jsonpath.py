"""Where in a document a problem is, and what was found there, as users read it.

JSON paths (``steps[3].type``, ``metadata.success``, ``[2].id``), values described for a message,
and pydantic's validation errors turned into messages that say what was found and expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from knowledgepulse._util.text import counted
from knowledgepulse.problems import Problem

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


class Locating(Protocol):
    """What places a problem inside a document: a :class:`~knowledgepulse.records.Record`."""

    def problem(self, loc: Loc, message: str, *, warning: bool = False) -> Problem:
        """A problem at a path inside the document."""


_PATTERN_MEANINGS = {
    r"^kp:trace:[\s\S]+": "an id of the form 'kp:trace:<anything>'",
    r"^kp:skill:[^:]+:[^:]+$": "a skill of the form 'kp:skill:<name>:<version>'",
}
_MAX_PREVIEW = 60


def preview(value: Any) -> str:
    """A short JSON rendering of a value for an error message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _MAX_PREVIEW else text[: _MAX_PREVIEW - 1] + "…"


def describe(error: ErrorDetails) -> str:
    """One readable sentence for one pydantic error: what it holds and what was expected."""
    kind = error["type"]
    message = error["msg"]
    found = preview(error.get("input"))
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field; remove it or check its spelling"
    if kind == "string_pattern_mismatch":
        pattern = str(error.get("ctx", {}).get("pattern", ""))
        expected = _PATTERN_MEANINGS.get(pattern, f"a string matching {pattern!r}")
        return f"got {found}; expected {expected}"
    if kind in {"model_type", "model_attributes_type", "dict_type"}:
        return f"got {found}; expected a JSON object"
    if kind == "too_short":
        least = error.get("ctx", {}).get("min_length", 1)
        return f"got {found}; expected at least {counted(least, 'item')}"
    if kind == "finite_number":
        return "NaN and infinite numbers are not allowed; use a finite number"
    if message.startswith("Value error, "):
        return f"got {found}; {message.removeprefix('Value error, ')}"
    if message.startswith("Input should be "):
        return f"got {found}; expected {message.removeprefix('Input should be ')}"
    if message.startswith("Input "):
        return f"got {found}; {message.removeprefix('Input ')}"
    return f"{message} (got {found})"


def problems_from(error: ValidationError, record: Locating) -> list[Problem]:
    """Every error of a pydantic validation, located in its record by JSON path."""
    return [record.problem(tuple(item["loc"]), describe(item)) for item in error.errors()]
