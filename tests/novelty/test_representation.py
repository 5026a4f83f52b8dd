"""Novelty texts: which text stands for a trace, and how its parts become one unit vector."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.typing import NDArray

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.novelty.representation import (
    DEFAULT_NOVELTY_TEXT,
    NOVELTY_TEXTS,
    TRUNCATE_PIECES,
    in_model_script,
    novelty_text,
    term_vectors,
)
from knowledgepulse.novelty.settings import WINDOW_PIECES
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace.text import action_terms, actions_text, objective_text, whole_text
from tests.builders import make_trace, step

WORDS = st.lists(st.sampled_from(["flight", "hotel", "refund", "oslo", "lisbon", "cancel"]))


def test_the_names_are_the_default_and_the_earlier_ones() -> None:
    """The representations are registered under the names the CLI and docs use."""
    assert sorted(NOVELTY_TEXTS) == [
        "objective-actions",
        "objective-actions-terms",
        "truncate",
        "windows",
    ]
    assert DEFAULT_NOVELTY_TEXT == "objective-actions-terms"


def test_an_unknown_name_lists_the_names_and_the_closest() -> None:
    """A typo is refused with every valid name and a suggestion."""
    with pytest.raises(ScorerParameterError, match=r"'objective-actions'.*Did you mean 'windows'"):
        novelty_text("window")


def test_actions_are_the_tool_calls_and_recoveries_in_order() -> None:
    """Thoughts and observations are left out of the actions text; the objective stands alone."""
    trace = make_trace(
        objective="Refund order 7",
        step_list=[
            step(0, "thought", "think"),
            step(1, "tool_call", "get_order 7", "get_order"),
            step(2, "observation", "order 7: shipped"),
            step(3, "error_recovery", "retry get_order 7", "get_order"),
        ],
    )
    assert objective_text(trace) == "Refund order 7"
    assert actions_text(trace) == "get_order 7 retry get_order 7"
    assert (
        whole_text(trace) == "Refund order 7 think get_order 7 order 7: shipped retry get_order 7"
    )


@pytest.mark.parametrize("name", sorted(NOVELTY_TEXTS))
def test_every_representation_gives_unit_vectors(name: str) -> None:
    """One unit vector per trace, as long as the parts times the embedder's dimensions."""
    representation = novelty_text(name)
    traces = [make_trace(objective=f"task {i}") for i in range(3)]
    vectors = representation.embed(HashingEmbedder(dimensions=16), traces).vectors
    assert vectors.shape == (3, representation.dimensions(16))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_trace_without_actions_is_still_a_unit_vector() -> None:
    """An empty part is left out (the objective then carries the whole vector)."""
    trace = make_trace(step_list=[step(0, "thought", "only thinking")])
    vector = novelty_text("objective-actions").embed(HashingEmbedder(), [trace]).vectors[0]
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-6)


class _EmptyTextHasAVector(HashingEmbedder):
    """Like MiniLM: the empty text embeds as one fixed, non-zero vector."""

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        vectors = super().embed_batch(texts)
        vectors[[not text for text in texts]] = np.eye(1, self.dimensions, 0, dtype=np.float32)
        return vectors


class _RecordsLeading(HashingEmbedder):
    """An embedder that can read a text's start, recording how many word pieces it was asked."""

    def __init__(self) -> None:
        super().__init__(dimensions=16)
        self.asked: list[int] = []

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        self.asked.append(max_pieces)
        return self.embed_batch(texts)


@pytest.mark.parametrize(
    ("name", "asked"),
    [
        ("truncate", [TRUNCATE_PIECES]),
        ("objective-actions", [WINDOW_PIECES, WINDOW_PIECES]),
        ("objective-actions-terms", [WINDOW_PIECES, WINDOW_PIECES]),
        ("windows", []),
    ],
)
def test_each_text_reads_the_word_pieces_its_description_names(name: str, asked: list[int]) -> None:
    """The pieces asked are those its description names: truncate 510, a part one window."""
    embedder = _RecordsLeading()
    novelty_text(name).embed(embedder, [make_trace(objective="Refund order 7")])
    assert embedder.asked == asked
    assert all(str(pieces) in novelty_text(name).description for pieces in asked)


