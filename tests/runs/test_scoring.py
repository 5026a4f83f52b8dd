"""runs.scoring: score_items in each order and mode, and ScoreRun's saved-cache policy."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.curation import score_corpus
from knowledgepulse.curation.percentiles import MinScore
from knowledgepulse.errors import CacheFileError, ScorerParameterError
from knowledgepulse.novelty.cache import VectorCache, ring_file
from knowledgepulse.records import Location, Record
from knowledgepulse.reports.value import RunTally, cache_lines
from knowledgepulse.runs.scoring import ScoreRun, score_items, tallied
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.load import validate_record
from knowledgepulse.value import TraceValueScorer
from tests.builders import steps, trace_json
from tests.other_process import other_run_saves

OBJECTIVES = [
    "Find the cheapest flight from Lisbon to Oslo",
    "Find the cheapest flight from Lisbon to Oslo in May",
    "Fix the flaky test in the payments service",
    "Summarise the quarterly report for the board",
    "Refund a late delivery for order 88",
    "Check the dosage of ibuprofen for a child",
]


def documents() -> list[dict[str, Any]]:
    """Six traces whose creation times run backwards through the list."""
    built = []
    for n, objective in enumerate(OBJECTIVES):
        trace = trace_json(
            trace_id=f"kp:trace:{n}",
            objective=objective,
            step_list=steps("thought", ("tool_call", f"tool{n % 3}"), "observation"),
        )
        trace["metadata"]["created_at"] = f"2026-01-{30 - n:02d}T12:00:00Z"
        built.append(trace)
    return built


def items(values: list[dict[str, Any]] | None = None) -> list[TraceItem]:
    """The documents as trace items, located as lines of ``t.jsonl``."""
    loaded = []
    for n, value in enumerate(documents() if values is None else values):
        item = validate_record(Record(Location("t.jsonl", n + 1, n), copy.deepcopy(value)))
        assert isinstance(item, TraceItem)
        loaded.append(item)
    return loaded


def scorer(**settings: Any) -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder(), batch_size=2, **settings)


def test_input_order_pairs_each_item_with_the_breakdown_score_many_gives_it() -> None:
    """Streamed a batch at a time, each item meets its own breakdown, as score_many scores."""
    scored = list(score_items(items(), scorer()))
    expected = scorer().score_many(item.trace for item in items())
    assert [s.item.location.line for s in scored] == [1, 2, 3, 4, 5, 6]
    assert [s.breakdown for s in scored] == expected


def test_input_order_reads_no_further_than_the_batch_it_is_scoring() -> None:
    """The first scored item comes out before the input is read past its batch (2 traces)."""
    read = 0

    def stream() -> Iterator[TraceItem]:
        nonlocal read
        for item in items():
            read += 1
            yield item

    first = next(score_items(stream(), scorer()))
    assert first.trace.id == "kp:trace:0"
    assert read <= 3  # the batch of two, and the look-ahead that ends it


def test_time_order_scores_by_creation_time() -> None:
    """order="time": the latest-listed trace was created first, so it is scored first."""
    scored = list(score_items(items(), scorer(), order="time"))
    assert [s.trace.id for s in scored] == [f"kp:trace:{n}" for n in range(5, -1, -1)]
    assert scored[0].breakdown.novelty.source == "empty_cache"


def test_corpus_mode_is_leave_one_out_and_leaves_the_cache_alone() -> None:
    """corpus=True gives score_corpus's breakdowns, whatever the order; the cache stays empty."""
    used = scorer()
    scored = list(score_items(items(), used, corpus=True))
    backwards = list(score_items(items()[::-1], scorer(), corpus=True))
    assert [s.breakdown for s in scored] == score_corpus(scorer(), items()).breakdowns
    assert [s.breakdown for s in scored] == [s.breakdown for s in backwards[::-1]]
    assert scored[0].breakdown.novelty.nearest_id == "kp:trace:1"  # its near-duplicate
    assert used.cache.size == 0


def test_a_percentile_min_score_is_the_threshold_of_every_verdict() -> None:
    """p50 of the run's scores becomes each breakdown's threshold, so half reach it."""
    scored = list(score_items(items(), scorer(), min_score=MinScore(percentile=50)))
    scores = sorted(s.breakdown.score for s in scored)
    assert {s.breakdown.threshold for s in scored} == {(scores[2] + scores[3]) / 2}
    assert sum(s.breakdown.shareable for s in scored) == 3


