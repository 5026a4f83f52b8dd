"""orjson's fast path never changes a number: integers it would read as floats go the strict way."""

from __future__ import annotations

import pytest

from knowledgepulse.records import strict_json


@pytest.mark.parametrize(
    "text",
    [
        "-9223372036854775809",  # one below -2**63: 19 digits, a float in orjson
        "-9999999999999999999",
        "18446744073709551616",  # 2**64
        '{"x": [1, -9651389719410112512]}',
    ],
)
def test_an_integer_past_64_bits_stays_an_exact_integer(text: str) -> None:
    """What orjson would round to a float is read exactly, as the strict parser reads it."""
    fast = strict_json.loads_bytes(text.encode())
    assert fast == strict_json.loads(text)
    assert repr(fast) == repr(strict_json.loads(text))
    assert "e+" not in repr(fast)


def test_integers_within_64_bits_are_read_as_integers() -> None:
    """The edges of orjson's range are exact integers too."""
    assert strict_json.loads_bytes(b"[-9223372036854775808, 18446744073709551615]") == [
        -(2**63),
        2**64 - 1,
    ]
