"""Trace value scoring end to end on the real all-MiniLM-L6-v2: novelty means what it says."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer, evaluate_value
from knowledgepulse.value.scorer import set_default_scorer
from tests.builders import make_trace, step

pytestmark = pytest.mark.embedder

CORPUS = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def flight(trace_id: str, city: str) -> ReasoningTrace:
    return make_trace(
        trace_id=trace_id,
        objective=f"Book a flight from New York to {city} on May 20",
        step_list=[
            step(0, "thought", "I need the user's id and the travel dates."),
            step(1, "tool_call", f"search_flights JFK to {city} on 2024-05-20", "search_flights"),
            step(2, "observation", "Three direct flights are available in economy."),
        ],
    )


def test_same_trace_twice_is_not_novel(minilm: MiniLMEmbedder) -> None:
    """Online: the second time a trace is scored its novelty is about 0 and names the first."""
    scorer = TraceValueScorer(embedder=minilm)
    first = scorer.score(flight("kp:trace:a", "Seattle"))
    second = scorer.score(flight("kp:trace:b", "Seattle"))
    assert first.novelty.source == "empty_cache"
    assert second.novelty.nearest_id == "kp:trace:a"
    assert second.dimensions.novelty == pytest.approx(0.0, abs=1e-5)


def test_similar_traces_are_less_novel_than_unrelated_ones(minilm: MiniLMEmbedder) -> None:
    """Against the same cache, a near-duplicate trace gets lower novelty than a new topic."""
    known = TraceValueScorer(embedder=minilm)
    known.score(flight("kp:trace:seen", "Seattle"))
    frozen = TraceValueScorer(embedder=minilm, cache=known.cache, mode="frozen")
    near = frozen.score(flight("kp:trace:near", "Portland"))
    far = frozen.score(
        make_trace(
            trace_id="kp:trace:far",
            objective="Find why the nightly ETL job drops rows with null customer ids",
            step_list=[
                step(0, "thought", "Check the join conditions in the warehouse loader."),
                step(1, "tool_call", "run_sql SELECT count(*) FROM staging", "run_sql"),
            ],
        )
    )
    assert near.dimensions.novelty < 0.2
    assert far.dimensions.novelty > 0.6
    assert near.dimensions.novelty < far.dimensions.novelty


def test_batch_scoring_matches_one_by_one_within_float32_rounding(minilm: MiniLMEmbedder) -> None:
    """score_many (batched inference) gives the one-by-one numbers to 1e-6."""
    traces = [ReasoningTrace.model_validate_json(line) for line in CORPUS.read_text().splitlines()]
    single = TraceValueScorer(embedder=minilm)
    batched = TraceValueScorer(embedder=minilm, batch_size=8)
    expected = [single.score(trace) for trace in traces]
    got = batched.score_many(traces)
    for one, many in zip(expected, got, strict=True):
        assert many.score == pytest.approx(one.score, abs=1e-6)
        assert many.novelty.nearest_id == one.novelty.nearest_id
        assert [o.name for o in many.overrides] == [o.name for o in one.overrides]


def test_concurrent_evaluate_value_on_the_real_model(minilm: MiniLMEmbedder) -> None:
    """Concurrent evaluate_value calls each score and join the cache exactly once."""
    scorer = TraceValueScorer(embedder=minilm)
    set_default_scorer(scorer)
    try:

        async def run() -> list[float]:
            traces = [flight(f"kp:trace:{i}", city) for i, city in enumerate(["Oslo", "Lima"] * 4)]
            return await asyncio.gather(*(evaluate_value(trace) for trace in traces))

        scores = asyncio.run(run())
    finally:
        set_default_scorer(None)
    assert len(scores) == 8
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert scorer.cache.size == 8


def test_a_saved_cache_remembers_across_scorers(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    """Save the cache, load it into a new scorer: the trace seen before is not novel there."""
    first = TraceValueScorer(embedder=minilm)
    first.score(flight("kp:trace:yesterday", "Seattle"))
    path = tmp_path / "session.kpcache.npz"
    first.cache.save(path, model_id=first.cache_model_id)
    cache = VectorCache.load(
        path, expected_model_id=first.cache_model_id, expected_dimensions=first.cache_dimensions
    )
    later = TraceValueScorer(embedder=minilm, cache=cache).score(
        flight("kp:trace:today", "Seattle")
    )
    assert later.novelty.nearest_id == "kp:trace:yesterday"
    assert later.dimensions.novelty == pytest.approx(0.0, abs=1e-5)


def test_a_lone_surrogate_in_step_content_is_scored(minilm: MiniLMEmbedder) -> None:
    """Text UTF-8 cannot encode (a bad JSON escape) is read as U+FFFD; the run goes on."""
    broken = make_trace(
        trace_id="kp:trace:broken", step_list=[step(0, "thought", "check the \ud800 invoice")]
    )
    clean = make_trace(
        trace_id="kp:trace:clean", step_list=[step(0, "thought", "check the \ufffd invoice")]
    )
    scorer = TraceValueScorer(embedder=minilm)
    assert scorer.score(broken).novelty.source == "empty_cache"
    assert scorer.score(clean).novelty.similarity == pytest.approx(1.0, abs=1e-5)


def test_the_breakdown_says_when_the_model_read_only_part_of_a_trace() -> None:
    """A trace past max_windows is flagged capped, with the windows embedded, in both forms."""
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=1), novelty_text="windows")
    short, long = scorer.score_many(
        [
            make_trace(trace_id="kp:trace:short"),
            make_trace(trace_id="kp:trace:long", objective="refund the order " * 200),
        ]
    )
    assert (short.novelty.windows, short.novelty.capped) == (1, False)
    assert (long.novelty.windows, long.novelty.capped) == (1, True)
    assert long.to_dict()["inputs"]["novelty"]["capped"] is True
    assert "capped: only the text's first 1 window embedded" in long.explain()


def support_call(
    trace_id: str, greeting: str, user: str, reservation: str, ask: str
) -> ReasoningTrace:
    """A templated customer-service conversation: the task lies in the user, ids and request."""
    return make_trace(
        trace_id=trace_id,
        objective=f"{greeting} {ask}",
        step_list=[
            step(0, "tool_call", "Could you please provide your user ID?", "respond"),
            step(1, "observation", f"Sure, my user ID is {user}.", "respond"),
            step(2, "tool_call", f'get_user_details {{"user_id":"{user}"}}', "get_user_details"),
            step(3, "observation", '{"name": {"first_name": "A"}, "membership": "gold"}'),
            step(4, "tool_call", f'get_reservation_details {{"id":"{reservation}"}}', "get_res"),
            step(5, "observation", '{"status": "confirmed", "cabin": "economy"}'),
            step(6, "tool_call", "Is there anything else I can help you with?", "respond"),
        ],
    )


def test_default_novelty_text_puts_a_repeat_below_a_new_task(minilm: MiniLMEmbedder) -> None:
    """The default: another trial of a seen task is less novel than a new task."""
    scorer = TraceValueScorer(embedder=minilm)
    scorer.score(
        support_call("kp:trace:t0", "Hi!", "mia_li_3668", "XK92LM", "Cancel my trip to Seattle.")
    )
    frozen = TraceValueScorer(embedder=minilm, cache=scorer.cache, mode="frozen")
    repeat = frozen.score(
        support_call(
            "kp:trace:t1", "Hello.", "mia_li_3668", "XK92LM", "I need to cancel my Seattle trip."
        )
    )
    new = frozen.score(
        support_call(
            "kp:trace:n", "Hi!", "omar_ali_1201", "QP44ZZ", "Add two checked bags to my flight."
        )
    )
    assert repeat.dimensions.novelty < new.dimensions.novelty
    assert new.novelty.novelty_text == "objective-actions-terms"
