"""runs.on_ray with a third party's source: the actors' rows read as a local read reads them."""

from __future__ import annotations

import itertools
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from knowledgepulse.runs import items_of
from knowledgepulse.runs.on_ray import ConversationRows, TraceBatchEmbedder, dataset_lead
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.sources import register_source
from knowledgepulse.sources._builtin import OpenAIChat
from knowledgepulse.sources._registry import unregister_source
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer

EXAMPLES = Path(__file__).parents[3] / "examples" / "datasets"


class RaisingChat(OpenAIChat):
    """A plugin that reads chat rows well but whose ``recognises()`` has a bug."""

    def recognises(self, value: Any) -> bool:
        raise KeyError("messages")


@pytest.fixture
def raising_chat() -> Iterator[str]:
    """The plugin, registered as ``raising-chat`` for one test."""
    register_source("raising-chat")(RaisingChat)
    yield "raising-chat"
    unregister_source("raising-chat")


def chat_rows() -> list[dict[str, Any]]:
    """Chat rows with a bad one first: a named source reads from it, as a local read does.

    Their conversations are JSON text, as Parquet may hold them, so that Arrow gives every row the
    same columns (``pa.Table.from_pylist`` takes them from the first row).
    """
    lines = (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:
        row["trajectory"] = json.dumps(row["trajectory"])
    return [{**rows[0], "trajectory": "not a conversation"}, *rows]


def test_a_named_plugin_is_never_asked_whether_it_recognises_the_lead(raising_chat: str) -> None:
    """A named source's lead is the first row, as locally; its buggy recognises() is not run.

    Before, the Ray path asked it (and only it, unguarded): its KeyError ended the run.
    """
    rows = chat_rows()
    assert dataset_lead(iter(rows), raising_chat) == (raising_chat, rows[0])


def test_a_named_plugin_reads_each_batch_as_a_local_read(raising_chat: str) -> None:
    """The actor's read of each batch after the lead gives the local read's documents and errors."""
    rows = chat_rows()
    reader = ConversationRows(*dataset_lead(iter(rows), raising_chat))
    on_ray = [*reader(rows[:2]), *reader(rows[2:])]
    local = list(items_of(rows, source=raising_chat))
    traces = [(item.document["id"], item.task) for item in local if isinstance(item, TraceItem)]
    assert [(read.document and read.document["id"], read.task) for read in on_ray[1:]] == traces
    assert on_ray[0].document is None
    errors = [item.message for item in local if not isinstance(item, TraceItem)]
    assert [message for _, message in on_ray[0].problems] == errors


def test_a_trace_read_on_ray_records_its_rows_place_in_the_dataset() -> None:
    """Each item's ``metadata.source.row`` is its row's place in the dataset, as a local read's.

    The actor's and driver's steps run in-process, in batches of two after a bad first row.
    Before, it was the row's number in its actor's batch (the lead counted): 2, 1, 2.
    """
    rows = chat_rows()
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    reader = ConversationRows(*dataset_lead(iter(rows), "auto"))
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, reader, None)
    positions, scored = itertools.count(), list[ScoredItem]()
    for start in range(0, len(rows), 2):
        batch = actor(pa.Table.from_pylist(rows[start : start + 2]))
        scored.extend(s for s in score_batch(scorer, batch, positions) if isinstance(s, ScoredItem))
    local = [item for item in items_of(rows) if isinstance(item, TraceItem)]
    assert [s.item.document for s in scored] == [item.document for item in local]
    assert [s.item.document["metadata"]["source"]["row"] for s in scored] == [1, 2, 3]


def test_a_plugin_registered_only_in_the_driver_reads_in_an_actor(raising_chat: str) -> None:
    """The reader, pickled to an actor that never registered the plugin, still reads with it.

    A notebook's or a script's source has no entry point for an actor to find: before, every
    batch failed with "unknown source 'raising-chat'" and the run stopped.
    """
    rows = chat_rows()
    local = [
        item.document["id"]
        for item in items_of(rows, source=raising_chat)
        if isinstance(item, TraceItem)
    ]
    shipped = pickle.dumps(ConversationRows(*dataset_lead(iter(rows), raising_chat)))
    unregister_source(raising_chat)  # as in the actor's process
    on_ray = pickle.loads(shipped)(rows)
    assert [read.document and read.document["id"] for read in on_ray[1:]] == local


class SkipsOdd(OpenAIChat):
    """A plugin reading chat rows that gives nothing for every second row."""

    def convert(self, records: Any, options: Any) -> Iterator[Any]:
        given = (record for record in records if getattr(record, "value", {}).get("n", 0) % 2 == 0)
        return super().convert(given, options)


def test_a_row_a_plugin_gave_nothing_for_is_its_error_on_ray_too() -> None:
    """The actor's read says which rows the plugin passed over, naming it, as a local read.

    Before, each such row read as "claimed by more than one source", and locally it was lost.
    """
    register_source("skips-odd")(SkipsOdd)
    try:
        rows = [{**row, "n": number} for number, row in enumerate(chat_rows()[1:])]
        on_ray = ConversationRows(*dataset_lead(iter(rows), "skips-odd"))(rows)
    finally:
        unregister_source("skips-odd")
    assert [read.document is None for read in on_ray] == [n % 2 == 1 for n in range(len(rows))]
    messages = [message for read in on_ray[1::2] for _, message in read.problems]
    assert messages
    assert all("the plugin tests.engines" in message for message in messages)
    assert all("gave no trace and no problem" in message for message in messages)
