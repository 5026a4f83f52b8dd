"""Values described for messages: a preview never shows part of a word."""

from __future__ import annotations

from knowledgepulse._util.jsonpath import as_string, non_blank, non_empty, preview


def test_a_short_value_is_shown_whole() -> None:
    """Up to 60 characters: the value's JSON."""
    assert preview("ok then") == '"ok then"'
    assert preview(12) == "12"


def test_a_long_value_is_cut_between_words() -> None:
    """A token at the cut is left out whole: half a secret is no longer found by the rules."""
    text = "word " * 10 + "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    shown = preview(text)
    assert shown.endswith(" …")
    assert "ghp_" not in shown
    assert len(shown) <= 60


def test_a_long_value_without_a_space_is_described_by_its_length() -> None:
    """No word boundary to cut at: only the length is told."""
    assert preview("x" * 100) == "a string of 100 characters"


def test_string_fields_are_read_by_how_much_they_must_hold() -> None:
    """as_string takes any string, non_empty one with a character, non_blank one with a word."""
    for value in (None, 3, ["a"], b"a"):
        assert (as_string(value), non_empty(value), non_blank(value)) == (None, None, None)
    assert (as_string(""), non_empty(""), non_blank("")) == ("", None, None)
    assert (as_string(" \n"), non_empty(" \n"), non_blank(" \n")) == (" \n", " \n", None)
    assert (as_string(" a "), non_empty(" a "), non_blank(" a ")) == (" a ", " a ", " a ")
