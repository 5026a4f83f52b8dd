"""decontaminate: the items of a set that copy a reference set's tasks go, the rest stay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.cli.main import main
from knowledgepulse.errors import ScorerParameterError, SettingTypeError
from knowledgepulse.records import Problem
from knowledgepulse.runs import decontaminate
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value.scorer import TraceValueScorer
from tests.paths import CORPORA

EVAL = [
    "Find the cheapest flight from Boston to Denver on March 3 for two adults and book it.",
    "Summarise the quarterly sales report in 5 bullet points for the board meeting.",
]
UNRELATED = "Write a short poem about the sea and the quiet harbour lights at night."


def chat(content: str) -> dict[str, Any]:
    """A chat row asking ``content``."""
    return {
        "messages": [
            {"role": "user", "content": content},
            {"role": "assistant", "content": "Done."},
        ]
    }


def new_rows() -> list[dict[str, Any]]:
    """A verbatim copy, a copy with other numbers, and an unrelated task."""
    return [chat(EVAL[0]), chat(EVAL[1].replace("5", "12").upper()), chat(UNRELATED)]


def test_planted_copies_go_and_the_unrelated_task_stays() -> None:
    """Verbatim and renumbered copies are removed; the unrelated row is kept as it came."""
    result = decontaminate(new_rows(), against_texts=EVAL, source="openai-chat")
    assert [found.reference.text for found in result.removed] == EVAL
    assert result.kept_rows == [chat(UNRELATED)]


def test_task_texts_may_be_a_dataframe_column_or_an_array() -> None:
    """``against_texts=frame["question"]`` (a Series) or a numpy array works as a list does;
    before, pandas' "truth value of a Series is ambiguous" came out of the call."""
    pd = pytest.importorskip("pandas")
    want = decontaminate(new_rows(), against_texts=EVAL).kept_rows
    column = pd.DataFrame({"question": EVAL})["question"]
    assert decontaminate(new_rows(), against_texts=column).kept_rows == want
    assert decontaminate(new_rows(), against_texts=column.to_numpy()).kept_rows == want


def test_a_task_text_that_is_no_string_is_named_by_its_place() -> None:
    """A missing value in the texts (NaN, None) is a SettingTypeError naming where, no crash."""
    texts: list[Any] = [EVAL[0], float("nan")]  # a Series' missing value
    with pytest.raises(SettingTypeError, match=r"against_texts\[1\].*dropna"):
        decontaminate(new_rows(), against_texts=texts)


def test_a_reworded_copy_goes_with_its_overlap_below_whole() -> None:
    """Two words changed and two swapped in 16: aligned words still cover the task, so it goes."""
    reworded = EVAL[0].replace("cheapest", "fastest").replace("two adults", "adults two")
    result = decontaminate([chat(reworded), chat(UNRELATED)], against_texts=EVAL)
    (found,) = result.removed
    assert found.reference.text == EVAL[0]
    assert found.overlap is not None
    assert 0.7 <= found.overlap < 1.0


def test_only_the_new_set_loses_items(tmp_path: Path) -> None:
    """The reference set is read, never changed: its items are counted, none removed."""
    reference = tmp_path / "eval.txt"
    reference.write_text("\n".join(EVAL) + "\n\n", encoding="utf-8")
    result = decontaminate(new_rows(), against=reference, source="openai-chat")
    assert result.references == 2
    assert reference.read_text(encoding="utf-8") == "\n".join(EVAL) + "\n\n"
    assert len(result.removed) == 2


def test_a_text_file_reference_names_each_match_by_its_line(tmp_path: Path) -> None:
    """A .txt reference is task texts a line; a match names its file and line."""
    reference = tmp_path / "eval.txt"
    reference.write_text(f"{UNRELATED}\n", encoding="utf-8")
    result = decontaminate(new_rows(), against=str(reference), source="openai-chat")
    (found,) = result.removed
    assert (found.reference.location.file, found.reference.location.line) == (str(reference), 1)


