"""Checks of the numbers a scorer, cache or embedder is configured with, raising one clear error."""

from __future__ import annotations

import math

from knowledgepulse.errors import ScorerParameterError


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


def optional_duration_ms(value: object, name: str) -> float | None:
    """``None``, or ``value`` when it is a finite number of milliseconds above 0 (as above)."""
    if value is None:
        return None
    # NaN fails every comparison; a huge int compares with inf exactly (isfinite would overflow).
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf:
        return value
    raise ScorerParameterError(
        f"{name} must be a positive number of milliseconds, or None for no expiry; got {value!r}"
    )
