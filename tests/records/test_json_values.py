"""One JSON value from bytes: orjson's strictness, and where a problem is when it refuses one."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records.json_values import (
    LONE_SURROGATE,
    MAX_NESTING,
    TOO_DEEP,
    JsonError,
    check_depth,
    json_value,
    loads,
    parsed_json,
    repeated,
    repeated_key,
)


def test_a_repeated_key_keeps_the_last_value_and_is_told() -> None:
    """As JSON.parse does (spec: changed in session 3), with a warning naming the key."""
    value, warnings = loads(b'{"a": 1, "b": {"c": 1, "c": [2]}, "a": 3}')
    assert value == {"a": 3, "b": {"c": [2]}}
    assert len(warnings) == 1
    assert warnings[0][0] == ""
    assert warnings[0][1] in (repeated("a"), repeated("c"))
    assert "appears twice in one object" in warnings[0][1]


@pytest.mark.parametrize(
    "text",
    [
        '{"notes": "x", "notes": "y"}',
        '[{"a": {"k": 1, "k": 2}}]',
        '{"a": "\\\\u003a", "a": 1}',  # a backslash and u003a, not a colon
        '{"k\\u003a": 1, "k\\u003a": 2}',
        '{"a": 1, "\\u0061": 2}',  # the same key, escaped
    ],
)
def test_repeated_key_finds_a_key_written_twice_in_one_object(text: str) -> None:
    """However the key is written, a second occurrence in one object is found."""
    assert repeated_key(text.encode(), orjson.loads(text)) is not None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "b:c", "d": {"a": "\\u003a"}}',
        '{"a": "\\\\u003a"}',  # a backslash and u003a: counted as a colon, then parsed
        '[{"a": 1}, {"a": 2}]',
        '"x:y"',
        "[]",
    ],
)
def test_repeated_key_finds_nothing_where_each_object_has_distinct_keys(text: str) -> None:
    """Equal keys in different objects, colons and escaped colons in strings: no repeated key."""
    assert repeated_key(text.encode(), orjson.loads(text)) is None


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON, st.booleans())
def test_no_repeated_key_is_found_in_any_value_s_own_json(value: Any, ascii_only: bool) -> None:
    """Any JSON text of a parsed value (escaped or not) has no repeated key."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert repeated_key(text.encode(), value) is None


NOT_JSON = "NaN and infinite numbers are not valid JSON"


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (b'{"a": [1, NaN]}', "a[1]", NOT_JSON),
        (b'{"b": {"c": -Infinity}}', "b.c", NOT_JSON),
        (b"[1e999]", "[0]", "a number too large for a float (1e999); write it as a string"),
        (b'{"d": -2.5e400}', "d", "a number too large for a float (-2.5e400)"),
    ],
)
def test_a_non_finite_number_is_refused_at_its_path(text: bytes, path: str, message: str) -> None:
    """NaN and Infinity are not JSON; 1e999 is, but overflows a float and is told so."""
    with pytest.raises(JsonError) as raised:
        loads(text)
    assert raised.value.path == path
    assert raised.value.message.startswith(message)


@pytest.mark.parametrize(
    "text",
    [
        b'{"reward": NaN}',
        b'{"reward": NaN, "note": "x\\ud800"}',
        b'{"a": 18446744073709551616, "b": NaN}',
    ],
)
def test_a_nan_in_a_records_own_column_is_a_missing_value_read_as_null(text: bytes) -> None:
    """Python's json.dumps writes a DataFrame's missing float as NaN: read as null, as pandas'
    to_json writes it and as a Parquet row's NaN cell is taken; deeper in, still refused."""
    value, _ = loads(text)
    assert isinstance(value, dict)
    assert value["reward" if "reward" in value else "b"] is None
    for nested in (b'{"row": {"reward": NaN}}', b"[NaN]", b'{"reward": Infinity}'):
        with pytest.raises(JsonError, match=NOT_JSON):
            loads(nested)


