"""OpenHands' closing call, ``finish``: how its agents end a run, not a tool call.

OpenHands' ``finish`` tool takes ``message``, "Final message to send to the user" (its
``FinishTool``), and in newer versions ``task_completed`` (``"true"``, ``"false"`` or
``"partial"``). Read strictly, a call named ``finish`` whose arguments are an object with a
text ``message``, so that another agent's tool named ``finish`` stays a tool call. One
definition for every reader that meets OpenHands' runs: ATIF trajectories and chat rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledgepulse.sources._chat._text import json_or_value

FINISH = "finish"
"""The closing tool's name (OpenHands' ``FINISH_TOOL_NAME``)."""
_NOT_DONE = frozenset({"false", "partial"})
"""``task_completed`` values by which the agent says the task is not (all) done."""


@dataclass(frozen=True, slots=True)
class Finish:
    """What an OpenHands ``finish`` call says: its final message, and whether it did the task."""

    message: str
    completed: bool
    """False when ``task_completed`` says the task is not (all) done; absent, it is done."""


def openhands_finish(name: Any, arguments: Any) -> Finish | None:
    """The ``finish`` call OpenHands ends a run with, else ``None`` (any other call).

    ``arguments``: an object, or the JSON string a chat row keeps it as.
    """
    if name != FINISH:
        return None
    arguments = json_or_value(arguments)
    if not isinstance(arguments, dict) or not isinstance(arguments.get("message"), str):
        return None
    said = arguments.get("task_completed")
    not_done = said is False or (isinstance(said, str) and said.strip().lower() in _NOT_DONE)
    return Finish(arguments["message"], completed=not not_done)
