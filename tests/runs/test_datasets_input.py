"""A ``datasets.Dataset`` given to a run: read as Python rows, given back quietly in its form."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq
import pytest

from knowledgepulse import sources
from knowledgepulse.reports.rows import COLUMN_TYPES
from knowledgepulse.runs import (
    annotate,
    decontaminate,
    dedupe,
    items_of,
    redact,
    score,
    select,
    split,
)
from knowledgepulse.runs.write import table_schema
from knowledgepulse.sources import RowOptions, TraceOptions
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer
from tests.builders import curation_traces

Dataset = pytest.importorskip("datasets").Dataset
CHAT = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def chat_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CHAT.read_text().splitlines()]


def test_a_shuffled_dataset_gives_rows_back_without_a_progress_bar(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """annotate, select and dedupe on a shuffled Dataset print nothing (no flattening bar)."""
    runs = Dataset.from_list(chat_rows()).shuffle(seed=7)
    annotated = annotate(runs, scorer=scorer())
    chosen = select(runs, budget=2, scorer=scorer()).rows
    groups = dedupe(runs, scorer=scorer())
    kept, dropped = groups.kept_rows, groups.dropped_rows
    assert capfd.readouterr().err == ""
    assert annotated["trajectory_id"] == runs["trajectory_id"]
    assert len(chosen) == 2
    assert len(kept) + len(dropped) == len(runs)


def test_a_numpy_formatted_dataset_scores_as_a_plain_one() -> None:
    """The format a Dataset is shown in (numpy here) changes no row read, and is kept."""
    plain = Dataset.from_list(chat_rows())
    shown = plain.with_format("numpy")
    assert [s.breakdown.score for s in score(shown, scorer=scorer())] == [
        s.breakdown.score for s in score(plain, scorer=scorer())
    ]
    annotated = annotate(shown, scorer=scorer())
    assert annotated.format["type"] == "numpy"
    assert list(annotated.with_format(None)["kp_score"]) == list(
        annotate(plain, scorer=scorer())["kp_score"]
    )


def test_a_redacted_dataset_comes_back_in_its_format_info_and_split() -> None:
    """redact, and select/decontaminate with redact=True, keep the Dataset's set_format
    (numpy, torch...), its info and split, as the calls without redaction do."""
    shown = Dataset.from_list(chat_rows(), split="train").with_format(
        "numpy", columns=["resolved"], output_all_columns=True
    )
    given_back = [
        redact(shown, level="aggregated").data,
        select(shown, redact=True, scorer=scorer()).rows,
        decontaminate(shown, against_texts=["unrelated"], redact=True, scorer=scorer()).kept_rows,
    ]
    for rows in given_back:
        assert rows.format["type"] == "numpy"
        assert rows.format["output_all_columns"] is True
        assert "resolved" in rows.format["columns"]
        assert str(rows.split) == "train"
        assert rows.info.features == rows.features


@pytest.mark.parametrize("kind", ["arrow", "pandas", "datasets"])
def test_no_row_to_give_back_is_an_empty_table_of_the_input_kind(kind: str) -> None:
    """dedupe's dropped_rows with nothing dropped: an empty table of the same columns."""
    rows = chat_rows()
    data: Any = {
        "arrow": pa.Table.from_pylist(rows),
        "pandas": pd.DataFrame(rows),
        "datasets": Dataset.from_list(rows),
    }[kind]
    groups = dedupe(data, threshold=1.0, scorer=scorer())
    dropped = groups.dropped_rows
    assert len(dropped) == 0
    assert type(dropped) is type(data)
    assert "kp_kept" in (dropped.columns if kind == "pandas" else dropped.column_names)


