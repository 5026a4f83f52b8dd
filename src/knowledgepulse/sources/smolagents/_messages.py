r"""smolagents' memory as chat messages (``agent.write_memory_to_messages()``) read back as steps.

smolagents' benchmark (``examples/smolagents_benchmark/run.py``) keeps each run as a row whose
``intermediate_steps`` are those messages (``message.dict()``), beside the ``question`` and the
run's ``answer``. Each memory step wrote its messages in a fixed order, so the steps come back:
the ``TaskStep`` a ``user`` message ``New task:\n<task>``; an ``ActionStep`` its model output (an
``assistant`` message), its calls (a ``tool-call`` message, ``Calling tools:\n`` and the Python
repr of the calls), its observations (a ``tool-response``, ``Observation:\n...``) or its error
(a ``tool-response``, ``Error:\n<message>\nNow let's retry: ...``); a ``PlanningStep`` its plan
(an ``assistant`` message) and smolagents' own ``user`` message asking to carry it out.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse.records.json_values import Loc
from knowledgepulse.sources._envelope import PathError
from knowledgepulse.sources.smolagents._run import FINAL_ANSWER_TOOL, MAX_STEPS_ERROR, text

ROLES = frozenset({"system", "user", "assistant", "tool-call", "tool-response"})
"""smolagents' ``MessageRole`` values."""
ROW_KEYS = frozenset({"intermediate_steps", "question", "answer"})
"""Keys of a smolagents benchmark row."""

_TASK = "New task:\n"
_CALLS = "Calling tools:\n"
_OBSERVED = "Observation:\n"
_FAILED = "Error:\n"
_RETRY = "\nNow let's retry: take care not to repeat previous errors!"
_EXECUTING = re.compile(r"Error executing tool '([^']+)' with arguments ")
"""How smolagents' error for a tool that raised starts (``AgentToolExecutionError``)."""
_TRIED_ENDS = 16
"""How many ``}: `` in a tool error are tried as the end of its arguments' repr."""
_MAX_STEPS = "Reached max steps."
"""The message of the ``AgentMaxStepsError`` a run out of steps ends with."""


def is_row(value: Any) -> bool:
    """Whether a record is a benchmark row whose steps are smolagents' chat messages."""
    return has_row_keys(value) and all(
        isinstance(message, Mapping) and as_string(message.get("role")) in ROLES
        for message in value["intermediate_steps"]
    )


def has_row_keys(value: Any) -> bool:
    """Whether a record has a benchmark row's keys, its ``intermediate_steps`` a list.

    In a file read as smolagents', such a record is read as a row, so that a message that cannot
    be read (an unknown role) is told at its path, not the whole record as no step.
    """
    return (
        isinstance(value, Mapping)
        and value.keys() >= ROW_KEYS
        and isinstance(value["intermediate_steps"], list)
    )


def steps_of(messages: list[Any], path: Loc) -> list[dict[str, Any]]:
    """The memory steps (as ``get_full_steps()`` dicts) that wrote these messages, in order.

    Raises:
        PathError: a message, or the calls a ``tool-call`` message lists, cannot be read.
    """
    steps: list[dict[str, Any]] = []
    action: dict[str, Any] | None = None
    for index, message in enumerate(messages):
        where = (*path, index)
        if not isinstance(message, Mapping):
            raise PathError(
                where, f"expected a message {{role, content}}, found {describe_value(message)}"
            )
        role, said = message.get("role"), text(message.get("content")) or ""
        if role == "user" and said.startswith(_TASK):
            steps.append({"task": said.removeprefix(_TASK)})
            action = None
        elif role == "assistant":  # a step's model output: a new step starts
            action = _action(steps, model_output=said)
        elif role == "tool-call":
            if action is None or action.keys() & {"tool_calls", "observations", "error"}:
                action = _action(steps)  # a step with no model output (what it said is lost)
            action["tool_calls"] = _calls(said, (*where, "content"))
            action["is_final_answer"] = any(_answers(call) for call in action["tool_calls"])
        elif role == "tool-response":
            if action is None or "observations" in action or "error" in action:
                action = _action(steps)  # a step whose tool raised: no output, no call kept
            if said.startswith(_FAILED):
                action["error"] = _error(said.removeprefix(_FAILED))
                if "tool_calls" not in action:  # a call that raised is only in its error
                    action["model_output_message"] = _failed_call(action["error"]["message"])
            else:
                action["observations"] = said.removeprefix(_OBSERVED)
        elif as_string(role) not in ROLES:  # a list or an object is no role, nor hashable
            found = repr(role) if isinstance(role, str) else describe_value(role)
            raise PathError((*where, "role"), f"expected one of {sorted(ROLES)}, found {found}")
    return steps


def _action(steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    step = {"step_number": len(steps), "timing": None, **fields}
    steps.append(step)
    return step


def _calls(said: str, path: Loc) -> list[dict[str, Any]]:
    """The calls a ``tool-call`` message lists: the Python repr of ``ToolCall.dict()``s."""
    calls = _literal(said.removeprefix(_CALLS))
    if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
        raise PathError(
            path,
            f"expected 'Calling tools:' and a list of calls, found {describe_value(said)}",
        )
    return calls


def _failed_call(message: str) -> dict[str, Any] | None:
    """The call a ToolCallingAgent's tool error names, as ``model_output_message`` keeps it.

    A tool that raises leaves its step no call and no model output: the error alone says
    which tool was called and with what, ``Error executing tool 'NAME' with arguments
    ARGS: ExceptionType: ...``, ``ARGS`` the arguments' Python repr (unknown if it cannot be
    read back).
    """
    named = _EXECUTING.match(message)
    if named is None:
        return None
    rest = message[named.end() :]
    ends = (at + 1 for at in range(len(rest)) if rest.startswith("}: ", at))
    arguments = next(
        (
            found
            # Each try parses the text up to it: a few, so a long error costs no square.
            for end in itertools.islice(ends, _TRIED_ENDS)
            if isinstance(found := _literal(rest[:end]), dict)
        ),
        None,
    )
    return {"tool_calls": [{"function": {"name": named.group(1), "arguments": arguments}}]}


def _literal(source: str) -> Any:
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _answers(call: dict[str, Any]) -> bool:
    """Whether a call ends the run: ``final_answer``, or a CodeAgent's code that calls it."""
    function = call.get("function")
    if not isinstance(function, Mapping):
        return False
    arguments = function.get("arguments")
    code = isinstance(arguments, str) and "final_answer(" in arguments
    return function.get("name") == FINAL_ANSWER_TOOL or code


def _error(said: str) -> dict[str, str]:
    """A step's error from its message: the text before smolagents' plea to retry."""
    message = said.split(_RETRY, 1)[0]
    return {"type": MAX_STEPS_ERROR if message == _MAX_STEPS else "", "message": message}
