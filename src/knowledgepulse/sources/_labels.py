"""A dataset's ``ClassLabel`` columns: a task read from one is its label's name, as shown.

Such a column of a ``datasets.Dataset`` holds each label's number and shows its name: the row
dicts made of it (to convert them) hold the number, so their tasks read ``"0"`` and ``"1"``, not
``"task-0"``. Each way a ``Dataset`` is turned into trace items names them by this one rule, and
so does the reading of a Parquet or Arrow file saved from one, whose schema keeps its features.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.records.readers import saved_schema
from knowledgepulse.trace import TraceItem

Labels = Mapping[str, Sequence[str]]
"""The names of each ``ClassLabel`` column's labels (label ``n`` named ``names[n]``), by column."""


def class_labels(data: Any) -> dict[str, list[str]]:
    """The ``ClassLabel`` columns of a ``datasets`` table (streamed too), by name; else none.

    Told by its ``features`` (a mapping of columns to types), so that ``datasets`` is not
    imported to ask; a streamed dataset of unknown features has none.
    """
    features = getattr(data, "features", None)
    if not isinstance(features, Mapping):
        return {}
    return {
        name: list(feature.names)
        for name, feature in features.items()
        if type(feature).__name__ == "ClassLabel"
    }


def file_class_labels(path: str | Path) -> dict[str, list[str]]:
    """The ``ClassLabel`` columns of a Parquet or Arrow file saved from a ``datasets`` table.

    Read from its schema's ``huggingface`` metadata, where ``datasets`` keeps the features
    (``Dataset.to_parquet``, ``save_to_disk``); none for any other file, or one whose schema
    cannot be read (its rows say why as they are read).
    """
    if str(path) == "-" or not (Path(path).is_file() or Path(path).is_dir()):
        return {}  # standard input or a pipe: a look at its head would drain what it holds
    schema = saved_schema(path)
    saved = (schema.metadata or {}).get(b"huggingface") if schema is not None else None
    try:
        features = json.loads(saved)["info"]["features"] if saved else None
    except (ValueError, KeyError, TypeError):
        return {}
    if not isinstance(features, Mapping):
        return {}
    return {
        name: [str(label) for label in feature["names"]]
        for name, feature in features.items()
        if isinstance(feature, Mapping)
        and feature.get("_type") == "ClassLabel"
        and isinstance(feature.get("names"), list)
    }


def labelled_tasks(
    items: Iterable[TraceItem | Problem], labels: Labels, task_field: str | None
) -> Iterator[TraceItem | Problem]:
    """Each item; a task read from a ``ClassLabel`` column is its label's name, as shown.

    The column is ``task_field``, else the one whose number the task is (a dataset's task
    column found by its name).
    """
    if not labels:
        yield from items
        return
    columns = [task_field] if task_field is not None else list(labels)
    for item in items:
        yield _labelled_task(item, labels, columns) if isinstance(item, TraceItem) else item


def _labelled_task(item: TraceItem, labels: Labels, columns: Sequence[str]) -> TraceItem:
    row = None if item.row is None else item.row.value
    if item.task is None or not isinstance(row, Mapping):
        return item
    for name in columns:
        value, names = row.get(name), labels.get(name)
        if names is None or type(value) is not int or str(value) != item.task:
            continue
        if 0 <= value < len(names):  # -1: no label
            return _named(item, names[value])
    return item


def _named(item: TraceItem, task: str) -> TraceItem:
    """``item`` run of ``task``: its trace's ``metadata.source.task`` too, model and JSON alike."""
    document = item.document
    said = document["metadata"].get("source")
    if not isinstance(said, dict) or said.get("task") != item.task:  # not the converter's copy
        return replace(item, task=task)
    source = {**said, "task": task}
    named = {**document, "metadata": {**document["metadata"], "source": source}}
    metadata = item.trace.metadata.model_copy(update={"source": source})
    trace = item.trace.model_copy(update={"metadata": metadata})
    return replace(item, task=task, trace=trace, record=replace(item.record, value=named))