def test_the_report_row_names_the_item_the_reference_and_the_overlap() -> None:
    """Each report row: the removed id, why, the matched reference and the measures."""
    result = decontaminate(new_rows()[:1], against_texts=EVAL, source="openai-chat")
    row = result.removed[0].to_dict()
    assert set(row) == {
        "id",
        "file",
        "line",
        "reason",
        "matched_id",
        "matched_file",
        "matched_line",
        "overlap",
        "similarity",
    }
    assert (row["reason"], row["matched_id"], row["overlap"]) == ("ngram", "texts:1", 1.0)


@pytest.mark.parametrize("field", [None, "messages"])
def test_a_report_row_names_rows_in_memory_of_the_input_and_the_reference_apart(
    field: str | None,
) -> None:
    """Input rows are ``rows``, reference rows ``against:rows``: the first input row matching
    the first reference row reads as two places, not ``kp:trace:rows:0`` twice."""
    result = decontaminate(new_rows(), against=new_rows(), against_field=field)
    row = result.removed[0].to_dict()
    assert (row["id"], row["file"], row["line"]) == ("kp:trace:rows:0", "rows", 1)
    matched = "kp:trace:against:rows:0" if field is None else "against:rows:1"
    assert (row["matched_id"], row["matched_file"], row["matched_line"]) == (
        matched,
        "against:rows",
        1,
    )


def test_an_embedder_adds_the_cosine_and_finds_reworded_copies() -> None:
    """With a scorer's embedder, a copy below the n-gram share goes by its cosine."""
    reworded = "Book two adults on the cheapest Boston Denver flight, March 3."
    result = decontaminate(
        [chat(reworded), chat(UNRELATED)],
        against=[chat(EVAL[0])],
        threshold=0.5,
        scorer=TraceValueScorer(embedder=HashingEmbedder()),
        source="openai-chat",
    )
    assert [found.reason for found in result.removed] == ["embedding"]
    assert result.threshold == 0.5


def test_an_embedder_compares_a_task_text_reference_with_each_task() -> None:
    """A reference given as text has no steps: its cosine is with each item's task text."""
    reworded = "Book two adults on the cheapest Boston Denver flight, March 3."
    result = decontaminate(
        [chat(EVAL[0]), chat(UNRELATED)],
        against_texts=[reworded, EVAL[1]],
        threshold=0.5,
        scorer=TraceValueScorer(embedder=HashingEmbedder()),
        source="openai-chat",
    )
    (found,) = result.removed
    assert (found.reason, found.reference.text) == ("embedding", reworded)
    assert found.similarity is not None
    assert 0.5 <= found.similarity < 1.0


def test_an_evaluation_set_of_prompts_is_read_at_its_field() -> None:
    """against_field: a text column, or a list of chat messages' first user message."""
    prompts = [
        {"question": EVAL[0]},
        {
            "question": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": EVAL[1]},
            ]
        },
    ]
    result = decontaminate(new_rows(), against=prompts, against_field="question")
    assert [found.reference.text for found in result.removed] == EVAL
    assert result.kept_rows == [chat(UNRELATED)]


def test_a_matched_reference_record_is_named_by_its_own_id(tmp_path: Path) -> None:
    """An evaluation set's item id is what a report names (``gsm8k-12``), its line beside it;
    a record without one is named by its place. Before, always ``eval.jsonl:1``."""
    np = pytest.importorskip("numpy")
    reference = tmp_path / "eval.jsonl"
    records = [{"id": "gsm8k-12", "question": EVAL[0]}, {"id": np.int64(7)}, {"question": EVAL[1]}]
    reference.write_text(
        "\n".join(json.dumps(r, default=int) for r in records) + "\n", encoding="utf-8"
    )
    result = decontaminate(new_rows(), against=reference, against_field="question")
    rows = [found.to_dict() for found in result.removed]
    assert [(r["matched_id"], r["matched_line"]) for r in rows] == [
        ("gsm8k-12", 1),
        (f"{reference}:3", 3),
    ]
    in_memory = [{"id": np.int64(7), "question": EVAL[0]}, {"id": True, "question": EVAL[1]}]
    result = decontaminate(new_rows(), against=in_memory, against_field="question")
    assert [found.reference.id for found in result.removed] == ["7", "against:rows:2"]


