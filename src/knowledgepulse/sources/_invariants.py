"""Laws every converted trace keeps, checked cheaply: what a faithful conversion never gives.

A converter that misreads a file mostly does so silently: the trace is valid, but its answer
is told three times, a tool is named ``?`` or its objective is a JSON blob of session state.
:func:`check` says so in words, one warning per broken law; it never raises and reads only the
trace, so it can run on every conversion.
"""

from __future__ import annotations

import json
import re

from knowledgepulse.sources._envelope import PLACEHOLDER, PLACEHOLDER_OBJECTIVE
from knowledgepulse.sources.otel.messages import transcript
from knowledgepulse.trace.models import STEP_TYPES, ReasoningTrace

_SYSTEM_PROMPT = re.compile(r"^\s*(you are|you're|as an ai|system:)", re.IGNORECASE)
"""How a system prompt opens, as opposed to a person's request."""
_PLACEHOLDER_TOOLS = frozenset({"", "?", "tool", "function", "unknown", *STEP_TYPES})
"""Names a converter gives a tool call whose name it did not find."""
_SHORT = 20
"""Answers shorter than this are counted as whole steps only, not inside other text."""


def check(trace: ReasoningTrace) -> list[str]:
    """What in ``trace`` breaks a law of faithful conversion, one warning a law; ``[]``: none.

    The laws: the final answer appears once among the steps (and as the result); every tool
    call names its tool (not ``?``, not empty, not its step type); the objective is text a
    person wrote (not JSON, not a chat flattened into ``role: text`` turns, not a placeholder
    such as ``openai run``, not a system prompt).
    """
    return [
        warning
        for warning in (_answer_once(trace), _tool_names(trace), _objective(trace))
        if warning is not None
    ]


def _answer_once(trace: ReasoningTrace) -> str | None:
    answer = trace.outcome.result_summary.strip()
    if not answer:
        return None
    thoughts = [  # the answer is a thought (an error_recovery, when it follows an error)
        (step.content or "").strip()
        for step in trace.steps
        if step.type in ("thought", "error_recovery") and step.tool is None
    ]
    if len(answer) < _SHORT:  # a short answer ("4") may well recur inside other text
        copies = thoughts.count(answer)
    else:  # two copies joined into one step count twice; a step quoting it (reasoning) none
        copies = sum(
            text.count(answer) for text in thoughts if not text.replace(answer, "").strip()
        )
    if copies <= 1:
        return None
    return f"the final answer appears {copies} times among the steps (once is right)"


def _tool_names(trace: ReasoningTrace) -> str | None:
    bad = [
        step.step_id
        for step in trace.steps
        if (step.type == "tool_call" and step.tool is None)
        or (
            step.type in ("tool_call", "error_recovery")
            and step.tool is not None
            and step.tool.name.strip().lower() in _PLACEHOLDER_TOOLS
        )
    ]
    if not bad:
        return None
    return f"steps {bad} call a tool with no real name (empty, '?', 'tool' or a step type)"


def _objective(trace: ReasoningTrace) -> str | None:
    objective = trace.task.objective.strip()
    if _is_json(objective):
        return "the objective is JSON, not the user's request"
    if transcript(objective) is not None:  # "system: You are...\nuser: Say hi", OpenLIT's
        return "the objective is a chat flattened into 'role: text' turns, not the user's request"
    if PLACEHOLDER.match(objective):
        return f"{PLACEHOLDER_OBJECTIVE} ({objective!r}), not the user's request"
    if _SYSTEM_PROMPT.match(objective):
        return "the objective reads as a system prompt, not the user's request"
    return None


def _is_json(text: str) -> bool:
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
