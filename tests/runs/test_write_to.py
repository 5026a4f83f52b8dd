"""The curation results write themselves: ``write_to`` gives what ``kp select``/``dedupe`` write."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.errors import ParameterConflictError
from knowledgepulse.runs import decontaminate, dedupe, select, split
from knowledgepulse.runs.contamination import DecontaminationResult
from knowledgepulse.runs.curate import DedupeResult, SelectionResult
from knowledgepulse.runs.inputs import ROWS_NAME
from knowledgepulse.runs.splits import write_split
from knowledgepulse.runs.write import WriteForm, output_form, write_jsonl
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer
from tests.builders import curation_traces

DATASETS = Path(__file__).parents[2] / "examples" / "datasets"


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def lines(stream: io.StringIO) -> list[Any]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def chat_rows() -> list[dict[str, Any]]:
    path = DATASETS / "openai_chat.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_selection_writes_its_rows_in_the_order_picked() -> None:
    """Traces go out with their quality score, as :attr:`SelectionResult.rows` gives them."""
    result = select(curation_traces(), budget=3, scorer=scorer())
    out = io.StringIO()
    result.write_to(out)
    assert lines(out) == result.rows
    assert len(result.rows) == 3


def test_a_selection_writes_training_rows_with_messages() -> None:
    """``messages``: every selected item is a chat-form training row."""
    result = select(curation_traces(), budget=2, scorer=scorer())
    out = io.StringIO()
    result.write_to(out, messages=True)
    assert len(lines(out)) == 2
    assert all("messages" in row for row in lines(out))


def test_dedupe_of_traces_writes_one_line_a_group() -> None:
    """Traces: each group as its report row."""
    result = dedupe(curation_traces(), threshold=0.95, scorer=scorer())
    out = io.StringIO()
    result.write_to(out)
    assert len(lines(out)) == len(result.groups) == 1
    assert (
        lines(out)[0]["representative"]["id"] == result.groups[0].representative.breakdown.trace_id
    )


def test_dedupe_of_rows_writes_every_row_with_its_group_columns() -> None:
    """Rows: every row in input order, with ``kp_group`` and ``kp_kept``."""
    rows = chat_rows()
    result = dedupe(rows, by="task", scorer=scorer())
    out = io.StringIO()
    result.write_to(out)
    written = lines(out)
    assert [{k: v for k, v in r.items() if not k.startswith("kp_")} for r in written] == rows
    assert [r["kp_kept"] for r in written] == [c["kp_kept"] for c in result.columns()]


def test_dedupe_with_messages_writes_the_kept_items_only() -> None:
    """``messages``: one training row a kept item."""
    result = dedupe(curation_traces(), threshold=0.95, scorer=scorer())
    out = io.StringIO()
    result.write_to(out, messages=True)
    assert len(lines(out)) == len(result.kept) < len(result.corpus.items)


def test_decontamination_writes_the_kept_rows_as_they_came() -> None:
    """The removed row goes; the others are written unchanged."""
    texts = ["Book the cheapest flight from Boston to Denver for two adults on March 3.", "Hi."]
    rows = [
        {"messages": [{"role": "user", "content": t}, {"role": "assistant", "content": "Done."}]}
        for t in texts
    ]
    objective = texts[0]
    result = decontaminate(rows, against_texts=[objective], source="openai-chat")
    out = io.StringIO()
    result.write_to(out)
    assert lines(out) == result.kept_rows
    assert len(lines(out)) == len(rows) - len(result.removed) < len(rows)


def test_parquet_rows_to_a_stream_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    """The first input is Parquet: rows need a file, traces do not care."""
    source = tmp_path / "rows.parquet"
    source.write_bytes(b"PAR1")
    with pytest.raises(ParameterConflictError, match="output"):
        output_form(io.StringIO(), [str(source)], rows=True)
    assert output_form(io.StringIO(), [str(source)], rows=False) == "jsonl"
    assert output_form(tmp_path / "out.parquet", ["rows.jsonl"], rows=True) == "parquet"


def test_write_jsonl_writes_each_records_dict_to_a_file(tmp_path: Path) -> None:
    """One tidy JSON line a record, in the file only once the block completes."""
    result = select(curation_traces(), budget=1, scorer=scorer())
    path = tmp_path / "rejected.jsonl"
    write_jsonl(path, result.rejected)
    assert [
        row["id"] for row in json.loads("[" + ",".join(path.read_text().splitlines()) + "]")
    ] == [rejected.to_dict()["id"] for rejected in result.rejected]


def test_every_result_writes_to_a_path_given_as_text(tmp_path: Path) -> None:
    """A notebook's str path is a file, as a Path is: the same lines, no AttributeError."""
    rows = chat_rows()
    results: dict[str, SelectionResult | DedupeResult | DecontaminationResult] = {
        "select": select(rows, scorer=scorer()),
        "dedupe": dedupe(rows, scorer=scorer()),
        "decontaminate": decontaminate(rows, against_texts=["no task copies this one"]),
    }
    for name, result in results.items():
        as_text, as_path = tmp_path / f"{name}-text.jsonl", tmp_path / f"{name}-path.jsonl"
        result.write_to(str(as_text))
        result.write_to(as_path)
        assert as_text.read_text() == as_path.read_text() != ""
    parts = write_split(split(rows, test=0.5, by="instance_id"), str(tmp_path / "split"))
    assert sorted(parts) == ["test", "train"]
    assert all(path.is_file() for path in parts.values())


