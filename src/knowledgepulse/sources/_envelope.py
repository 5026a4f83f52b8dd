"""The envelope every source shares: id, time, objective, domain, confidence, and their origin.

No framework records a task domain or a confidence, so each comes from, in order: the user's
argument, a documented metadata key on the source's root (``kp.task_domain``, ``kp.confidence``),
or the default (domain ``default``; confidence 0.8 on success, 0.2 on failure, as the TS SDK).
Which one was used is kept in the trace, under ``metadata.source``, and the value breakdown
reports it, so a default is never mistaken for a measurement.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse._util.settings import instance_of, number_of, text_of
from knowledgepulse._util.times import aware
from knowledgepulse.errors import (
    ConversionError,
    TraceValidationError,
)
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._rows import RowOptions
from knowledgepulse.sources._steps import MAX_CONTENT_BYTES, StepBuilder, bounded
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.load import validated_trace
from knowledgepulse.trace.models import CONTEXT_URLS

DOMAIN_KEY = "kp.task_domain"
"""The metadata key (span attribute, run metadata, trace metadata) that names the domain."""
CONFIDENCE_KEY = "kp.confidence"
"""The metadata key that gives the outcome's confidence, a number in [0, 1]."""
NO_TEXT = "hold no message text"
"""What the warning about traces without message text says (a collector logs it once)."""
PLACEHOLDER = re.compile(r"^\S+ run$")
"""The objective the envelope falls back to when a source names no task (``openai run``)."""
PLACEHOLDER_OBJECTIVE = "the objective is a placeholder"
"""How the law of a placeholder objective opens, and how a source that explains one says it."""
DEFAULT_DOMAIN = "default"
SUCCESS_CONFIDENCE = 0.8
FAILURE_CONFIDENCE = 0.2
UNDATED = datetime(1970, 1, 1, tzinfo=UTC)
"""The ``created_at`` of a trace whose source gives no time: fixed, so that the same file always
converts to the same bytes (the time of conversion would make two runs differ)."""
_UNDATED_TEXT = UNDATED.isoformat().replace("+00:00", "Z")
_FIRST_DATE = datetime(2000, 1, 1, tzinfo=UTC)
"""No agent ran before this: an earlier time is a placeholder (a test's ``"timestamp": 1``, a
clock counted from 0), no run's date, so the trace is :data:`UNDATED`, as with no time."""

Origin = Literal["argument", "metadata", "default"]


