"""The run's problem sink: counts, keeps and hands on each problem; the shell only prints."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse import runs
from knowledgepulse.records import Location, Problem
from knowledgepulse.runs.problems import ProblemDigest, ProblemSink
from knowledgepulse.value import TraceValueScorer

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


def test_a_digest_shows_the_first_few_of_a_kind_and_one_line_for_the_rest() -> None:
    """100 identical problems: the first 3 shown, then one line naming the first and last rest."""
    shown: list[str] = []
    digest = ProblemDigest(shown.append)
    sink = ProblemSink(show=digest)
    for line in range(1, 101):
        sink(Problem(Location("a.parquet", line), "", "no messages column"))
    digest.close()
    assert shown == [
        "a.parquet:1: no messages column",
        "a.parquet:2: no messages column",
        "a.parquet:3: no messages column",
        "... and 97 more records with the same problem"
        " (first at a.parquet:4, last at a.parquet:100)",
    ]
    assert sink.tally.invalid == 100  # counted, every one


def test_a_digest_counts_a_whole_files_problem_across_files() -> None:
    """A file's problem with no line is of a kind with other files' same one; a line's is not."""
    shown: list[str] = []
    digest = ProblemDigest(shown.append)
    for n in range(5):
        digest(Problem(Location(f"{n}.json"), "", "skipped", warning=True))
        digest(Problem(Location(f"{n}.json", 1), "", "bad"))
    digest.close()
    assert shown == [
        "0.json: warning: skipped",
        "0.json:1: bad",
        "1.json: warning: skipped",
        "1.json:1: bad",
        "2.json: warning: skipped",
        "2.json:1: bad",
        "3.json:1: bad",
        "4.json:1: bad",
        "... and 2 more files with the same problem (first at 3.json, last at 4.json)",
    ]


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=30))
def test_a_digest_shows_each_kind_up_to_its_limit_and_accounts_for_every_problem(
    kinds: list[str],
) -> None:
    """Each kind's first 3 are shown as found; the lines at the end count exactly the rest."""
    shown: list[str] = []
    digest = ProblemDigest(shown.append)
    for line, kind in enumerate(kinds, 1):
        digest(Problem(Location("f", line), kind, "bad"))
    digest.close()
    told = [line for line in shown if not line.startswith("...")]
    rest = sum(int(line.split()[2]) for line in shown if line.startswith("..."))
    assert len(told) == sum(min(kinds.count(kind), 3) for kind in set(kinds))
    assert len(told) + rest == len(kinds)


CHAT = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
NO_MODEL = TraceValueScorer(embedder=None)


def _logged(caplog: pytest.LogCaptureFixture, call: Callable[[], object]) -> list[str]:
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        call()
    return [record.getMessage() for record in caplog.records if record.name == "knowledgepulse"]


@pytest.mark.parametrize(
    "call",
    [
        lambda rows: runs.select(rows, source="langfuse", scorer=NO_MODEL),
        lambda rows: runs.dedupe(rows, by="task", source="langfuse"),
        lambda rows: runs.split(rows, test=0.5, source="langfuse", scorer=NO_MODEL),
        lambda rows: runs.annotate(rows, source="langfuse", scorer=NO_MODEL),
        lambda rows: runs.redact(rows, source="langfuse"),
        lambda rows: runs.decontaminate(
            rows[:3], against=[{"question": "a task"}, *rows], against_field="question"
        ),
    ],
)
def test_a_problem_of_every_row_is_logged_as_kp_folds_it(
    caplog: pytest.LogCaptureFixture, call: Callable[[list[dict[str, Any]]], object]
) -> None:
    """The default reporting folds repeats as ``kp`` does: three lines and a count, not one a row.

    Before, a wrong ``source=`` (or an ``against_field`` no row has) on 50,000 rows logged
    50,000 warnings.
    """
    rows = [json.loads(line) for line in CHAT.read_text("utf-8").splitlines()] * 10
    lines = _logged(caplog, lambda: call(rows))
    more = [line for line in lines if line.startswith("... and ")]
    assert len(lines) == 4, lines
    assert len(more) == 1
    assert more[0].startswith(f"... and {len(rows) - 3} more records with the same problem (first")
