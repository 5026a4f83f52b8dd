"""Harbor's ATIF trajectories of coding agents: a user step holds what the agent sent the model.

The file is the conformance corpus's (tests/conformance/files/atif, origin and licence in
SOURCES.md there); a variant changes one part of it to reach a rule it does not show.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from knowledgepulse.sources import convert
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

NO_FUNCTION_CALLING = CORPUS / "atif" / "harbor_openhands_no_function_calling.json"
"""OpenHands 1.1.0 without native function calling: its worked example around the task, its
calls written into its messages (``<function=execute_bash>``, ``<function=finish>``)."""
TASK = 'Create a file called hello.txt with "Hello, world!" as the content.'


def only(items: list[Any]) -> TraceItem:
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def test_openhands_worked_example_around_the_task_is_no_part_of_the_objective() -> None:
    """Before: the objective was the example's opening ("Here's a running example of how to
    perform a task..."), 6 KB of another task; now it is the task between the banners."""
    trace = only(convert_file(NO_FUNCTION_CALLING)).trace
    assert trace.task.objective == TASK
    assert [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool] == [
        "execute_bash"
    ]
    answer = "Task complete. Created /app/hello.txt with 'Hello, world!'"
    assert trace.outcome.result_summary == answer
    assert trace.metadata.success is True


def test_a_later_user_step_is_the_users_words_less_what_the_agent_added() -> None:
    """A user step after the first is the user's turn: Claude Code's system reminders in it
    (Harbor keeps them as the agent sent them) are no words of the user's."""
    document: dict[str, Any] = copy.deepcopy(json.loads(NO_FUNCTION_CALLING.read_text()))
    document["steps"].append(
        {
            "step_id": len(document["steps"]) + 1,
            "source": "user",
            "message": "<system-reminder>The file changed.</system-reminder>\nNow delete it.",
        }
    )
    trace = only(list(convert([document], source="atif"))).trace
    assert trace.task.objective == TASK
    said = [step.content for step in trace.steps if step.type == "observation"]
    assert said[-1] == "Now delete it."
