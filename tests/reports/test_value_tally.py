"""RunTally: a run's counts and its score percentiles, in 8 bytes a score however long the run."""

from __future__ import annotations

import dataclasses
import random
import tracemalloc

from knowledgepulse.curation.percentiles import domain_percentiles
from knowledgepulse.records import Location
from knowledgepulse.reports.value import RunTally, summary_line
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import scored_item, trace_json


def _results(count: int) -> list[tuple[str, float]]:
    rng = random.Random(11)
    domains = ["finance", "code", "medical", "", "customer_service"]
    return [(rng.choice(domains), round(rng.random(), 3)) for _ in range(count)]


def test_summary_percentiles_are_numpys_over_a_long_run() -> None:
    """100k scores in five domains: the summary is numpy's on the same scores."""
    breakdown = TraceValueScorer(embedder=None).score(ReasoningTrace.model_validate(trace_json()))
    tally = RunTally(0.75)
    by_domain: dict[str, list[float]] = {}
    for domain, score in _results(100_000):
        changed = dataclasses.replace(breakdown, domain=domain, score=score)
        tally.add(scored_item(changed, Location("traces.jsonl", 1)))
        by_domain.setdefault(domain, []).append(score)
    assert tally.summary()["percentiles"] == domain_percentiles(by_domain)
    assert tally.percentiles()["by_domain"][""]["count"] == len(by_domain[""])
    assert tally.scored == 100_000


def test_a_score_is_kept_in_about_eight_bytes() -> None:
    """200k scores hold under 2 MB (8 bytes each; a list of floats would be 6 MB or more)."""
    breakdown = TraceValueScorer(embedder=None).score(ReasoningTrace.model_validate(trace_json()))
    results = [
        scored_item(dataclasses.replace(breakdown, domain=domain, score=score), Location("t", 1))
        for domain, score in _results(1000)
    ]
    tally = RunTally(0.75)
    tracemalloc.start()
    try:
        for _ in range(200):
            for result in results:
                tally.add(result)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 200_000 * 10
    assert tally.percentiles()["all"]["count"] == 200_000


def test_the_summary_line_writes_every_count_with_thousands_separators() -> None:
    """The shareable count is written as the scored count beside it is, not "2,988 ...; 1200"."""
    tally = RunTally(0.75, scored=2_988, shareable=1_200)
    assert summary_line(tally) == "2,988 traces scored; 1,200 reach the sharing threshold 0.75"
