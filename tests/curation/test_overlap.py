"""N-gram coverage for decontamination: normalised words, hashed grams, the inverted index."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.curation.overlap import (
    CANDIDATES,
    MIN_OVERLAP,
    OverlapIndex,
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
