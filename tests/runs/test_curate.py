"""``runs.select`` and ``runs.dedupe``: one call on rows or files, the same choices as the CLI."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import math
import os
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import knowledgepulse.runs.tasks as tasks_module
from knowledgepulse.cli.main import main
from knowledgepulse.curation import infer_tasks
from knowledgepulse.curation.corpus import content_digest
from knowledgepulse.errors import (
    EmbedderUnavailableError,
    ParameterConflictError,
    ScorerParameterError,
    SettingTypeError,
)
from knowledgepulse.redact.items import Redactor
from knowledgepulse.reports.rows import SCORE_COLUMNS
from knowledgepulse.runs import dedupe, select
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import curation_traces, trace_json

DATASETS = Path(__file__).parents[2] / "examples" / "datasets"
pd = pytest.importorskip("pandas")  # untyped: no stubs


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI embeds with the fast fake, as the library calls below do."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def kp(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kp ARGS...`` in-process: the exit code, stdout and stderr."""
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def corpus() -> list[dict[str, Any]]:
    """Two copies of a flight search (near-duplicates), two code tasks, three runs of a refund."""
    traces = curation_traces()
    for run, objective in enumerate(("refund order 7", "money back for order 7", "refund 7")):
        trace = trace_json(trace_id=f"kp:trace:refund-{run}", objective=objective, success=run != 2)
        trace["metadata"]["bench"] = {"task_id": "refund"}
        traces.append(trace)
    return traces


def write(path: Path, traces: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    return str(path)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"budget": 3},
        {"max_similarity": 0.95},
        {"per_domain": True, "budget": 2},
        {"min_score": "p50"},
        {"task_field": "metadata.bench.task_id", "per_task": 1},
        {"task_field": "metadata.bench.task_id", "per_task": 1, "per_domain": True, "budget": 3},
    ],
)
def test_select_from_dicts_picks_what_the_cli_picks_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: dict[str, Any]
) -> None:
    """Same ids in the same order, and the rows are the CLI's output lines, parsed."""
    flags: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    code, out, err = kp(capsys, "select", write(tmp_path / "t.jsonl", corpus()), *flags)
    assert code == 0, err
    result = select(corpus(), scorer=scorer(), **options)
    cli = [json.loads(line) for line in out.splitlines()]
    assert [s.breakdown.trace_id for s in result.selected] == [t["id"] for t in cli]
    assert result.rows == cli


def test_select_on_rows_picks_what_the_cli_picks_from_the_dataset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Chat rows as dicts: the CLI's rows, with the task read from the task column."""
    path = DATASETS / "openai_chat.jsonl"
    code, out, err = kp(capsys, "select", "--from", "openai-chat", "--per-task", "1", str(path))
    assert code == 0, err
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    result = select(rows, per_task=1, scorer=scorer())
    assert result.rows == [json.loads(line) for line in out.splitlines()]
    assert not result.tasks_inferred
    assert set(result.tasks) == {row["instance_id"] for row in rows}


def test_dedupe_from_dicts_groups_what_the_cli_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same representatives, members and cosines as ``kp dedupe`` on the file."""
    code, out, err = kp(
        capsys, "dedupe", write(tmp_path / "t.jsonl", corpus()), "--threshold", "0.8"
    )
    assert code == 0, err
    result = dedupe(corpus(), threshold=0.8, scorer=scorer())

    def ids(group: dict[str, Any]) -> tuple[Any, ...]:
        # Where each trace was read differs (a file, rows): the rest is the same.
        members = tuple((m["id"], round(m["similarity"], 9)) for m in group["members"])
        return group["representative"]["id"], group["size"], members

    groups = [ids(json.loads(line)) for line in out.splitlines()]
    assert groups
    assert [ids(group.to_dict()) for group in result.groups] == groups


def test_dedupe_on_a_corpus_walks_only_the_items_with_a_near_copy() -> None:
    """The leave-one-out novelty bounds each item's cosines: the same groups as a full walk."""
    traces = [*corpus(), dict(corpus()[0])]  # one id twice: it has no bound, so it walks
    result = dedupe(traces, threshold=0.8, scorer=scorer())
    whole = dataclasses.replace(result.corpus, leave_one_out=False)
    bounds = result.corpus.nearest_cosines()
    assert bounds is not None
    assert min(bounds) < 0.8 < max(bounds) == math.inf  # some left out, some walked
    assert whole.nearest_cosines() is None
    assert dedupe(whole, threshold=0.8).groups == result.groups
    assert any(group.members for group in result.groups)


