"""kp dedupe --against: a set cleaned of a reference set's tasks, the rest written as it came."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner

TASK = "Find the cheapest flight from Boston to Denver on March 12 for two adults and book it."
OTHER = "Write a short poem about the sea and the quiet harbour lights at night."


def rows(path: Path) -> str:
    """Two chat rows: a renumbered copy of TASK, and OTHER."""
    lines = [
        {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]}
        for text in (TASK.replace("12", "3"), OTHER)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_against_a_text_file_keeps_the_unrelated_row_and_reports_the_copy(
    kp: KpRunner, tmp_path: Path
) -> None:
    """The copy goes to the report with its REF line; the other row is written unchanged."""
    reference, report = tmp_path / "eval.txt", tmp_path / "removed.jsonl"
    reference.write_text(TASK + "\n", encoding="utf-8")
    run = kp(
        "dedupe", rows(tmp_path / "new.jsonl"), "--against", str(reference),
        "--no-embedder", "--report", str(report),
    )  # fmt: skip
    assert run.code == 0, run.err
    assert [json.loads(line)["messages"][0]["content"] for line in run.out.splitlines()] == [OTHER]
    (removed,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert (removed["matched_id"], removed["overlap"]) == (f"{reference}:1", 1.0)
    assert "1 removed (1 by 8-gram overlap >= 0.7, no embedder), 1 kept" in run.err


def test_an_evaluation_set_of_prompts_is_read_at_the_against_field(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Prompt-only rows are no traces: read at --against-field, they are the tasks compared."""
    reference = tmp_path / "eval.jsonl"
    reference.write_text(json.dumps({"question": TASK, "answer": "42"}) + "\n", encoding="utf-8")
    new = rows(tmp_path / "new.jsonl")
    run = kp("dedupe", new, "--against", str(reference), "--no-embedder")
    assert run.code == 1  # the reference's row is no trace: a bad record, and nothing removed
    assert "against 0 reference items" in run.err
    assert "--against-field" in run.err
    run = kp(
        "dedupe", new, "--against", str(reference), "--against-field", "question", "--no-embedder"
    )
    assert run.code == 0, run.err
    assert [json.loads(line)["messages"][0]["content"] for line in run.out.splitlines()] == [OTHER]


def test_report_without_against_is_refused(kp: KpRunner, tmp_path: Path) -> None:
    """--report lists what --against removed: alone it is a usage error."""
    run = kp("dedupe", rows(tmp_path / "new.jsonl"), "--report", str(tmp_path / "r.jsonl"))
    assert run.code == 2
    assert "--against" in run.err


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (("--ngram", "5"), "--ngram only applies with --against REF"),
        (("--min-overlap", "0.5"), "--min-overlap only applies with --against REF"),
        (("--against-field", "question"), "--against-field only applies with --against REF"),
        (("--ngram", "5", "--min-overlap", "0.5"), "--ngram, --min-overlap only apply with"),
        (("--by", "task", "--threshold", "0.5"), "drop --threshold"),
        (("--task-similarity", "0.3"), "--task-similarity infers the tasks of --by task"),
        (
            ("--against", "REF", "--task-similarity", "0.3"),
            "--task-similarity is for dedupe --by task: drop it",
        ),
    ],
)
def test_an_option_the_mode_does_not_use_is_refused_not_ignored(
    kp: KpRunner, tmp_path: Path, given: tuple[str, ...], named: str
) -> None:
    """An option of another dedupe mode is a usage error naming it, not silently ignored."""
    reference = tmp_path / "eval.txt"
    reference.write_text(TASK + "\n", encoding="utf-8")
    given = tuple(str(reference) if arg == "REF" else arg for arg in given)
    run = kp("dedupe", rows(tmp_path / "new.jsonl"), *given, "--embedder", "static")
    assert run.code == 2
    assert named in run.err


