"""runs.write.scores_writer: scored items into a report, or back in their own form."""

from __future__ import annotations

import io
import json
from pathlib import Path

from knowledgepulse.records import Location, Problem
from knowledgepulse.runs.problems import ProblemSink
from knowledgepulse.runs.scoring import score_items
from knowledgepulse.runs.write import scores_writer
from tests.runs.test_scoring import items, scorer


def test_a_json_report_ends_with_the_problems_the_sink_kept() -> None:
    """The report streams every score, then closes with the sink's tally and kept problems."""
    sink = ProblemSink(keep=True)
    sink(Problem(Location("t.jsonl", 9), "steps", "expected a list"))
    stream = io.StringIO()
    with scores_writer(stream, "json", sink) as emit:
        for scored in score_items(items(), scorer()):
            sink.tally.add(scored)
            emit(scored)
    report = json.loads(stream.getvalue())
    assert len(report["traces"]) == 6
    assert [p["line"] for p in report["problems"]] == [9]


def test_rows_go_back_as_annotated_traces_to_a_file(tmp_path: Path) -> None:
    """With ``rows``, each item is written back as its document with its quality score."""
    output = tmp_path / "out.jsonl"
    with scores_writer(output, "jsonl", ProblemSink(), rows="jsonl") as emit:
        for scored in score_items(items(), scorer()):
            emit(scored)
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [line["metadata"]["quality_score"] > 0 for line in lines] == [True] * 6