def test_dedupe_splits_the_items_into_kept_and_dropped(tmp_path: Path) -> None:
    """Each group's members go, everything else stays; the kp_ columns say the same."""
    result = dedupe(corpus(), threshold=0.95, scorer=scorer())
    [group] = result.groups
    assert group.representative.breakdown.trace_id == "kp:trace:flight-a"
    assert [s.breakdown.trace_id for s in result.dropped] == ["kp:trace:flight-b"]
    assert len(result.kept) == len(corpus()) - 1
    columns = result.columns()
    assert [c["kp_kept"] for c in columns] == [i != 1 for i in range(len(corpus()))]
    assert [c["kp_group"] for c in columns][:3] == [0, 0, None]


def test_select_gives_a_dataframe_back_for_a_dataframe() -> None:
    """Chat rows in a DataFrame come back as its own rows (index kept), kp_ columns added."""
    frame = pd.read_json(DATASETS / "openai_chat.jsonl", lines=True)
    result = select(frame, budget=2, scorer=scorer())
    picked = result.rows
    assert isinstance(picked, pd.DataFrame)
    assert list(picked.columns) == [*frame.columns, *SCORE_COLUMNS]
    assert picked["kp_score"].tolist() == [round(s.breakdown.score, 4) for s in result.selected]
    assert picked["trajectory_id"].tolist() == [
        s.breakdown.trace_id.removeprefix("kp:trace:") for s in result.selected
    ]
    assert picked.index.tolist() == [s.item.row.location.index for s in result.selected]  # type: ignore[union-attr]


def test_select_gives_an_arrow_table_back_for_an_arrow_table() -> None:
    """An Arrow table in, an Arrow table of the selected rows out, with the kp_ columns."""
    table = pq.read_table(DATASETS / "openai_chat.parquet")
    result = dedupe(table, threshold=0.5, scorer=scorer())
    kept = result.kept_rows
    assert isinstance(kept, pa.Table)
    assert kept.column_names[-2:] == ["kp_group", "kp_kept"]
    assert kept.num_rows + len(result.dropped) == table.num_rows


def test_select_gives_a_dataset_back_for_a_dataset() -> None:
    """A datasets.Dataset in, the selected rows as a Dataset out."""
    datasets = pytest.importorskip("datasets")
    rows = [json.loads(line) for line in (DATASETS / "sharegpt.jsonl").read_text().splitlines()]
    result = select(datasets.Dataset.from_list(rows), budget=1, scorer=scorer())
    picked = result.rows
    assert isinstance(picked, datasets.Dataset)
    assert picked.num_rows == 1
    assert "kp_score" in picked.column_names


def test_select_on_a_dataset_read_from_disk_writes_nothing_into_its_folder(
    tmp_path: Path,
) -> None:
    """Rows picked out of order are put together in memory, not in a cache file by the data."""
    datasets = pytest.importorskip("datasets")
    datasets.load_from_disk(DATASETS / "openai_chat_hf").save_to_disk(tmp_path / "runs")
    before = sorted(path.name for path in (tmp_path / "runs").iterdir())
    result = select(datasets.load_from_disk(tmp_path / "runs"), scorer=scorer())
    assert list(result.rows["trajectory_id"]) != sorted(result.rows["trajectory_id"])
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == before


def test_select_leaves_the_callers_dicts_as_they_were() -> None:
    """The rows given back are copies: the input's quality_score is not overwritten."""
    traces = corpus()
    before = copy.deepcopy(traces)
    result = select(traces, scorer=scorer())
    assert all(row["metadata"]["quality_score"] > 0 for row in result.rows)
    assert traces == before


def test_select_again_on_the_corpus_does_not_score_again() -> None:
    """A result's corpus selects again; a budget of N picks the first N of no budget."""
    whole = select(corpus(), scorer=scorer())
    again = select(whole.corpus, budget=2)
    assert again.corpus is whole.corpus
    assert again.picks == whole.picks[:2]


