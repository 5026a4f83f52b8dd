"""score_dataset: a Ray Dataset of traces scores as the local scorer does, bad rows reported."""

from __future__ import annotations

import json

import pytest
import ray

from knowledgepulse.novelty import MiniLMEmbedder
from knowledgepulse.ray import MiniLMFactory, score_dataset
from knowledgepulse.value import TraceValueScorer, ValueBreakdown

pytestmark = [
    pytest.mark.embedder,
    pytest.mark.usefixtures("ray_cluster"),
    # Ray Data's DataContext sets its own deprecated fields when first made (Ray 2.60 warns
    # for use_push_based_shuffle, use_polars...): nothing a caller does avoids them.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context"),
]

FACTORY = MiniLMFactory(max_windows=2)


def local_breakdowns(lines: list[str]) -> list[ValueBreakdown]:
    """The traces scored one process, in order, by the same model."""
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=2), batch_size=8)
    return scorer.score_many(json.loads(line) for line in lines)


def assert_same(ours: list[ValueBreakdown], theirs: list[ValueBreakdown]) -> None:
    assert [b.trace_id for b in ours] == [b.trace_id for b in theirs]
    for mine, local in zip(ours, theirs, strict=True):
        assert mine.score == pytest.approx(local.score, abs=1e-6)
        assert mine.novelty.source == local.novelty.source
        assert mine.novelty.nearest_id == local.novelty.nearest_id


def test_a_shuffled_dataset_scores_in_order_as_locally_and_reports_bad_rows(
    corpus_lines: list[str],
) -> None:
    """Blocks read in random order, sorted back by ``order_by``: the local results; bad rows
    are reported with their place, id, JSON path and message, and the run goes on."""
    broken = json.loads(corpus_lines[0])
    broken["id"] = "kp:trace:broken"
    broken["steps"][0]["type"] = "daydream"
    rows = [{"seq": i, "trace": line} for i, line in enumerate(corpus_lines)]
    rows.insert(5, {"seq": 4.5, "trace": json.dumps(broken)})
    rows.insert(9, {"seq": 7.5, "trace": "{not json"})
    dataset = ray.data.from_items(rows, override_num_blocks=7).randomize_block_order(seed=11)
    scorer = TraceValueScorer(embedder=FACTORY(), batch_size=8)

    result = score_dataset(
        dataset, scorer=scorer, factory=FACTORY, order_by="seq", concurrency=2, batch_size=4
    )

    assert_same(result.breakdowns, local_breakdowns(corpus_lines))
    assert [row.key for row in result.rows] == sorted(row["seq"] for row in rows)
    bad = [row for row in result.rows if row.breakdown is None]
    assert [(row.position, row.trace_id) for row in bad] == [(5, "kp:trace:broken"), (9, None)]
    assert [problem.path for problem in bad[0].problems] == ["steps[0].type"]
    assert str(bad[0].problems[0]).startswith("row 5 (kp:trace:broken): steps[0].type: ")
    assert "not JSON" in str(bad[1].problems[0])


def test_rows_that_are_trace_dicts_score_in_the_datasets_order(corpus_lines: list[str]) -> None:
    """Without a trace column each row is the trace; without ``order_by``, the dataset's order."""
    dataset = ray.data.from_items(
        [json.loads(line) for line in corpus_lines], override_num_blocks=5
    )

    result = score_dataset(dataset, factory=FACTORY, concurrency=2, batch_size=4)

    assert result.problems == []
    assert_same(result.breakdowns, local_breakdowns(corpus_lines))
