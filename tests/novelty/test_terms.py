"""Term vectors (signed feature hashing) and the terms a trace acts on."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from knowledgepulse._util.text import comparable
from knowledgepulse.novelty.representation import term_vectors
from knowledgepulse.trace.text import action_terms
from tests.builders import make_trace, step

TERMS = st.sets(st.text(min_size=1, max_size=12), max_size=30)
# Texts dense in what the patterns look at: word characters (Unicode digits too), -.@:/, spaces.
TERM_TEXTS = st.text(st.sampled_from("aZ_é9٣-.@:/ \n,İ"), max_size=60) | st.text(max_size=60)
IDENTIFIER = re.compile(r"[\w\-.@:/]*\d[\w\-.@:/]*")
"""The identifiers' definition, as it was first written: a backtracking pattern."""


def term_vector(terms: Iterable[str], dimensions: int = 384) -> NDArray[np.float32]:
    """One set's row of :func:`term_vectors`."""
    row: NDArray[np.float32] = term_vectors([terms], dimensions)[0]
    return row


@given(TERMS)
def test_a_term_vector_is_a_unit_vector_or_zero(terms: set[str]) -> None:
    """Empty sets (and sets whose signs all cancel) give zeros; every other set a unit vector."""
    vector = term_vector(terms, dimensions=64)
    norm = float(np.linalg.norm(vector))
    assert norm == pytest.approx(1.0, abs=1e-6) or norm == 0.0
    if not terms:
        assert norm == 0.0


@given(st.lists(st.text(max_size=8), max_size=20), st.randoms())
def test_order_and_repeats_do_not_change_the_vector(terms: list[str], rng: object) -> None:
    """A set of terms: shuffled or repeated, the same bits."""
    shuffled = list(terms) * 2
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert np.array_equal(term_vector(terms), term_vector(shuffled))


@given(TERMS, TERMS)
def test_cosine_is_the_overlap_when_no_two_terms_share_a_bucket(a: set[str], b: set[str]) -> None:
    """Without collisions the cosine is |A ∩ B| / sqrt(|A| |B|), exactly as for the sets."""
    dimensions = 1 << 16  # collisions among 60 terms are rare (60² / 2¹⁷), and checked below
    union = sorted(a | b)
    buckets = {int(np.flatnonzero(term_vector([t], dimensions))[0]) for t in union}
    if not a or not b or len(buckets) < len(union):
        return
    cosine = float(term_vector(a, dimensions) @ term_vector(b, dimensions))
    assert cosine == pytest.approx(len(a & b) / np.sqrt(len(a) * len(b)), abs=1e-5)


def test_the_vector_is_the_same_in_every_process() -> None:
    """Digests, not Python's salted hash: a fixed term has a fixed bucket and sign."""
    vector = term_vector(["mia_li_3668"], dimensions=384)
    (bucket,) = np.flatnonzero(vector)
    import hashlib

    digest = int.from_bytes(hashlib.blake2b(b"mia_li_3668", digest_size=8).digest(), "little")
    assert bucket == digest % 384
    assert vector[bucket] == (1.0 if digest >> 63 else -1.0)


@given(st.lists(TERMS, max_size=6), st.sampled_from([1, 7, 384]))
def test_term_vectors_are_the_plain_loop_over_each_sets_terms(
    sets: list[set[str]], dimensions: int
) -> None:
    """The batch fill equals adding each term's sign to its bucket one term at a time."""
    plain = np.zeros((len(sets), dimensions), dtype=np.float32)
    for row, terms in enumerate(sets):
        for term in terms:
            digest = int.from_bytes(
                hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                "little",
            )
            plain[row, digest % dimensions] += 1.0 if digest >> 63 else -1.0
    norms = np.linalg.norm(plain.astype(np.float64), axis=1, keepdims=True)
    plain = (plain / np.where(norms == 0, 1, norms)).astype(np.float32)
    assert np.array_equal(term_vectors(sets, dimensions), plain)


def test_term_vectors_stack_one_row_per_set() -> None:
    """The batch form is the one-by-one form, row by row."""
    sets = [{"a", "b"}, set(), {"c"}]
    matrix = term_vectors(sets, dimensions=32)
    assert matrix.shape == (3, 32)
    for row, terms in zip(matrix, sets, strict=True):
        assert np.array_equal(row, term_vector(terms, dimensions=32))


def test_action_terms_are_the_arguments_words_and_the_identifiers() -> None:
    """Arguments' words (nested too) and digit-bearing tokens of the objective and actions."""
    trace = make_trace(
        objective="Cancel reservation XK92LM for flight HAT136",
        step_list=[
            step(0, "thought", "user 4411 might be mia"),
            {
                **step(1, "tool_call", "get_user mia_li_3668", "get_user"),
                "input": {
                    "user_id": "mia_li_3668",
                    "filters": {"cities": ["New York", "Seattle"]},
                    "limit": 5,
                    "flag": None,
                },
            },
            step(2, "observation", "reservation ZZ77QQ on 2024-05-20"),
            step(3, "error_recovery", "retry on 2024-05-21", "get_user"),
        ],
    )
    assert action_terms(trace) == {
        "xk92lm",
        "hat136",  # the objective's identifiers
        "mia_li_3668",
        "new",
        "york",
        "seattle",
        "5",  # the arguments' words (None left out)
        "2024-05-21",  # an identifier in an action's content
    }  # the thought's 4411 and the observation's ZZ77QQ are not actions


def test_an_identifier_written_full_width_or_in_capitals_is_one_term() -> None:
    """Japanese text often writes an order number full-width: the same term as in ASCII."""
    thinking = [step(0, "thought", "checking")]
    full_width = "".join(chr(ord(char) + 0xFEE0) for char in "AB123")
    writings = (f"注文 {full_width} を取消", "注文 AB123 を取消", "注文 ab123 を取消")
    terms = [action_terms(make_trace(objective=text, step_list=thinking)) for text in writings]
    assert terms == [{"ab123"}] * 3


def test_a_trace_without_actions_has_only_its_objective_identifiers() -> None:
    """No tool call: the terms are what the objective names, possibly nothing."""
    thinking = [step(0, "thought", "step 42 of the plan")]
    assert action_terms(make_trace(objective="What is 2+2?", step_list=thinking)) == set()
    assert action_terms(make_trace(objective="Order A1234", step_list=thinking)) == {"a1234"}


@given(objective=TERM_TEXTS, content=TERM_TEXTS, value=TERM_TEXTS)
def test_action_terms_are_the_patterns_matches_text_by_text(
    objective: str, content: str, value: str
) -> None:
    """The runs with a digit are what the backtracking pattern finds; the words, \\w+'s."""
    trace = make_trace(
        objective=objective or "x",
        step_list=[{**step(0, "tool_call", content, "t"), "input": {"q": value, "n": [value]}}],
    )
    identifiers = IDENTIFIER.findall(objective or "x") + IDENTIFIER.findall(content)
    expected = {comparable(token) for token in identifiers if len(token) >= 3}
    expected |= {comparable(word) for word in re.findall(r"\w+", value)}
    assert action_terms(trace) == expected