def test_select_reads_the_task_field_and_infers_without_it() -> None:
    """With task_field the tasks are read (missing: one task); without, inferred."""
    read = select(corpus(), task_field="metadata.bench.task_id", scorer=scorer())
    assert not read.tasks_inferred
    assert read.tasks.count("refund") == 3
    assert read.tasks.count(None) == 4
    inferred = select(corpus(), scorer=scorer())
    assert inferred.tasks_inferred
    assert None not in inferred.tasks


def test_inference_joins_failed_tasks_below_the_similarity_and_none_at_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Failed runs are said; joined 0.1 below --task-similarity (on its scale), none at 1."""
    calls: list[dict[str, Any]] = []
    real = infer_tasks

    def spy(*args: Any, **kwargs: Any) -> list[str]:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(tasks_module, "infer_tasks", spy)
    result = select(corpus(), scorer=scorer(), task_similarity=0.7)
    items = result.corpus.items
    assert calls[0]["failed"] == [not s.item.trace.metadata.success for s in items]
    assert calls[0]["joined"] == pytest.approx(result.corpus.cosine_of(0.6))
    select(corpus(), scorer=scorer(), task_similarity=1.0)
    assert calls[1]["joined"] is None


def test_rejected_items_say_why_and_which_pick_they_copy() -> None:
    """A near-duplicate names the selected item it matched, with the cosine."""
    result = select(corpus(), max_similarity=0.95, scorer=scorer())
    [copy_] = [r for r in result.rejected if r.reason == "near_duplicate"]
    assert copy_.duplicate_of is not None
    assert copy_.duplicate_of.breakdown.trace_id == "kp:trace:flight-a"
    assert copy_.to_dict()["duplicate_of"] == "kp:trace:flight-a"
    assert copy_.similarity is not None
    assert copy_.similarity >= 0.95


def test_problems_are_reported_as_data_and_as_found(tmp_path: Path) -> None:
    """A broken record is in the result's problems and told to on_problem; the rest is chosen."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(trace_json()) + "\n{broken\n")
    told: list[Any] = []
    result = select([str(path)], source=None, scorer=scorer(), on_problem=told.append)
    assert len(result.selected) == 1
    assert [str(p) for p in result.problems] == [str(p) for p in told]
    assert "invalid JSON" in str(result.problems[0])


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: select(corpus(), budget=1, top=10), ParameterConflictError, "budget and top"),
        (lambda: select(corpus(), top=0), ScorerParameterError, "top=0: give a percentage"),
        (lambda: select(corpus(), task_field=""), ScorerParameterError, "task_field='': give"),
        (
            lambda: select(corpus(), task_field="metadata.nosuch", per_task=1),
            ScorerParameterError,
            "task_field='metadata.nosuch': no trace has it",
        ),
        (
            lambda: select(corpus(), max_similarity=0.9, scorer=TraceValueScorer(embedder=None)),
            ScorerParameterError,
            "max_similarity compares embeddings",
        ),
        (
            lambda: dedupe(corpus(), scorer=TraceValueScorer(embedder=None)),
            ScorerParameterError,
            "dedupe compares embeddings",
        ),
        (  # a count where a switch goes: refused, not read as True ("one a domain")
            lambda: select(corpus(), per_domain=1, per_task=1),  # type: ignore[arg-type]
            SettingTypeError,
            "per_domain=1: give True or False",
        ),
        (
            lambda: select(corpus(), max_similarity=95),
            ScorerParameterError,
            "max_similarity=95: give a cosine",
        ),
        (
            lambda: dedupe(corpus(), threshold=float("nan")),
            ScorerParameterError,
            "threshold=nan: give a cosine",
        ),
        (
            lambda: select(corpus(), task_similarity=-2),
            ScorerParameterError,
            "task_similarity=-2: give a cosine",
        ),
        (
            lambda: dedupe(corpus(), scorer=TraceValueScorer(embedder=None)),
            ScorerParameterError,
            "drop embedder=None [(]or give by='task'[)]",
        ),
        (
            lambda: select(corpus(), task_field="metadata.task", task_similarity=0.5),
            ParameterConflictError,
            "task_similarity infers the tasks task_field reads: give one of them",
        ),
        (
            lambda: dedupe(corpus(), task_field="metadata.task", task_similarity=0.5),
            ParameterConflictError,
            "task_similarity infers the tasks task_field reads: give one of them",
        ),
        (
            lambda: dedupe(corpus(), task_similarity=0.5),
            ParameterConflictError,
            "task_similarity infers the tasks of by='task': give by='task'",
        ),
        (
            lambda: dedupe(corpus(), by="task", threshold=0.5),
            ParameterConflictError,
            "by='task' keeps each task's best run, whatever the cosine: drop threshold",
        ),
    ],
)
def test_library_errors_name_the_parameters_not_the_flags(
    call: Any, error: type[Exception], words: str
) -> None:
    """The message names the Python parameter, never a --flag."""
    with pytest.raises(error, match=words) as raised:
        call()
    assert "--" not in str(raised.value)


