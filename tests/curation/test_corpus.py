"""Corpus scoring: leave-one-out novelty, the same whatever the order of the traces."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.curation import score_corpus
from knowledgepulse.curation.corpus import Corpus, score_apart
from knowledgepulse.novelty.cache import index
from knowledgepulse.records import Location, Record
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import validate_record
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import trace_json

OBJECTIVES = [
    "Find the cheapest flight from Lisbon to Oslo",
    "Find the cheapest flight from Lisbon to Oslo tomorrow",
    "Refactor the flaky payment integration test",
    "Summarise the quarterly revenue of the chip maker",
]


def loaded(trace_id: str, objective: str) -> TraceItem:
    result = validate_record(
        Record(Location("t.jsonl"), trace_json(trace_id=trace_id, objective=objective))
    )
    assert isinstance(result, TraceItem)
    return result


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def test_both_traces_of_a_near_duplicate_pair_get_a_low_novelty() -> None:
    """Unlike online scoring, the first of two copies is not novel either."""
    traces = [
        loaded("kp:trace:a", OBJECTIVES[0]),
        loaded("kp:trace:b", OBJECTIVES[0]),
        loaded("kp:trace:c", OBJECTIVES[2]),
    ]
    breakdowns = score_corpus(scorer(), traces).breakdowns
    assert [b.novelty.nearest_id for b in breakdowns[:2]] == ["kp:trace:b", "kp:trace:a"]
    assert breakdowns[0].dimensions.novelty < 1e-6
    assert breakdowns[1].dimensions.novelty < 1e-6
    assert breakdowns[2].dimensions.novelty > 0.1
    online = scorer().score_many([t.trace for t in traces])
    assert online[0].novelty.source == "empty_cache"


def test_a_second_copy_of_the_same_id_does_not_count_as_another_trace() -> None:
    """A trace listed twice is compared with the others, not with its own copy."""
    traces = [loaded("kp:trace:a", OBJECTIVES[0]), loaded("kp:trace:a", OBJECTIVES[0])]
    breakdowns = score_corpus(scorer(), traces).breakdowns
    assert {b.novelty.source for b in breakdowns} == {"empty_cache"}


def test_without_an_embedder_novelty_is_half_and_says_why() -> None:
    """No embedder: 0.5 with a reason that names corpus novelty."""
    breakdowns = score_corpus(
        TraceValueScorer(embedder=None), [loaded("kp:trace:a", OBJECTIVES[0])]
    ).breakdowns
    assert breakdowns[0].dimensions.novelty == 0.5
    assert "corpus" in (breakdowns[0].novelty.reason or "")


def apart(scorer: TraceValueScorer, items: list[TraceItem]) -> Corpus:
    """:func:`score_apart`, its traces embedded two at a time (its array grown several times)."""
    scorer.batch_size = 2
    return score_apart(scorer, items, lambda _: iter(items))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(OBJECTIVES)), max_size=8),
    st.randoms(),
    st.sampled_from([score_corpus, apart]),
    st.booleans(),
)
def test_scores_do_not_depend_on_input_order(
    specs: list[tuple[int, str]],
    rng: random.Random,
    scored: Callable[[TraceValueScorer, list[TraceItem]], Corpus],
    through_the_index: bool,
) -> None:
    """Shuffling the input gives each trace exactly the same breakdown and vector.

    Held or apart, scanned exactly or through the index (which is built in canonical order).
    """
    traces = [loaded(f"kp:trace:{n}", objective) for n, objective in specs]
    shuffled = traces[:]
    rng.shuffle(shuffled)

    def by_content(items: list[TraceItem]) -> list[tuple[str, str, object, bytes]]:
        corpus = scored(scorer(), items)
        assert corpus.vectors is not None
        return sorted(
            (t.trace.id, t.trace.task.objective, repr(b.to_dict()), vector.tobytes())
            for t, b, vector in zip(items, corpus.breakdowns, corpus.vectors, strict=True)
        )

    with pytest.MonkeyPatch.context() as patch:
        if through_the_index:
            patch.setattr(index, "EXACT_LIMIT", 0)
        assert by_content(traces) == by_content(shuffled)


def test_scored_apart_the_breakdowns_and_vectors_are_those_held() -> None:
    """score_apart, embedding in batches into one growing array, matches score_corpus."""
    traces = [loaded(f"kp:trace:{n}", OBJECTIVES[n % 4]) for n in range(11)]
    held, held_apart = score_corpus(scorer(), traces), apart(scorer(), traces)
    assert held_apart.breakdowns == held.breakdowns
    assert held.vectors is not None
    assert held_apart.vectors is not None
    assert held_apart.vectors.tobytes() == held.vectors.tobytes()


def test_scored_apart_without_an_embedder_equal_traces_share_one_composed_breakdown() -> None:
    """Without an embedder, breakdowns equal score_corpus's; traces alike share their parts."""
    traces = [loaded(f"kp:trace:{n}", OBJECTIVES[n % 4]) for n in range(6)]
    held = score_corpus(TraceValueScorer(embedder=None), traces)
    held_apart = apart(TraceValueScorer(embedder=None), traces)
    assert held_apart.breakdowns == held.breakdowns
    first, *others = held_apart.breakdowns
    assert [b.trace_id for b in others] == [f"kp:trace:{n}" for n in range(1, 6)]
    assert all(b.dimensions is first.dimensions for b in others)


