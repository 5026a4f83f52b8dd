"""A list or an object where a reader expects a type name is no type, never a set lookup.

Each of these was found by ``bench/fuzz_loaders.py`` as an uncaught ``TypeError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.sources.langchain._messages import as_message
from knowledgepulse.sources.openai_agents._items import output_item_entries
from tests.sources.helpers import convert_file

MESSAGES = Path(__file__).parents[2] / "examples" / "integrations" / "pydantic_ai" / "messages.json"
ODD = [["failed"], {"a": 1}]


@pytest.mark.parametrize("outcome", ODD)
def test_a_pydantic_ai_tool_return_outcome_that_is_a_list_is_no_failure(
    tmp_path: Path, outcome: Any
) -> None:
    """The run converts; the odd outcome marks nothing failed."""
    messages = json.loads(MESSAGES.read_text("utf-8"))
    for message in messages:
        for part in message["parts"]:
            if part.get("part_kind") == "tool-return":
                part["outcome"] = outcome
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), "utf-8")
    (item,) = convert_file(path, source="pydantic-ai")
    assert item.trace.steps  # type: ignore[union-attr]
    assert all(step.type != "error_recovery" for step in item.trace.steps)  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ODD)
def test_an_agents_sdk_output_item_typed_with_a_list_gives_no_entry(kind: Any) -> None:
    """An output item whose type is not a string is an unknown item."""
    assert output_item_entries({"type": kind, "content": "x"}) == []


@pytest.mark.parametrize("kind", ODD)
def test_a_langchain_content_block_typed_with_a_list_is_not_text(kind: Any) -> None:
    """The block is skipped; the message's other blocks are read."""
    message = as_message({"type": "ai", "content": [{"type": kind, "text": "x"}, "kept"]})
    assert message is not None
    assert message.text == "kept"