def test_max_similarity_without_vectors_says_the_embedder_did_not_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An embedder that yields no vectors: an error naming max_similarity, no silent 0.5."""
    failing = scorer()
    monkeypatch.setattr(failing, "embed_traces", lambda traces: None)
    with pytest.raises(EmbedderUnavailableError, match="max_similarity needs an embedder"):
        select(corpus(), max_similarity=0.9, scorer=failing)


def test_kp_shows_the_same_error_with_its_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """kp select --max-similarity without vectors: the library's error, spelt with options."""
    monkeypatch.setattr(TraceValueScorer, "embed_traces", lambda self, traces: None)
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(trace) + "\n" for trace in corpus()))
    code, _, err = kp(capsys, "select", str(path), "--max-similarity", "0.9")
    assert code == 2
    assert err.startswith("kp: error: --max-similarity needs an embedder, and none could be")
    assert err.rstrip().endswith("or give the embedder a model file it can load (--model)")


_OBJECTIVES = ["refund order 7", "book a flight", "fix the test", "sum invoices", "plan a trip"]


@st.composite
def trace_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to eight traces: few objectives (near-copies), repeated ids, three domains."""
    count = draw(st.integers(min_value=0, max_value=8))
    return [
        trace_json(
            trace_id=f"kp:trace:{draw(st.integers(min_value=0, max_value=5))}",
            objective=draw(st.sampled_from(_OBJECTIVES)),
            domain=draw(st.sampled_from(["code", "finance", "qa"])),
            confidence=draw(st.sampled_from([0.2, 0.5, 0.9])),
            success=draw(st.booleans()),
        )
        for _ in range(count)
    ]


LAWS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@LAWS
@given(traces=trace_lists(), budget=st.integers(min_value=0, max_value=9))
def test_a_budget_of_k_selects_at_most_k_items_all_from_the_input(
    traces: list[dict[str, Any]], budget: int
) -> None:
    """Never more than the budget, and every selected id is one of the input's."""
    result = select(traces, budget=budget, max_similarity=0.99, scorer=scorer())
    assert len(result.selected) <= budget
    assert {s.breakdown.trace_id for s in result.selected} <= {t["id"] for t in traces}
    assert len(result.selected) + len(result.rejected) == len(traces)