def _groups(tasks: Any, items: Any) -> set[frozenset[str]]:
    """The tasks as sets of trace ids (the keys aside: a read key names the same group)."""
    by_task: dict[Any, set[str]] = {}
    for task, scored in zip(tasks, items, strict=True):
        by_task.setdefault(task, set()).add(scored.trace.id)
    return {frozenset(ids) for ids in by_task.values()}


def test_training_rows_of_a_selection_carry_its_inferred_tasks() -> None:
    """Rows written with ``messages`` read back as the tasks select inferred, not re-inferred."""
    result = select(curation_traces(), scorer=scorer())
    assert result.tasks_inferred
    out = io.StringIO()
    result.write_to(out, messages=True)
    rows = lines(out)
    assert all(row["task_id"] is not None for row in rows)
    back = select(rows, scorer=scorer())
    assert not back.tasks_inferred
    assert _groups(back.tasks, back.corpus.items) == _groups(result.tasks, result.corpus.items)


def test_training_rows_of_a_dedupe_by_task_carry_its_tasks() -> None:
    """``dedupe(by="task")`` kept rows name the task each was grouped in."""
    result = dedupe(curation_traces(), by="task", scorer=scorer())
    out = io.StringIO()
    result.write_to(out, messages=True)
    task_of = {s.trace.id: t for s, t in zip(result.corpus.items, result.tasks, strict=True)}
    assert [row["task_id"] for row in lines(out)] == [
        task_of[scored.trace.id] for scored in result.kept
    ]


def _arrow_file(path: Path) -> None:
    import pyarrow as pa

    table = pa.table({"messages": [1, 2]})  # a column the rows have, typed otherwise
    with pa.ipc.new_file(str(path), table.schema) as writer:
        writer.write(table)


def _parquet_file(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"messages": [1, 2]}), str(path))


def _dataset_folder(path: Path) -> None:
    path.mkdir()  # a ``save_to_disk`` folder
    _arrow_file(path / "data-00000-of-00001.arrow")
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}
    (path / "state.json").write_text(json.dumps(state))


@pytest.mark.parametrize("make", [_arrow_file, _parquet_file, _dataset_folder])
def test_rows_in_memory_written_to_parquet_never_read_a_file_named_as_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any
) -> None:
    """A ``rows`` file or folder in the working directory changes nothing; before, its types
    were taken for the rows' and the write failed."""
    pytest.importorskip("pyarrow")
    rows = chat_rows()
    clean = tmp_path / "clean"
    clean.mkdir()
    monkeypatch.chdir(clean)
    select(rows, budget=3, scorer=scorer()).write_to(clean / "out.parquet")
    other = tmp_path / "other"
    other.mkdir()
    make(other / ROWS_NAME)
    monkeypatch.chdir(other)
    select(rows, budget=3, scorer=scorer()).write_to(other / "out.parquet")
    assert (other / "out.parquet").read_bytes() == (clean / "out.parquet").read_bytes()


def test_rows_holding_an_integer_past_64_bits_are_written_with_it() -> None:
    """A row in memory may hold 2**70 (a JSON file may, and kp reads it): every result writes it
    as its digits; before, orjson's TypeError stopped write_to."""
    rows = [row | {"big": 2**70} for row in chat_rows()]
    results: list[SelectionResult | DedupeResult | DecontaminationResult] = [
        select(rows, scorer=scorer()),
        dedupe(rows, scorer=scorer()),
        decontaminate(rows, against_texts=["an unrelated task"], scorer=scorer()),
    ]
    for result in results:
        stream = io.StringIO()
        result.write_to(stream)
        assert [row["big"] for row in lines(stream)] == [2**70] * len(rows)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_named_index_is_written_back_as_a_column(tmp_path: Path, suffix: str) -> None:
    """``df.set_index("id")``'s ids are in each row written, as ``DataFrame.to_parquet`` keeps them.

    Before, ``split(...).write_to`` (and a selection's, a dedupe's) wrote the rows without it:
    the ids were lost. An unnamed ``RangeIndex`` stays out.
    """
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pandas.read_json(DATASETS / "openai_chat.jsonl", lines=True)
    frame["row_id"] = [f"row-{n}" for n in range(len(frame))]
    indexed = frame.set_index("row_id")
    select(indexed, scorer=scorer()).write_to(tmp_path / f"selected{suffix}")
    dedupe(indexed, by="task").write_to(tmp_path / f"deduped{suffix}")
    form: WriteForm = "parquet" if suffix == ".parquet" else "jsonl"
    parts = split(indexed, test=0.4, scorer=scorer()).write_to(tmp_path / "split", form)
    written = [tmp_path / f"selected{suffix}", tmp_path / f"deduped{suffix}", *parts.values()]
    for path in written:
        rows = _read_rows(path)
        assert rows
        assert sorted(row["row_id"] for row in rows) == sorted(
            frame.loc[frame["instance_id"].isin([row["instance_id"] for row in rows]), "row_id"]
        )
    select(frame.drop(columns="row_id"), scorer=scorer()).write_to(tmp_path / f"plain{suffix}")
    unindexed = _read_rows(tmp_path / f"plain{suffix}")
    assert all(not {"row_id", "index", "__index_level_0__"} & row.keys() for row in unindexed)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_table(path).to_pylist())
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
