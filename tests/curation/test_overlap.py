"""N-gram coverage for decontamination: normalised words, hashed grams, the inverted index."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.overlap import (
    CANDIDATES,
    COMMON_GRAM,
    MIN_OVERLAP,
    OverlapIndex,
    aligned,
    coverage,
    words_of,
)

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


def test_a_reworded_copy_is_covered_past_the_minimum() -> None:
    """Two words changed and two swapped: only they are left uncovered, not the grams over them."""
    reference = (
        "Find the cheapest flight from Boston to Denver on March 3 for two adults, pay with the "
        "card on file, and email both boarding passes to the traveller."
    )
    reworded = reference.replace("cheapest", "fastest").replace("two adults", "adults two")
    reworded = reworded.replace("email", "text")
    match = OverlapIndex([reference]).best_match(reworded)
    assert match is not None
    assert match.overlap >= MIN_OVERLAP
    assert match.overlap < 1.0


def test_a_text_sharing_one_clause_stays_below_the_minimum() -> None:
    """A text quoting one clause of three covers about a third of the reference, no more."""
    reference = (
        "Find the cheapest flight from Boston to Denver on March 3 for two adults. Pay with the "
        "card on file and keep the seats together. Email both boarding passes to the traveller."
    )
    other = (
        "Pay with the card on file and keep the seats together. Then write a short poem about "
        "harbour lights, and list three rivers of Europe in alphabetical order."
    )
    match = OverlapIndex([reference]).best_match(other)
    assert match is not None
    assert match.overlap < MIN_OVERLAP


@given(WORDS, WORDS)
def test_coverage_is_a_share_and_a_text_covers_itself_whole(
    reference: list[str], other: list[str]
) -> None:
    """Coverage is in [0, 1], and 1 for the reference itself."""
    assert 0.0 <= coverage(reference, other) <= 1.0
    if reference:
        assert coverage(reference, reference) == 1.0


def test_an_empty_reference_is_covered_by_no_text() -> None:
    """A reference without words is not contained in anything (it would otherwise match all)."""
    assert coverage([], ["any", "words"]) == 0.0
    assert coverage([], []) == 0.0


@given(WORDS, WORDS)
def test_the_alignment_flags_each_reference_word_and_matches_in_order(
    reference: list[str], other: list[str]
) -> None:
    """One flag per reference word; the words flagged, in order, are a subsequence of the text."""
    flags = aligned(reference, other)
    assert len(flags) == len(reference)
    rest = iter(other)
    assert all(word in rest for word, flag in zip(reference, flags, strict=True) if flag)
    assert all(aligned(reference, reference))


def test_a_long_text_whose_words_recur_still_aligns() -> None:
    """No automatic junk: words frequent in a text of 200 words or more are still matched."""
    reference = words_of("alpha beta gamma delta epsilon")
    assert all(aligned(reference, ["so", *reference * 60]))


def test_an_index_counts_its_reference_items() -> None:
    """len() of an index is the number of reference texts, empty ones included."""
    assert len(OverlapIndex([TASK, "", "Reverse a list."])) == 3
    assert len(OverlapIndex([])) == 0


def test_an_n_gram_of_one_word_is_the_least() -> None:
    """n=1 indexes single words; n=0 is refused with the value given."""
    assert OverlapIndex([TASK], n=1).best_match("cheapest") is not None
    with pytest.raises(ValueError, match="n=0"):
        OverlapIndex([TASK], n=0)


def test_a_gram_held_by_more_than_common_gram_items_names_no_candidate() -> None:
    """A phrase of COMMON_GRAM items still names them; one item more, and it names none."""
    assert OverlapIndex(["Reverse a list."] * COMMON_GRAM).best_match("reverse a list") == (
        OverlapIndex(["Reverse a list."]).best_match("reverse a list")
    )
    assert (
        OverlapIndex(["Reverse a list."] * (COMMON_GRAM + 1)).best_match("reverse a list") is None
    )


def _tied_references() -> tuple[list[str], str]:
    """Items that each share one 8-gram with the text; the later ones cover more of themselves.

    Words are letters only, since every run of digits reads as one word.
    """

    def word(number: int, prefix: str = "w") -> str:
        return prefix + "".join(chr(ord("a") + int(digit)) for digit in str(number))

    text = " ".join(word(i) for i in range(3 * CANDIDATES + 20))
    references = [
        " ".join(word(i) for i in range(3 * k, 3 * k + 8))
        + " "
        + " ".join(word(100 * k + j, "f") for j in range(CANDIDATES + 6 - k))
        for k in range(CANDIDATES + 4)
    ]
    return references, text


def test_items_tied_on_shared_grams_are_measured_earliest_first() -> None:
    """Past CANDIDATES items sharing as many grams, the earlier ones are measured, not the later."""
    references, text = _tied_references()
    match = OverlapIndex(references).best_match(text)
    assert match is not None
    assert match.index == CANDIDATES - 1  # the best of the first CANDIDATES tied items


def test_the_match_is_the_same_under_any_hash_seed() -> None:
    """Python's hash seed, which orders the set of a text's grams, does not change the match."""
    program = "\n".join(
        [
            "from knowledgepulse.curation.overlap import CANDIDATES, OverlapIndex",
            inspect.getsource(_tied_references),
            "print(OverlapIndex(_tied_references()[0]).best_match(_tied_references()[1]))",
        ]
    )
    answers = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert len(answers) == 1, answers
