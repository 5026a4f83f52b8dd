"""runs.on_ray with a third party's source: the actors' rows read as a local read reads them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.runs import items_of
from knowledgepulse.runs.on_ray import ConversationRows, dataset_lead
from knowledgepulse.sources import register_source
from knowledgepulse.sources._builtin import OpenAIChat
from knowledgepulse.sources._registry import unregister_source
from knowledgepulse.trace import TraceItem

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
    """Chat rows with a bad one first: a named source reads from it, as a local read does."""
    lines = (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()
    return [{"messages": "not a conversation"}, *map(json.loads, lines)]


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