@pytest.mark.parametrize("kind", ["arrow", "pandas", "datasets"])
def test_a_table_scored_again_gets_new_kp_columns_not_a_second_set(kind: str) -> None:
    """annotate or select on rows an earlier run annotated: each kp_ column once, the new
    values in it; before, an Arrow table got two kp_score columns and a Dataset raised."""
    rows = [{**row, "kp_score": -1.0, "kp_nearest": "old"} for row in chat_rows()]
    data: Any = {
        "arrow": pa.Table.from_pylist(rows),
        "pandas": pd.DataFrame(rows),
        "datasets": Dataset.from_list(rows),
    }[kind]
    want = [round(item.breakdown.score, 4) for item in score(chat_rows(), scorer=scorer())]
    annotated, chosen = annotate(data, scorer=scorer()), select(data, scorer=scorer()).rows
    for again in (annotated, chosen):
        names = list(again.columns) if kind == "pandas" else again.column_names
        assert names.count("kp_score") == 1
        assert names.count("kp_nearest") == 1
        assert -1.0 not in _values(again["kp_score"])
    assert _values(annotated["kp_score"]) == want


def _values(column: Any) -> list[Any]:
    """A column's values as Python objects (an Arrow column's scalars converted)."""
    return column.to_pylist() if hasattr(column, "to_pylist") else list(column)


def test_traces_loaded_by_datasets_from_json_read_as_the_file(tmp_path: Path) -> None:
    """Dataset.from_json, or Parquet written from Arrow's JSON reader: created_at is a timestamp
    without a zone (the Z dropped), read as UTC; before, every trace failed validation."""
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(trace) + "\n" for trace in curation_traces()))
    want = [item.trace for item in items_of(str(path)) if isinstance(item, TraceItem)]
    loaded = Dataset.from_json(str(path))
    assert pa.types.is_timestamp(loaded.data.schema.field("metadata").type["created_at"].type)
    parquet = tmp_path / "traces.parquet"
    pq.write_table(pa_json.read_json(path), parquet)
    for data in (loaded, str(parquet)):
        assert [item.trace for item in items_of(data) if isinstance(item, TraceItem)] == want


def test_a_dataset_left_with_no_row_is_an_empty_dataset_of_its_columns() -> None:
    """decontaminate against the set itself keeps nothing: kept_rows has its features, no rows."""
    runs = Dataset.from_list(chat_rows())
    kept = decontaminate(runs, against=chat_rows()).kept_rows
    assert len(kept) == 0
    assert kept.features == runs.features


def test_kp_columns_of_a_dataset_have_their_types_when_every_value_is_empty() -> None:
    """dedupe with no near-duplicate: kept_rows' kp_group is int64 (not null), dropped_rows'
    every kp_ column typed, so the parts concatenate with another run's."""
    from datasets import Value, concatenate_datasets

    runs = Dataset.from_list(chat_rows())
    groups = dedupe(runs, threshold=1.0, scorer=scorer())
    kept, dropped = groups.kept_rows, groups.dropped_rows
    assert len(kept) == len(runs)
    assert all(group is None for group in kept["kp_group"])
    for part in (kept, dropped):
        for name in ("kp_score", "kp_nearest", "kp_group", "kp_kept"):
            assert part.features[name] == Value(COLUMN_TYPES[name]), (name, part.features[name])
    twice = dedupe(Dataset.from_list(chat_rows() * 2), scorer=scorer()).kept_rows
    assert len(concatenate_datasets([kept, twice])) == len(kept) + len(twice)


def test_an_image_column_is_read_as_its_bytes_never_opened() -> None:
    """Rows with an ``Image`` column whose bytes no image library reads are scored, the
    column given back as it came: kp reads the conversation, not the pictures."""
    from datasets import Image

    pictures = [{"bytes": b"not a picture %d" % index, "path": None} for index in range(3)]
    rows = [{**row, "image": picture} for row, picture in zip(chat_rows(), pictures, strict=True)]
    runs = Dataset.from_list(rows).cast_column("image", Image())
    annotated = annotate(runs, scorer=scorer())
    assert annotated["kp_error"] == [None] * len(runs)
    assert annotated.features["image"] == Image()
    got = annotated.cast_column("image", Image(decode=False))["image"]
    assert list(got) == pictures
    read = [item for item in items_of(runs) if isinstance(item, TraceItem)]
    assert [item.row.value["image"] for item in read if item.row is not None] == pictures


