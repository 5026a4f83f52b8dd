"""``kp split``: each set in the input's form, no task on two sides, said in the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.cli.conftest import KpRunner

ROOT = Path(__file__).parents[2]
DATASETS = ROOT / "examples" / "datasets"


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("name", sorted(p.name for p in DATASETS.glob("*.jsonl")))
def test_split_writes_jsonl_rows_back_as_they_were(kp: KpRunner, tmp_path: Path, name: str) -> None:
    """Every row once, unchanged, in train or test; the summary says no group crossed."""
    run = kp(
        "split", str(DATASETS / name), "--test", "0.5", "--seed", "3", "--no-embedder",
        "-o", str(tmp_path),
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "no group on two sides" in run.err
    sides = [jsonl(tmp_path / f"{part}.jsonl") for part in ("train", "test")]
    assert sorted(map(json.dumps, sides[0] + sides[1])) == sorted(
        map(json.dumps, jsonl(DATASETS / name))
    )


@pytest.mark.parametrize("name", sorted(p.name for p in DATASETS.glob("*.parquet")))
def test_split_writes_parquet_rows_as_parquet(kp: KpRunner, tmp_path: Path, name: str) -> None:
    """A Parquet input gives Parquet sets of its columns, every row once.

    (A set left empty has no columns: the writer takes its schema from its first row.)
    """
    run = kp("split", str(DATASETS / name), "--test", "0.4", "--no-embedder", "-o", str(tmp_path))
    assert run.code == 0, run.err
    source = pq.read_table(DATASETS / name)
    tables = [pq.read_table(tmp_path / f"{part}.parquet") for part in ("train", "test")]
    assert all(t.column_names == source.column_names for t in tables if t.num_rows)
    assert sum(table.num_rows for table in tables) == source.num_rows


def test_split_keeps_a_tasks_runs_together_with_a_validation_set(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--by task_id (a column) with --validation: three sets, no task_id in two of them."""
    source = DATASETS / "openai_chat.jsonl"
    run = kp(
        "split", str(source), "--by", "instance_id", "--test", "0.3", "--validation", "0.3",
        "-o", str(tmp_path),
    )  # fmt: skip
    assert run.code == 0, run.err
    tasks = [
        {row["instance_id"] for row in jsonl(tmp_path / f"{part}.jsonl")}
        for part in ("train", "validation", "test")
    ]
    assert sum(map(len, tasks)) == len(set().union(*tasks))
    assert "by instance_id (seed 0)" in run.err


def test_split_traces_gives_traces_and_the_same_seed_the_same_files(
    kp: KpRunner, tmp_path: Path
) -> None:
    """ReasoningTrace files go out as traces; running again with the seed gives equal bytes.

    Their tasks are inferred (without an embedder: from equal objectives), as kp select's.
    """
    source = ROOT / "corpora" / "reflexion_hotpotqa.jsonl"
    for out in ("a", "b"):
        run = kp(
            "split", str(source), "--test", "0.2", "--seed", "7", "--no-embedder",
            "-o", str(tmp_path / out),
        )  # fmt: skip
        assert run.code == 0, run.err
        assert "535 traces in 100 groups by task (inferred)" in run.err
    for part in ("train.jsonl", "test.jsonl"):
        assert (tmp_path / "a" / part).read_bytes() == (tmp_path / "b" / part).read_bytes()
    assert jsonl(tmp_path / "a" / "test.jsonl")[0]["@type"] == "ReasoningTrace"


def test_split_without_a_test_share_is_a_usage_error(kp: KpRunner, tmp_path: Path) -> None:
    """--test is required and must be in (0, 1)."""
    source = str(DATASETS / "hermes.jsonl")
    assert kp("split", source, "-o", str(tmp_path)).code == 2
    assert kp("split", source, "--test", "1", "-o", str(tmp_path)).code == 2


def test_task_similarity_with_another_group_is_refused(kp: KpRunner, tmp_path: Path) -> None:
    """--task-similarity infers tasks: with --by domain it is a usage error, not ignored."""
    run = kp(
        "split", str(DATASETS / "hermes.jsonl"), "--test", "0.5", "--by", "domain",
        "--task-similarity", "0.3", "--no-embedder", "-o", str(tmp_path),
    )  # fmt: skip
    assert run.code == 2
    assert "--task-similarity infers the tasks of --by task: give --by task" in run.err


