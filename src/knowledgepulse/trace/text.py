"""The texts taken from a trace for novelty: its objective, its actions, all of it, its terms."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from knowledgepulse._util.text import comparable
from knowledgepulse.records.json_values import nodes

if TYPE_CHECKING:
    from knowledgepulse.trace.models import ReasoningTrace

ACTION_STEP_TYPES = frozenset({"tool_call", "error_recovery"})
"""The step types whose content is what the agent did (rather than read or thought)."""


def objective_text(trace: ReasoningTrace) -> str:
    """The trace's ``task.objective``."""
    return trace.task.objective


def whole_text(trace: ReasoningTrace) -> str:
    """The objective, then every step's content (the specification's text)."""
    contents = " ".join(step.content or "" for step in trace.steps)
    return f"{trace.task.objective} {contents}"


def actions_text(trace: ReasoningTrace) -> str:
    """The content of the steps that act (``tool_call``, ``error_recovery``), in order."""
    return " ".join(step.content or "" for step in trace.steps if step.type in ACTION_STEP_TYPES)


_WORD = re.compile(r"\w+")
_RUN = re.compile(r"[\w\-.@:/]+")
_DIGIT = re.compile(r"\d")


def action_terms(trace: ReasoningTrace) -> set[str]:
    """The specifics the trace acted on, as terms in the form two writings of them share.

    Lowercase, full-width forms as ASCII (:func:`~knowledgepulse._util.text.comparable`).

    The words of the values in its acting steps' ``input`` (a search query, a user id), and the
    identifier-like tokens of the objective and those steps' content: the runs of word
    characters and ``-.@:/`` (a user id, an order number, a date) with a digit in them, of 3
    characters or more. Two runs of one task share them even when their wording differs; two
    tasks with templated wording usually do not.
    """
    contents = [trace.task.objective]
    values: list[str] = []
    for step in trace.steps:
        if step.type not in ACTION_STEP_TYPES:
            continue
        contents.append(step.content or "")
        # The values: the keys are the tool's schema.
        values.extend(
            str(value)
            for value, _ in nodes(step.input)
            if value is not None and not isinstance(value, dict | list)
        )
    # One search over the texts joined by a newline, which no pattern matches, finds what a
    # search of each would; each distinct run is looked at once (ids and words recur).
    words = set(_WORD.findall("\n".join(values)))
    runs = set(_RUN.findall("\n".join(contents)))
    words.update(run for run in runs if len(run) >= 3 and _DIGIT.search(run))
    return {comparable(term) for term in words}
