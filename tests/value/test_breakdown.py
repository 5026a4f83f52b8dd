"""ValueBreakdown: every dimension's inputs, as data (to_dict) and as text (explain)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray
from rich.console import Console

from knowledgepulse.novelty.calibration import NoveltyCalibration
from knowledgepulse.novelty.windows import WindowedEmbeddings
from knowledgepulse.reports.value_table import to_table
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import ScoringWeights, TraceValueScorer
from knowledgepulse.value.breakdown import ValueBreakdown, score_text
from knowledgepulse.value.profiles import weight_text
from tests.builders import make_trace, scored_item, step, steps, trace_json

KEYS_BEFORE_INPUTS = [
    "id",
    "score",
    "shareable",
    "threshold",
    "domain",
    "profile",
    "dimensions",
    "weights",
    "weighted_sum",
    "overrides",
    "override_effects",
    "novelty_source",
    "nearest_trace",
    "nearest_similarity",
    "domain_source",
]


class WindowCounting(HashingEmbedder):
    """The hashing embedder, reporting a window per 10 words and a cap at 3 windows."""

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        windows = [len(text.split()) // 10 + 1 for text in texts]
        return WindowedEmbeddings(
            self.embed_batch(texts),
            tuple(min(n, 3) for n in windows),
            tuple(n > 3 for n in windows),
        )


def recovering_trace() -> ReasoningTrace:
    return make_trace(
        success=False,
        confidence=0.8,
        step_list=steps(
            "thought",
            ("tool_call", "search"),
            "error_recovery",
            ("tool_call", "sql"),
            "observation",
        ),
    )


def test_to_dict_keeps_its_keys_and_adds_the_inputs_last() -> None:
    """JSON and CSV users keep every key they had; the inputs come after them."""
    data = TraceValueScorer(embedder=None).score(make_trace()).to_dict()
    assert list(data) == [*KEYS_BEFORE_INPUTS, "inputs"]


def test_inputs_hold_what_each_dimension_was_computed_from() -> None:
    """Step types, recoveries, steps, distinct tools, confidence and success factor, by name."""
    inputs = TraceValueScorer(embedder=None).score(recovering_trace()).to_dict()["inputs"]
    assert inputs == {
        "complexity": {
            "step_types": 4,
            "step_types_possible": 4,
            "error_recoveries": 1,
            "steps": 5,
            "steps_counted": 5,
            "step_cap": 20,
        },
        "novelty": {
            "source": "no_embedder",
            "nearest_trace": None,
            "similarity": None,
            "unmapped_novelty": None,
            "mapped_onto": None,
            "windows_embedded": None,
            "capped": None,
            "novelty_text": "objective-actions-terms",
        },
        "tool_diversity": {"distinct_tools": 2, "steps": 5},
        "outcome_confidence": {
            "confidence": 0.8,
            "confidence_source": "trace",
            "success": False,
            "success_factor": 0.3,
        },
    }


def test_steps_past_twenty_are_reported_but_not_counted() -> None:
    """The complexity inputs show both the steps there are and the 20 that count."""
    long = make_trace(step_list=[step(i, "thought", f"step {i}") for i in range(25)])
    complexity = TraceValueScorer(embedder=None).score(long).inputs["complexity"]
    assert (complexity["steps"], complexity["steps_counted"]) == (25, 20)


def test_explain_shows_every_dimensions_inputs() -> None:
    """Under each dimension's line are the numbers its formula took, checkable by hand."""
    breakdown = TraceValueScorer(embedder=None).score(recovering_trace())
    text = breakdown.explain()
    assert (
        "    4 of 4 step types: 4/4 x 0.5 = 0.5000; 1 error recovery: +0.3; "
        "5 steps (counted up to 20): 5/20 x 0.2 = 0.0500" in text
    )
    assert "    2 distinct tools over 5 steps: min(1, 2/5 x 3)" in text
    assert "    confidence 0.8000 x 0.3 (failed)" in text
    assert breakdown.novelty.reason
    assert f"    no embedder, so 0.5: {breakdown.novelty.reason}\n" in text


