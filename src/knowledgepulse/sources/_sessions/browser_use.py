"""browser-use agent histories as traces: one file, one run.

``AgentHistoryList.save_to_file(path)`` (``agent.save_history()``) writes ``{"history": [...]}``,
one item a step of the agent: ``model_output`` (what the model answered: its brain and its
``action`` list, each action ``{"<name>": {params}}``), ``result`` (one ``ActionResult`` an action
run: ``is_done``, ``success``, ``error``, ``extracted_content``, ``long_term_memory``...),
``state`` (the page: ``url``, ``title``, ``tabs``, ``interacted_element``, a screenshot) and
``metadata`` (``step_start_time``, ``step_end_time``, ``step_number``). The keys changed across
versions (``browser_use/agent/views.py``), all read:

* before 0.2 the brain is ``model_output.current_state`` (``evaluation_previous_goal``,
  ``memory``, ``next_goal``) and ``state.screenshot`` the page's base64 PNG;
* 0.3 to 0.6 flatten the brain into ``model_output`` and add ``thinking`` (0.4 on, absent when
  the model gave none); ``state.screenshot_path`` replaces the image;
* 0.7.11 on, a step keeps ``state_message``: the state the model was sent, which opens with
  the task as ``<user_request>...</user_request>``; flash mode keeps ``memory`` only;
* the first releases wrote one action and one result a step, objects instead of lists, and
  the evaluation as ``valuation_previous_goal`` (November 2024).

The mapping: each step's ``thinking`` is a thought, and its ``evaluation_previous_goal``,
``memory`` and ``next_goal`` one thought after it (labelled as browser-use logs them). Each action
is a tool call named by the action (``go_to_url``, ``click_element_by_index``, ``input_text``,
``extract_content``...) with its params, answered by the result at its index: its ``error`` an
evident error (the next action the error_recovery), else its ``extracted_content`` (else its
``long_term_memory``). An action with no result did not run (browser-use stops a step's actions
at an error, or when the page changed: its result then says which actions were not executed): no
call, as a call another agent wrote but never ran.
``done`` is no tool: its result's ``extracted_content`` (its ``text``) is the final answer and its
``success`` the run's; a ``done`` recorded before browser-use wrote ``success`` ended the run as
the agent's answer. A step with no model output whose result is an error (the model's reply
could not be read, the run hit its step limit: ``Failed to complete task in maximum steps``) is
an evident error outside a tool. The step browser-use writes for the ``initial_actions`` it runs
before asking the model (``state.title`` ``Initial Actions``, step 0) is no step: its actions are
the Agent's, not the model's calls (its brain browser-use's placeholder text), so a training row
does not teach the model to make them; a warning names them, and one that failed is an evident
error outside a tool.

The objective is the task inside the first ``state_message`` that holds one (the
``<initial_user_request>`` of a run given a follow-up task; each ``<follow_up_user_request>`` is
a later user turn). Histories saved before 0.7.11 hold no task at all (the ``Agent`` was given it
and never wrote it): the objective is then the envelope's placeholder, with a warning that says
so. The trace is dated by the first step's ``step_start_time``, named by the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value
from knowledgepulse._util.text import counted
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._envelope import PLACEHOLDER_OBJECTIVE, UNDATED, TraceOptions, assemble
from knowledgepulse.sources._sessions._documents import each_document, run_name
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

SOURCE = "browser-use"
CONTENT_HINT = "browser-use writes every step's model output and results in save_history()"
DONE = "done"
"""The action that ends a run: its text the answer, its ``success`` the agent's verdict."""
INITIAL_ACTIONS = "Initial Actions"
"""The ``state.title`` of the step browser-use writes for the actions it ran before the model."""
BRAIN = (
    ("evaluation_previous_goal", "Eval"),
    ("valuation_previous_goal", "Eval"),  # the field's name in browser-use's first weeks
    ("memory", "Memory"),
    ("next_goal", "Next goal"),
)
"""The brain's fields, with the label browser-use logs each with (``🧠 Memory: ...``)."""
NO_TASK = (
    f"{PLACEHOLDER_OBJECTIVE}: a browser-use history saved before 0.7.11 holds no task (the "
    "Agent was given it; later versions keep it in each step's state_message)"
)
_USER_REQUEST = re.compile(r"<user_request>\s*(.*?)\s*</user_request>", re.DOTALL)
_INITIAL = re.compile(r"<initial_user_request>\s*(.*?)\s*</initial_user_request>", re.DOTALL)
_FOLLOW_UP = re.compile(r"<follow_up_user_request>\s*(.*?)\s*</follow_up_user_request>", re.DOTALL)


