"""A shell result headed by how its command exited, as Claude Code's ``Bash`` writes it.

Claude Code answers a command that failed with ``Exit code 1`` on the first line, then what the
command printed, and marks the result ``is_error`` in its session. NeMo Gym's Claude Code agent
turns the session into Responses items and keeps only the text: the corpus's math rollouts
(origin and licence in tests/conformance/SOURCES.md) hold two such failed ``python3 -c`` runs,
each followed by a second try.
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
    / "nemo_gym_claude_code_agent_math_rollouts.jsonl"
)
"""Five rollouts; the fourth: a ``Bash`` run ending in ``NameError``, a second run, the answer."""


def test_a_bash_result_headed_by_a_failed_exit_code_is_an_error_the_next_call_recovers() -> None:
    row = json.loads(ROLLOUTS.read_text(encoding="utf-8").splitlines()[3])
    (item,) = (
        i for i in sources.convert([row], source="openai-responses") if isinstance(i, TraceItem)
    )
    steps = item.trace.steps
    assert str(steps[1].content).startswith("Exit code 1\nTraceback")
    # before: both runs were plain calls, as if the first had worked
    assert [(step.type, step.tool.name if step.tool else None) for step in steps[:4]] == [
        ("tool_call", "Bash"),
        ("observation", "Bash"),
        ("error_recovery", "Bash"),
        ("observation", "Bash"),
    ]


def test_only_a_first_line_naming_a_code_other_than_0_says_the_command_failed() -> None:
    assert (
        error_text("Exit code 2\n/bin/bash: syntax error") == "Exit code 2\n/bin/bash: syntax error"
    )
    assert error_text("Exit code 0\nok") is None
    assert error_text("The script printed: Exit code 1\n") is None
    assert error_text("(Bash completed with no output)") is None
    assert error_text("Exit code 1") == "Exit code 1"  # a failed command that printed nothing
    assert error_text("Exit code 0") is None