def test_split_says_how_many_traces_lacked_the_task_field(kp: KpRunner, tmp_path: Path) -> None:
    """A --task-field some traces lack is said, with what they were grouped by instead."""
    traces = (ROOT / "examples" / "traces" / "traces.jsonl").read_text("utf-8").splitlines()
    tiered = [json.loads(line) for line in traces]
    for trace in tiered[:2]:
        trace["metadata"]["tier"] = "gold"
    source = tmp_path / "tiered.jsonl"
    source.write_text("".join(json.dumps(trace) + "\n" for trace in tiered), encoding="utf-8")
    run = kp(
        "split", str(source), "--task-field", "metadata.tier", "--test", "0.5",
        "--no-embedder", "-o", str(tmp_path / "parts"),
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "6 traces without metadata.tier, grouped by objective" in run.err


def test_split_refuses_a_task_field_no_trace_has(kp: KpRunner, tmp_path: Path) -> None:
    """A --task-field no trace has is misspelt: refused before anything is written."""
    source = ROOT / "examples" / "traces" / "traces.jsonl"
    run = kp(
        "split", str(source), "--task-field", "metadata.nosuch", "--test", "0.5",
        "--no-embedder", "-o", str(tmp_path / "parts"),
    )  # fmt: skip
    assert run.code == 2
    assert "--task-field metadata.nosuch: no trace has it" in run.err
    assert not (tmp_path / "parts").exists()


def test_split_says_which_part_is_empty_when_groups_are_too_few(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Three groups for three parts of 70/20/10 %: the empty part is named, with why."""
    source = tmp_path / "three.jsonl"
    lines = (ROOT / "examples" / "traces" / "traces.jsonl").read_text("utf-8").splitlines()[:3]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = kp(
        "split", str(source), "--task-field", "id", "--test", "0.2", "--validation", "0.1",
        "--no-embedder", "-o", str(tmp_path / "parts"),
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "validation is empty: too few groups (3) for every share (ask for fewer parts" in run.err
    assert (tmp_path / "parts" / "validation.jsonl").read_text("utf-8") == ""


def test_split_help_says_task_field_reads_a_column_or_a_dotted_path(kp: KpRunner) -> None:
    """kp split reads --task-field as kp select does (metadata.tier above): its help says so."""
    text = " ".join(kp("split", "--help").out.split())
    assert "--task-field PATH The task each trace is a run of" in text
    assert "else the value at this dotted path of the trace's JSON" in text


def test_split_keeps_the_rows_of_a_task_field_column_together(kp: KpRunner, tmp_path: Path) -> None:
    """--task-field naming a dataset column groups the rows by it: each value on one side."""
    rows = jsonl(DATASETS / "openai_chat.jsonl")
    for number, row in enumerate(rows):
        row["batch"] = f"b{number % 2}"
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    run = kp(
        "split", str(source), "--task-field", "batch", "--test", "0.5", "--no-embedder",
        "-o", str(tmp_path / "parts"),
    )  # fmt: skip
    assert run.code == 0, run.err
    sides = [jsonl(tmp_path / "parts" / f"{part}.jsonl") for part in ("train", "test")]
    assert sorted(len(side) for side in sides) == [len(rows) // 2, len(rows) - len(rows) // 2]
    assert all(len({row["batch"] for row in side}) == 1 for side in sides)


def test_split_refuses_a_directory_it_cannot_make_before_reading(
    kp: KpRunner, tmp_path: Path
) -> None:
    """An -o under a file is refused first, with kp's message, nothing made.

    Before, the whole split ran (read, scored, grouped) and only then failed to make it.
    """
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a directory\n")
    directory = blocker / "parts"
    source = ROOT / "examples" / "traces" / "traces.jsonl"
    run = kp("split", str(source), "--test", "0.5", "--no-embedder", "-o", str(directory))
    assert run.code == 2, run.err
    assert f"cannot write the split to {directory}" in run.err
    assert "no group on two sides" not in run.err  # refused before the split was made
    assert "Traceback" not in run.err
    assert blocker.read_text() == "a file, not a directory\n"


@pytest.mark.parametrize(
    "name", ["out.jsonl", "train.parquet", "sets.jsonl.gz", "sets.csv", "x.arrow"]
)
def test_split_refuses_a_file_name_for_its_directory_unless_it_is_made(
    kp: KpRunner, tmp_path: Path, name: str
) -> None:
    """``-o out.jsonl`` means a file: kp split made a folder of that name, saying nothing."""
    source = ROOT / "examples" / "traces" / "traces.jsonl"
    split = ("split", str(source), "--test", "0.5", "--no-embedder", "-o", str(tmp_path / name))
    run = kp(*split)
    assert run.code == 2, run.err
    assert (
        f"{name!r} names a file; give a directory ({tmp_path / name.partition('.')[0]})" in run.err
    )
    assert list(tmp_path.iterdir()) == []
    (tmp_path / name).mkdir()  # a directory of that name, made on purpose, is written to
    assert kp(*split).code == 0
    assert sorted(path.name for path in (tmp_path / name).iterdir()) == [
        "test.jsonl",
        "train.jsonl",
    ]
