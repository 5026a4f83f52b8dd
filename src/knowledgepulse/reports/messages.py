"""A trace as one training row in OpenAI chat form, as TRL's tool-calling format reads it.

The row's ``messages`` are the system prompt (when one is given), the objective as the user's turn,
each thought as an assistant turn, each tool call as an entry of an assistant turn's ``tool_calls``
(``arguments`` a JSON object's text: ``{"_raw": text}`` for a call whose input was no object), each
observation as the ``tool`` turn answering the latest call still waiting (by ``tool_call_id``), and
the outcome's ``result_summary`` as the last assistant turn, unless the run gave no answer (a
function-calling row whose target is a call): then the row ends in its call or result, as the source
did, or in the model's last text, a step (``kp_answer_turn`` is ``-1``: no turn holds the
answer); nor after the user turn that ends a run, when that turn (an error the run ended on) or
the agent's message it answers was the answer, nor after the result that ends it when that
result was the answer, not said by the model (an image the image generator made)
(``kp_answer_turn`` names that turn). A call whose step
text is not the call itself (it does not start with the tool's name: what the agent said with it, as
tau-bench's ``respond`` message to the user) opens an assistant turn of its own with that text as
``content``, so a trainer sees it. A ``respond`` call with no arguments whose observation follows it
is the agent speaking to the user and the user's reply (as the chat readers read a later user turn):
an assistant turn of its text and a ``user`` turn of the reply, no call; an observation of
``respond`` no such call comes before is a ``user`` turn too. ``tools`` is a JSON string (as TRL and
the trainers built on it settled on, since Arrow mangles mixed schemas): the tools the source
offered, as it gave them, then each other tool's ``input_schema`` where the trace keeps one, else an
object schema of the argument keys its calls used. The trace's id (less ``kp:trace:``), task (the
one kp used: read, or inferred by select), domain, success, time and the model that wrote the run go
beside them, in the columns the chat readers look for, and what the conversation cannot say in
``kp_`` columns: the outcome's confidence, the privacy level, whether the answer was also the
trace's last thought step, which earlier turn says it, which calls failed (the next action their
``error_recovery``), which calls' turns' text is their own and which user turns are errors met
outside a tool (not the user's words) and the failed model calls the run went on after (the model
never saw them: no turn); so reading the row back (``--from auto``) gives the same trace.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse.sources._chat._row import (
    ANSWER_STEP_COLUMN,
    ANSWER_TURN_COLUMN,
    CALL_TEXTS_COLUMN,
    CONFIDENCE_COLUMN,
    ERROR_TURNS_COLUMN,
    FAILED_CALLS_COLUMN,
    NO_ANSWER_TURN,
    PRIVACY_COLUMN,
    UNSEEN_ERRORS_COLUMN,
)
from knowledgepulse.sources._envelope import no_answer
from knowledgepulse.sources._steps import RESPOND, failed_model_call, says_more_than_the_call
from knowledgepulse.trace.models import ReasoningTrace, Step

MESSAGES_COLUMNS = (
    "id",
    "task_id",
    "task_domain",
    "success",
    "created_at",
    "model",
    CONFIDENCE_COLUMN,
    PRIVACY_COLUMN,
    ANSWER_STEP_COLUMN,
    ANSWER_TURN_COLUMN,
    FAILED_CALLS_COLUMN,
    CALL_TEXTS_COLUMN,
    ERROR_TURNS_COLUMN,
    UNSEEN_ERRORS_COLUMN,
    "messages",
    "tools",
)
"""A training row's columns, in order (the ``kp_`` columns follow when it is scored)."""