def test_a_reference_record_without_text_at_its_field_is_a_located_problem(
    tmp_path: Path,
) -> None:
    """A record with no text at against_field is a problem at its line; the others are read."""
    reference = tmp_path / "eval.jsonl"
    reference.write_text(
        json.dumps({"question": EVAL[0]}) + "\n" + json.dumps({"prompt": EVAL[1]}) + "\n",
        encoding="utf-8",
    )
    result = decontaminate(new_rows(), against=reference, against_field="question")
    assert result.references == 1
    (problem,) = result.problems
    assert (problem.location.line, "'question'" in problem.message) == (2, True)


def test_an_against_field_no_reference_has_is_refused_before_the_input_is_read(
    tmp_path: Path,
) -> None:
    """A field none of the reference records has is a ScorerParameterError raised once they are
    read: the input is never read (its broken line is not reported), where before all of it was
    read, compared with nothing and kept, and only then was no reference item found."""
    reference = tmp_path / "eval.jsonl"
    reference.write_text("".join(json.dumps({"question": text}) + "\n" for text in EVAL))
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(chat(UNRELATED)) + "\n{broken\n", encoding="utf-8")
    told: list[Problem] = []
    with pytest.raises(ScorerParameterError) as raised:
        decontaminate(data, against=reference, against_field="prompt", on_problem=told.append)
    assert str(raised.value).startswith(
        "against_field='prompt': no task text there in any of the 2 records of against"
    )
    assert [(problem.location.file, problem.location.line) for problem in told] == [
        (str(reference), 1),
        (str(reference), 2),
    ]


def test_a_min_overlap_outside_a_share_is_refused() -> None:
    """min_overlap must be in (0, 1]."""
    with pytest.raises(ValueError, match="min_overlap"):
        decontaminate([], against_texts=EVAL, min_overlap=0)