@LAWS
@given(
    traces=trace_lists(),
    budget=st.one_of(st.none(), st.integers(min_value=0, max_value=9)),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_the_selection_does_not_depend_on_the_input_order(
    traces: list[dict[str, Any]], budget: int | None, seed: int
) -> None:
    """Shuffled input, the same items picked in the same order (corpus mode is order-free)."""
    shuffled = traces[:]
    random.Random(seed).shuffle(shuffled)

    def picked(data: list[dict[str, Any]]) -> list[bytes]:
        result = select(data, budget=budget, max_similarity=0.9, scorer=scorer())
        return [content_digest(s.item.document) for s in result.selected]

    assert picked(shuffled) == picked(traces)


def test_select_with_redact_counts_the_redactions_of_the_selected_items_only() -> None:
    """A row left out is not shared: its redactions are not in the counts (issue 28 item 4)."""
    traces = curation_traces()
    for trace in traces:
        trace["task"]["objective"] += " mail bob@corp.io"
    redactor = Redactor("aggregated")
    result = select(traces, budget=1, scorer=scorer(), redact=redactor)
    assert len(result.selected) == 1
    assert (redactor.redacted, dict(redactor.types)) == (1, {"email": 1})


def rewarded_rows(rewards: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Chat rows: each task's runs with their rewards, and a ``pass_rate`` column in reverse."""
    return [
        {
            "id": f"{task}-{run}",
            "task_id": task,
            "reward": reward,
            "pass_rate": -reward,
            "messages": [
                {"role": "user", "content": f"solve task {task}"},
                {"role": "assistant", "content": f"answer {run} " + "word " * run},
            ],
        }
        for task, runs in rewards.items()
        for run, reward in enumerate(runs)
    ]


def no_embedder() -> TraceValueScorer:
    return TraceValueScorer(embedder=None)


def test_rank_by_a_field_of_booleans_says_it_holds_no_number() -> None:
    """rank_by="metadata.success" on traces: every item has it, as true or false; the error says
    so (successful runs come first anyway) rather than that no item has it."""
    traces = curation_traces()
    with pytest.raises(ScorerParameterError, match=r"metadata\.success holds true or false"):
        select(traces, rank_by="metadata.success", scorer=no_embedder())


@pytest.mark.parametrize("reread", [False, True])
@pytest.mark.parametrize(
    ("column", "held"),
    [("note", "a string"), ("when", "a datetime"), ("scores", "a list")],
)
def test_rank_by_a_column_of_no_numbers_says_what_it_holds(
    column: str, held: str, reread: bool
) -> None:
    """A column every row has, of text, times or lists: the error says what it holds.

    It said ``no item has a when`` of a column every row had, sending the user to look for a
    misspelling that was not there; items held apart (``reread``, what ``kp select`` does
    from 8,192 rows) say it as well.
    """
    rows = [
        {
            **row,
            "note": "fine",
            "when": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
            "scores": [0.5, 1.0],
        }
        for row in rewarded_rows({"a": [0.6, 1.0]})
    ]
    with pytest.raises(ScorerParameterError) as raised:
        select(rows, rank_by=column, scorer=no_embedder(), reread=reread)
    assert str(raised.value).startswith(f"rank_by={column!r}: {column} holds {held}, not a number")


def test_rank_by_reward_keeps_each_tasks_highest_reward_run() -> None:
    """Best of N by reward: 1.0 beats 0.6 though both count as successes at 0.5."""
    rows = rewarded_rows({"a": [0.6, 1.0, 0.2], "b": [0.9, 0.0, 0.7]})
    result = select(rows, rank_by="reward", per_task=1, scorer=no_embedder())
    assert [row["id"] for row in result.rows] == ["a-1", "b-0"]
    assert result.outcomes == (0.6, 1.0, 0.2, 0.9, 0.0, 0.7)


def test_rank_by_reward_reads_a_reward_column_beside_a_boolean_success(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A boolean success column gives no reward: a column named reward is the reward, in
    Python and in kp alike (the keyword no longer shadows the column)."""
    rows = rewarded_rows({"a": [0.6, 1.0, 0.2], "b": [0.9, 0.0, 0.7]})
    for row in rows:
        row["success"] = row["reward"] >= 0.5
    result = select(rows, rank_by="reward", per_task=1, scorer=no_embedder())
    assert [row["id"] for row in result.rows] == ["a-1", "b-0"]
    assert result.outcomes == (0.6, 1.0, 0.2, 0.9, 0.0, 0.7)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["select", str(path), "--rank-by", "reward", "--per-task", "1", "--no-embedder"]
    assert main(args) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [
        "a-1",
        "b-0",
    ]


def test_rank_by_a_column_ranks_by_its_number() -> None:
    """A numeric column named by rank_by: its highest value is each task's pick."""
    rows = rewarded_rows({"a": [0.6, 1.0, 0.2], "b": [0.9, 0.0, 0.7]})
    result = select(rows, rank_by="pass_rate", per_task=1, scorer=no_embedder())
    assert [row["id"] for row in result.rows] == ["b-1", "a-2"]  # -0.0, then -0.2


def test_rank_by_a_dotted_path_of_the_trace() -> None:
    """A trace's number at a dotted path ranks it; a trace without it comes last."""
    traces = [trace_json(trace_id=f"kp:trace:{name}", objective="the same task") for name in "abc"]
    traces[0]["metadata"]["eval"] = {"pass_rate": 0.2}
    traces[1]["metadata"]["eval"] = {"pass_rate": 0.9}
    result = select(traces, rank_by="metadata.eval.pass_rate", scorer=no_embedder())
    assert [scored.trace.id for scored in result.selected] == [
        "kp:trace:b",
        "kp:trace:a",
        "kp:trace:c",
    ]


def test_equal_rewards_go_to_the_higher_score() -> None:
    """Two runs of one task with reward 1.0: the one scoring higher is kept."""
    rows = rewarded_rows({"a": [1.0, 1.0]})
    result = select(rows, rank_by="reward", per_task=1, scorer=no_embedder())
    best = max(result.corpus.items, key=lambda scored: scored.breakdown.score)
    assert result.selected == [best]


def test_min_reward_leaves_out_the_runs_below_it() -> None:
    """Runs below the minimum reward are rejected as below_min_reward, ranked by score."""
    rows = rewarded_rows({"a": [0.6, 1.0, 0.2], "b": [0.9, 0.0, 0.7]})
    result = select(rows, min_reward=0.7, scorer=no_embedder())
    assert sorted(row["id"] for row in result.rows) == ["a-1", "b-0", "b-2"]
    assert {r.item.trace.id: r.reason for r in result.rejected} == {
        "kp:trace:a-0": "below_min_reward",
        "kp:trace:a-2": "below_min_reward",
        "kp:trace:b-1": "below_min_reward",
    }


def test_a_tasks_successful_runs_are_selected_before_its_failed_ones() -> None:
    """By score, a failed run's higher score does not put it before a successful run."""
    traces = [
        trace_json(trace_id="kp:trace:failed", objective="refund 7", success=False),
        trace_json(trace_id="kp:trace:won", objective="refund 7", success=True),
    ]
    traces[0]["steps"] *= 3  # more steps, a higher score
    result = select(traces, per_task=1, scorer=no_embedder())
    assert [scored.trace.id for scored in result.selected] == ["kp:trace:won"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"rank_by": "rewrd"}, "rank_by='rewrd'"),
        ({"rank_by": "reward"}, "rank_by='reward'"),
        ({"min_reward": 0.5}, "min_reward=0.5"),
    ],
)
def test_an_outcome_no_item_has_is_an_error_naming_the_parameter(
    options: dict[str, Any], named: str
) -> None:
    """A misspelt field, or a reward where none was read, is refused, not ranked as nothing."""
    with pytest.raises(ScorerParameterError, match=named):
        select(curation_traces(), scorer=no_embedder(), **options)


