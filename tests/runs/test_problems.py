"""The run's problem sink: counts, keeps and hands on each problem; the shell only prints."""

from __future__ import annotations

from knowledgepulse.records import Location, Problem
from knowledgepulse.runs.problems import ProblemSink

PROBLEM = Problem(Location("a.jsonl", 3), "steps", "expected a list")


def test_a_sink_counts_each_problem_and_shows_it_as_a_line() -> None:
    """Each problem is counted in the tally and given to ``show`` as FILE:LINE: PATH: message."""
    shown: list[str] = []
    sink = ProblemSink(show=shown.append)
    sink(PROBLEM)
    assert (sink.tally.invalid, shown) == (1, ["a.jsonl:3: steps: expected a list"])


def test_a_sink_keeps_problems_only_when_asked() -> None:
    """``keep`` keeps each problem (for a report); without it nothing is held."""
    keeping, not_keeping = ProblemSink(keep=True), ProblemSink()
    keeping(PROBLEM)
    not_keeping(PROBLEM)
    assert (keeping.kept, not_keeping.kept) == ([PROBLEM], [])