class PathError(ValueError):
    """A part of a source record a reader cannot read, with its JSON path inside the record."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """What the user says about every trace a source gives (``None``: not said).

    Attributes:
        domain: the ``task_domain`` (it selects the weight profile).
        confidence: the outcome's confidence, in [0, 1].
        rows: which columns of a dataset's rows hold the conversation and its labels.
        text_limit: the most UTF-8 bytes a step's text, the objective and the answer keep (cut
            between tokens, marked ``…``, as a trace to share is); ``None`` keeps them whole,
            as a training row needs them (``kp convert --to messages``).
    """

    domain: str | None = None
    confidence: float | None = None
    rows: RowOptions = RowOptions()  # noqa: RUF009 - frozen, so one shared default is safe
    text_limit: int | None = MAX_CONTENT_BYTES

    def __post_init__(self) -> None:
        domain, confidence = self.domain, self.confidence
        if domain is not None:
            text_of(domain, "domain", "a domain's name (code, math...)")
        if confidence is not None:
            number_of(confidence, "confidence", "a number in [0, 1]", lambda c: 0.0 <= c <= 1.0)
        instance_of(self.rows, "rows", RowOptions, "a RowOptions")
        if self.text_limit is not None:
            number_of(
                self.text_limit,
                "text_limit",
                "a whole number of bytes, 64 or more, or None (texts whole)",
                lambda limit: limit == int(limit) and limit >= 64,
            )


def assemble(
    steps: StepBuilder,
    *,
    source: str,
    source_id: str,
    success: bool,
    options: TraceOptions,
    objective: str | None = None,
    fallback_objective: str | None = None,
    created_at: datetime | float | None = None,
    result_summary: str | None = None,
    agent_id: str | None = None,
    framework: str | None = None,
    model: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    warnings: tuple[str, ...] = (),
    source_extra: Mapping[str, Any] | None = None,
    content_hint: str = "",
    text_elsewhere: bool = False,
    location: Location | None = None,
    row: Record | None = None,
    task: str | None = None,
    reward: float | None = None,
    privacy_level: str = "private",
    tools: tuple[dict[str, Any], ...] = (),
    system: str | None = None,
) -> TraceItem:
    """Join the steps and the envelope into a validated trace item.

    Args:
        steps: the source's steps, told to a builder.
        source: the source format (``otlp``, ``langsmith``...), kept in ``metadata.source``.
        source_id: the source's own trace id: the trace id is ``kp:trace:<source_id>``, so
            importing the same run twice gives the same id.
        success: whether the run succeeded (from the root's status).
        options: the user's domain and confidence.
        objective: the first user message's text (the request inside it, when a framework's
            prompt wraps it: :func:`request`); the user's turns told to ``steps`` before the
            agent did anything follow it (:attr:`StepBuilder.request_parts`).
        fallback_objective: the agent's or workflow's name, when there is no user text.
        created_at: when the root started (a datetime or Unix seconds); :data:`UNDATED` when
            unknown (or before 2000, no run's date).
        result_summary: what came of it; the final answer when not given.
        agent_id: the agent's id or name.
        framework: the framework that ran it.
        model: the model that wrote the run's last reply, as the source names it; kept in
            ``metadata.source.model``.
        metadata: the root's metadata, read for ``kp.task_domain`` and ``kp.confidence``.
        warnings: what the reader lost or guessed.
        source_extra: more facts about the source kept in ``metadata.source`` (a row's number).
        content_hint: how to make the source record message text: when neither the steps nor
            the user's request hold any (only names and timings), a warning says so with this
            hint.
        text_elsewhere: the source held message text that is neither a step nor the objective:
            then there is no such warning.
        location: where the source trace starts; ``<source>`` when it was not read from a file.
        row: the dataset row the trace was made from.
        task: the task the trace is a run of, when the source says (a row's task column); it
            is also kept in ``metadata.source.task``.
        reward: the run's reward, when the source gives its outcome as a number; kept in
            ``metadata.source.reward`` too, so that the trace written out still ranks by it.
        privacy_level: the trace's ``metadata.privacy_level`` (a row kp wrote keeps its own).
        tools: the tools the source offered the model (:attr:`TraceItem.tools`).
        system: the system prompt the source opened with (:attr:`TraceItem.system`).

    Raises:
        ConversionError: there is not a single step to make a trace of.
    """
    step_list = steps.steps(options.text_limit)
    if not step_list:
        raise ConversionError("the trace holds no step: no model output, tool call or answer")
    found = dict(metadata or {})
    domain, domain_source = _domain(options, found.get(DOMAIN_KEY))
    confidence, confidence_source = _confidence(options, found.get(CONFIDENCE_KEY), success)
    asked = request_of((request(objective), *steps.request_parts))
    task_objective = _first_text(asked, fallback_objective) or f"{framework or 'agent'} run"
    summary_text = _first_text(result_summary, steps.final_answer) or no_answer(success)
    # Keys in the models' field order: the document is the trace's JSON as it is written
    # (``TraceItem.document``), so it must be what ``model_dump`` would give.
    described = {"agent_id": agent_id, "framework": framework}
    document: dict[str, Any] = {
        "@context": CONTEXT_URLS[0],  # the spec's own; the other is accepted when read
        "@type": "ReasoningTrace",
        "id": f"kp:trace:{source_id}",
        "metadata": {
            "created_at": _rfc3339(created_at),
            **{key: value for key, value in described.items() if value},
            "task_domain": domain,
            "success": success,
            "quality_score": 0.0,
            "visibility": "private",
            "privacy_level": privacy_level,
            "source": {
                "format": source,
                "trace_id": source_id,
                "domain_source": domain_source,
                "confidence_source": confidence_source,
                **(source_extra or {}),
                **({"model": named} if (named := last_model((model,))) else {}),
                **({"task": task} if task is not None else {}),
                **({"reward": reward} if reward is not None else {}),
            },
        },
        "task": {"objective": bounded(task_objective, options.text_limit)},
        "steps": step_list,
        "outcome": {
            "result_summary": bounded(summary_text, options.text_limit),
            "confidence": confidence,
        },
    }
    try:
        # Made of values read as JSON already: checking them again cost 5% of a row's time.
        trace = validated_trace(document)
    except TraceValidationError as error:  # a reader bug, not the user's: say what it made
        raise ConversionError(f"the converted trace is not valid: {error}") from error
    # The user's request is message text too: a run whose model only called a tool (a function
    # calling row, a reply of tool calls whose results were not recorded) or one a LangGraph
    # interrupt() stopped before the model said anything holds the words it was asked. Before,
    # those traces were warned of as holding none. A name (``fallback_objective``: the agent's,
    # the workflow's) or the placeholder is nobody's words, and such a trace is still warned of.
    asked_text = asked is not None and not PLACEHOLDER.match(asked.strip())
    if not (steps.saw_text or text_elsewhere or asked_text):
        warnings = (*warnings, no_text(source, content_hint))
    warnings = (*warnings, *_unused_metadata(found, domain_source, confidence_source))
    record = Record(location or Location(f"<{source}>"), document)
    return TraceItem(record, trace, row, task, warnings, reward, tools, system)


def last_model(names: Iterable[Any]) -> str | None:
    """The model of a run's last reply: the last of ``names`` (one a reply) that is a name.

    A reply whose model the source left out, or named by something other than text or by no
    letter or digit (a placeholder: ``...``), is passed over, so the model is the last one named.
    """
    return first_model(*reversed(list(names)))


MODEL_KEYS = (
    "gen_ai.response.model",
    "gen_ai.request.model",
    "llm.model_name",  # OpenInference
    "ai.response.model",  # the Vercel AI SDK
    "ai.model.id",
    "langfuse.observation.model.name",
)
"""Where a model call's span names its model, in precedence order: the model that replied
first, then the one asked for (a provider's alias names the model it resolved to). A span's
attributes saved as a dataset row keep the same keys."""


def first_model(*candidates: Any) -> str | None:
    """The first of ``candidates`` that names a model, as :func:`last_model` tells a name.

    The candidates come in the source's precedence: the model that replied, then the one asked
    for.
    """
    named = (name for name in candidates if isinstance(name, str))
    return next((name for name in named if any(map(str.isalnum, name))), None)


def no_answer(success: bool) -> str:
    """The ``result_summary`` of a run that gave no answer (its last act a tool call)."""
    return "completed" if success else "failed"


def no_text(source: str, content_hint: str) -> str:
    """The warning for traces whose source recorded no message text, only names and timings."""
    hint = f"; {content_hint}" if content_hint else ""
    return (
        f"the {source} traces {NO_TEXT}, only names and timings, so novelty has little to go "
        f"on{hint}"
    )


def placed(item: TraceItem, location: Location, row: Record | None = None) -> TraceItem:
    """The item located where its source trace starts in a file (and with its row, if given)."""
    return replace(item, record=Record(location, item.document), row=row or item.row)


S = TypeVar("S")


def session_of(
    records: Iterable[Record | Problem],
    recognises: Callable[[Any], bool],
    opened: Callable[[Record], S],
    take: Callable[[S, Record], None],
    header: str,
    *,
    expected: str,
) -> Generator[Problem, None, S | None]:
    """The session ``opened`` makes of a file's header, ``take`` fed each later record.

    The problems met are yielded: a record before the header, a ``PathError`` ``take`` raises.
    """
    session: S | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
        elif session is None:
            if recognises(item.value):
                session = opened(item)
            else:
                said = describe_value(item.value)
                yield item.problem((), f"not a {header}: {said}; expected {expected}")
        else:
            try:
                take(session, item)
            except PathError as error:
                yield item.problem(error.path, error.message)
    return session


def finished(finish: Callable[[], TraceItem], first: Record) -> TraceItem | Problem:
    """The trace ``finish`` makes of a run, or why it cannot as a problem at its first record.

    A ``PathError`` keeps its path inside that record; a ``ConversionError`` (no step, say) is
    about the whole run.
    """
    try:
        return finish()
    except PathError as error:
        return first.problem(error.path, error.message)
    except ConversionError as error:
        return first.problem((), str(error))


NEW_PROBLEM = "Now, I will start a new problem in a new OS. My problem is:"
"""How AgentBench's OS tasks (``os_interaction``, AgentInstruct's OS rows) open the task, after
their instructions and one worked problem (see ``_chat._text.primed``)."""

NEW_QUESTION = "A new question: "
"""How AgentBench's knowledge-graph tasks (AgentInstruct's KG rows) open the task, after their
instructions and one worked question (its ``ONE_SHOT``, answered ``Final Answer: #3``)."""


# The request a person wrote, out of the prompt a framework wrapped around it. Agent frameworks
# send the model the user's task inside prompts of their own: smolagents writes ``New
# task:\n{task}`` for the task step and puts the task inside its planning prompts (``Here is your
# task:`` and a fenced block). A source that sees only the model calls (an OpenAI client's spans,
# no framework instrumentation) finds those prompts as the first user message; the objective is
# the task inside them, never the template. One pattern a framing, the task its ``task`` group,
# after the words every text it matches holds (``True``: at its start): a pattern runs only on a
# text with them (one that may start anywhere, run on a long request, scanned it at every place:
# 100 microseconds a trace).
_FRAMINGS = (
    # smolagents' TaskStep.to_messages (memory.py).
    ("New task:\n", True, re.compile(r"\ANew task:\n(?P<task>.+)\Z", re.DOTALL)),
    # smolagents' planning.initial_plan, every agent's prompts (toolcalling_agent.yaml...).
    (
        "Now begin! Here is your task:\n```\n",
        False,
        re.compile(r"Now begin! Here is your task:\n```\n(?P<task>.+?)\n```(?:\n|\Z)", re.DOTALL),
    ),
    # smolagents' planning.update_plan_pre_messages.
    (
        "You have been given the following task:\n```\n",
        False,
        re.compile(
            r"You have been given the following task:\n```\n(?P<task>.+?)\n```(?:\n|\Z)",
            re.DOTALL,
        ),
    ),
    # AgentBench's OS tasks, after their instructions and one worked problem.
    (NEW_PROBLEM, True, re.compile(rf"\A{re.escape(NEW_PROBLEM)}\s*(?P<task>.+)\Z", re.DOTALL)),
    # AgentBench's knowledge-graph tasks, after their instructions and one worked question.
    (NEW_QUESTION, True, re.compile(rf"\A{re.escape(NEW_QUESTION)}\s*(?P<task>.+)\Z", re.DOTALL)),
    # Terminus 2's first prompt (Harbor, Terminal-Bench): its instructions, then ``Task
    # Description:\n{instruction}\n\nCurrent terminal state:\n{terminal_state}``.
    (
        "Task Description:\n",
        False,
        re.compile(
            r"(?:\A|\n)Task Description:\n(?P<task>.+?)\n+Current terminal state:\n", re.DOTALL
        ),
    ),
)


# DSPy's ChatAdapter (dspy/adapters/chat_adapter.py) writes each message as fields: a field's
# ``[[ ## name ## ]]`` marker at the start of a line, its value below it, the fields a blank line
# apart. A call's request is its input fields (``format_user_message_content``); the main request
# then asks for the output fields ("Respond with the corresponding output fields, starting with
# the field `[[ ## answer ## ]]`...", JSONAdapter's "Respond with a JSON object in the following
# order of fields: ..."). The model replies with the output fields, ended by ``[[ ## completed ##
# ]]`` (``ChatAdapter.parse`` reads a section from its marker to the next, the marker's line may
# carry the start of the value, and keeps the first of a field twice written). What was said is
# the fields' values; the markers, the reminder and the closing marker are DSPy's.
_DSPY_FIELD = re.compile(r"^[ \t]*\[\[ ## (\w+) ## \]\]", re.MULTILINE)
_DSPY_MARKER = "[[ ## "
"""What every field marker holds: a text without it is no DSPy message (no regex run)."""
_DSPY_COMPLETED = "completed"
"""The marker DSPy's replies end with: no field."""
_DSPY_OUTPUT_REQUIREMENTS = re.compile(
    r"\n\nRespond with (?:the corresponding output fields|a JSON object in the following order)"
    r"[^\n]*\Z"
)


DSPY_REACT_CALL = frozenset({"next_tool_name", "next_tool_args"})
"""The output fields a DSPy ReAct reply names its next call by (dspy/predict/react.py, beside
``next_thought``): the call, which its tool's span tells (``finish``: none), not words."""


def dspy_field_values(text: str) -> dict[str, str] | None:
    """The fields of a DSPy ChatAdapter message, by name, in the order written.

    ``None`` when the text is not one: it opens with no field marker.
    """
    if _DSPY_MARKER not in text:
        return None
    body = text.strip()
    fields = list(_DSPY_FIELD.finditer(body))
    if not fields or fields[0].start() != 0:
        return None
    ends = [field.start() for field in fields[1:]] + [len(body)]
    values: dict[str, str] = {}
    for field, end in zip(fields, ends, strict=True):
        if field.group(1) != _DSPY_COMPLETED:
            values.setdefault(field.group(1), body[field.end() : end].strip())
    return values


def dspy_fields(text: str) -> str | None:
    """The values of the fields of a DSPy ChatAdapter message, a blank line apart.

    ``None`` when the text is not one: it opens with no field marker.
    """
    values = dspy_field_values(text)
    return "\n\n".join(value for value in (values or {}).values() if value) or None


def _dspy_inputs(text: str) -> str | None:
    """The values of the input fields a DSPy adapter wrote the request as, a blank line apart."""
    if _DSPY_MARKER not in text:  # most requests: no marker, and none once the reminder is cut
        return None
    return dspy_fields(_DSPY_OUTPUT_REQUIREMENTS.sub("", text.strip()))


def request_of(parts: Iterable[str | None]) -> str | None:
    """The user's request: the first turn, then those before the agent's first, a blank line apart.

    The turns after the first are :attr:`StepBuilder.request_parts`. A turn that repeats one
    told before it is told once: the prompt sent again after a reply that never came (OpenCode's
    first model wrote nothing, so the user asked the next model the same).
    """
    told: list[str] = []
    for text in parts:
        if text and text.strip() and all(text.strip() != said.strip() for said in told):
            told.append(text)
    return "\n\n".join(told) or None


def request(text: str | None) -> str | None:
    """``text`` less a framework's prompt around the user's request (unframed: as written)."""
    if not text:
        return text
    for words, at_start, framing in _FRAMINGS:
        held = text.startswith(words) if at_start else words in text
        found = framing.search(text) if held else None
        if found and found.group("task").strip():
            return found.group("task").strip()
    return _dspy_inputs(text) or text


def _domain(options: TraceOptions, found: Any) -> tuple[str, Origin]:
    if options.domain is not None:
        return options.domain, "argument"
    if isinstance(found, str) and found.strip():
        return found.strip(), "metadata"
    return DEFAULT_DOMAIN, "default"


def _confidence(options: TraceOptions, found: Any, success: bool) -> tuple[float, Origin]:
    if options.confidence is not None:
        return float(options.confidence), "argument"
    value = _number(found)
    if value is not None and 0.0 <= value <= 1.0:
        return value, "metadata"
    return (SUCCESS_CONFIDENCE if success else FAILURE_CONFIDENCE), "default"


def _unused_metadata(found: dict[str, Any], domain: Origin, confidence: Origin) -> list[str]:
    """A warning for each ``kp.`` key the run gave that could not be used (the default was).

    The value is described, not shown: metadata text can hold what a redaction would remove,
    and a warning is printed before any redaction.
    """
    said = []
    if domain == "default" and found.get(DOMAIN_KEY) is not None:
        said.append(f"{DOMAIN_KEY} is {_kind(found[DOMAIN_KEY])}, not a domain name (text)")
    value = found.get(CONFIDENCE_KEY)
    if confidence == "default" and value is not None:
        if _number(value) is not None:
            why = "is outside [0, 1]"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            why = "is not a finite number"
        else:
            why = f"is {_kind(value)}, not a number in [0, 1]"
        said.append(f"{CONFIDENCE_KEY} {why}")
    return [f"metadata {text}: the default is used" for text in said]


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "blank text" if not value.strip() else "text"
    return "a list" if isinstance(value, list) else "an object"


def _number(value: Any) -> float | None:
    """A finite number, or the text of one (metadata values are often text); else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):  # OverflowError: an int past a float's range (10**400)
        return None
    return number if math.isfinite(number) else None


def _first_text(*candidates: str | None) -> str | None:
    for candidate in candidates:
        if candidate and candidate.strip():
            return candidate
    return None


def _rfc3339(at: datetime | float | None) -> str:
    if at is None:
        moment = UNDATED
    elif isinstance(at, datetime):
        moment = aware(at)
    else:
        try:
            moment = datetime.fromtimestamp(at, UTC)
        except (OverflowError, OSError, ValueError):
            # Past year 9999 (a corrupt timestamp): no time is known, as when none is given.
            moment = UNDATED
    if moment < _FIRST_DATE:  # most rows have no time: isoformat() was a tenth of assemble()
        return _UNDATED_TEXT
    try:
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    except OverflowError:  # the year 10000 (or 0) in UTC: said in its own offset, which holds it
        return moment.isoformat()