def test_rank_by_reward_on_traces_says_to_name_the_field_that_holds_one() -> None:
    """Trace files hold no reward: the error says what to give instead, a dotted path."""
    with pytest.raises(ScorerParameterError, match=r"name the field that holds one .*dotted path"):
        select(curation_traces(), rank_by="reward", scorer=no_embedder())


def test_dedupe_by_task_groups_the_rows_of_each_task_column_value() -> None:
    """By task the groups are the task column's partition, each under its best run."""
    rows = rewarded_rows({"a": [1.0, 0.0, 0.5], "b": [1.0, 1.0], "c": [0.0]})
    result = dedupe(rows, by="task", scorer=no_embedder())
    assert not result.tasks_inferred
    ids = [scored.breakdown.trace_id.removeprefix("kp:trace:") for scored in result.corpus.items]
    groups = {
        frozenset(ids[i] for i, group in enumerate(result.group_of) if group == number)
        for number in range(len(result.groups))
    }
    assert groups == {frozenset({"a-0", "a-1", "a-2"}), frozenset({"b-0", "b-1"})}
    for group in result.groups:
        runs = [group.representative, *(member for member, _ in group.members)]
        best = min(runs, key=lambda s: (-s.breakdown.score, s.breakdown.trace_id))
        assert group.representative is best
    assert len(result.kept) == 3