def test_candidates_carry_outcomes_and_failed_runs_when_asked() -> None:
    """Corpus.candidates gives each its outcome, and failed from its facts only when asked."""
    failed = validate_record(
        Record(Location("t.jsonl"), trace_json(trace_id="kp:trace:b", success=False))
    )
    assert isinstance(failed, TraceItem)
    traces = [loaded("kp:trace:a", OBJECTIVES[0]), failed]
    corpus = score_corpus(TraceValueScorer(embedder=None), traces)
    asked = corpus.candidates(["t", None], [0.5, None], failed=True)
    assert [(c.task, c.outcome, c.failed) for c in asked] == [("t", 0.5, False), (None, None, True)]
    assert [(c.failed, c.outcome) for c in corpus.candidates()] == [(False, None)] * 2


def test_corpus_novelty_goes_through_the_embedders_calibration() -> None:
    """Leave-one-out novelty is mapped as online novelty is: the scorer's one definition."""
    from tests.value.test_scorer import LOWERING, Calibrated

    traces = [loaded("kp:trace:a", OBJECTIVES[0]), loaded("kp:trace:b", OBJECTIVES[1])]
    plain = score_corpus(scorer(), traces).breakdowns
    mapped = score_corpus(TraceValueScorer(embedder=Calibrated()), traces).breakdowns
    for calibrated, alone in zip(mapped, plain, strict=True):
        assert calibrated.dimensions.novelty == pytest.approx(LOWERING(alone.dimensions.novelty))
        assert calibrated.novelty.calibrated_onto == "reference"


@pytest.mark.parametrize("scored", [score_corpus, apart])
def test_past_the_exact_limit_the_vectors_are_held_in_half_precision(
    scored: Callable[[TraceValueScorer, list[TraceItem]], Corpus], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the search goes through the index the vectors take half the memory, nearest kept."""
    traces = [loaded(f"kp:trace:{n}", OBJECTIVES[n % 4]) for n in range(7)]
    exact = scored(scorer(), traces)
    monkeypatch.setattr(index, "EXACT_LIMIT", 4)  # passed while score_apart's batches come in
    halved = scored(scorer(), traces)
    assert exact.vectors is not None
    assert halved.vectors is not None
    assert (exact.vectors.dtype, halved.vectors.dtype) == (
        np.dtype(np.float32),
        np.dtype(np.float16),
    )
    assert np.array_equal(halved.vectors, exact.vectors.astype(np.float16))
    nearest = [b.novelty.nearest_id for b in exact.breakdowns]
    assert [b.novelty.nearest_id for b in halved.breakdowns] == nearest
    for half, whole in zip(halved.breakdowns, exact.breakdowns, strict=True):
        assert half.novelty.similarity == pytest.approx(whole.novelty.similarity, abs=2e-3)
