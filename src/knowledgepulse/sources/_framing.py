r"""The request a person wrote, out of the prompt a framework wrapped around it.

Agent frameworks send the model the user's task inside prompts of their own: smolagents writes
``New task:\n{task}`` for the task step and puts the task inside its planning prompts (``Here
is your task:`` and a fenced block). A source that sees only the model calls (an OpenAI
client's spans, no framework instrumentation) finds those prompts as the first user message;
the objective is the task inside them, never the template. One pattern a framing, the task its
``task`` group; text no framing matches is the request as written.
"""

from __future__ import annotations

import re

_FRAMINGS = (
    # smolagents' TaskStep.to_messages (memory.py).
    re.compile(r"\ANew task:\n(?P<task>.+)\Z", re.DOTALL),
    # smolagents' planning.initial_plan, every agent's prompts (toolcalling_agent.yaml...).
    re.compile(r"Now begin! Here is your task:\n```\n(?P<task>.+?)\n```(?:\n|\Z)", re.DOTALL),
    # smolagents' planning.update_plan_pre_messages.
    re.compile(
        r"You have been given the following task:\n```\n(?P<task>.+?)\n```(?:\n|\Z)", re.DOTALL
    ),
)


def request(text: str | None) -> str | None:
    """``text`` less a framework's prompt around the user's request (the request itself)."""
    if not text:
        return text
    for framing in _FRAMINGS:
        found = framing.search(text)
        if found and found.group("task").strip():
            return found.group("task").strip()
    return text
