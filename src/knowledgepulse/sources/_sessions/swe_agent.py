"""SWE-agent ``.traj`` files as traces: one file, one run.

A ``.traj`` holds the run's ``trajectory`` (one entry per turn: ``thought``, ``action``,
``observation``), the model's ``history`` and an ``info`` with the ``exit_status`` and the
``submission`` (the patch). The mapping: the objective is the first user message of the history
that is not a demonstration (``is_demo``), i.e. the issue; each turn's ``thought`` is a thought,
its ``action`` a tool call named by the command's first word, whose arguments are the rest of the
command line (for function-calling runs, the name and arguments of the history's ``tool_calls``:
``bash`` with ``{"command": "python reproduce.py"}``, not a tool ``python``), and
its ``observation`` the result (a ``submit`` the environment answers ``Wrong flag!``, a CTF
challenge's rejected flag, failed). Each turn is a call of its own, even where its call id
repeats an earlier turn's (SWE-agent's replayed demonstrations reuse them). The submission is the
final answer. The model is the one the run was configured with, its ``replay_config``'s
``agent.model.name`` (a JSON text in SWE-agent 1.x), but for SWE-agent's stand-ins for a model
(``human``, ``replay``...).

A demonstration SWE-agent shows the model (``trajectories/demonstrations/*.traj``) may keep only
its ``history``, SWE-agent's own messages (each with its ``agent`` and ``message_type``): its
turns are the history's actions (``thought``, ``action``) and the observations answering them.
It has no ``info``, so the same ending is read from the history: a run whose last action is
``submit`` ended in its submission, that action's observation (as the model was shown it).

Success: a ``.traj`` does not say whether the patch resolves the issue (that is the evaluation's
verdict, kept elsewhere), so, as for a dataset row without a label, kp takes whether the run
ended in its answer: an ``exit_status`` of ``submitted`` with a submission. Any other exit
status (``exit_cost``, ``exit_context``, ``exit_format``, ``exit_error``...) is a terminal error;
its text is the reason SWE-agent wrote in the last turn of its own it adds then (``Exit due to
unknown error: ...``, no thought of the model's), where there is one.
The confidence stays the default, which says it was not measured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, non_blank
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._text import content_text
from knowledgepulse.sources._envelope import UNDATED, TraceOptions, assemble
from knowledgepulse.sources._sessions._documents import each_document, run_name
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "SWE-agent writes the thoughts, actions and observations into every .traj"
EXIT_MESSAGE = "Exit due to "
"""How SWE-agent's own last turn begins when it stops a run for an error (its ``thought``)."""
SUBMITTED = "submitted"
"""The exit status of a run that ended in its submission (``submitted (exit_cost)`` too)."""
_TURN_KEYS = frozenset({"action", "observation"})
_MESSAGE_KEYS = frozenset({"role", "agent", "message_type"})
"""What SWE-agent writes in every message of its ``history``."""
SUBMIT = "submit"
"""The command a run ends in its submission with."""
WRONG_FLAG = "Wrong flag!"
"""What SWE-agent's environment answers a ``submit`` whose flag its CTF challenge rejects
(EnIGMA, ``SWEEnv.step``): the submission failed and the run goes on, the agent's next action
recovering from it."""
STAND_INS = frozenset({"human", "human_thought", "replay", "instant_empty_submit"})
"""The names SWE-agent's ``get_model`` gives the models that are no model: a person typing the
actions, a replay of a recorded run, its test's empty submission."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a SWE-agent ``.traj``, or a demonstration's history."""
    if not isinstance(value, dict) or not isinstance(value.get("history"), list):
        return False
    if value.keys() == {"history"}:
        return _history_only(value["history"])
    turns = value.get("trajectory")
    return (
        isinstance(value.get("info"), dict)
        and isinstance(turns, list)
        and all(isinstance(turn, dict) and turn.keys() >= _TURN_KEYS for turn in turns[:1])
    )