def test_a_threshold_without_an_embedder_is_refused_not_ignored(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--threshold is a cosine: with --no-embedder only n-grams compare, so it is a usage error
    naming both; before, it was ignored (a trial of option combinations)."""
    reference = tmp_path / "eval.txt"
    reference.write_text(TASK + "\n", encoding="utf-8")
    new = rows(tmp_path / "new.jsonl")
    run = kp("dedupe", new, "--against", str(reference), "--no-embedder", "--threshold", "0.1")
    assert run.code == 2
    assert "--threshold is a cosine of embeddings, and --no-embedder compares" in run.err
    assert run.out == ""


def test_against_a_text_file_and_a_dataset_together_reads_both(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--against eval.txt --against eval.jsonl: REF is both, not an internal error."""
    texts, report = tmp_path / "eval.txt", tmp_path / "removed.jsonl"
    texts.write_text("an evaluation task that no row copies at all\n", encoding="utf-8")
    reference = tmp_path / "eval.jsonl"
    reference.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": TASK},
                    {"role": "assistant", "content": "ok"},
                ]
            }
        )
        + "\n",
        encoding="utf-8",
    )
    run = kp(
        "dedupe", rows(tmp_path / "new.jsonl"), "--against", str(texts), "--against",
        str(reference), "--no-embedder", "--report", str(report),
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "against 2 reference items: 1 removed" in run.err
    (removed,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert removed["matched_file"] == str(reference)


@pytest.mark.parametrize("empty", ["eval.txt", "eval.jsonl"])
def test_a_reference_that_gives_no_item_exits_1_as_an_empty_input_does(
    kp: KpRunner, tmp_path: Path, empty: str
) -> None:
    """Nothing to compare with: every trace is written, the run says so and exits 1."""
    reference = tmp_path / empty
    reference.write_text("", encoding="utf-8")
    new = rows(tmp_path / "new.jsonl")
    run = kp("dedupe", new, "--against", str(reference), "--no-embedder")
    assert run.code == 1
    assert len(run.out.splitlines()) == 2
    assert "--against gave no reference item" in run.err
    assert "--allow-empty" in run.err
    allowed = kp("dedupe", new, "--against", str(reference), "--no-embedder", "--allow-empty")
    assert allowed.code == 0, allowed.err
    assert allowed.out == run.out


def test_an_interrupted_dedupe_writes_neither_output_nor_report(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the report is written: no output either, and the line names both files;
    before, the output was written already and the line named --output only."""

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("knowledgepulse.runs.write.write_jsonl", interrupted)
    monkeypatch.setattr("knowledgepulse.cli.curate.write_jsonl", interrupted, raising=False)
    reference, output, report = tmp_path / "eval.txt", tmp_path / "kept.jsonl", tmp_path / "r.jsonl"
    reference.write_text(TASK + "\n", encoding="utf-8")
    new = rows(tmp_path / "new.jsonl")
    run = kp(
        "dedupe", new, "--against", str(reference), "--no-embedder",
        "-o", str(output), "--report", str(report),
    )  # fmt: skip
    said = "kp: interrupted; nothing was written to --output or --report"
    assert (run.code, run.err.splitlines()[-1]) == (130, said)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["eval.txt", "new.jsonl"]


@pytest.mark.parametrize("option", ["-o", "--report"])
def test_an_output_naming_the_reference_is_refused_before_any_work(
    kp: KpRunner, tmp_path: Path, option: str
) -> None:
    """--against REF is read by the run: -o REF replaced the evaluation set with the kept rows."""
    reference = tmp_path / "eval.jsonl"
    rows(reference)
    before = reference.read_bytes()
    output = ["-o", str(tmp_path / "kept.jsonl")] if option == "--report" else []
    run = kp(
        "dedupe", rows(tmp_path / "new.jsonl"), "--against", str(reference),
        "--no-embedder", option, str(reference), *output,
    )  # fmt: skip
    assert run.code == 2
    assert "it is an input of this run, which it would replace" in run.err
    assert reference.read_bytes() == before
