"""Values described for messages: a preview never shows part of a word."""

from __future__ import annotations

from knowledgepulse._util.jsonpath import preview


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