TEXTS = st.lists(
    st.lists(
        st.sampled_from(["alpha", "beta", "gamma", "delta", "3"]), min_size=1, max_size=14
    ).map(" ".join),
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(TEXTS, TEXTS, st.floats(0.05, 1.0), st.floats(0.05, 1.0))
def test_removal_is_monotone_in_the_threshold(
    new: list[str], reference: list[str], low: float, high: float
) -> None:
    """What goes at a higher min_overlap also goes at a lower one."""
    low, high = min(low, high), max(low, high)
    rows = [chat(text) for text in new]

    def removed(share: float) -> set[int]:
        result = decontaminate(rows, against_texts=reference, min_overlap=share)
        return {found.item.location.index or 0 for found in result.removed}

    assert removed(high) <= removed(low)


@settings(max_examples=40, deadline=None)
@given(TEXTS)
def test_nothing_goes_against_an_empty_reference_and_all_against_itself(new: list[str]) -> None:
    """An item never matches its own set: against no reference all stay; against itself all go."""
    rows = [chat(text) for text in new]
    assert decontaminate(rows, against_texts=[]).removed == ()
    assert len(decontaminate(rows, against_texts=new).removed) == len(rows)


def test_redact_cleans_the_kept_rows_and_changes_no_verdict() -> None:
    """A secret in a copy and in a kept row: the same removals, and no secret given back."""
    key = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
    rows = [chat(f"{EVAL[0]} Use {key}."), chat(f"{UNRELATED} Mail ann@corp.io, key {key}")]
    plain = decontaminate(rows, against_texts=EVAL, source="openai-chat")
    redacted = decontaminate(rows, against_texts=EVAL, source="openai-chat", redact=True)
    assert [found.reference.id for found in redacted.removed] == ["texts:1"]
    assert len(plain.removed) == len(redacted.removed) == 1
    assert redacted.kept_rows == [chat(f"{UNRELATED} Mail ann@corp.io, key [REDACTED:api_key]")]
    assert key not in str([found.item.document for found in redacted.removed])
    assert redacted.redactor is not None
    assert redacted.redactor.redacted == 1  # the kept item's redaction only is counted


def test_the_default_compares_as_kp_dedupe_against_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a scorer, the default one's embedder finds the copies kp finds by cosine too.

    Each reference is a task with its words reversed: no 8-gram is left, the cosine still
    reaches the threshold, and the Python call removes what ``kp dedupe --against`` removes.
    """
    lines = (CORPORA / "reflexion_hotpotqa.jsonl").read_text(encoding="utf-8").splitlines()[:12]
    new = tmp_path / "new.jsonl"
    new.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reversed_tasks = [
        " ".join(json.loads(line)["task"]["objective"].split()[::-1]) for line in lines[:6]
    ]
    reference = tmp_path / "eval.txt"
    reference.write_text("\n".join(reversed_tasks) + "\n", encoding="utf-8")
    report = tmp_path / "report.jsonl"
    code = main(["dedupe", str(new), "--against", str(reference), "--report", str(report)])
    assert code == 0
    capsys.readouterr()
    by_kp = [json.loads(line)["id"] for line in report.read_text().splitlines()]
    result = decontaminate(str(new), against=str(reference))
    assert [found.item.trace.id for found in result.removed] == by_kp
    assert {found.reason for found in result.removed} == {"embedding"}
    assert all((found.similarity or 0.0) >= 0.95 for found in result.removed)  # the threshold
    ngrams_only = decontaminate(
        str(new), against=str(reference), scorer=TraceValueScorer(embedder=None)
    )
    assert ngrams_only.removed == ()


def test_a_refused_reference_is_told_as_cleanly_as_a_refused_input(tmp_path: Path) -> None:
    """A reference file's record that gives no trace quotes its value in a problem: cleaned at
    the run's level as the input's own problems are (redacting: no e-mail; always: no key)."""
    mail, key = "ann@corp.io", "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    bad = [{"id": value, "@type": "ReasoningTrace"} for value in (mail, key)]
    reference = tmp_path / "eval.jsonl"
    reference.write_text("\n".join(map(json.dumps, [*bad, chat(EVAL[0])])) + "\n")
    told: list[Any] = []
    result = decontaminate(
        new_rows(),
        against=str(reference),
        redact=True,
        scorer=TraceValueScorer(embedder=None),
        on_problem=told.append,
    )
    assert [str(p.location) for p in result.problems].count(f"{reference}:1") >= 1
    assert mail not in str([*result.problems, *told])
    assert key not in str([*result.problems, *told])


def test_against_and_against_texts_combine_as_kp_dedupe_against_a_file_and_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both given: the reference is the two together, so a copy of either goes, as
    ``kp dedupe --against REF.jsonl --against TEXTS.txt`` removes (docs/python-api-curation.md)."""
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(row) + "\n" for row in new_rows()), encoding="utf-8")
    reference = tmp_path / "eval.jsonl"
    reference.write_text(json.dumps(chat(EVAL[0])) + "\n", encoding="utf-8")
    texts = tmp_path / "texts.txt"
    texts.write_text(EVAL[1] + "\n", encoding="utf-8")
    report = tmp_path / "report.jsonl"
    code = main(["dedupe", str(new), "--against", str(reference), "--against", str(texts),
                 "--no-embedder",
                 "--report", str(report)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    by_kp = [json.loads(line)["id"] for line in report.read_text().splitlines()]
    result = decontaminate(
        str(new),
        against=str(reference),
        against_texts=[EVAL[1]],
        scorer=TraceValueScorer(embedder=None),
    )
    assert result.references == 2
    assert [found.item.trace.id for found in result.removed] == by_kp
    assert [found.reference.text for found in result.removed] == EVAL
    assert result.kept_rows == [chat(UNRELATED)]


@settings(max_examples=30, deadline=None)
@given(TEXTS, TEXTS, st.floats(0.05, 1.0), st.randoms())
def test_an_items_verdict_depends_on_it_and_the_reference_alone(
    new: list[str], reference: list[str], share: float, rng: Any
) -> None:
    """The kept rows and the removed ones partition the input, each row as it was and kept in
    input order; shuffled, the same rows go."""
    rows = [chat(text) for text in new]
    result = decontaminate(rows, against_texts=reference, min_overlap=share)
    gone = {found.item.location.index for found in result.removed}
    assert len(gone) == len(result.removed)
    assert result.kept_rows == [row for index, row in enumerate(rows) if index not in gone]
    shuffled = rows[:]
    rng.shuffle(shuffled)
    again = decontaminate(shuffled, against_texts=reference, min_overlap=share)
    assert sorted(json.dumps(row) for row in again.kept_rows) == sorted(
        json.dumps(row) for row in result.kept_rows
    )
