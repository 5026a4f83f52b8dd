"""Hermes / ChatML function-calling conversations: ``<tool_call>`` tags inside the text.

The turns are ShareGPT's (``from`` / ``value``, as NousResearch's hermes-function-calling data
keeps them) or Chat Completions messages; a ``<tool_call>{"name": ..., "arguments": ...}
</tool_call>`` block in assistant text is a tool call, and a ``<tool_response>`` block in a
``tool`` (or user) turn its result, joined by name in order. Text outside the tags is a thought;
``<think>`` blocks are reasoning. Recognised when a turn's text holds one of the tags.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from knowledgepulse.sources._chat import _row, openai_chat, sharegpt
from knowledgepulse.sources._chat._text import has_tags
from knowledgepulse.sources._steps import StepBuilder

CONTENT_HINT = (
    "the rows hold no turn text; check messages_field (kp: --messages-field) names "
    "the conversation column"
)


def _texts(turns: list[Any]) -> Iterator[Any]:
    for turn in turns:
        if isinstance(turn, dict):
            yield turn.get("value", turn.get("content"))


def matches(turns: list[Any]) -> bool:
    """Whether a list is ShareGPT or chat turns with Hermes tags in their text."""
    shaped = sharegpt.matches(turns) or openai_chat.matches(turns)
    return shaped and any(has_tags(text) for text in _texts(turns))


def tell(turns: list[Any], builder: StepBuilder) -> _row.Told:
    """Tell the builder what the tagged turns hold."""
    if openai_chat.matches(turns):
        return openai_chat.tell(turns, builder)
    return sharegpt.tell(turns, builder)


__all__ = ["CONTENT_HINT", "matches", "tell"]