def test_explain_names_the_nearest_trace_and_the_windows_read() -> None:
    """With an embedding: the most similar trace, its cosine, and how many windows were read."""
    scorer = TraceValueScorer(embedder=WindowCounting(), novelty_text="windows")
    first = scorer.score(make_trace(trace_id="kp:trace:first"))
    assert "empty cache: nothing to compare with, so 0.5; 2 windows of the text embedded" in (
        first.explain()
    )
    second = scorer.score(make_trace(trace_id="kp:trace:second")).explain()
    assert "most similar: kp:trace:first at cosine 1.0000" in second


def test_a_capped_trace_says_so_in_both_forms() -> None:
    """A trace longer than the embedder's cap is flagged in to_dict and in explain."""
    long = make_trace(objective="word " * 100)
    breakdown = TraceValueScorer(embedder=WindowCounting(), novelty_text="windows").score(long)
    assert breakdown.to_dict()["inputs"]["novelty"] == {
        "source": "empty_cache",
        "nearest_trace": None,
        "similarity": None,
        "unmapped_novelty": None,
        "mapped_onto": None,
        "windows_embedded": 3,
        "capped": True,
        "novelty_text": "windows",
    }
    assert "capped: only the text's first 3 windows embedded (max_windows)" in breakdown.explain()


def test_an_embedder_that_does_not_window_leaves_the_windows_unknown() -> None:
    """A plain embed_batch embedder gives windows None, not a made-up count."""

    class Plain:
        dimensions = 4

        def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
            return np.ones((len(texts), 4), dtype=np.float32)

    origin = TraceValueScorer(embedder=Plain()).score(make_trace()).novelty
    assert (origin.source, origin.windows, origin.capped) == ("empty_cache", None, None)


class Mapped(HashingEmbedder):
    """A hashing embedder whose novelty is mapped onto another model's scale, as the static
    table's is onto MiniLM's."""

    calibration = NoveltyCalibration(((0.0, 0.0), (0.5, 0.2), (1.0, 1.0)), onto="reference-model")

    def novelty_calibration(self, novelty_text: str) -> NoveltyCalibration:
        return self.calibration


def test_a_rows_novelty_follows_from_its_cosine_and_the_mapping_it_names() -> None:
    """to_dict's novelty inputs give 1 - cosine and the scale it was mapped onto, so a JSON row
    explains its novelty without --explain; before, a row of the static embedder (the default)
    showed cosine 0.14 and novelty 0.75 with nothing between them."""
    for embedder in (Mapped(), HashingEmbedder()):
        scorer = TraceValueScorer(embedder=embedder)
        scorer.score(make_trace(trace_id="kp:trace:first", objective="sort a list of numbers"))
        second = scorer.score(make_trace(trace_id="kp:trace:second", objective="parse a date"))
        row = second.to_dict()
        inputs = row["inputs"]["novelty"]
        assert inputs["unmapped_novelty"] == min(1.0, max(0.0, 1.0 - inputs["similarity"]))
        if isinstance(embedder, Mapped):
            assert inputs["mapped_onto"] == "reference-model"
            expected = Mapped.calibration(inputs["unmapped_novelty"])
        else:
            assert inputs["mapped_onto"] is None
            expected = inputs["unmapped_novelty"]
        assert abs(row["dimensions"]["novelty"] - expected) <= 1e-12


# Weights a team might pick: eighths, thousandths, thirds; each profile sums to 1.
TUNED_WEIGHTS = st.sampled_from(
    [(0.125, 0.375, 0.005, 0.495), (1 / 3, 1 / 3, 1 / 3, 0.0), (0.1, 0.2, 0.3, 0.4)]
)


@given(weights=TUNED_WEIGHTS)
def test_every_explained_term_is_its_value_times_its_weight_as_shown(
    weights: tuple[float, float, float, float],
) -> None:
    """``value x weight = term`` in explain() checks by hand for any weights, not only 0.05s."""
    scorer = TraceValueScorer(embedder=None, profiles={"team": ScoringWeights(*weights)})
    trace = make_trace(
        domain="team", confidence=0.8, step_list=steps("thought", ("tool_call", "search"))
    )
    text = scorer.score(trace).explain()
    terms = re.findall(r"(\d\.\d{4}) x (\d\.\d+) = (\d\.\d{4})", text)
    assert len(terms) == 4
    for value, weight, term in terms:
        assert abs(float(value) * float(weight) - float(term)) <= 6e-5