@pytest.mark.parametrize("name", ["objective-actions", "objective-actions-terms"])
def test_two_traces_without_actions_compare_by_their_objectives_alone(name: str) -> None:
    """The absent actions add nothing: the cosine is the objectives' (no free third or half)."""
    embedder = _EmptyTextHasAVector(dimensions=64)
    traces = [
        make_trace(objective=objective, step_list=[step(0, "thought", "thinking")])
        for objective in ("Integrate x squared", "Name the capital of Peru")
    ]
    a, b = novelty_text(name).embed(embedder, traces).vectors
    objectives = embedder.embed_batch([objective_text(t) for t in traces])
    assert float(a @ b) == pytest.approx(float(objectives[0] @ objectives[1]), abs=1e-6)
    assert float(np.linalg.norm(a)) == pytest.approx(1.0, abs=1e-6)


def test_cache_model_id_names_the_representation_except_windows() -> None:
    """Caches of different representations are told apart; windows keeps the old model id."""
    embedder = HashingEmbedder()
    ids = {name: novelty_text(name).cache_model_id(embedder) for name in NOVELTY_TEXTS}
    assert ids["windows"] == "hashing-384"
    assert ids["truncate"] == "hashing-384+novelty-text:truncate"
    assert len(set(ids.values())) == len(NOVELTY_TEXTS)


@pytest.mark.parametrize(
    ("name", "weights"),
    [("objective-actions", (0.5, 0.5, 0.0)), ("objective-actions-terms", (1 / 3, 1 / 3, 1 / 3))],
)
@given(st.tuples(WORDS, WORDS), st.tuples(WORDS, WORDS))
def test_the_cosine_is_the_weighted_sum_of_the_part_cosines(
    name: str,
    weights: tuple[float, float, float],
    words_a: tuple[list[str], list[str]],
    words_b: tuple[list[str], list[str]],
) -> None:
    """cos(a, b) = the weighted sum of objective, actions and terms cosines, no part zero."""
    embedder = HashingEmbedder(dimensions=32)
    traces = [
        make_trace(
            objective=" ".join(["go", *objective]),
            step_list=[
                {
                    **step(0, "tool_call", " ".join(["act", *actions]), "t"),
                    "input": {"q": " ".join(["id7", *actions])},
                }
            ],
        )
        for objective, actions in (words_a, words_b)
    ]
    representation = novelty_text(name)
    a, b = representation.embed(embedder, traces).vectors
    parts = [
        embedder.embed_batch([objective_text(t) for t in traces]),
        embedder.embed_batch([actions_text(t) for t in traces]),
        term_vectors([action_terms(t) for t in traces]),
    ]
    # Hashed words can cancel out; a zero part is left out, so the law does not apply to it.
    assume(all(np.linalg.norm(part, axis=1).min() > 0.5 for part in parts))
    expected = sum(w * float(part[0] @ part[1]) for w, part in zip(weights, parts, strict=True))
    assert float(a @ b) == pytest.approx(expected, abs=1e-5)
    assert a.shape == (representation.dimensions(32),)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Book a flight to Seattle", True),
        ("Réservez un vol pour Zürich, s'il vous plaît", True),
        ("Book 航班 to Seattle please", True),  # mostly Latin
        ("12345 -- ✈️ 🙏", True),  # no letters: nothing to misread
        ("", True),
        ("Забронируйте рейс в Сиэтл", False),
        ("预订去西雅图的航班", False),
        ("احجز رحلة إلى سياتل", False),
        ("הזמן טיסה לסיאטל", False),
        ("सिएटल की उड़ान बुक करें", False),
    ],
)
def test_only_text_mostly_in_latin_script_is_in_the_models_script(text: str, read: bool) -> None:
    """The English models read Latin text apart; other scripts come out alike."""
    assert in_model_script(text) is read
