"""A Hermes ``terminal`` result whose command exited other than 0, read from rows, not a session.

Hermes' terminal tool answers ``{"output", "exit_code", "error": null}``; its session reader
counts a code other than 0 as a failed command. NeMo Gym's rollouts of the Hermes agent keep the
same results as Responses items (the corpus's anyswe rollouts; origin and licence in
tests/conformance/SOURCES.md): there the code said nothing, and the failed runs read as calls
that worked.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse import sources
from knowledgepulse.sources._chat._text import error_text
from knowledgepulse.trace import TraceItem

ROLLOUTS = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "openai-responses"
    / "nemo_gym_anyswe_hermes_rollouts.jsonl"
)
"""Two rollouts of the Hermes agent on astropy's ``separability_matrix`` bug."""


def test_a_terminal_result_whose_command_exited_1_is_an_error_the_next_call_recovers() -> None:
    row = json.loads(ROLLOUTS.read_text(encoding="utf-8").splitlines()[0])
    items = sources.convert([row], source="openai-responses")
    (item,) = (i for i in items if isinstance(i, TraceItem))
    steps = item.trace.steps
    failed = next(
        n
        for n, step in enumerate(steps)
        if step.type == "observation" and '"exit_code": 1,' in str(step.content)
    )
    assert "Traceback (most recent call last)" in str(steps[failed].content)
    following = next(s for s in steps[failed + 1 :] if s.type != "thought")
    # before: a tool_call, as if the command had worked
    assert (following.type, following.tool.name if following.tool else None) == (
        "error_recovery",
        "terminal",
    )


def test_an_exit_code_fails_a_result_unless_it_is_0_or_said_to_be_no_error() -> None:
    failed = '{"output": "bad interpreter", "exit_code": 126, "error": null}'
    assert error_text(failed) == failed
    assert error_text({"output": "", "exit_code": 1, "error": None}) is not None
    assert error_text('{"output": "ok", "exit_code": 0, "error": null}') is None
    grep = {"output": "", "exit_code": 1, "exit_code_meaning": "No matches found (not an error)"}
    assert error_text(grep) is None
    assert error_text('{"exit_code": true}') is None