def test_a_weight_is_shown_with_every_decimal_it_has() -> None:
    """0.125 is shown as 0.125 (two decimals showed 0.12), 0.2 still as 0.20."""
    assert [weight_text(w) for w in (0.125, 0.2, 1 / 3, 0.0, -0.0, 1.0)] == [
        "0.125",
        "0.20",
        "0.333333",
        "0.00",
        "0.00",
        "1.00",
    ]


KINDS = st.sampled_from(["thought", "tool_call", "observation", "error_recovery"])


@given(kinds=st.integers(1, 40).flatmap(lambda n: st.lists(KINDS, min_size=n, max_size=n)))
def test_the_explained_complexity_terms_add_up_to_the_complexity(kinds: list[str]) -> None:
    """The step-type, recovery and step-count terms explain() shows give C, steps past 20 too."""
    breakdown = TraceValueScorer(embedder=None).score(make_trace(step_list=steps(*kinds)))
    line = breakdown.explain().splitlines()[3]
    found = re.fullmatch(
        r"    (\d) of 4 step types: \1/4 x 0\.5 = (\d\.\d{4}); (?:.*: \+(0\.3|0)); "
        r"\d+ steps? \(counted up to 20\): (\d+)/20 x 0\.2 = (\d\.\d{4})",
        line,
    )
    assert found, line
    types, variety, recovery, counted, length = found.groups()
    assert (int(types), int(counted)) == (len(set(kinds)), min(len(kinds), 20))
    total = min(1.0, float(variety) + float(recovery) + float(length))
    assert abs(total - breakdown.dimensions.complexity) <= 1e-4


@given(kinds=st.lists(KINDS, min_size=1, max_size=8), places=st.integers(0, 3))
def test_to_dict_puts_every_fractional_number_through_the_rounding(
    kinds: list[str], places: int
) -> None:
    """Each float of the row, the overrides' before and after included, is the rounding's."""
    trace = make_trace(confidence=0.77, step_list=steps(*kinds, ("tool_call", "search")))
    row = (
        TraceValueScorer(embedder=None)
        .score(trace)
        .to_dict(rounding=lambda number: round(number, places))
    )

    def leaves(value: object) -> list[object]:
        if isinstance(value, dict):
            return [leaf for item in value.values() for leaf in leaves(item)]
        if isinstance(value, list):
            return [leaf for item in value for leaf in leaves(item)]
        return [value]

    assert row["override_effects"], "the one tool fires rule 3, so there are effects to round"
    floats = [leaf for leaf in leaves(row) if type(leaf) is float]
    assert floats
    assert all(round(leaf, places) == leaf for leaf in floats)


def test_a_nearest_trace_at_cosine_zero_is_reported_at_zero() -> None:
    """A cosine of exactly 0 (no shared word) is 0 in the row and the text: not taken for absent."""
    scorer = TraceValueScorer(embedder=HashingEmbedder(), novelty_text="windows")
    scorer.score(make_trace(trace_id="kp:trace:a", objective="alpha", step_list=steps("thought")))
    second = make_trace(trace_id="kp:trace:b", objective="omega", step_list=[step(0, "thought")])
    breakdown = scorer.score(second)
    assert (breakdown.novelty.nearest_id, breakdown.novelty.similarity) == ("kp:trace:a", 0.0)
    row = breakdown.to_dict()
    assert (row["nearest_trace"], row["nearest_similarity"]) == ("kp:trace:a", 0.0)
    assert row["inputs"]["novelty"]["similarity"] == 0.0
    assert (
        "most similar: kp:trace:a at cosine 0.0000; "
        "novelty = 1 - cosine, clamped to [0, 1] = 1.0000" in breakdown.explain()
    )


