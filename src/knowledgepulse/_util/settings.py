"""Checks of the settings a call is given (a scorer's, a cache's, a run's), raising one clear error.

The error names the setting with the value given (``budget='3'``, which a shell spells as its
option) and says what to give instead.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from knowledgepulse._util.text import did_you_mean
from knowledgepulse.errors import ScorerParameterError, Setting, SettingTypeError

T = TypeVar("T")


def wrong_setting(
    name: str, value: object, allowed: str, *, wrong_type: bool = False
) -> ScorerParameterError:
    """The error for ``name`` given ``value``, which it does not take: ``name=value: give ...``.

    ``wrong_type``: the value is of a type the setting never takes (a :class:`SettingTypeError`,
    a ``TypeError`` too). A value other than a number, a text or ``None`` is named by its type
    (``on_trace`` given a list: ``on_trace (a list): give ...``).
    """
    error = SettingTypeError if wrong_type else ScorerParameterError
    if value is None or isinstance(value, str | int | float | bool):
        return error(Setting(name, value), f": give {allowed}")
    return error(Setting(name), f" (a {type(value).__name__}): give {allowed}")


def unknown_keyword(
    call: str, name: str, known: Iterable[str], hint: str | None = None
) -> SettingTypeError:
    """The refusal of a keyword ``call`` does not take, as Python's own (a ``TypeError``).

    It names the closest of the ``known`` keywords (``hint`` instead, when given) and lists them.
    """
    taken = sorted(known)
    said = did_you_mean(name, taken) if hint is None else hint
    return SettingTypeError(
        f"{call}() got an unexpected keyword argument {name!r};{said} "
        f"the settings are {', '.join(taken)}"
    )


def paths_of(
    sources: object,
    name: str = "sources",
    allowed: str = "a path (a str or a Path), or a list of them",
) -> list[str | Path]:
    """One path or several, as a list: a str is one path (not a path a character).

    A path other than a str is a :class:`~pathlib.Path` (any ``os.PathLike``).

    Raises:
        SettingTypeError: ``sources`` is neither a path nor an iterable of paths.
    """
    if isinstance(sources, str | os.PathLike):
        sources = [sources]
    paths = list(sources) if isinstance(sources, Iterable) else None
    if paths is None or not all(isinstance(path, str | os.PathLike) for path in paths):
        raise wrong_setting(name, sources, allowed, wrong_type=True)
    return [path if isinstance(path, str | Path) else Path(path) for path in paths]


def path_of(value: object, name: str, allowed: str) -> Path:
    """``value`` (a str or any ``os.PathLike``) as a :class:`~pathlib.Path`.

    Raises:
        SettingTypeError: ``value`` is no path; ``allowed`` says what to give.
    """
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise wrong_setting(name, value, allowed, wrong_type=True)


def optional_path(value: object, name: str, allowed: str) -> Path | None:
    """``None`` as ``None``, else :func:`path_of` ``value``."""
    return None if value is None else path_of(value, name, allowed)


def iterable_of(values: T, name: str, allowed: str) -> T:
    """``values`` when it can be iterated; else the error saying what to give."""
    if not isinstance(values, Iterable) or isinstance(values, str | bytes):
        raise wrong_setting(name, values, allowed, wrong_type=True)
    return values


def one_of(value: object, name: str, allowed: Sequence[str]) -> str:
    """``value`` when it is one of ``allowed``; else an error listing them and the closest."""
    if isinstance(value, str) and value in allowed:
        return value
    hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
    listed = ", ".join(map(repr, allowed))
    allowed_text = f"one of {listed}" + (f".{hint}" if hint else "")
    raise wrong_setting(name, value, allowed_text, wrong_type=not isinstance(value, str))


def text_of(value: object, name: str, allowed: str) -> str:
    """``value`` when it is a text with more than spaces in it; ``allowed`` says what to give."""
    if isinstance(value, str) and value.strip():
        return value
    raise wrong_setting(name, value, allowed, wrong_type=not isinstance(value, str))


def count_of(value: object, name: str, *, least: int) -> int:
    """``value`` when it is a whole number (numpy's too, not a bool) of ``least`` or more."""
    if is_count(value, least):
        return int(cast(int, value))
    raise wrong_setting(
        name, value, f"a whole number of {least} or more", wrong_type=not is_count(value)
    )


def number_of(value: object, name: str, allowed: str, fits: Callable[[float], bool]) -> float:
    """``value`` when it is a real number (not NaN, not a bool) that ``fits`` (``allowed``)."""
    if is_number(value) and fits(cast(float, value)):
        return cast(float, value)
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    raise wrong_setting(name, value, allowed, wrong_type=not real)


def instance_of(value: object, name: str, kind: type[T], allowed: str) -> T:
    """``value`` when it is a ``kind``; else a :class:`SettingTypeError` saying what to give."""
    if isinstance(value, kind):
        return value
    raise wrong_setting(name, value, allowed, wrong_type=True)


def function_of(value: T, name: str, allowed: str) -> T:
    """``value`` when it can be called; else a :class:`SettingTypeError` saying what to give."""
    if callable(value):
        return value
    raise wrong_setting(name, value, allowed, wrong_type=True)


def is_count(value: object, least: int | None = None) -> bool:
    """Whether ``value`` is a whole number (numpy's too, not a bool), of ``least`` or more."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        return False
    return least is None or int(value) >= least


def is_number(value: object) -> bool:
    """Whether ``value`` is a real number other than NaN (numpy's too), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def positive_int(value: object, name: str, *, what: str = "a positive whole number") -> int:
    """``value`` when it is an int of at least 1 (not a bool); else a ScorerParameterError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScorerParameterError(f"{name} must be {what}, got {value!r}")
    return value


def optional_positive_int(value: object, name: str, *, none_means: str) -> int | None:
    """``None``, or ``value`` when it is an int of at least 1 (see :func:`positive_int`)."""
    if value is None:
        return None
    return positive_int(value, name, what=f"a positive whole number, or None for {none_means}")


def optional_duration_ms(value: object) -> float | None:
    """``None``, or ``value`` when it is a finite number of milliseconds above 0 (``ttl_ms``)."""
    if value is None:
        return None
    # NaN fails every comparison; a huge int compares with inf exactly (isfinite would overflow).
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf:
        return value
    raise ScorerParameterError(
        f"ttl_ms must be a positive number of milliseconds, or None for no expiry; got {value!r}"
    )


def check_cosine(name: str, value: float) -> None:
    """Refuse a cosine setting out of [-1, 1] (or NaN), which would keep or drop everything."""
    number_of(value, name, "a cosine, between -1 and 1", lambda cosine: -1.0 <= cosine <= 1.0)
