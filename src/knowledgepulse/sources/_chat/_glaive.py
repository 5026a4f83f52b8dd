"""Glaive's function-calling rows (glaive-function-calling-v2): the conversation as one text.

A row is ``{"system": "SYSTEM: ...", "chat": "USER: ... ASSISTANT: ... <|endoftext|> ..."}``:
each turn opens (a line, in the dataset) with its speaker, ``USER:``, ``ASSISTANT:`` or
``FUNCTION RESPONSE:``, and an assistant turn ends with ``<|endoftext|>``. The assistant calls a
function by writing ``<functioncall> {"name": ..., "arguments": '{...}'}``: the arguments are
JSON text in single quotes, so the call is a Python literal, not JSON (some rows write them as
an object). The ``FUNCTION RESPONSE:`` after it is its result. The turns are read as Chat
Completions messages. Text cannot escape a speaker's label, so a label inside a turn starts a
new turn, as the readers of the dataset (axolotl's) split them.
"""

from __future__ import annotations

import re
from typing import Any

from knowledgepulse.sources._chat._text import json_or_python

_SPEAKER = re.compile(r"(?:^|(?<=\s))(USER|ASSISTANT|FUNCTION RESPONSE): ")
"""A turn's label, as axolotl's Glaive reader (after Lilac's) splits the text: the speaker and
``": "`` wherever they stand (the dataset opens each turn a line; fixtures write them inline),
here only at the start or after a space, so that no word ending in one is cut."""
_ROLES = {"USER": "user", "ASSISTANT": "assistant", "FUNCTION RESPONSE": "tool"}
_SYSTEM_LABEL = "SYSTEM:"
_END = "<|endoftext|>"
_CALL = "<functioncall>"


def is_transcript(text: Any) -> bool:
    """Whether a column's value is a Glaive transcript: text whose first turn is the user's."""
    return isinstance(text, str) and text.lstrip().startswith("USER:")


def transcript_messages(text: str, system: Any = None) -> list[dict[str, Any]] | None:
    """The turns of a Glaive transcript as Chat Completions messages; ``None`` if it is none.

    The row's ``system`` text opens them, less its ``SYSTEM:`` label (a label, not words of the
    prompt, as axolotl's reader drops it).
    """
    if not is_transcript(text):
        return None
    marks = list(_SPEAKER.finditer(text))
    messages = []
    if isinstance(system, str) and system.strip():
        prompt = system.strip().removeprefix(_SYSTEM_LABEL).strip()
        messages.append({"role": "system", "content": prompt})
    for mark, after in zip(marks, [*marks[1:], None], strict=True):
        said = text[mark.end() : after.start() if after else len(text)].strip()
        role = _ROLES[mark.group(1)]
        messages.append(
            _assistant(said) if role == "assistant" else {"role": role, "content": said}
        )
    return messages


def _assistant(said: str) -> dict[str, Any]:
    """An assistant turn: its text, and the call it makes after ``<functioncall>``."""
    said = said.removesuffix(_END).strip()
    before, marker, call = said.partition(_CALL)
    if not marker:
        return {"role": "assistant", "content": said}
    parsed = json_or_python(call.replace(_END, "").strip())
    name = parsed.get("name") if isinstance(parsed, dict) else None
    if not isinstance(name, str) or not name:
        # A call that cannot be read (cut short, an extra brace) stays the turn's text.
        return {"role": "assistant", "content": said}
    arguments = parsed.get("arguments", parsed.get("parameters"))
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": before.strip() or None,
        "tool_calls": [{"type": "function", "function": function}],
    }


__all__ = ["is_transcript", "transcript_messages"]