def recognises(value: Any) -> bool:
    """Whether a record is a saved history: ``history`` a list opening with an agent step.

    A step has a ``model_output`` (``null`` when the model's reply failed) and a ``result``
    (a list, an object in the first releases); A2A's tasks and chat exports also have a
    ``history``, of messages, never of these.
    """
    if not isinstance(value, dict):
        return False
    history = value.get("history")
    if not isinstance(history, list) or not history:
        return False
    first = history[0]
    return (
        isinstance(first, dict)
        and "model_output" in first
        and isinstance(first.get("result"), list | dict)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every history in one file's records (a saved history is one; JSON Lines may hold many)."""
    yield from each_document(
        records,
        recognises,
        partial(_convert, options=options),
        what="a browser-use agent history",
        expected="{history: [{model_output, result: [...], state, metadata}]}",
    )


def _convert(record: Record, *, options: TraceOptions) -> TraceItem:
    history: list[Any] = record.value["history"]
    builder = StepBuilder()
    task = _Task()
    warnings: list[str] = []
    done: Mapping[str, Any] | None = None  # the result of the run's done, when it ran
    started: float | None = None
    skipped = [n for n, item in enumerate(history) if not isinstance(item, Mapping)]
    steps = [item for item in history if isinstance(item, Mapping)]
    for number, item in enumerate(steps):
        at = _seconds(as_object(item.get("metadata")).get("step_start_time"))
        started = at if started is None else started
        task.read(as_string(item.get("state_message")), builder, at)
        if as_object(item.get("state")).get("title") == INITIAL_ACTIONS:
            warnings.append(_initial_actions(builder, item, at))
            continue
        ended = _tell_step(builder, item, number, at, last=number == len(steps) - 1)
        done = ended or done
    if skipped:
        warnings.append(f"history items that are no step object were left out: {skipped[:10]}")
    if task.objective is None:
        warnings.append(NO_TASK)
    success = done is not None and done.get("success") is not False
    return assemble(
        builder,
        source=SOURCE,
        source_id=f"{SOURCE}:{_name(record)}",
        success=success,
        options=options,
        objective=task.objective,
        created_at=UNDATED if started is None else started,
        result_summary=builder.final_answer,
        framework=SOURCE,
        warnings=tuple(warnings),
        content_hint=CONTENT_HINT,
        location=record.location,
    )


class _Task:
    """The task as the steps' state messages give it: the first request, then follow-ups."""

    def __init__(self) -> None:
        self.objective: str | None = None
        self._follow_ups = 0

    def read(self, message: str | None, builder: StepBuilder, at: float | None) -> None:
        """Take the task from a step's state message; a follow-up not seen yet is a user turn."""
        found = _USER_REQUEST.search(message or "")
        if found is None:
            return
        request = found.group(1)
        initial = _INITIAL.search(request)
        if self.objective is None:
            self.objective = (initial.group(1) if initial else request) or None
        follow_ups = _FOLLOW_UP.findall(request)
        for text in follow_ups[self._follow_ups :]:
            builder.user_turn(text, at=at)
        self._follow_ups = max(self._follow_ups, len(follow_ups))


def _tell_step(
    builder: StepBuilder, item: Mapping[str, Any], number: int, at: float | None, *, last: bool
) -> Mapping[str, Any] | None:
    """Tell one history item; the result of its ``done``, when it ran one.

    A call's id is its place (step, action): a later call of the same name must not take its
    result.
    """
    output = as_object(item.get("model_output"))
    results = [as_object(result) for result in _listed(item.get("result"))]
    if output:
        brain = {**as_object(output.get("current_state")), **output}
        builder.thought(as_string(brain.get("thinking")), at=at)
        builder.thought(_brain(brain), at=at)
    actions = [as_object(action) for action in _listed(output.get("action"))]
    done: Mapping[str, Any] | None = None
    ran: list[tuple[str, str, Mapping[str, Any]]] = []  # (name, call id, result) of each run
    for index, action in enumerate(actions):
        result = results[index] if index < len(results) else None
        name, params = next(iter(action.items()), ("", None))
        if result is not None and result.get("is_done") is True:
            done = result
            builder.answer(_done_text(result, params), at=at)
            continue
        if name == DONE or result is None:
            # Never run (``done`` beside other actions is refused; browser-use stopped the
            # step's actions at an error or a page change): no call, as a call Pi or Claude Code
            # wrote but never ran. It did nothing and nothing answers it, and one asked for
            # beside a failed action, before its error was seen, would read as its recovery.
            continue
        call_id = f"{number}.{index}"
        builder.tool_request(str(name), params, call_id=call_id, at=at)
        ran.append((str(name), call_id, result))
    for name, call_id, result in ran:
        _tell_result(builder, name, call_id, result, at)
    for result in results[len(actions) :]:  # no action: the model's reply failed, or the run
        error = as_string(result.get("error"))
        if error:
            builder.error(error, at=at, terminal=last and done is None)
        elif result.get("is_done") is True:
            done = result
            builder.answer(as_string(result.get("extracted_content")), at=at)
    return done


def _initial_actions(builder: StepBuilder, item: Mapping[str, Any], at: float | None) -> str:
    """Tell the errors of the actions browser-use ran before the model; the warning they give.

    The ``Agent``'s ``initial_actions`` (its ``initial_url``, else one found in the task) are
    run by browser-use itself (``multi_act``), its step written with a placeholder brain: no
    call of the model's, so no call a training row would teach it to make. One that failed is
    an evident error outside a tool (the run met it).
    """
    actions = [
        as_object(action) for action in _listed(as_object(item.get("model_output")).get("action"))
    ]
    results = [as_object(result) for result in _listed(item.get("result"))]
    for result in results:
        error = as_string(result.get("error"))
        if error:
            builder.error(error, at=at)
    names = [str(next(iter(action), "")) for action in actions]
    return (
        f"{counted(len(names), 'initial action')} browser-use ran before the model "
        f"({', '.join(names)}) left out as calls: the Agent's, not the model's (an error of one "
        "is kept)"
    )


def _tell_result(
    builder: StepBuilder, name: str, call_id: str, result: Mapping[str, Any], at: float | None
) -> None:
    error = as_string(result.get("error"))
    if error:
        builder.tool_result(name, error=error, call_id=call_id, at=at)
        return
    content = as_string(result.get("extracted_content"))
    memory = as_string(result.get("long_term_memory"))
    builder.tool_result(name, output=content or memory or "", call_id=call_id, at=at)


def _brain(brain: Mapping[str, Any]) -> str:
    """The brain's texts a line each, labelled as browser-use logs them."""
    lines = [
        f"{label}: {text}"
        for key, label in BRAIN
        if (text := as_string(brain.get(key))) and text.strip()
    ]
    return "\n".join(lines)


def _done_text(result: Mapping[str, Any], params: Any) -> str | None:
    """The answer of a ``done``: the text its result records, else the text it was given."""
    return as_string(result.get("extracted_content")) or as_string(as_object(params).get("text"))


def _listed(value: Any) -> list[Any]:
    """A list as is; an object (the first releases' one action, one result) as a list of it."""
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, Mapping) else []


