"""runs.on_ray.score_dataset: a Ray Dataset of traces scores as locally, bad rows reported."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray

from knowledgepulse.engines.ray_engine import MiniLMFactory
from knowledgepulse.errors import ScorerParameterError, SettingTypeError
from knowledgepulse.novelty import Embedder
from knowledgepulse.novelty.minilm import MiniLMEmbedder
from knowledgepulse.runs.on_ray import score_dataset
from knowledgepulse.value import TraceValueScorer, ValueBreakdown

pytestmark = [
    pytest.mark.embedder,
    pytest.mark.usefixtures("ray_cluster"),
    # Ray Data's DataContext sets its own deprecated fields when first made (Ray 2.60 warns
    # for use_push_based_shuffle, use_polars...): nothing a caller does avoids them.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context"),
]

FACTORY = MiniLMFactory(max_windows=2)


@dataclass(frozen=True)
class ActorOnlyFactory:
    """Like a GPU factory on a driver without a GPU: its embedder cannot be made in the driver."""

    driver_pid: int

    def __call__(self) -> Embedder:
        if os.getpid() == self.driver_pid:
            raise AssertionError("the driver made the actors' embedder")
        return FACTORY()

    def naming_embedder(self) -> Embedder:
        return FACTORY()


@pytest.fixture(scope="module")
def local_breakdowns(corpus_lines: list[str]) -> list[ValueBreakdown]:
    """The traces scored in one process, in order, by the same model."""
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(max_windows=2), batch_size=8)
    return scorer.score_many(json.loads(line) for line in corpus_lines)


def assert_same(ours: list[ValueBreakdown], theirs: list[ValueBreakdown]) -> None:
    assert [b.trace_id for b in ours] == [b.trace_id for b in theirs]
    for mine, local in zip(ours, theirs, strict=True):
        assert mine.score == pytest.approx(local.score, abs=1e-6)
        assert mine.novelty.source == local.novelty.source
        assert mine.novelty.nearest_id == local.novelty.nearest_id


def test_a_shuffled_dataset_scores_in_order_as_locally_and_reports_bad_rows(
    corpus_lines: list[str], local_breakdowns: list[ValueBreakdown]
) -> None:
    """Blocks read in random order, sorted back by ``order_by``: the local results; bad rows
    are reported with their place (as a local read of rows words it), JSON path and message,
    and the run goes on."""
    broken = json.loads(corpus_lines[0])
    broken["id"] = "kp:trace:broken"
    broken["steps"][0]["type"] = "daydream"
    rows: list[dict[str, Any]] = [{"seq": i, "trace": line} for i, line in enumerate(corpus_lines)]
    rows.insert(5, {"seq": 4.5, "trace": json.dumps(broken)})
    rows.insert(9, {"seq": 7.5, "trace": "{not json"})
    dataset = ray.data.from_items(rows, override_num_blocks=4).randomize_block_order(seed=11)
    scorer = TraceValueScorer(embedder=FACTORY(), batch_size=8)

    result = score_dataset(
        dataset, scorer=scorer, factory=FACTORY, order_by="seq", concurrency=2, batch_size=4
    )

    assert_same(result.breakdowns, local_breakdowns)
    good = [row for row in rows if row["seq"] not in (4.5, 7.5)]
    assert [item.item.row.value for item in result.items if item.item.row] == good
    assert [str(item.location) for item in result.items][:6] == [
        f"rows:{n}" for n in (1, 2, 3, 4, 5, 7)
    ]
    assert [str(problem.location) for problem in result.problems] == ["rows:6", "rows:10"]
    assert result.problems[0].path == "steps[0].type"
    assert "not JSON" in result.problems[1].message


def test_rows_that_are_trace_dicts_score_in_the_datasets_order(
    corpus_lines: list[str], local_breakdowns: list[ValueBreakdown]
) -> None:
    """Without a trace column each row is the trace; without ``order_by``, the dataset's order."""
    dataset = ray.data.from_items(
        [json.loads(line) for line in corpus_lines], override_num_blocks=5
    )

    result = score_dataset(dataset, factory=FACTORY, concurrency=2, batch_size=4)

    assert result.problems == []
    assert_same(result.breakdowns, local_breakdowns)


def test_the_driver_names_the_model_without_making_the_actors_embedder(
    corpus_lines: list[str], local_breakdowns: list[ValueBreakdown]
) -> None:
    """A factory that names its model (DeviceFactory does) is only ever called in the actors."""
    dataset = ray.data.from_items(
        [json.loads(line) for line in corpus_lines], override_num_blocks=2
    )

    result = score_dataset(dataset, factory=ActorOnlyFactory(os.getpid()), concurrency=1)

    assert_same(result.breakdowns, local_breakdowns)


def test_a_scorer_of_another_model_is_refused_before_any_work(tmp_path: Path) -> None:
    """The cache records the model: a scorer naming another one would mix vectors."""
    other = tmp_path / "other.onnx"
    other.write_bytes(b"not the bundled model")
    scorer = TraceValueScorer(embedder=MiniLMEmbedder(other))
    with pytest.raises(ScorerParameterError, match="the actors embed with"):
        score_dataset(ray.data.from_items([]), scorer=scorer, factory=FACTORY)


@pytest.mark.parametrize(
    ("data", "settings", "error", "said"),
    [
        ([{"trace": "{}"}], {}, SettingTypeError, "give a ray.data.Dataset"),
        (None, {"order_by": "seq"}, ScorerParameterError, "order_by='seq': give one of"),
        (None, {"concurrency": 0}, ScorerParameterError, "concurrency must be a positive"),
        (None, {"batch_size": 0}, ScorerParameterError, "batch_size must be a positive"),
    ],
)
def test_a_wrong_argument_is_one_clear_error_before_any_work(
    data: Any, settings: dict[str, Any], error: type[Exception], said: str
) -> None:
    """Not a Dataset, an ``order_by`` no column holds, no actor or no row a batch: our error,
    saying what to give (an actor's error would reach the driver as Ray's, its text only)."""
    dataset = ray.data.from_items([{"trace": "{}"}]) if data is None else data
    with pytest.raises(error, match=re.escape(said)):
        score_dataset(dataset, factory=FACTORY, **settings)