ID_PREFIX = "kp:trace:"
# bool before int: True is an int too.
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)
_JSON_TYPE_OF = dict(_JSON_TYPES)
"""The same names by exact type: a parsed argument's type is one of these, found by one look-up."""
_JSON = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(value, ensure_ascii=False)``, without building an encoder for each call (half its
time for a call's few arguments)."""


def chat_row(
    trace: ReasoningTrace,
    *,
    system: str | None = None,
    offered: Sequence[Mapping[str, Any]] = (),
    task: str | None = None,
) -> dict[str, Any]:
    """The trace as one chat row: ``messages``, ``tools`` and the trace's own columns.

    Args:
        trace: any trace (every reader gives one).
        system: the system prompt to open the conversation with (traces keep none).
        offered: the tools the source offered, as OpenAI function definitions: the ``tools``
            column lists them as given, then any other tool the trace calls.
        task: the task kp took the trace to be a run of (read with it, or inferred by select or
            dedupe), written as ``task_id`` so that reading the row back gives the same task;
            default: the ``metadata.source.task`` a converter kept.

    An observation no call waits for (an error met outside a tool) is a ``user`` turn, as the
    environment speaking, which reads back as that error, but for a failed model call the run
    went on after, which the model never saw (``kp_unseen_errors`` keeps it); a tool call with
    no tool named is assistant text.
    """
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": trace.task.objective})
    opened = len(messages)  # the turns from here on are the run's
    answer = trace.outcome.result_summary
    steps = list(trace.steps)
    # The answer as the last step: a thought, or the reply that recovers from a failed call
    # (an ``error_recovery`` with no tool): written once, as the last turn, either way.
    answer_step = (
        steps[-1].type == "thought"
        or (steps[-1].type == "error_recovery" and steps[-1].tool is None)
    ) and (steps[-1].content or "").strip() == answer.strip()
    told = list(steps)  # with the answer: the step that says a failed call was recovered
    if answer_step:
        steps.pop()  # the answer, told once, last
    row = _Row(messages)
    replied = -1  # the observation of the respond call just written as turns
    for index, step in enumerate(steps):
        if index == replied:
            continue
        if _tells_the_user(step, steps[index + 1 : index + 2]):
            messages.append({"role": "assistant", "content": step.content})
            row.user(_text(steps[index + 1]))
            replied = index + 1
        elif step.type in ("tool_call", "error_recovery") and step.tool is not None:
            row.call(step)
        elif step.type == "observation":
            row.observation(step, told, index + 1)
        elif (step.content or "").strip():
            messages.append({"role": "assistant", "content": step.content})
    # The summary a run that stopped at a call or its result is given is no turn of the model's:
    # a training row must not teach it to say "failed". Read back, it gets the same summary.
    # Nor one that ends in the user's reply (the agent's last word was to the user), or in an
    # error met outside a tool (the run stopped there).
    # And one whose answer the row says already, in the user or tool turn that ends it or the
    # agent's text a user turn answers, is not said again after it: the column says which.
    replied = row.turns > 0 and messages[-1]["role"] == "user"
    stopped = replied or messages[-1]["role"] == "tool" or "tool_calls" in messages[-1]
    # Nor one that ends on the model's text yet gave no answer (it stopped on a thought): the
    # column says no turn holds it.
    said = _said_before(messages, opened, answer) if stopped and not answer_step else None
    gave_none = not answer_step and answer == no_answer(trace.metadata.success)
    if said is None and not gave_none:
        messages.append({"role": "assistant", "content": answer})
    elif said is None and not stopped:
        said = NO_ANSWER_TURN
    source = (trace.metadata.model_extra or {}).get("source")
    source = source if isinstance(source, dict) else {}
    if task is None:
        task = source.get("task")
    model = source.get("model")
    return {
        "id": trace.id.removeprefix(ID_PREFIX),
        "task_id": task if isinstance(task, str) else None,
        "task_domain": trace.metadata.task_domain,
        "success": trace.metadata.success,
        "created_at": trace.metadata.created_at.isoformat(),
        "model": model if isinstance(model, str) else None,
        CONFIDENCE_COLUMN: trace.outcome.confidence,
        PRIVACY_COLUMN: trace.metadata.privacy_level,
        ANSWER_STEP_COLUMN: answer_step,
        ANSWER_TURN_COLUMN: said,
        FAILED_CALLS_COLUMN: row.failed,
        CALL_TEXTS_COLUMN: row.texts,
        ERROR_TURNS_COLUMN: row.errors,
        UNSEEN_ERRORS_COLUMN: row.unseen,
        "messages": messages,
        "tools": _JSON.encode(_tool_list(row.tools, offered)),
    }


@dataclass
class _Row:
    """The messages written so far, and what the ``kp_`` columns say of them."""

    messages: list[dict[str, Any]]
    waiting: list[tuple[str, str]] = field(default_factory=list)
    """(call id, tool name) of the calls not yet answered."""
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each tool's parameters schema."""
    given: set[str] = field(default_factory=set)
    """The tools whose schema the trace keeps."""
    failed: list[str] = field(default_factory=list)
    """The calls whose result the next action recovers from."""
    texts: list[str] = field(default_factory=list)
    """The calls whose turn's content is their step's own text."""
    errors: list[int] = field(default_factory=list)
    """The user turns after the objective (by number) that are errors met outside a tool."""
    unseen: list[dict[str, Any]] = field(default_factory=list)
    """The failed model calls left out (the model never saw them): ``{"before": n, "content"}``,
    the index of the turn each came before."""
    turns: int = 0
    """The user turns after the objective so far."""
    calls: int = 0
    """The tool calls written so far: the next one's id is :func:`_call_id` of it."""

    def user(self, text: str, *, error: bool = False) -> None:
        """A user turn after the objective: the user's reply, or an error met outside a tool."""
        message = {"role": "user", "content": text}
        if error:
            self.errors.append(self.turns)
        self.turns += 1
        self.messages.append(message)

    def call(self, step: Step) -> None:
        """A tool call: an entry of an assistant turn's ``tool_calls``."""
        assert step.tool is not None  # the caller passes tool calls only
        call_id = _call_id(self.calls)
        self.calls += 1
        if says_more_than_the_call(step):
            self.messages.append({"role": "assistant", "content": step.content})
            self.texts.append(call_id)
        _call(self.messages, call_id, step)
        self.waiting.append((call_id, step.tool.name))
        _learn_tool(self.tools, self.given, step)

    def observation(self, step: Step, steps: list[Step], after: int) -> None:
        """The ``tool`` turn answering a waiting call; else a user turn (a reply, or an error).

        ``steps[after:]`` are the steps that follow it (passed whole, not sliced: a slice for each
        observation made a long trace's row quadratic in its length).
        """
        if _is_reply(step):  # the user speaking after no text of the agent's
            self.user(_text(step))
            return
        message = _observation(step, self.waiting)
        if message["role"] == "user" and _retried(step, steps, after):
            self.unseen.append({"before": len(self.messages), "content": message["content"]})
            return
        if message["role"] == "user":  # no call waits for it
            self.user(message["content"], error=step.tool is None)
            return
        self.messages.append(message)
        if _recovered(steps, after, self.waiting):
            self.failed.append(message["tool_call_id"])


def messages_fields(pa: Any) -> list[Any]:
    """The Arrow fields of a training row, for Parquet (``pa``: the pyarrow module).

    Fixed rather than inferred, so that rows whose first batch has no tool call still take
    later ones.
    """
    call = pa.struct(
        [
            pa.field("id", pa.string()),
            pa.field("type", pa.string()),
            pa.field(
                "function",
                pa.struct([pa.field("name", pa.string()), pa.field("arguments", pa.string())]),
            ),
        ]
    )
    message = pa.struct(
        [
            pa.field("role", pa.string()),
            pa.field("content", pa.string()),
            pa.field("tool_calls", pa.list_(call)),
            pa.field("tool_call_id", pa.string()),
            pa.field("name", pa.string()),
        ]
    )
    types = {
        "success": pa.bool_(),
        CONFIDENCE_COLUMN: pa.float64(),
        ANSWER_STEP_COLUMN: pa.bool_(),
        ANSWER_TURN_COLUMN: pa.int64(),
        FAILED_CALLS_COLUMN: pa.list_(pa.string()),
        CALL_TEXTS_COLUMN: pa.list_(pa.string()),
        ERROR_TURNS_COLUMN: pa.list_(pa.int64()),
        UNSEEN_ERRORS_COLUMN: pa.list_(
            pa.struct([pa.field("before", pa.int64()), pa.field("content", pa.string())])
        ),
        "messages": pa.list_(message),
    }
    return [pa.field(name, types.get(name, pa.string())) for name in MESSAGES_COLUMNS]


def _said_before(messages: list[dict[str, Any]], opened: int, answer: str) -> int | None:
    """The turn of a row ending in a user or tool turn that says the answer, if one does.

    That turn itself (an error the run ended on: an Agents SDK guardrail's tripwire; the result
    the run ended on, shown to the user as its answer: the image a Responses image generator
    made, ``<image/jpeg>``, which the model never said), else the agent's text a user turn
    answers (tau2's last message, before the simulated user's ``###STOP###``).
    ``messages[opened:]`` are the run's turns (not the objective).
    """
    last = len(messages) - 1  # the last turn; the one before a user turn, when it is the run's
    if messages[last]["role"] == "assistant":  # a call: it says no answer
        return None
    replied = messages[last]["role"] == "user"
    for index in (last, last - 1) if replied and last - 1 >= opened else (last,):
        turn = messages[index]
        told = index == last or (turn["role"] == "assistant" and "tool_calls" not in turn)
        if told and (turn["content"] or "").strip() == answer.strip():
            return index
    return None


def _recovered(steps: list[Step], after: int, waiting: list[tuple[str, str]]) -> bool:
    """Whether the next action after a result (else any later step) is an ``error_recovery``.

    ``steps[after:]`` are the steps after the result. The chat readers make the action after a
    failed result its recovery: the next tool call, else the next thought. Only up to an error
    met outside a tool (an observation no call waits for, a marked user turn): a recovery after
    it is that error's, and marking the result too would make the thought between them a
    recovery when read back.
    """
    left = list(waiting)  # the calls the observations before the next action may answer
    end = len(steps)
    for index in range(after, end):
        step = steps[index]
        if step.type in ("tool_call", "error_recovery") and step.tool:
            return step.type == "error_recovery"
        if step.type == "observation" and not _is_reply(step):
            answered = _answered(step, left)
            if answered is not None:
                left.remove(answered)
            elif step.tool is None:
                end = index
                break
    return any(steps[index].type == "error_recovery" for index in range(after, end))


def _answered(step: Step, waiting: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The waiting call an observation answers: the latest of its tool (any, if unnamed)."""
    named = step.tool.name if step.tool is not None else None
    return next((call for call in reversed(waiting) if named in (None, call[1])), None)


def _retried(step: Step, steps: list[Step], after: int) -> bool:
    """Whether a step is a failed model call the run went on after.

    The model never saw the error: the agent called it again on the same turns (a retry), or
    answered itself. No turn of the row, then. ``steps[after:]`` are the steps after it; a call
    that failed last ended the run, and the row ends in it, as in any error that does.
    """
    return (
        step.tool is None
        and failed_model_call(step)
        and any(later.type != "observation" for later in steps[after:])
    )


def _is_reply(step: Step) -> bool:
    return step.tool is not None and step.tool.name == RESPOND


def _tells_the_user(step: Step, after: list[Step]) -> bool:
    """Whether a step is a ``respond`` call of the agent's text, answered by the next step.

    A call with arguments keeps them (it is written as a call); a reply is what the readers
    make of a later user turn after assistant text.
    """
    return (
        step.type in ("tool_call", "error_recovery")
        and _is_reply(step)
        and not step.input
        and bool((step.content or "").strip())
        and bool(after)
        and after[0].type == "observation"
        and (after[0].tool is None or _is_reply(after[0]))
    )


def _call_id(number: int) -> str:
    """The id of a row's call of that number: ``call00000``, ``call00001``...

    Nine letters and digits, as Mistral's chat templates (Mistral 7B v0.3's, Nemo's, Small's)
    take no other id: they stop with an error on any row that calls a tool otherwise.
    """
    return f"call{number:05d}"


def _text(step: Step) -> str:
    return step.content if step.content is not None else step.output_summary or ""


def _call(messages: list[dict[str, Any]], call_id: str, step: Step) -> None:
    """Add the step's call to the assistant turn just told, else to a new one."""
    assert step.tool is not None  # the caller passes tool calls only
    call = {
        "id": call_id,
        "type": "function",
        "function": {
            "name": step.tool.name,
            # Always the JSON object the step holds, ``{"_raw": text}`` for a call whose input was
            # no JSON object: chat templates parse ``arguments``, and bare text breaks them. It
            # reads back the same (a reader keeps a JSON object as it is).
            "arguments": _JSON.encode(step.input or {}),
        },
    }
    last = messages[-1]
    if last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        # ``content`` an empty text, not left out nor null: chat templates join it to the turn
        # (Qwen3's, QwQ's, Granite 3.3's, Devstral's, vLLM's DeepSeek-V3 one), and stop with an
        # error on a turn without it, or with null, so no row with such a turn could be trained.
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})


