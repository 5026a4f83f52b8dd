"""The one reading of times: ISO 8601 text and Unix numbers as aware datetimes, never local."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse._util.times import (
    EPOCH,
    elapsed_ms,
    epoch_time,
    iso_time,
    moment,
    nanoseconds,
)

OFFSETS = st.integers(min_value=-14 * 60, max_value=14 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
INSTANTS = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)
# Unix times from 1974 (past the milliseconds' threshold in milliseconds) to 5000.
LATER = st.datetimes(min_value=datetime(1974, 1, 1), max_value=datetime(5000, 1, 1)).map(
    lambda naive: naive.replace(tzinfo=UTC)
)


@given(INSTANTS, OFFSETS)
def test_iso_text_in_any_offset_reads_back_as_the_same_instant(
    instant: datetime, offset: timezone
) -> None:
    """The same instant written in any offset, with Z, or with no zone (UTC) reads equal."""
    written = instant.astimezone(offset).isoformat()
    assert iso_time(written) == instant
    assert iso_time(instant.isoformat().replace("+00:00", "Z")) == instant
    assert iso_time(instant.replace(tzinfo=None).isoformat()) == instant


@given(LATER)
def test_a_unix_time_reads_the_same_in_seconds_ms_us_and_ns(instant: datetime) -> None:
    """The unit is told by the number's size, so each unit gives the same instant."""
    micros = (instant - EPOCH) // timedelta(microseconds=1)
    for per_second in (1_000, 1_000_000, 1_000_000_000):
        whole = micros * per_second // 1_000_000
        expected = EPOCH + timedelta(microseconds=whole * 1_000_000 // per_second)
        assert epoch_time(whole) == expected
        assert epoch_time(str(whole)) == expected
    assert epoch_time(micros // 1_000_000) == EPOCH + timedelta(seconds=micros // 1_000_000)


@given(INSTANTS)
def test_nanoseconds_are_exact_before_1970_too(instant: datetime) -> None:
    """Nanoseconds since the epoch give back the instant (a float's seconds would round)."""
    assert EPOCH + timedelta(microseconds=nanoseconds(instant) // 1000) == instant


def test_a_leap_second_is_the_next_day_s_first_second() -> None:
    """23:59:60 (RFC 3339 allows it) reads, in order, as Unix time counts it."""
    leap = iso_time("2016-12-31T23:59:60.5Z")
    assert leap == iso_time("2017-01-01T00:00:00.5Z")
    assert iso_time("2017-01-01T05:29:60+05:30") == iso_time("2017-01-01T00:00:00Z")
    assert iso_time("9999-12-31T23:59:60Z") is None  # past what a datetime holds


def test_a_lower_case_z_is_utc() -> None:
    """RFC 3339 allows ``z``; it is ``Z``."""
    assert iso_time("2026-03-08t10:00:00z") == datetime(2026, 3, 8, 10, tzinfo=UTC)


def test_a_naive_datetime_is_utc() -> None:
    """A datetime without a zone (a naive Parquet column, a Python row) is UTC, not local."""
    assert moment(datetime(2026, 3, 8, 10)) == datetime(2026, 3, 8, 10, tzinfo=UTC)


def test_a_numpy_datetime64_and_a_date_are_read() -> None:
    """A DataFrame's ``to_numpy()`` row holds datetime64; a date column a date: no 1970."""
    assert moment(np.datetime64("2026-03-08T10:00:00.123456789")) == datetime(
        2026, 3, 8, 10, 0, 0, 123456, tzinfo=UTC
    )
    # A column's NaT has the column's unit: a NaT without one warns from numpy 2.5 (deprecated).
    assert moment(np.datetime64("NaT", "ns")) is None
    assert moment(date(2026, 3, 8)) == datetime(2026, 3, 8, tzinfo=UTC)


def test_elapsed_ms_is_unknown_without_both_ends_and_keeps_a_negative_one() -> None:
    """A missing start or end is no duration; an end before the start stays negative."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert elapsed_ms(start, start + timedelta(seconds=1.5)) == 1500.0
    assert elapsed_ms(start, start - timedelta(milliseconds=2)) == -2.0
    assert elapsed_ms(None, start) is None
    assert elapsed_ms(start, None) is None