def _seconds(value: Any) -> float | None:
    """A Unix time in seconds, from 1970 to the year 5000; else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e11:
        return float(value)
    return None


def _name(record: Record) -> str:
    """The run's name: its file's (browser-use names no run in the history)."""
    stem = Path(record.location.file).stem
    if stem and not stem.startswith("<") and stem != "-":
        return run_name(record)
    first = json.dumps(record.value["history"][:1], sort_keys=True, default=str)
    return hashlib.sha256(first.encode("utf-8", "replace")).hexdigest()[:32]


def describe(first: Any, count: int) -> str:
    """What a file was read as, and where its task comes from."""
    steps = as_object(first).get("history")  # with --from, any record: maybe none
    kept = isinstance(steps, list) and any(
        isinstance(item, Mapping) and isinstance(item.get("state_message"), str) for item in steps
    )
    task = (
        "the task from state_message's <user_request>"
        if kept
        else "no task (saved before 0.7.11: a placeholder)"
    )
    return (
        f"read as {SOURCE} ({counted(count, 'trace')}: an AgentHistoryList); steps from "
        f"history[].model_output and result[], {task}, success from done's result"
    )


def evidence(value: Any) -> str:
    """The keys that make a record a saved history."""
    return f"{describe_value(value)}, as in a browser-use history (history[].model_output, result)"


def mapping() -> dict[str, str]:
    """The fields a history's trace is read from."""
    return {
        "steps": "history[].model_output (thinking, brain, action[]), history[].result[]",
        "success": "history[].result[] of done: success",
        "created_at": "history[0].metadata.step_start_time",
    }


__all__ = ["CONTENT_HINT", "convert_records", "describe", "evidence", "mapping", "recognises"]