def test_dedupe_by_task_infers_two_runs_of_one_objective_as_one_task() -> None:
    """With no task read, two runs of one objective are one group; the other traces none."""
    traces = curation_traces()
    traces[1]["task"]["objective"] = "book the cheapest flight from Lisbon to Oslo in May"
    traces.append(
        trace_json(
            trace_id="kp:trace:code-1-again",
            domain="code",
            objective=traces[2]["task"]["objective"],
        )
    )
    result = dedupe(traces, by="task", scorer=no_embedder())
    assert result.tasks_inferred
    [group] = result.groups
    ids = {
        group.representative.breakdown.trace_id,
        *(m.breakdown.trace_id for m, _ in group.members),
    }
    assert ids == {"kp:trace:code-1", "kp:trace:code-1-again"}


def test_dedupe_by_task_reads_a_dotted_task_field_of_the_traces() -> None:
    """task_field names where the task is; a trace without it is in no group."""
    result = dedupe(corpus(), by="task", task_field="metadata.bench.task_id", scorer=scorer())
    [group] = result.groups
    assert len(group.members) == 2
    assert all(similarity is not None for _, similarity in group.members)
    assert sum(index is not None for index in result.group_of) == 3


def test_dedupe_by_an_unknown_grouping_is_an_error() -> None:
    """by takes similarity or task: a ScorerParameterError naming by, its value and both."""
    with pytest.raises(
        ScorerParameterError, match="by='objective': give one of 'similarity', 'task'"
    ):
        dedupe(corpus(), by="objective", scorer=scorer())  # type: ignore[arg-type]


def test_similarity_thresholds_reach_the_vectors_through_the_corpus_scale() -> None:
    """dedupe's threshold, select's max_similarity and task inference are set on MiniLM's
    cosines: each meets the vectors as the corpus's ``cosine_of`` says (the static table's
    calibration), so a lower cosine there groups what the same number would not."""
    scored = select(corpus(), scorer=scorer()).corpus
    lowered = dataclasses.replace(scored, cosine_of=lambda cosine: cosine - 0.5)
    assert len(dedupe(lowered, threshold=0.95).dropped) > len(
        dedupe(scored, threshold=0.95).dropped
    )
    assert len(select(lowered, max_similarity=0.95).selected) < len(
        select(scored, max_similarity=0.95).selected
    )
    assert len(dedupe(lowered, by="task").groups) < len(dedupe(scored, by="task").groups)


def test_a_parquet_decimal_reward_ranks_as_the_number_it_is() -> None:
    """A decimal128 success column (SQL, Spark exports) is a reward, not an unreadable value."""
    rewards = [Decimal("0.60"), Decimal("1.00"), Decimal("0.20")]
    rows = [
        {
            "id": f"run-{index}",
            "task_id": "t",
            "reward": reward,
            "messages": [
                {"role": "user", "content": "add 2 and 2"},
                {"role": "assistant", "content": f"answer {index}"},
            ],
        }
        for index, reward in enumerate(rewards)
    ]
    table = pa.Table.from_pylist(rows).cast(
        pa.Table.from_pylist(rows).schema.set(2, pa.field("reward", pa.decimal128(5, 2)))
    )
    result = select(table, rank_by="reward", per_task=1, scorer=scorer())
    assert result.problems == ()
    assert result.rows.column("id").to_pylist() == ["run-1"]
    assert result.rows.column("reward").type == pa.decimal128(5, 2)


def test_converted_rows_rank_by_the_reward_and_task_kp_convert_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kp convert`` then ``select``: the traces keep each row's reward and task in
    ``metadata.source``, so ranking by them picks the runs the rows themselves give."""
    rows = rewarded_rows({"a": [0.6, 1.0, 0.2], "b": [0.9, 0.0, 0.7]})
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    code, out, _ = kp(capsys, "convert", str(path))
    assert code == 0
    traces = [json.loads(line) for line in out.splitlines()]
    assert [trace["metadata"]["source"]["reward"] for trace in traces] == [
        row["reward"] for row in rows
    ]
    picked = select(
        traces,
        rank_by="metadata.source.reward",
        task_field="metadata.source.task",
        per_task=1,
        scorer=no_embedder(),
    )
    from_rows = select(rows, rank_by="reward", per_task=1, scorer=no_embedder())
    assert [scored.trace.id for scored in picked.selected] == [
        scored.trace.id for scored in from_rows.selected
    ]


def _threshold(threshold: float, by: str) -> float | None:
    """The threshold, where ``by`` takes one (by task: none)."""
    return None if by == "task" else threshold


def _bare(document: dict[str, Any]) -> str:
    """A trace's JSON without the quality score a result writes into it."""
    document = copy.deepcopy(document)
    document["metadata"].pop("quality_score", None)
    return json.dumps(document, sort_keys=True)


