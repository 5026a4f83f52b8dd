"""``kp select`` and ``kp dedupe`` as a curator runs them (fake embedder: fast, deterministic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.testing import HashingEmbedder
from tests.builders import curation_traces, step, trace_json
from tests.cli.conftest import KpRunner


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands embed with the fast fake instead of MiniLM."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


def write(path: Path, traces: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    return str(path)


def corpus(tmp_path: Path, *, reverse: bool = False) -> str:
    traces = curation_traces()
    return write(tmp_path / "t.jsonl", traces[::-1] if reverse else traces)


def test_select_writes_the_best_traces_annotated_and_rejects_the_near_duplicate(
    kp: KpRunner, tmp_path: Path
) -> None:
    """One of the two flight copies is kept; the other is reported as its near-duplicate."""
    report = tmp_path / "rejected.jsonl"
    run = kp("select", corpus(tmp_path), "--max-similarity", "0.95", "--report", str(report))
    assert run.code == 0, run.err
    selected = [json.loads(line) for line in run.out.splitlines()]
    ids = [t["id"] for t in selected]
    assert len(ids) == 3
    assert ("kp:trace:flight-a" in ids) != ("kp:trace:flight-b" in ids)
    assert all(0 < t["metadata"]["quality_score"] <= 1 for t in selected)
    scores = [t["metadata"]["quality_score"] for t in selected]
    assert scores == sorted(scores, reverse=True)
    [rejected] = [json.loads(line) for line in report.read_text().splitlines()]
    assert rejected["reason"] == "near_duplicate"
    assert rejected["duplicate_of"] in ids
    assert rejected["similarity"] >= 0.95
    assert "1 near-duplicate;" in run.err


def test_select_output_does_not_depend_on_input_order(kp: KpRunner, tmp_path: Path) -> None:
    """The same file reversed gives byte-identical output."""
    forward = kp("select", corpus(tmp_path), "--budget", "2", "--max-similarity", "0.9").out
    backward = kp(
        "select", corpus(tmp_path, reverse=True), "--budget", "2", "--max-similarity", "0.9"
    ).out
    assert forward == backward
    assert len(forward.splitlines()) == 2


def test_select_per_domain_shares_the_budget(kp: KpRunner, tmp_path: Path) -> None:
    """Budget 2 per domain: one testing trace and one code trace, whatever the scores."""
    run = kp("select", corpus(tmp_path), "--budget", "2", "--per-domain")
    domains = sorted(json.loads(line)["metadata"]["task_domain"] for line in run.out.splitlines())
    assert domains == ["code", "testing"]


def test_select_min_score_as_a_percentile(kp: KpRunner, tmp_path: Path) -> None:
    """--min-score p50 keeps the upper half and says what p50 came to."""
    run = kp("select", corpus(tmp_path), "--min-score", "p50")
    assert run.code == 0
    assert len(run.out.splitlines()) == 2
    assert "below the minimum score p50 = 0." in run.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "2", "--top", "10%"], "--budget and --top both set the budget; give one"),
        (["--top", "0%"], "percentage"),
        (["--top", "0.1"], "percentage from 1 to 100, such as 10%, not a fraction"),
        (["--min-score", "p200"], "p0 to p100"),
        (["--max-similarity", "0.9", "--no-embedder"], "needs an embedder"),
    ],
)
def test_select_usage_errors_are_one_line_and_exit_2(
    kp: KpRunner, tmp_path: Path, args: list[str], message: str
) -> None:
    """Contradictory or malformed options: one message, no traceback, exit code 2."""
    run = kp("select", corpus(tmp_path), *args)
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err


def test_select_reports_bad_records_with_file_and_line(kp: KpRunner, tmp_path: Path) -> None:
    """A broken line is reported as FILE:LINE and the rest is still selected; exit 1."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(trace_json()) + "\n{broken\n")
    run = kp("select", str(path))
    assert run.code == 1
    assert f"{path}:2: invalid JSON" in run.err
    assert len(run.out.splitlines()) == 1


def test_dedupe_groups_near_duplicates_under_their_best_trace(kp: KpRunner, tmp_path: Path) -> None:
    """The two flight copies form one group; the representative is the smaller id on a tie."""
    run = kp("dedupe", corpus(tmp_path), "--threshold", "0.95")
    assert run.code == 0, run.err
    [group] = [json.loads(line) for line in run.out.splitlines()]
    assert group["representative"]["id"] == "kp:trace:flight-a"
    assert [m["id"] for m in group["members"]] == ["kp:trace:flight-b"]
    assert group["size"] == 2
    assert "1 near-duplicate group at cosine >= 0.95; 1 trace would go, 3 kept" in run.err


@pytest.mark.parametrize("by", ["similarity", "task"])
def test_dedupe_groups_of_traces_to_a_parquet_name_are_refused(
    kp: KpRunner, tmp_path: Path, by: str
) -> None:
    """The groups are JSON Lines: -o groups.parquet is a usage error, not JSON in a .parquet."""
    out = tmp_path / "groups.parquet"
    run = kp("dedupe", corpus(tmp_path), "--by", by, "-o", str(out))
    assert run.code == 2
    assert "groups.parquet: .parquet is not a form written here" in run.err
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [("select", "--budget", "1"), ("dedupe", "--against", "REF")],
    ids=lambda c: c[0],
)
def test_a_report_to_a_parquet_name_is_refused_before_any_work(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """--report is JSON Lines: --report x.parquet names the flag, and nothing is written."""
    source = corpus(tmp_path)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.parquet"
    given = [source if arg == "REF" else arg for arg in command]
    run = kp(*given[:1], source, *given[1:], "-o", str(out), "--report", str(report))
    assert run.code == 2
    assert "--report report.parquet: .parquet is not a form written here" in run.err
    assert not out.exists()
    assert not report.exists()


def test_dedupe_by_task_writes_every_row_with_its_task_group(kp: KpRunner, tmp_path: Path) -> None:
    """Rows: each task's runs share a kp_group; only each task's best is kp_kept."""
    rows = [
        {
            "id": f"{task}-{run}",
            "task_id": task,
            "messages": [
                {"role": "user", "content": f"fix bug {task}"},
                {"role": "assistant", "content": f"patched it, attempt {run}" + " again" * run},
            ],
        }
        for task, runs in (("a", 3), ("b", 2), ("c", 1))
        for run in range(runs)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    run = kp("dedupe", str(path), "--by", "task", "--no-embedder")
    assert run.code == 0, run.err
    written = [json.loads(line) for line in run.out.splitlines()]
    assert [row["id"] for row in written] == [row["id"] for row in rows]
    group_of = {row["id"]: row["kp_group"] for row in written}
    assert group_of["a-0"] == group_of["a-1"] == group_of["a-2"] is not None
    assert group_of["b-0"] == group_of["b-1"] not in (None, group_of["a-0"])
    assert group_of["c-0"] is None
    kept = sorted(row["id"].split("-")[0] for row in written if row["kp_kept"])
    assert kept == ["a", "b", "c"]
    assert "6 traces scored; 2 task groups (tasks read); 3 traces would go, 3 kept" in run.err


def test_dedupe_by_task_reads_the_task_field_of_traces(kp: KpRunner, tmp_path: Path) -> None:
    """--task-field names the task's path in the trace; --by task groups by it."""
    traces = curation_traces()
    for trace, task in zip(traces, ("flights", "flights", "code", "code"), strict=True):
        trace["metadata"]["bench"] = {"task": task}
    run = kp(
        "dedupe",
        write(tmp_path / "t.jsonl", traces),
        "--by",
        "task",
        "--task-field",
        "metadata.bench.task",
    )
    assert run.code == 0, run.err
    groups = [json.loads(line) for line in run.out.splitlines()]
    for group in groups:  # each task's best: the highest score, then the smaller id
        runs = [group["representative"], *group["members"]]
        best = min(runs, key=lambda run: (-run["score"], run["id"]))
        assert group["representative"]["id"] == best["id"]
    assert "kp:trace:flight-a" in {g["representative"]["id"] for g in groups}  # copies: a tie
    assert [g["size"] for g in groups] == [2, 2]
    assert "2 task groups (tasks read)" in run.err


def test_dedupe_by_task_says_how_many_traces_lacked_the_task_field(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A --task-field a trace lacks leaves it in no group, and the summary counts them."""
    traces = curation_traces()
    traces[0]["metadata"]["bench"] = {"task": "flights"}
    path = write(tmp_path / "t.jsonl", traces)
    run = kp("dedupe", path, "--by", "task", "--task-field", "metadata.bench.task", "--no-embedder")
    assert run.code == 0, run.err
    assert "0 task groups (tasks read), 3 traces without metadata.bench.task in no group" in run.err


def test_dedupe_by_task_is_refused_with_against(kp: KpRunner, tmp_path: Path) -> None:
    """--by task groups one set; with --against it is a usage error."""
    reference = tmp_path / "ref.txt"
    reference.write_text("cheapest flight Lisbon Oslo\n")
    run = kp("dedupe", corpus(tmp_path), "--by", "task", "--against", str(reference))
    assert run.code == 2
    assert "--by task is for dedupe within one set: drop --against" in run.err


def test_dedupe_by_similarity_still_needs_an_embedder(kp: KpRunner, tmp_path: Path) -> None:
    """--no-embedder is refused by similarity (the default) and names --by task."""
    run = kp("dedupe", corpus(tmp_path), "--no-embedder")
    assert run.code == 2
    assert "drop --no-embedder (or give --by task)" in run.err


@pytest.mark.parametrize(
    ("novelty_text", "groups"), [("objective-actions-terms", 0), ("windows", 1)]
)
def test_dedupe_compares_the_representation_it_is_given(
    kp: KpRunner, tmp_path: Path, novelty_text: str, groups: int
) -> None:
    """Same words, different users: alike as text, apart once the arguments' terms count."""
    traces = [
        trace_json(
            trace_id=f"kp:trace:{user}",
            objective="look up the customer",
            step_list=[
                {**step(0, "tool_call", "get user details", "get_user"), "input": {"id": user}},
                step(1, "observation", "found"),
            ],
        )
        for user in ("mia_li_3668", "omar_rossi_1241")
    ]
    run = kp("dedupe", write(tmp_path / "t.jsonl", traces), "--novelty-text", novelty_text)
    assert run.code == 0, run.err
    assert len(run.out.splitlines()) == groups


def runs(tmp_path: Path) -> str:
    """Two tasks of three runs each, the task in an extra metadata key; run 2 fails."""
    traces = []
    for task, objectives in (
        ("refund", ("refund order 7", "I want my money back for order 7", "order 7 refund")),
        ("rebook", ("move my flight to Friday", "change the Oslo flight", "rebook to Friday")),
    ):
        for run, objective in enumerate(objectives):
            trace = trace_json(
                trace_id=f"kp:trace:{task}-{run}", objective=objective, success=run != 2
            )
            trace["metadata"]["bench"] = {"task_id": task}
            traces.append(trace)
    return write(tmp_path / "runs.jsonl", traces)


def test_select_per_task_keeps_the_best_k_runs_of_each_task(kp: KpRunner, tmp_path: Path) -> None:
    """--task-field names the task; --per-task 2 keeps two successful runs of each."""
    report = tmp_path / "rejected.jsonl"
    run = kp(
        "select",
        runs(tmp_path),
        "--task-field",
        "metadata.bench.task_id",
        "--per-task",
        "2",
        "--report",
        str(report),
    )
    assert run.code == 0, run.err
    kept = [json.loads(line) for line in run.out.splitlines()]
    assert sorted(t["id"] for t in kept) == [
        "kp:trace:rebook-0",
        "kp:trace:rebook-1",
        "kp:trace:refund-0",
        "kp:trace:refund-1",
    ]
    rejected = [json.loads(line) for line in report.read_text().splitlines()]
    assert {(r["reason"], r["task"]) for r in rejected} == {
        ("over_per_task", "refund"),
        ("over_per_task", "rebook"),
    }
    assert "2 over --per-task" in run.err
    assert "2 of 2 tasks covered (by metadata.bench.task_id)" in run.err


def test_select_spends_a_budget_across_tasks(kp: KpRunner, tmp_path: Path) -> None:
    """Budget 2 with the task field: one run of each task, not the two best of one."""
    run = kp("select", runs(tmp_path), "--task-field", "metadata.bench.task_id", "--budget", "2")
    tasks = sorted(
        json.loads(line)["metadata"]["bench"]["task_id"] for line in run.out.splitlines()
    )
    assert tasks == ["rebook", "refund"]


def test_select_infers_tasks_from_equal_objectives_without_an_embedder(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Two runs with one objective are one task: budget 2 takes the other task's trace too."""
    traces = [
        trace_json(trace_id="kp:trace:a1", objective="sum the invoices"),
        trace_json(trace_id="kp:trace:a2", objective="sum the invoices"),
        trace_json(trace_id="kp:trace:b1", objective="plan a trip", confidence=0.2),
    ]
    run = kp("select", write(tmp_path / "t.jsonl", traces), "--budget", "2", "--no-embedder")
    assert run.code == 0, run.err
    assert [json.loads(line)["id"] for line in run.out.splitlines()] == [
        "kp:trace:a1",
        "kp:trace:b1",
    ]
    assert "2 of 2 tasks covered (inferred)" in run.err


@pytest.mark.parametrize("command", ["select", "dedupe"])
def test_similarity_histogram_is_printed_on_stderr(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """Percentiles, bins and the reach of each usual limit; stdout is unchanged."""
    plain = kp(command, corpus(tmp_path))
    run = kp(command, corpus(tmp_path), "--similarity-histogram")
    assert run.code == 0, run.err
    assert run.out == plain.out
    assert "cosine of each trace with its nearest other trace (4 traces):" in run.err
    assert "p50 " in run.err
    assert "traces at or above --max-similarity S" in run.err


def test_select_rank_by_reward_keeps_the_highest_reward_run_of_each_task(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Rows with rewards: --rank-by reward --per-task 1 keeps 1.0 over 0.6, and says so."""
    rows = [
        {
            "id": f"{task}-{reward}",
            "task_id": task,
            "reward": reward,
            "messages": [
                {"role": "user", "content": f"fix bug {task}"},
                {"role": "assistant", "content": f"patched with reward {reward}"},
            ],
        }
        for task in ("a", "b")
        for reward in (0.6, 1.0, 0.0)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    run = kp("select", str(path), "--no-embedder", "--rank-by", "reward", "--per-task", "1")
    assert run.code == 0, run.err
    assert [json.loads(line)["id"] for line in run.out.splitlines()] == ["a-1.0", "b-1.0"]
    assert "ranked by reward, then success and score" in run.err
    low = kp("select", str(path), "--no-embedder", "--min-reward", "0.5")
    assert sorted(json.loads(line)["id"] for line in low.out.splitlines()) == [
        "a-0.6",
        "a-1.0",
        "b-0.6",
        "b-1.0",
    ]
    assert "2 below the minimum reward 0.5" in low.err


def test_select_rank_by_a_field_no_trace_has_is_a_usage_error(kp: KpRunner, tmp_path: Path) -> None:
    """A misspelt --rank-by field is a usage error naming the option, with no traceback."""
    run = kp("select", corpus(tmp_path), "--no-embedder", "--rank-by", "metadata.rewrd")
    assert run.code == 2
    assert "\nError: --rank-by metadata.rewrd: no item has a metadata.rewrd" in run.err
    assert "Traceback" not in run.err


@pytest.mark.parametrize(
    "command",
    [
        ("select",),
        ("dedupe", "--by", "task"),
        ("split", "--test", "0.5", "-o", "SPLIT"),
    ],
)
def test_task_similarity_with_a_task_field_is_refused_not_ignored(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """--task-similarity infers tasks; with --task-field they are read, so it is refused."""
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in curation_traces()))
    options = [str(tmp_path / "split") if arg == "SPLIT" else arg for arg in command[1:]]
    run = kp(
        command[0], str(path), *options, "--no-embedder",
        "--task-field", "metadata.task_domain", "--task-similarity", "0.3",
    )  # fmt: skip
    assert run.code == 2
    assert "--task-similarity infers the tasks --task-field reads: give one of them" in run.err