@given(
    kinds=st.lists(st.tuples(KINDS, st.sampled_from([None, "search", "sql"])), min_size=1),
    success=st.booleans(),
    confidence=st.floats(0.0, 1.0),
)
def test_each_dimension_is_the_specs_formula_on_its_inputs(
    kinds: list[tuple[str, str | None]], success: bool, confidence: float
) -> None:
    """The inputs a row gives are the formulas' operands: C, D and O follow from them alone."""
    trace = make_trace(
        success=success,
        confidence=confidence,
        step_list=[step(n, kind, tool=tool) for n, (kind, tool) in enumerate(kinds)],
    )
    breakdown = TraceValueScorer(embedder=None).score(trace)
    c, d, o = (breakdown.inputs[name] for name in DIMENSIONS_FROM_COUNTS)
    recovery = 0.3 if c["error_recoveries"] > 0 else 0.0
    assert (
        abs(
            breakdown.dimensions.complexity
            - min(
                1.0,
                c["step_types"] / c["step_types_possible"] * 0.5
                + recovery
                + c["steps_counted"] / c["step_cap"] * 0.2,
            )
        )
        <= 1e-12
    )
    expected_d = min(1.0, d["distinct_tools"] / max(1, d["steps"]) * 3)
    assert abs(breakdown.dimensions.tool_diversity - expected_d) <= 1e-12
    assert o["success_factor"] == (1.0 if success else 0.3)
    assert abs(breakdown.dimensions.outcome_confidence - o["confidence"] * o["success_factor"]) <= (
        1e-12
    )


DIMENSIONS_FROM_COUNTS = ("complexity", "tool_diversity", "outcome_confidence")


def test_the_outcome_line_says_where_a_converted_traces_confidence_came_from() -> None:
    """A converted trace's confidence origin follows its arithmetic; a plain trace's says none."""
    converted = trace_json(confidence=0.4)
    converted["metadata"]["source"] = {"confidence_source": "argument", "domain_source": "default"}
    scorer = TraceValueScorer(embedder=None)
    lines = scorer.score(converted).explain().splitlines()
    assert "    confidence 0.4000 x 1.0 (succeeded); the confidence is as given" in lines
    assert "  profile 'default' (domain 'testing', the default: the source records none)" in lines
    plain = scorer.score(trace_json(confidence=0.4)).explain().splitlines()
    assert "    confidence 0.4000 x 1.0 (succeeded)" in plain
    assert "  profile 'default' (domain 'testing')" in plain


@given(
    score=st.floats(0.0, 1.0).map(lambda x: round(x, 12)),
    threshold=st.floats(0.0, 1.0),
    decimals=st.integers(2, 4),
)
def test_a_shown_score_is_on_the_side_of_the_threshold_its_verdict_says(
    score: float, threshold: float, decimals: int
) -> None:
    """score_text never rounds a score across the threshold, and adds places only to avoid it."""
    text = score_text(score, threshold, decimals)
    assert (float(text) >= threshold) == (score >= threshold)
    rounded = f"{score:.{decimals}f}"
    if (float(rounded) >= threshold) == (score >= threshold):
        assert text == rounded


def just_below_the_threshold() -> ValueBreakdown:
    """A trace whose score, 0.74996, rounds to the default threshold 0.75 but is below it."""
    weights = ScoringWeights(0.0, 0.0, 0.0, 1.0)
    scorer = TraceValueScorer(embedder=None, profiles={"team": weights})
    return scorer.score(
        make_trace(domain="team", confidence=0.74996, step_list=steps("thought", "observation"))
    )


def test_explain_does_not_show_a_score_below_the_threshold_as_reaching_it() -> None:
    """0.74996 is explained as 0.74996 below 0.75, not as 0.7500 below 0.75."""
    breakdown = just_below_the_threshold()
    lines = breakdown.explain().splitlines()
    assert not breakdown.shareable
    assert lines[0].endswith("score 0.74996 (below the sharing threshold 0.75)")
    assert "  weighted sum 0.74996" in lines


def test_the_table_does_not_show_a_score_below_the_threshold_as_reaching_it() -> None:
    """The table's score cell reads 0.74996 beside "no", not 0.750."""
    console = Console(width=120, record=True)
    console.print(to_table([scored_item(just_below_the_threshold())], 0.75))
    row = next(line for line in console.export_text().splitlines() if "kp:trace:" in line)
    assert re.search(r" 0\.74996 +no ", row), row