def test_a_long_overflowing_number_is_shown_by_its_first_digits() -> None:
    """A literal of 400 digits is shown cut, not whole, in its problem."""
    with pytest.raises(JsonError) as raised:
        loads(b"[" + b"9" * 400 + b".0]")
    assert raised.value.message.startswith(
        "a number too large for a float (99999999999999999999...)"
    )


def test_a_nan_before_a_syntax_error_is_a_syntax_error_with_its_column() -> None:
    """The record that used to stop whole runs: one JsonError, located."""
    with pytest.raises(JsonError) as raised:
        loads(b'{"a": NaN, "b": "trunc')
    assert raised.value.line == 1
    assert raised.value.message.startswith("invalid JSON: ")
    assert raised.value.message.endswith("(column 7)")


def test_integers_past_64_bits_read_as_floats_and_absurd_ones_are_refused() -> None:
    """As JSON.parse reads every number; past Python's 4,300 digits, a located message."""
    assert loads(b"[18446744073709551615, 18446744073709551616]")[0] == [
        18446744073709551615,
        1.8446744073709552e19,
    ]
    with pytest.raises(JsonError, match="a number too long to read"):
        loads(b"[" + b"9" * 5000 + b"]")


def test_a_lone_surrogate_is_read_as_a_replacement_character_with_its_path() -> None:
    """Half a surrogate pair names no character: U+FFFD, and the path for a warning."""
    assert loads(b'{"a": ["ok", "x\\udc00"]}') == (
        {"a": ["ok", "x\ufffd"]},
        [("a[1]", LONE_SURROGATE)],
    )
    assert "U+FFFD" in LONE_SURROGATE


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1100, 5000])
def test_nesting_past_the_bound_is_refused_whatever_the_depth(depth: int) -> None:
    """Past MAX_NESTING (or past orjson's and Python's own limits) is one JsonError."""
    with pytest.raises(JsonError) as raised:
        loads(b"[" * depth + b"]" * depth)
    assert raised.value.message == TOO_DEEP


def test_a_parsed_value_is_checked_for_depth_as_a_parsed_text_is() -> None:
    """check_depth on a parsed value (ijson's elements) refuses what loads refuses, at its path."""
    deep: object = []
    for _ in range(MAX_NESTING):
        deep = [deep]
    with pytest.raises(JsonError) as raised:
        check_depth({"a": deep})
    assert raised.value.path.startswith("a[0][0]")
    check_depth({"a": [[]] * 500})  # wide is fine


def test_json_value_reads_an_integer_past_64_bits_as_orjson_does() -> None:
    """A float, so that what is converted can be written again; past a double, refused."""
    assert json_value([2**64 - 1, 2**64, -(2**63) - 1]) == [2**64 - 1, 2.0**64, -(2.0**63)]
    assert isinstance(json_value(10**30), float)
    with pytest.raises(ValueError, match="past a double"):
        json_value(10**400)


_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(2**63 - 2, 2**64 + 2)
    | st.floats()
    | st.text(st.characters(exclude_categories=())),  # lone surrogates too
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


def _outcome(read: Any, text: str) -> str:
    """What reading ``text`` gives: its value's exact JSON (types, float bits), or refused."""
    try:
        return repr(read(text))
    except (ValueError, RecursionError):
        return "refused"


@given(_ANY_JSON, st.booleans(), st.integers(0, 3), st.integers(MAX_NESTING - 3, MAX_NESTING + 3))
def test_parsed_json_gives_what_json_value_of_json_loads_gives(
    value: Any, ascii_only: bool, cut: int, depth: int
) -> None:
    """orjson's fast reading is the same value as json's read through json_value, or both refuse.

    NaN and infinities, integers past 64 bits, lone surrogates, nesting around the bound, and
    texts cut short.
    """
    text = json.dumps(value, ensure_ascii=ascii_only)
    for given_text in (text, text[: len(text) - cut], "[" * depth + text + "]" * depth):
        assert _outcome(parsed_json, given_text) == _outcome(
            lambda t: json_value(json.loads(t)), given_text
        )
