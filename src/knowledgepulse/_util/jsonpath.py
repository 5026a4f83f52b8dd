"""JSON paths (``steps[3].type``), values described for messages, pydantic's errors as sentences."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import ErrorDetails

from knowledgepulse._util.text import counted

_PLAIN_KEY = re.compile(r"^[A-Za-z_@$][\w@$-]*$")

Loc = Sequence[str | int]


def format_path(loc: Loc) -> str:
    """``("steps", 3, "type")`` as ``steps[3].type``; odd keys quoted (``['a b']``), ``()`` as $."""
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
    """What a parsed JSON value is, for a message: ``an object with keys a, b``, ``a number``.

    In JSON's words (a string, a list), as the file says it; a value JSON has no word for (read
    in memory: a ``datetime``) by its Python type.
    """
    if value is None:
        return "null"
    if isinstance(value, str) and not value.strip():  # "a string" where a name is wanted misleads
        return "an empty string" if not value else "a blank string"
    if isinstance(value, Mapping):
        return f"an object with keys {', '.join(sorted(map(str, value))[:6])}"
    return _JSON_WORDS.get(type(value), f"a {type(value).__name__}")


_JSON_WORDS = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "a list",
}


_PATTERN_MEANINGS = {
    r"^kp:trace:[\s\S]+": "an id of the form 'kp:trace:<anything non-empty>'",
    r"\S": "a name that is not blank",
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
    if len(text) <= _MAX_PREVIEW:
        return text
    # Cut between words: a token cut short would no longer be found by the secret rules that
    # problems pass through before they are printed (``runs.read``).
    cut = text.rfind(" ", 0, _MAX_PREVIEW - 1)
    if cut > 0:
        return text[:cut] + " …"
    return f"a string of {len(value)} characters" if isinstance(value, str) else "a long value"


_FIXED = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field; remove it or check its spelling",
    "finite_number": "NaN and infinite numbers are not allowed; use a finite number",
}
# pydantic's message prefixes, and what replaces each after "got <value>; ".
_PREFIXES = {"Value error, ": "", "Input should be ": "expected ", "Input ": ""}


def describe(error: ErrorDetails) -> str:
    """One readable sentence for one pydantic error: what it holds and what was expected."""
    kind, message = error["type"], error["msg"]
    if kind in _FIXED:
        return _FIXED[kind]
    found = preview(error.get("input"))
    if kind == "string_pattern_mismatch":
        pattern = str(error.get("ctx", {}).get("pattern", ""))
        expected = _PATTERN_MEANINGS.get(pattern, f"a string matching {pattern!r}")
        return f"got {found}; expected {expected}"
    if kind in {"model_type", "model_attributes_type", "dict_type"}:
        return f"got {found}; expected a JSON object"
    if kind == "too_short":
        least = error.get("ctx", {}).get("min_length", 1)
        return f"got {found}; expected at least {counted(least, 'item')}"
    if kind == "string_too_short":
        least = error.get("ctx", {}).get("min_length", 1)
        expected = "a non-empty string" if least == 1 else f"at least {least} characters"
        return f"got {found}; expected {expected}"
    for prefix, replacement in _PREFIXES.items():
        if message.startswith(prefix):
            return f"got {found}; {replacement}{message.removeprefix(prefix)}"
    return f"{message} (got {found})"


def as_object(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object (a mapping), else an empty one: for optional keys."""
    return value if isinstance(value, Mapping) else {}


def as_string(value: Any) -> str | None:
    """``value`` when it is a string, else ``None``: for optional keys."""
    return value if isinstance(value, str) else None


def non_empty(value: Any) -> str | None:
    """``value`` when it is a string of at least one character (an id, a name), else ``None``."""
    return value if isinstance(value, str) and value else None


def non_blank(value: Any) -> str | None:
    """``value`` when it is a string with more than white space in it, else ``None``."""
    return value if isinstance(value, str) and value.strip() else None