def test_a_streamed_dataset_is_read_as_it_streams_its_images_never_opened() -> None:
    """An ``IterableDataset`` gives its first item without reading the rest (an endless one
    here), and its rows as the ``Dataset``'s: an ``Image`` column as its bytes, not opened."""
    from datasets import Image, IterableDataset

    plain = Dataset.from_list(chat_rows())  # each row with every column
    rows = plain.to_list()

    def endless() -> Iterator[dict[str, Any]]:
        for index in itertools.count():
            yield {**rows[index % 3], "image": {"bytes": b"%d" % index, "path": None}}

    features = plain.features.copy()
    features["image"] = Image()
    streamed = IterableDataset.from_generator(endless, features=features)
    first = next(items_of(streamed, source="openai-chat"))
    assert isinstance(first, TraceItem)
    assert first.row is not None
    assert first.row.value["image"] == {"bytes": b"0", "path": None}
    runs = Dataset.from_list(chat_rows())
    again = runs.to_iterable_dataset()
    assert annotate(again, scorer=scorer()) == annotate(runs, scorer=scorer()).to_list()


def test_a_dataset_written_to_parquet_keeps_its_features(tmp_path: Path) -> None:
    """select's and dedupe's ``write_to`` a ``.parquet`` name: the Dataset's own features
    (a ClassLabel, an int32) read back by ``datasets``, not types guessed from the values."""
    from datasets import ClassLabel, Value

    labelled = [{**row, "label": index % 2} for index, row in enumerate(chat_rows())]
    runs = (
        Dataset.from_list(labelled)
        .cast_column("label", ClassLabel(names=["bad", "good"]))
        .cast_column("resolved", Value("int32"))
    )
    for name, result in (
        ("select", select(runs, scorer=scorer())),
        ("dedupe", dedupe(runs, scorer=scorer())),
    ):
        out = tmp_path / f"{name}.parquet"
        result.write_to(out)
        back = Dataset.from_parquet(str(out))
        assert {key: back.features[key] for key in runs.features} == runs.features, name
        assert len(back) == len(runs)


def test_decontaminate_and_split_written_to_parquet_keep_the_input_types(tmp_path: Path) -> None:
    """decontaminate's and split's ``write_to`` Parquet from a Dataset or an Arrow table keep
    its types (a ClassLabel, an int32, an int8), redacted or not, as select's and dedupe's do; each
    column was retyped from its Python values before (int64), the features lost."""
    from datasets import ClassLabel, Value

    labelled = [{**row, "label": index % 2} for index, row in enumerate(chat_rows())]
    runs = (
        Dataset.from_list(labelled)
        .cast_column("label", ClassLabel(names=["bad", "good"]))
        .cast_column("resolved", Value("int32"))
    )
    table = pa.Table.from_pylist(labelled)
    table = table.set_column(
        table.column_names.index("label"), "label", table.column("label").cast(pa.int8())
    )
    for data in (runs, table):
        schema = table_schema(data)
        out = tmp_path / "kept.parquet"
        decontaminate(data, against_texts=["an unrelated task"]).write_to(out)
        parts = split(data, test=0.34, seed=1, redact=True).write_to(
            tmp_path / "parts", form="parquet"
        )
        for path in (out, *parts.values()):
            back = pq.read_schema(path)
            assert [back.field(name) for name in schema.names] == list(schema), path
            assert back.metadata == schema.metadata, path
        assert sum(pq.read_metadata(path).num_rows for path in parts.values()) == len(labelled)


def test_a_streamed_dataset_of_unknown_features_is_read() -> None:
    """An ``IterableDataset`` without features (``from_generator`` without them, or after a
    ``map``) is read as it streams; before, datasets' ``decode`` refused it with a traceback."""
    from datasets import IterableDataset

    rows = chat_rows()

    def generated() -> Iterator[dict[str, Any]]:
        yield from rows

    streamed = IterableDataset.from_generator(generated)
    assert streamed.features is None
    assert annotate(streamed, scorer=scorer()) == annotate(rows, scorer=scorer())


