"""N-gram coverage for decontamination: normalised words, hashed grams, the inverted index."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.overlap import OverlapIndex, coverage, gram_hashes, words_of

TASK = "Find the cheapest flight from Boston to Denver on March 3 for two adults and book it."
WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "7", "Omega"]), max_size=30)


def test_words_drop_case_punctuation_and_the_value_of_numbers() -> None:
    """Two texts differing only in case, punctuation and numbers have the same words."""
    assert words_of("Book 3 seats, on May 12!") == words_of("book 40 seats on may 7")


def test_a_copy_with_other_numbers_covers_the_reference_whole() -> None:
    """Changed numbers still match: the copy covers every word of the reference."""
    match = OverlapIndex([TASK]).best_match(TASK.replace("3", "19").upper())
    assert match is not None
    assert match.overlap == 1.0


def test_an_unrelated_text_matches_nothing() -> None:
    """A text sharing no 8-gram with the reference names no item."""
    index = OverlapIndex([TASK])
    assert index.best_match("Write a poem about the sea and the harbour lights at night.") is None


def test_a_text_shorter_than_n_matches_only_its_equal() -> None:
    """A short reference is one gram: an equal text covers it, a longer one does not."""
    index = OverlapIndex(["Reverse a list."])
    assert index.best_match("reverse a LIST") is not None
    assert index.best_match("Reverse a list in place without a copy of it, quickly.") is None


@given(WORDS, WORDS)
def test_coverage_is_a_share_and_a_text_covers_itself_whole(
    reference: list[str], other: list[str]
) -> None:
    """Coverage is in [0, 1], and 1 for the reference's own grams."""
    grams = gram_hashes(reference)
    value = coverage(grams, len(reference), set(gram_hashes(other)), 8)
    assert 0.0 <= value <= 1.0
    if reference:
        assert coverage(grams, len(reference), set(grams), 8) == 1.0