def test_a_fixed_min_score_replaces_the_scorers_threshold() -> None:
    """A score given as min_score is every verdict's threshold, the scorer's left aside."""
    scored = list(score_items(items(), scorer(threshold=0.9), min_score=MinScore(value=0.1)))
    assert {s.breakdown.threshold for s in scored} == {0.1}
    assert all(s.breakdown.shareable for s in scored)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"order": "random"}, "order='random': give one of 'input', 'time'"),
        ({"order": "time", "corpus": True}, "corpus scoring does not depend on order"),
    ],
)
def test_contradictory_settings_are_refused_by_their_parameter_names(
    settings: dict[str, Any], message: str
) -> None:
    """The library's errors name its parameters, not the command's flags."""
    with pytest.raises(ScorerParameterError, match=message):
        score_items(items(), scorer(), **settings)


def test_a_corpus_run_with_a_cache_is_refused_naming_the_cache_path(tmp_path: Path) -> None:
    """Corpus mode uses no cache: a run given one says to drop ``cache_path``."""
    with (
        ScoreRun(scorer(), cache_path=tmp_path / "vectors.ring") as run,
        pytest.raises(ScorerParameterError, match="not with a cache: drop cache_path"),
    ):
        run.score(items(), corpus=True)


def test_a_run_saves_its_cache_and_the_next_run_finds_the_traces_in_it(tmp_path: Path) -> None:
    """A clean block saves the cache; a second run meets every trace under its own id."""
    path = tmp_path / "vectors.ring"
    with ScoreRun(scorer(), cache_path=path) as first:
        list(first.score(items()))
    assert first.cache_outcome == "saved"
    assert path.exists()
    with ScoreRun(scorer(), cache_path=path) as second:
        again = list(second.score(items()))
    assert second.already_cached == len(again) == 6
    assert all(s.breakdown.novelty.nearest_id != s.trace.id for s in again)


def test_a_run_that_raises_adds_nothing_to_the_cache(tmp_path: Path) -> None:
    """An interrupted run's vectors are not saved: the next run finds none of its traces."""
    path = tmp_path / "vectors.ring"
    run = ScoreRun(scorer(), cache_path=path)

    def interrupted() -> None:
        with run:
            next(run.score(items()))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert run.cache_outcome is None
    with ScoreRun(scorer(), cache_path=path) as again:
        list(again.score(items()))
    assert again.already_cached == 0


def test_a_frozen_run_reads_the_cache_and_adds_nothing(tmp_path: Path) -> None:
    """frozen=True: the same file after the run, and no trace compared with its own vector."""
    path = tmp_path / "vectors.npz"
    with ScoreRun(scorer(), cache_path=path) as first:
        list(first.score(items()[:3]))
    before = path.read_bytes()
    with ScoreRun(scorer(), cache_path=path, frozen=True) as frozen:
        scored = list(frozen.score(items()))
    assert frozen.cache_outcome == "frozen"
    assert path.read_bytes() == before
    assert scored[3].breakdown.novelty.source == "embedding"


def test_a_cache_of_another_novelty_text_is_refused_before_any_trace(tmp_path: Path) -> None:
    """The file records the model and novelty text it was made under."""
    path = tmp_path / "vectors.ring"
    with ScoreRun(scorer(), cache_path=path) as run:
        list(run.score(items()))
    with pytest.raises(CacheFileError):
        ScoreRun(scorer(novelty_text="windows"), cache_path=path)


def test_frozen_needs_a_cache_that_exists(tmp_path: Path) -> None:
    """Frozen scoring without a file, or without a path, fails before any work."""
    with pytest.raises(CacheFileError, match="no such cache file"):
        ScoreRun(scorer(), cache_path=tmp_path / "none.ring", frozen=True)
    with pytest.raises(ScorerParameterError, match="give cache_path"):
        ScoreRun(scorer(), frozen=True)


def test_without_an_embedder_there_is_no_cache_to_save(tmp_path: Path) -> None:
    """No vector was made, so none is saved, and the run says why."""
    path = tmp_path / "vectors.ring"
    with ScoreRun(TraceValueScorer(embedder=None), cache_path=path) as run:
        list(run.score(items()))
    assert run.cache_outcome == "no_embedder"
    assert not path.exists()