def _history_only(history: list[Any]) -> bool:
    """Whether a history alone is SWE-agent's: each message says its agent and type.

    An OpenAI chat row has neither key; an action among them makes it a run.
    """
    return all(isinstance(m, dict) and m.keys() >= _MESSAGE_KEYS for m in history) and any(
        m.get("message_type") == "action" for m in history
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trajectory in one file's records (a ``.traj`` is one; JSON Lines may hold many)."""
    return each_document(
        records,
        recognises,
        lambda record: _convert(record, options),
        what="a SWE-agent trajectory",
        expected="{trajectory: [...], history: [...], info: {...}}",
    )


def _convert(record: Record, options: TraceOptions) -> TraceItem:
    document: Mapping[str, Any] = record.value
    info = as_object(document.get("info"))
    builder = StepBuilder()
    calls = _function_calls(document["history"])
    turns = (
        document["trajectory"] if "trajectory" in document else _history_turns(document["history"])
    )
    status = info.get("exit_status")
    submission = info.get("submission")
    submitted = isinstance(status, str) and status.startswith(SUBMITTED)
    said = _exit_message(turns) if isinstance(status, str) and not submitted else None
    for number, turn in enumerate(turns[:-1] if said else turns):
        _tell_turn(builder, turn, calls[number] if number < len(calls) else None)
    if "info" not in document:  # a demonstration's history alone: did it end in submit?
        submission = _submitted(turns)
        submitted = submission is not None
    if isinstance(status, str) and not submitted:
        ended = f"the run ended with exit status {status!r}"
        builder.error(f"{said} ({ended})" if said else ended, terminal=True)
    if isinstance(submission, str):
        builder.answer(submission)
    return assemble(
        builder,
        source="swe-agent",
        source_id=f"swe-agent:{run_name(record)}",
        success=submitted and bool(builder.final_answer),
        options=options,
        objective=_issue(document["history"]),
        created_at=UNDATED,
        result_summary=builder.final_answer,
        framework="swe-agent",
        model=_model(document.get("replay_config")),
        source_extra={"exit_status": status} if isinstance(status, str) else None,
        content_hint=CONTENT_HINT,
        location=record.location,
    )


def _model(config: Any) -> str | None:
    """The model a run's ``replay_config`` names (``agent.model.name``), if it names one."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return None
    name = non_blank(as_object(as_object(as_object(config).get("agent")).get("model")).get("name"))
    return None if name in STAND_INS else name


def _tell_turn(builder: StepBuilder, turn: Any, call: Mapping[str, Any] | None) -> None:
    if not isinstance(turn, Mapping):
        return
    thought = turn.get("thought")
    builder.thought(as_string(thought))
    action = turn.get("action")
    if not isinstance(action, str) or not action.strip():
        return
    command = action.strip()
    name = command.split(maxsplit=1)[0]
    rest = command[len(name) :].strip()
    function = as_object(call.get("function") if call is not None else None)
    arguments = function.get("arguments")
    name = non_blank(as_string(function.get("name"))) or name
    call_id = call.get("id") if call is not None else None
    output = turn.get("observation")
    rejected = name == SUBMIT and isinstance(output, str) and output.strip() == WRONG_FLAG
    builder.tool_result(
        name,
        arguments=arguments if arguments is not None else (rest or None),
        output=None if rejected else output,
        error=output if rejected else None,
        call_id=as_string(call_id),
        latency_ms=_latency(turn.get("execution_time")),
        distinct=True,  # each turn is a call of its own, though its id may repeat an earlier one
    )


def _exit_message(turns: list[Any]) -> str | None:
    """SWE-agent's own last turn on an exit for an error, its message; else ``None``.

    When the run stops for an error (the cost or context limit, the model's API, the
    environment), SWE-agent writes a last turn of its own with no action, its ``thought`` the
    reason (``Exit due to unknown error: litellm.APIError: ...``): no thought of the model's,
    but why the run ended.
    """
    last = turns[-1] if turns else None
    if not isinstance(last, Mapping) or non_blank(as_string(last.get("action"))):
        return None
    thought = non_blank(as_string(last.get("thought")))
    return thought if thought is not None and thought.startswith(EXIT_MESSAGE) else None


def _function_calls(history: list[Any]) -> list[Mapping[str, Any] | None]:
    """The first tool call of each assistant action in the history, in order (function calling)."""
    found: list[Mapping[str, Any] | None] = []
    for message in history:
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        if "action" not in message or _is_demo(message):
            continue
        tool_calls = message.get("tool_calls")
        first = tool_calls[0] if isinstance(tool_calls, list) and tool_calls else None
        found.append(first if isinstance(first, Mapping) else None)
    return found


def _history_turns(history: list[Any]) -> list[dict[str, Any]]:
    """A history's turns as a ``trajectory`` holds them.

    Each action (not a demonstration's) with its thought, and the observation that answers it.
    """
    turns: list[dict[str, Any]] = []
    for message in history:
        if not isinstance(message, Mapping) or _is_demo(message):
            continue
        if message.get("role") == "assistant" and "action" in message:
            thought, action = message.get("thought"), message.get("action")
            turns.append({"thought": thought, "action": action, "observation": None})
        elif message.get("message_type") == "observation" and turns:
            turns[-1]["observation"] = content_text(message.get("content"))
    return turns


def _submitted(turns: list[dict[str, Any]]) -> str | None:
    """The submission of turns whose last action is ``submit``: its observation; else none."""
    last = turns[-1] if turns else None
    action = as_string(last.get("action")) if last is not None else None
    words = action.split(maxsplit=1) if action else []
    return as_string(last["observation"]) if last is not None and words[:1] == [SUBMIT] else None


def _issue(history: list[Any]) -> str | None:
    """The first user message that is not a demonstration: the issue the run solves."""
    for message in history:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        if _is_demo(message):
            continue
        text = content_text(message.get("content"))
        if text and text.strip():
            return text
    return None


def _is_demo(message: Mapping[str, Any]) -> bool:
    """Whether a history message belongs to a demonstration of another task."""
    return message.get("is_demo") is True


def _latency(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) * 1000
    return None