def test_a_class_label_task_column_reads_as_its_labels_names() -> None:
    """A ``ClassLabel`` task column's tasks are its names (``task-1``), as the dataset shows them.

    Before, its numbers: the tasks read ``"0"`` and ``"1"``, a split's groups and a selection's
    tasks named by them.
    """
    rows = [{**row, "task": f"task-{n % 2}"} for n, row in enumerate(chat_rows())]
    labelled = Dataset.from_list(
        [{k: v for k, v in row.items() if k != "instance_id"} for row in rows]
    )
    labelled = labelled.class_encode_column("task")
    names = [row["task"] for row in rows]
    assert _tasks(labelled) == names
    assert _tasks(labelled, task_field="task") == names
    assert _tasks(labelled.to_iterable_dataset(), task_field="task") == names
    assert sorted(set(split(labelled, test=0.5, scorer=scorer()).groups)) == sorted(set(names))


def test_sources_convert_names_a_class_label_task_as_items_of_does() -> None:
    """``sources.convert(dataset)`` reads a ``ClassLabel`` task as its label's name, as a run does.

    Before, the number (``'0'``): it reads the Dataset's rows as dicts, which hold the numbers.
    """
    rows = [{**row, "task": f"task-{n % 2}"} for n, row in enumerate(chat_rows())]
    labelled = Dataset.from_list(
        [{k: v for k, v in row.items() if k != "instance_id"} for row in rows]
    ).class_encode_column("task")
    names = [row["task"] for row in rows]
    converted = sources.convert(labelled, options=TraceOptions(rows=RowOptions(task_field="task")))
    assert [item.task for item in converted if isinstance(item, TraceItem)] == names
    guessed = [item.task for item in sources.convert(labelled) if isinstance(item, TraceItem)]
    assert guessed == names == _tasks(labelled)


def test_a_class_label_task_is_its_name_in_the_converted_trace_too() -> None:
    """The trace's ``metadata.source.task`` (its model and its JSON) says the name, as the item
    does. Before, it kept the number (``'0'``): a trace written out said another task."""
    rows = [{**row, "task": f"task-{n % 2}"} for n, row in enumerate(chat_rows())]
    labelled = Dataset.from_list(
        [{k: v for k, v in row.items() if k != "instance_id"} for row in rows]
    ).class_encode_column("task")
    items = [item for item in sources.convert(labelled) if isinstance(item, TraceItem)]
    names = [row["task"] for row in rows]
    assert [(item.trace.metadata.model_extra or {})["source"]["task"] for item in items] == names
    assert [item.document["metadata"]["source"]["task"] for item in items] == names


def test_a_file_saved_from_a_class_label_dataset_reads_its_labels_names(tmp_path: Path) -> None:
    """Parquet (``to_parquet``) and ``save_to_disk`` keep the features: tasks are the names.

    Before, a file's rows gave the numbers (``'0'``), and so did the training rows made of them.
    """
    rows = [{**row, "task": f"task-{n % 2}"} for n, row in enumerate(chat_rows())]
    labelled = Dataset.from_list(
        [{k: v for k, v in row.items() if k != "instance_id"} for row in rows]
    ).class_encode_column("task")
    names = [row["task"] for row in rows]
    labelled.to_parquet(tmp_path / "runs.parquet")
    labelled.save_to_disk(tmp_path / "saved")
    for path in (tmp_path / "runs.parquet", tmp_path / "saved"):
        assert _tasks(str(path)) == names
        read = [item for item in sources.read(path) if isinstance(item, TraceItem)]
        assert [item.task for item in read] == names
        assert [item.document["metadata"]["source"]["task"] for item in read] == names
    # A file without the features (JSON Lines of the numbers) keeps them.
    labelled.to_json(tmp_path / "runs.jsonl")
    assert _tasks(str(tmp_path / "runs.jsonl")) == ["0", "1", "0"]


def _tasks(data: Any, task_field: str | None = None) -> list[str | None]:
    return [
        item.task for item in items_of(data, task_field=task_field) if isinstance(item, TraceItem)
    ]