def _observation(step: Step, waiting: list[tuple[str, str]]) -> dict[str, Any]:
    """The ``tool`` turn answering the latest waiting call (of the step's tool, if named).

    A trace tells each call's observation right after it; a call with none waits for ever.
    """
    text = _text(step)
    match = _answered(step, waiting)
    if match is None:
        return {"role": "user", "content": text}
    waiting.remove(match)
    call_id, name = match
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


def _learn_tool(tools: dict[str, dict[str, Any]], given: set[str], step: Step) -> None:
    """Record the step's tool's parameters: its schema if the trace keeps one, else its keys."""
    assert step.tool is not None  # the caller passes tool calls only
    name = step.tool.name
    schema = (step.tool.model_extra or {}).get("input_schema")
    if name in given:
        return
    if isinstance(schema, dict):
        tools[name] = schema
        given.add(name)
        return
    properties = tools.setdefault(name, {"type": "object", "properties": {}})["properties"]
    for key, value in (step.input or {}).items():
        if key not in properties:  # the first call's type stands, as setdefault's would
            properties[key] = _json_type(value)


def _tool_list(
    tools: dict[str, dict[str, Any]], offered: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The tools as TRL's ``tools`` column lists them (OpenAI function definitions).

    Those the source offered as it gave them (one told with no parameters given its calls'
    arguments' schema, and left out when the trace never calls it: no schema says what it
    takes), then those only the calls show.
    """
    listed = [told for tool in offered if (told := _with_parameters(tool, tools)) is not None]
    named = {tool["function"]["name"] for tool in listed}
    return listed + [
        {"type": "function", "function": {"name": name, "description": "", "parameters": schema}}
        for name, schema in tools.items()
        if name not in named
    ]


def _with_parameters(
    tool: Mapping[str, Any], tools: dict[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """An offered tool as given; one told with no parameters, its calls' schema, else ``None``.

    OTel spans may describe a tool (its span's ``gen_ai.tool.description``) without its schema.
    One given no description (an Agents SDK tool's, a Gemini declaration's) has ``""``, as the
    tools only the calls show: Hermes' and gpt-oss' chat templates join the description into
    the prompt and stop with an error on a tool without one.
    """
    function = tool["function"]
    if function.get("description") is None:
        function = {**function, "description": ""}
    if "parameters" in function:
        return {**tool, "function": function}
    schema = tools.get(function["name"])
    if schema is None:
        return None
    return {**tool, "function": {**function, "parameters": schema}}


def _json_type(value: Any) -> dict[str, Any]:
    """The JSON Schema type of one argument's value (``{}`` when it says none)."""
    name = _JSON_TYPE_OF.get(type(value))
    if name is not None:
        return {"type": name}
    return next(({"type": name} for kind, name in _JSON_TYPES if isinstance(value, kind)), {})
