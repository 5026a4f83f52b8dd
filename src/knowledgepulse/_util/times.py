"""Times as sources write them, read into one kind of value: an aware datetime, or nanoseconds.

The one place a time is parsed: every source reads its times through :func:`moment` (or
:func:`iso_time` / :func:`epoch_time` where only one form is allowed, :func:`nanoseconds` where
nanoseconds are kept). A time without a zone is UTC, never the machine's local time, so what a
file converts to does not depend on the ``TZ`` of the machine that reads it.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_UNITS = ((1e17, 1_000_000_000), (1e14, 1_000_000), (1e11, 1_000))
"""Per second, for numbers from this size: nanoseconds, microseconds, milliseconds; else seconds.

pandas and ``Date.now()`` write milliseconds, Jaeger microseconds, OTLP nanoseconds: any time
after 1973 in one unit is past the year 5138 in the next larger one, so the size tells the unit.
"""

_LEAP = re.compile(r"(?<=[Tt ]\d{2}:\d{2}:)60(?=$|[.,Zz+-])")
"""A leap second (``23:59:60``), which RFC 3339 allows and ``datetime`` cannot hold."""

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def iso_time(value: Any) -> datetime | None:
    """ISO 8601 / RFC 3339 text as an aware datetime (UTC when it names no zone); else ``None``.

    ``Z`` and ``z`` are UTC; digits past microseconds are cut (a datetime holds no more); a leap
    second ``23:59:60`` is the next day's ``00:00:00``, as Unix time counts it.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text[-1:] == "z":
        text = text[:-1] + "Z"
    text, leap = _LEAP.subn("59", text, count=1)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if leap:
        try:
            parsed += timedelta(seconds=1)
        except OverflowError:  # 9999-12-31T23:59:60
            return None
    return aware(parsed)


def epoch_time(value: Any) -> datetime | None:
    """Unix time as a UTC datetime: seconds, or ms, µs or ns told by the number's size.

    A number, or a string that holds one (``"1700000000"``). ``None`` for anything else, or a
    time no datetime holds.
    """
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER.fullmatch(text):
            return None
        value = int(text) if text.lstrip("-").isdigit() and len(text) <= 24 else float(text)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    per_second = units_per_second(value)
    try:
        if isinstance(value, int):  # exact: a float has no room for nanoseconds since 1970
            return EPOCH + timedelta(microseconds=value * 1_000_000 // per_second)
        return datetime.fromtimestamp(value / per_second, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def units_per_second(number: float) -> int:
    """How many of a Unix time's units make a second, told by its size (see :data:`_UNITS`)."""
    return next((per for limit, per in _UNITS if abs(number) >= limit), 1)


def moment(value: Any) -> datetime | None:
    """Any time a source writes, as an aware datetime; ``None`` when it is none.

    A datetime (a pandas ``Timestamp`` too), a numpy ``datetime64``, a date (its midnight),
    ISO 8601 text (:func:`iso_time`), or Unix time (:func:`epoch_time`); a zone-less one is UTC.
    """
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, date):  # a date alone (a Parquet date32 column)
        return datetime.combine(value, time(), UTC)
    if type(value).__name__ == "datetime64":  # numpy's, told without importing numpy
        value = value.astype("datetime64[us]").item()  # a datetime; None (NaT); an int (far)
        return aware(value) if isinstance(value, datetime) else None
    return iso_time(value) or epoch_time(value)


def aware(value: datetime) -> datetime:
    """``value`` with its zone; UTC when it has none (never the machine's local time)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def nanoseconds(value: datetime) -> int:
    """An aware datetime as whole nanoseconds since the epoch, exactly (before 1970 too)."""
    return (value - EPOCH) // timedelta(microseconds=1) * 1000


def elapsed_ms(start: datetime | None, end: datetime | None) -> float | None:
    """Milliseconds from ``start`` to ``end``; ``None`` when either is unknown.

    Negative when the end is before the start (two machines' clocks): the caller judges that.
    """
    if start is None or end is None:
        return None
    return (end - start).total_seconds() * 1000


__all__ = [
    "EPOCH",
    "aware",
    "elapsed_ms",
    "epoch_time",
    "iso_time",
    "moment",
    "nanoseconds",
    "units_per_second",
]
