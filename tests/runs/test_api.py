"""runs.score, runs.annotate, runs.redact: one call on files, rows or a table, as the CLI does."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import knowledgepulse
from knowledgepulse.cli.main import main
from knowledgepulse.records import Problem
from knowledgepulse.runs import annotate, decontaminate, dedupe, redact, score, select, split
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
from tests.builders import trace_json
from tests.redact.test_laws import texts

DATASETS = Path(__file__).parents[2] / "examples" / "datasets"
CHAT = DATASETS / "openai_chat.jsonl"
SECRET = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678"


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def chat_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CHAT.read_text().splitlines()]


def test_a_file_scores_as_kp_score_scores_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """score(path) gives the scores kp score --from auto writes for the same file."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder()
    )
    assert main(["score", str(CHAT), "--from", "auto", "-f", "jsonl"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    scored = score(CHAT, scorer=scorer())
    assert [s.breakdown.score for s in scored] == [row["score"] for row in printed]
    assert [s.trace.id for s in scored] == [row["id"] for row in printed]


def test_rows_a_dataframe_and_an_arrow_table_score_alike() -> None:
    """The same rows as dicts, as a DataFrame and as an Arrow table give the same scores."""
    rows = chat_rows()
    by_kind = [
        [s.breakdown.score for s in score(data, scorer=scorer())]
        for data in (rows, pd.DataFrame(rows), pa.Table.from_pylist(rows))
    ]
    assert by_kind[0] == by_kind[1] == by_kind[2]
    assert len(by_kind[0]) == 3


def test_reasoning_trace_models_score_as_their_file() -> None:
    """A list of ``ReasoningTrace`` models scores as the JSON Lines file they were read from."""
    path = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
    models = [ReasoningTrace.model_validate_json(line) for line in path.read_text().splitlines()]
    problems: list[Problem] = []
    from_models = score(models, scorer=scorer(), on_problem=problems.append)
    assert problems == []
    from_file = score(path, scorer=scorer())
    assert [s.trace.id for s in from_models] == [s.trace.id for s in from_file]
    assert [s.breakdown.score for s in from_models] == [s.breakdown.score for s in from_file]


def test_a_dataframe_read_from_parquet_scores_as_the_file() -> None:
    """pandas.read_parquet holds list cells as NumPy arrays; the rows still read as the file's."""
    path = DATASETS / "openai_chat.parquet"
    frame = pd.read_parquet(path)
    assert type(frame["trajectory"][0]).__name__ == "ndarray"
    from_file = [(s.trace.id, s.breakdown.score) for s in score(path, scorer=scorer())]
    from_frame = [(s.trace.id, s.breakdown.score) for s in score(frame, scorer=scorer())]
    assert from_frame == from_file
    assert len(from_file) == 3


def test_annotate_gives_row_dicts_back_with_kp_columns_and_leaves_the_callers_alone() -> None:
    """Each row with its kp_ columns, in order; the rows given are not changed."""
    rows = chat_rows()
    back = annotate(rows, scorer=scorer(), min_score=0.5)
    assert [row["trajectory_id"] for row in back] == [row["trajectory_id"] for row in rows]
    assert [row["kp_shareable"] for row in back] == [row["kp_score"] >= 0.5 for row in back]
    assert all("kp_score" not in row for row in rows)


def test_a_record_that_gives_no_trace_is_told_and_the_run_goes_on() -> None:
    """on_problem hears the bad row; the good ones are scored."""
    rows = chat_rows()
    rows.insert(1, {"trajectory": [{"role": "user"}]})
    problems: list[Problem] = []
    scored = score(rows, scorer=scorer(), on_problem=problems.append)
    assert len(scored) == 3
    assert [str(problem.location) for problem in problems if not problem.warning] == ["rows:2"]


def test_without_on_problem_a_bad_record_is_logged_as_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A notebook sees what was left out, on the knowledgepulse logger."""
    rows = [*chat_rows(), {"trajectory": [{"role": "user"}]}]
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        score(rows, scorer=scorer())
    assert any(record.getMessage().startswith("rows:4") for record in caplog.records)


def test_score_can_redact_first() -> None:
    """redact=True: the items scored are the redacted ones, their rows too (a secret always)."""
    rows = chat_rows()
    rows[0]["trajectory"][1]["content"] += f" Use the key {SECRET}."
    redacted = score(rows, scorer=scorer(), redact=True)[0].item
    assert SECRET not in json.dumps([redacted.document, redacted.row.value if redacted.row else 0])
    assert SECRET in json.dumps(score(rows, scorer=scorer())[0].item.document)


def test_redact_gives_the_data_in_its_form_with_what_was_found() -> None:
    """A DataFrame comes back a DataFrame, cleaned; the findings and counts say what, where."""
    rows = chat_rows()
    rows[2]["trajectory"][1]["content"] = "Call me on +1 415 555 0100 or at jane.doe@example.com"
    result = redact(pd.DataFrame(rows), level="aggregated")
    assert isinstance(result.data, pd.DataFrame)
    assert "jane.doe" not in result.data.to_json()
    assert [len(found) > 0 for found in result.findings] == [False, False, True]
    assert result.counts["email"] >= 1
    assert result.problems == []


def test_redact_keeps_a_row_that_gives_no_trace_in_its_place_cleaned() -> None:
    """Rows in = rows out: a row that cannot be read comes back where it was, its secret gone."""
    rows = chat_rows()
    rows[1]["trajectory"] = f"lost; the key was {SECRET}"
    frame = pd.DataFrame(rows, index=["a", "b", "c"])
    result = redact(frame, on_problem=lambda _: None)
    assert list(result.data.index) == ["a", "b", "c"]
    assert SECRET not in result.data.to_json()
    assert len(result.items) == len(result.findings) == 2
    assert len(redact(rows, on_problem=lambda _: None).data) == 3


def test_score_and_annotate_are_at_the_top_level() -> None:
    """import knowledgepulse as kp; kp.score(...) and kp.annotate(...) are the runs' own."""
    assert knowledgepulse.score is score
    assert knowledgepulse.annotate is annotate


def test_a_keyword_that_is_no_setting_is_refused_not_ignored() -> None:
    """annotate(data, budget=3) raises, naming budget, instead of scoring without it."""
    with pytest.raises(TypeError, match="'budget'"):
        annotate(chat_rows(), budget=3)  # type: ignore[call-overload]


@pytest.mark.parametrize("kind", [pd.DataFrame, pa.Table.from_pylist])
def test_a_table_annotated_selected_or_deduped_with_redact_comes_back_redacted(
    kind: Any,
) -> None:
    """redact=True on a table: the rows given back are the redacted ones, not the table's own."""
    rows = chat_rows()
    for row in rows:
        row["trajectory"][0]["content"] += f" Use the key {SECRET}."
    data = kind(rows)
    given = [
        annotate(data, scorer=scorer(), redact=True),
        select(data, scorer=scorer(), redact=True).rows,
        dedupe(data, scorer=scorer(), threshold=-1.0, redact=True).dropped_rows,
    ]
    frames = [table.to_pandas() if isinstance(table, pa.Table) else table for table in given]
    assert [len(frame) for frame in frames] == [3, 3, 2]
    assert [SECRET[:12] in frame.to_json() for frame in frames] == [False, False, False]


def test_a_domain_without_a_profile_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """``options=TraceOptions(domain=...)`` that names no profile: one warning, scores as given."""
    from knowledgepulse.sources import TraceOptions

    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        scored = score(chat_rows(), scorer=scorer(), options=TraceOptions(domain="coding"))
    assert [s.breakdown.profile for s in scored] == ["default"] * 3
    told = [r.getMessage() for r in caplog.records if "weight profile" in r.getMessage()]
    assert len(told) == 1
    assert "Did you mean 'code'?" in told[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        score(chat_rows(), scorer=scorer(), options=TraceOptions(domain="code"))
    assert "weight profile" not in caplog.text


def test_score_annotate_and_redact_tell_progress_as_select_does() -> None:
    """``progress=`` is told each further count of a file's bytes, by every one-call function."""
    size = CHAT.stat().st_size
    for call in (
        lambda told: score(CHAT, scorer=scorer(), progress=told),
        lambda told: annotate(CHAT, scorer=scorer(), progress=told),
        lambda told: redact(CHAT, progress=told),
        lambda told: select(CHAT, scorer=scorer(), progress=told),
    ):
        told: list[int] = []
        call(told.append)
        assert told
        assert sum(told) == size


@pytest.mark.parametrize(
    "call",
    [
        lambda rows: select(rows, scorer=scorer()),
        lambda rows: dedupe(rows, scorer=scorer()),
        lambda rows: split(rows, test=0.5),
        lambda rows: decontaminate(rows, against_texts=["an unrelated task"]),
    ],
    ids=["select", "dedupe", "split", "decontaminate"],
)
def test_every_call_logs_a_row_it_leaves_out_without_on_problem(
    call: Callable[[list[dict[str, Any]]], Any], caplog: pytest.LogCaptureFixture
) -> None:
    """As score does: a row that gives no trace is in no result's rows, so it is said."""
    rows = [*chat_rows(), {"trajectory": [{"role": "user"}]}]
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        result = call(rows)
    assert [str(problem.location) for problem in result.problems] == ["rows:4"]
    assert any(record.getMessage().startswith("rows:4") for record in caplog.records)


def test_score_warns_when_no_row_has_the_task_field(caplog: pytest.LogCaptureFixture) -> None:
    """A misspelt ``task_field`` is said, naming it and the columns the rows do have."""
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        scored = score(pd.DataFrame(chat_rows()), task_field="nope", scorer=scorer())
    said = [record.getMessage() for record in caplog.records]
    assert len(scored) == len(chat_rows())
    assert any("task_field='nope': no trace has it" in m and "instance_id" in m for m in said)


def test_score_says_nothing_of_a_task_field_some_row_has(caplog: pytest.LogCaptureFixture) -> None:
    """A task field the rows have is read, with no warning; a row's missing cell is no task.

    The frame's third row has no ``repo`` (pandas holds NaN there): its task was the text
    ``'NaN'``, where the same rows as dicts have none.
    """
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        scored = score(pd.DataFrame(chat_rows()), task_field="repo", scorer=scorer())
    assert [item.item.task for item in scored] == ["acme/widgets", "acme/widgets", None]
    assert not [r for r in caplog.records if "task_field" in r.getMessage()]


@pytest.mark.parametrize(
    "call",
    [
        lambda data: select(data, task_field="nope", scorer=scorer()),
        lambda data: dedupe(data, by="task", task_field="nope", scorer=scorer()),
        lambda data: split(data, test=0.5, task_field="nope", scorer=scorer()),
    ],
)
def test_a_task_field_no_row_has_is_refused_naming_the_columns(
    call: Callable[[Any], object],
) -> None:
    """select, dedupe and split refuse it, and say which columns the rows have instead."""
    with pytest.raises(knowledgepulse.errors.ScorerParameterError) as raised:
        call(pd.DataFrame(chat_rows()))
    assert "task_field='nope'" in str(raised.value)
    assert "the rows have " in str(raised.value)
    assert "instance_id" in str(raised.value)


def test_a_task_field_no_trace_has_names_the_traces_dotted_keys() -> None:
    """For traces, the keys are listed as task_field reads them: ``metadata.task_domain``."""
    traces = [json.loads(line) for line in CHAT.read_text().splitlines()]
    documents = [scored.item.document for scored in score(traces, scorer=scorer())]
    with pytest.raises(knowledgepulse.errors.ScorerParameterError, match=r"metadata\.task_domain"):
        select(documents, task_field="metadata.nope", scorer=scorer())


@settings(max_examples=25, deadline=None)
@given(
    contents=st.lists(texts, min_size=1, max_size=4),
    extra=texts,
    level=st.sampled_from(["aggregated", "federated", "private"]),
)
def test_redacting_rows_again_finds_nothing_and_changes_nothing(
    contents: list[str], extra: str, level: str
) -> None:
    """redact is idempotent on rows: what it gives back, redacted again, is the same rows, with no
    finding; and a row redacted with no finding comes back as it was."""
    rows = [
        row
        | {
            "note": extra,
            "trajectory": [*row["trajectory"], {"role": "assistant", "content": text}],
        }
        for row, text in zip(chat_rows(), contents, strict=False)
    ]
    once = redact(rows, level=level, on_problem=lambda _: None)
    twice = redact(once.data, level=level, on_problem=lambda _: None)
    assert twice.data == once.data
    assert all(found == [] for found in twice.findings)
    for row, back, found in zip(rows, once.data, once.findings, strict=True):
        if not found:
            assert back == row


@settings(max_examples=25, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            st.sampled_from(["refund order 7", "book a flight", "fix the test", "plan a trip"]),
            st.sampled_from(["code", "qa"]),
            st.booleans(),
        ),
        max_size=8,
    ),
    min_score=st.sampled_from([None, "p50", 0.3]),
    rng=st.randoms(),
)
def test_corpus_scores_and_verdicts_do_not_depend_on_the_input_order(
    runs: list[tuple[str, str, bool]], min_score: str | float | None, rng: Any
) -> None:
    """score(corpus=True), a percentile threshold too: each trace's breakdown (its nearest
    included) is the same in any order, as the docs promise ("no verdict depends on the order")."""
    traces = [
        trace_json(trace_id=f"kp:trace:{number}", objective=text, domain=domain, success=success)
        for number, (text, domain, success) in enumerate(runs)
    ]
    shuffled = traces[:]
    rng.shuffle(shuffled)

    def breakdowns(data: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        scored = score(data, corpus=True, min_score=min_score, scorer=scorer())
        return {item.trace.id: item.breakdown.to_dict() for item in scored}

    assert breakdowns(shuffled) == breakdowns(traces)