@LAWS
@given(
    traces=trace_lists(),
    threshold=st.sampled_from([0.5, 0.9, 1.0]),
    by=st.sampled_from(["similarity", "task"]),
)
def test_dedupe_keeps_or_drops_each_item_once_and_its_groups_are_those_of_group_of(
    traces: list[dict[str, Any]], threshold: float, by: str
) -> None:
    """kept_rows and dropped_rows partition the input (each trace once, as it was); an item is in
    a group exactly when group_of names it, as its representative or a member."""
    result = dedupe(traces, threshold=_threshold(threshold, by), by=by, scorer=scorer())  # type: ignore[arg-type]
    back = [*result.kept_rows, *result.dropped_rows]
    assert sorted(map(_bare, back)) == sorted(map(_bare, traces))
    place = {id(scored): index for index, scored in enumerate(result.corpus.items)}
    grouped = {
        place[id(scored)]: number
        for number, group in enumerate(result.groups)
        for scored in (group.representative, *(member for member, _ in group.members))
    }
    assert grouped == {i: g for i, g in enumerate(result.group_of) if g is not None}


@LAWS
@given(
    traces=trace_lists(),
    threshold=st.sampled_from([0.5, 0.9, 1.0]),
    by=st.sampled_from(["similarity", "task"]),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_dedupe_groups_do_not_depend_on_the_input_order(
    traces: list[dict[str, Any]], threshold: float, by: str, seed: int
) -> None:
    """Shuffled input, the same groups under the same representatives, members in one order."""
    shuffled = traces[:]
    random.Random(seed).shuffle(shuffled)

    def groups(data: list[dict[str, Any]]) -> list[tuple[bytes, list[bytes]]]:
        result = dedupe(data, threshold=_threshold(threshold, by), by=by, scorer=scorer())  # type: ignore[arg-type]
        return [
            (
                content_digest(group.representative.item.document),
                [content_digest(member.item.document) for member, _ in group.members],
            )
            for group in result.groups
        ]

    assert groups(shuffled) == groups(traces)


_CHOOSE_ALL = """
import copy, json, sys
from knowledgepulse.runs import decontaminate, dedupe, select, split
traces = [json.loads(line) for line in open(sys.argv[1])]
for number, original in enumerate(traces[:3]):  # exact copies under other ids: ties to break
    twin = copy.deepcopy(original)
    twin["id"] = f"kp:trace:twin-{number}"
    traces.append(twin)
def ids(items):
    return [scored.breakdown.trace_id for scored in items]
picked = select(traces, budget=5, max_similarity=0.9)
groups = dedupe(traces, threshold=0.9)
tasks = dedupe(traces, by="task")
clean = decontaminate(traces, against_texts=[traces[1]["task"]["objective"]])
print(json.dumps([
    ids(picked.selected), [(r.reason, r.item.breakdown.trace_id) for r in picked.rejected],
    [(g.representative.breakdown.trace_id, ids(m for m, _ in g.members)) for g in groups.groups],
    [(g.representative.breakdown.trace_id, ids(m for m, _ in g.members)) for g in tasks.groups],
    list(split(traces, test=0.4).parts),
    [found.item.trace.id for found in clean.removed],
]))
"""


def test_the_choices_are_the_same_under_any_hash_seed() -> None:
    """select, dedupe (by cosine and by task), split and decontaminate with the default
    embedder choose alike in processes of other hash seeds (which order sets and dicts of
    strings): a run gives the same dataset each time."""
    traces = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
    answers = {
        subprocess.run(
            [sys.executable, "-c", _CHOOSE_ALL, str(traces)],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (0, 1, 2)
    }
    assert len(answers) == 1, answers