def test_without_cache_settings_the_scorer_is_used_as_it_is() -> None:
    """A scorer with its own cache keeps it: its vectors are the ones novelty is against."""
    own = scorer()
    list(own.iter_scores(item.trace for item in items()[:2]))
    assert ScoreRun(own).scorer is own


def test_tallied_counts_each_scored_item_and_tells_progress_the_count() -> None:
    """Every item passes through unchanged, counted in the tally; progress hears 1, 2, ... 6."""
    tally, heard = RunTally(0.5), list[int]()
    scored = list(score_items(items(), scorer()))
    assert list(tallied(scored, tally, heard.append)) == scored
    assert (tally.scored, heard) == (6, [1, 2, 3, 4, 5, 6])


def test_a_run_whose_save_fails_leaves_no_cache_file_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk at the save: the error, and the empty file the run made is gone."""

    def no_room(*_: object) -> None:
        raise OSError(28, "No space left on device")

    path = tmp_path / "vectors.ring"
    monkeypatch.setattr(ring_file, "_write_at", no_room)
    run = ScoreRun(scorer(), cache_path=path)
    with pytest.raises(CacheFileError, match="6 new vectors are not in it"), run:
        list(run.score(items()))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["vectors.ring", "vectors.npz"])
def test_a_cache_path_that_is_a_link_to_a_new_file_makes_the_file_and_keeps_the_link(
    tmp_path: Path, name: str
) -> None:
    """A link to a cache not made yet (in a folder with a space and a non-ASCII name): the
    run makes its target and the link stays a link; an interrupted run removes only that file."""
    folder = tmp_path / "shared caches é"
    folder.mkdir()
    link = tmp_path / f"link-{name}"
    link.symlink_to(folder / name)
    with ScoreRun(scorer(), cache_path=link) as first:
        list(first.score(items()))
    assert link.is_symlink()
    assert (folder / name).is_file()
    (folder / name).unlink()
    run = ScoreRun(scorer(), cache_path=link)
    with pytest.raises(KeyboardInterrupt), run:  # noqa: PT012
        list(run.score(items()))
        raise KeyboardInterrupt
    assert link.is_symlink()
    assert not (folder / name).exists()


def test_a_run_says_when_another_saved_into_its_cache_while_it_scored(tmp_path: Path) -> None:
    """Another process's save between two of the run's batches is counted, and said: the
    scores are not those of the two runs one after the other."""
    path = tmp_path / "vectors.ring"
    with ScoreRun(scorer(), cache_path=path) as first:
        list(first.score(items()[:1]))

    def read_while_another_saves() -> Iterator[TraceItem]:
        for n, item in enumerate(items()[1:]):
            if n == 2:  # the first batch of two is scored: another run saves now
                other_run_saves(path, 3)
            yield item

    with ScoreRun(scorer(), cache_path=path) as run:
        list(run.score(read_while_another_saves()))
    assert run.cache_change is not None
    assert run.cache_change.saved_meanwhile == 3
    said = cache_lines("vectors.ring", saved=True, already_cached=0, change=run.cache_change)
    assert said[-1].startswith("kp: another run saved 3 vectors into vectors.ring while this")


class UndeclaredWidth:
    """An embedder that does not declare its vectors' width: the run's cache is made in memory."""

    model_id = "undeclared"

    def embed_batch(self, texts: Sequence[str]) -> Any:
        return HashingEmbedder(16).embed_batch(texts)


def test_a_run_whose_cache_another_made_meanwhile_appends_to_it(tmp_path: Path) -> None:
    """The width known only once scored: a file another process made and filled meanwhile keeps
    its vectors, and the run's are appended after them (they were once saved over them)."""
    path = tmp_path / "vectors.ring"
    run = ScoreRun(TraceValueScorer(embedder=UndeclaredWidth(), batch_size=2), cache_path=path)
    with run:
        scored = list(run.score(items()))
        assert not path.exists()
        width = run.scorer.cache.dimensions or 0
        other_run_saves(path, 3, model_id=run.scorer.cache_model_id or "", dimensions=width)
    held = [e.id for e in VectorCache.open(path).entries()]
    assert held == [*(f"other0-{i}" for i in range(3)), *(s.trace.id for s in scored)]
