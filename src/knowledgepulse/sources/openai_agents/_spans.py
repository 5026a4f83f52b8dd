"""One Agents SDK trace (its ``trace`` record and its spans, as dicts) made into a ReasoningTrace.

The spans are what ``Span.export()`` gives (``{"object": "trace.span", "span_data": {...},
"error": ...}``); the live processor gives the same dicts with what the export drops put back: a
response span's ``output`` items and ``input``. The tree is walked in start-time order:

* ``response`` / ``generation`` spans: reasoning → ``thought``, assistant text → ``thought`` (the
  last turn's text with no tool call after it is the final answer), tool calls → requests that the
  ``function`` spans then execute (merged by name in order: a function span has no call id);
* ``function`` spans: ``tool_call`` + ``observation`` (its ``error`` makes the observation an
  error, and the next tool call an ``error_recovery``); ``mcp_data.server`` → ``tool.mcp_server``.
  Where the model span holds no output (an exported ``response`` span), the function spans under
  one parent (the SDK's ``turn`` span) are that one model turn's requests: a call beside a failed
  one was asked for with it, so it is no recovery from it;
* ``handoff`` spans: a ``transfer_to_<agent>`` tool call;
* ``agent``, ``task``, ``turn``, ``custom``, ``guardrail``, ``mcp_tools`` spans: no step, but an
  error on an agent or task span, or a guardrail that tripped, means the run failed;
* a run interrupted for approval (``result.interruptions``) records a ``function`` span with its
  input, no output and no error for each call awaiting approval, and no model turn after it: it did
  not succeed, and says so, as the run result's reader does (no span marks the interruption);
* a run cancelled between a model turn and the tools it asked for (``RunResultStreaming.cancel()``,
  its task cancelled) ends with no error anywhere: its last model turn asks for tools that no
  ``function`` or ``handoff`` span ran. It did not succeed, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, non_empty
from knowledgepulse._util.times import elapsed_ms, iso_time
from knowledgepulse.sources._envelope import (
    PLACEHOLDER_OBJECTIVE,
    TraceOptions,
    assemble,
    last_model,
)
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.sources.openai_agents._items import (
    Entry,
    chat_message_entries,
    final_answer_index,
    output_item_entries,
    system_text,
    tell,
    transfer_tool,
    user_text,
)
from knowledgepulse.trace import TraceItem

SOURCE = "openai-agents"
FRAMEWORK = "openai-agents"
CONTENT_HINT = (
    "the Agents SDK records tool inputs and outputs only with "
    "RunConfig(trace_include_sensitive_data=True) (the default; env "
    "OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=1), and its exported response spans never hold "
    "model text: capture runs live with "
    "agents.add_trace_processor(kp.integrations.openai_agents.processor())"
)
"""What turns message content on, printed once when a file or run holds no text."""
INTERRUPTED = "the run was interrupted (a tool awaits approval)"
"""The warning of a run that stopped for a tool's approval, from its spans or its result."""
CANCELLED = (
    "the run ended before the tools its last model turn asked for ran (cancelled: "
    "RunResultStreaming.cancel() or its task cancelled; the SDK's spans record no error)"
)
"""The warning of a run stopped between a model turn and its tools; such a run is no success."""
_MODEL_SPANS = ("response", "generation")
_FAILING_SPANS = ("agent",)


def error_text(error: Any) -> str | None:
    """A span's ``error`` (``{"message", "data"}``) as one line of text."""
    if not error:
        return None
    if not isinstance(error, Mapping):
        return str(error)
    message = str(error.get("message") or "error")
    data = as_object(error.get("data"))
    detail = data.get("error") or data.get("message")
    return f"{message}: {detail}" if isinstance(detail, str) and detail else message


@dataclass
class _Walk:
    """What the walk over one trace's spans found."""

    model_turns: list[tuple[int, datetime | None, list[Entry]]] = field(default_factory=list)
    objective: str | None = None
    system: str | None = None
    agents: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    step_errors: list[str] = field(default_factory=list)  # what failed tool / handoff spans said
    textless_responses: int = 0
    textless_tools: int = 0
    tools: int = 0
    started: list[datetime] = field(default_factory=list)


def tree_order(spans: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The spans depth first, siblings by start time (then file order); orphans are roots."""
    ids = {span.get("id") for span in spans}
    children: dict[Any, list[tuple[int, Mapping[str, Any]]]] = {}
    for index, span in enumerate(spans):
        parent = span.get("parent_id")
        children.setdefault(parent if parent in ids else None, []).append((index, span))

    def key(item: tuple[int, Mapping[str, Any]]) -> tuple[float, int]:
        started = iso_time(item[1].get("started_at"))
        return (started.timestamp() if started else float("-inf"), item[0])

    ordered: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    stack = sorted(children.get(None, []), key=key, reverse=True)
    while stack:
        index, span = stack.pop()
        if index in seen:  # a cycle of parent ids: each span once
            continue
        seen.add(index)
        ordered.append(span)
        stack.extend(sorted(children.get(span.get("id"), []), key=key, reverse=True))
    ordered.extend(span for index, span in enumerate(spans) if index not in seen)
    return ordered


def convert_spans(
    trace: Mapping[str, Any] | None,
    spans: Sequence[Mapping[str, Any]],
    options: TraceOptions,
) -> TraceItem:
    """The ReasoningTrace of one Agents SDK trace.

    Args:
        trace: the ``{"object": "trace", ...}`` record (id, ``workflow_name``, ``metadata``), or
            ``None`` when only spans were exported.
        spans: the trace's spans, as ``Span.export()`` dicts (live ones with response content).
        options: the user's domain and confidence.

    Raises:
        ConversionError: the trace holds no step at all.
    """
    trace = trace or {}
    walk = _Walk()
    builder = StepBuilder()
    ordered = tree_order(spans)
    actions: list[tuple[Mapping[str, Any], datetime | None]] = []
    for span in ordered:
        started = iso_time(span.get("started_at"))
        if started is not None:
            walk.started.append(started)
        _visit(span, started, len(actions), walk)
        actions.append((span, started))
    # A run the runner stopped (a tripped guardrail, an agent span's error) gave no answer: its
    # last model text (the output an output guardrail rejected) is a thought before the failure.
    final = None if walk.failures else _final_turn(walk)
    _tell_in_order(builder, actions, walk, final, _unrequested_calls(ordered))
    if walk.failures and not _told(walk.failures[0], walk.step_errors):
        # Stopped by the runner (a guardrail, the turn limit) for no step's failure: that error
        # ends the run, as the spec's rule says, or a run stopped before any step gives no trace
        # (and one stopped at its turn limit after a tool failed would not say why it stopped).
        ended = [at for s in spans if (at := iso_time(s.get("ended_at"))) is not None]
        builder.error(walk.failures[0], at=max(ended) if ended else None, terminal=True)
    awaiting = _awaiting_approval(spans)
    unran = [] if walk.failures or awaiting else _unran_requests(spans, walk, final)
    source_id = str(trace.get("id") or next((s.get("trace_id") for s in spans), "") or "")
    workflow = trace.get("workflow_name")
    metadata = trace.get("metadata")
    return assemble(
        builder,
        source=SOURCE,
        source_id=source_id or "openai-agents",
        success=not walk.failures and not awaiting and not unran,
        options=options,
        objective=walk.objective,
        fallback_objective=_named_workflow(workflow),
        created_at=min(walk.started) if walk.started else None,
        result_summary=walk.failures[0] if walk.failures else None,
        agent_id=walk.agents[0] if walk.agents else None,
        framework=FRAMEWORK,
        model=last_model(_model(span) for span in ordered),
        metadata=metadata if isinstance(metadata, Mapping) else None,
        warnings=(
            *_warnings(walk, awaiting),
            *((f"{CANCELLED}: {', '.join(unran)}",) if unran else ()),
        ),
        content_hint=CONTENT_HINT,
        system=walk.system,
    )


def _tell_in_order(
    builder: StepBuilder,
    actions: list[tuple[Mapping[str, Any], datetime | None]],
    walk: _Walk,
    final: int | None,
    unrequested: dict[Any, list[tuple[str, Any, datetime | None]]],
) -> None:
    """Tell each span in tree order: a model turn's entries, else the span's own step.

    The ``final`` turn's answer is marked; the calls of a model span that kept no output
    (``unrequested``) are told before the first span under their parent.
    """
    turns = {position: (at, entries) for position, at, entries in walk.model_turns}
    for position, (span, started) in enumerate(actions):
        for name, arguments, at in unrequested.pop(span.get("parent_id"), ()):
            builder.tool_request(name, arguments, at=at)
        if position in turns:
            at, entries = turns[position]
            answer = None
            if position == final:
                index = final_answer_index(entries)
                answer = entries[index] if index is not None else None
            tell(builder, entries, at=at, answer=answer)
        else:
            _tell_span(builder, span, started)


def _awaiting_approval(spans: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tools a run interrupted for approval stopped at (none for a finished run).

    Such a call's span has its input (with the SDK's sensitive data on), no output and no error,
    and started after the last model span: no model turn read it. A finished run's last model turn
    answers; a tool that ends the run (``tool_use_behavior``) has its output. Without its input
    recorded, nothing tells a pending call from a tool that returned nothing: it is not guessed.
    """
    model_starts = [
        at
        for span in spans
        if _span_data(span).get("type") in _MODEL_SPANS
        and (at := iso_time(span.get("started_at"))) is not None
    ]
    if not model_starts:
        return []
    last_model = max(model_starts)
    awaiting: list[str] = []
    for span in spans:
        data = _span_data(span)
        started = iso_time(span.get("started_at"))
        if (
            data.get("type") == "function"
            and data.get("input") is not None
            and data.get("output") is None
            and not span.get("error")
            and started is not None
            and started > last_model
        ):
            awaiting.append(str(data.get("name") or "tool"))
    return awaiting


def _unran_requests(
    spans: Sequence[Mapping[str, Any]], walk: _Walk, final: int | None
) -> list[str]:
    """The tools the last model turn asked for when no tool or handoff ran after it (none else).

    The runner runs every call a model turn asks for, or raises (its failure is on the agent
    span): a finished run's last turn answers, or its tools' spans follow it. Only a run cancelled
    in between ends on requests that nothing ran, with no span saying so.
    """
    turn = next((turn for turn in walk.model_turns if turn[0] == final), None)
    if turn is None:
        return []
    requested = [entry.name or "tool" for entry in turn[2] if entry.kind == "request"]
    last_model = turn[1]
    if not requested or last_model is None:
        return []
    ran_after = any(
        _span_data(span).get("type") in ("function", "handoff")
        and (at := iso_time(span.get("started_at"))) is not None
        and at >= last_model
        for span in spans
    )
    return [] if ran_after else requested


def _unrequested_calls(
    spans: Sequence[Mapping[str, Any]],
) -> dict[Any, list[tuple[str, Any, datetime | None]]]:
    """The calls of each model turn whose model span kept no output, by the turn's parent span.

    The SDK puts a turn's model span and the function spans that run its calls under one
    parent; an exported ``response`` span keeps no output, so the calls are told from the
    function spans (name, input), all at the first one's start: one turn, as the model asked.
    """
    textless = {
        span.get("parent_id")
        for span in spans
        if _span_data(span).get("type") in _MODEL_SPANS and _model_entries(_span_data(span)) is None
    }
    calls: dict[Any, list[tuple[str, Any, datetime | None]]] = {}
    for span in spans:
        data = _span_data(span)
        parent = span.get("parent_id")
        if data.get("type") == "function" and parent is not None and parent in textless:
            turn = calls.setdefault(parent, [])
            at = turn[0][2] if turn else iso_time(span.get("started_at"))
            turn.append((str(data.get("name") or "tool"), data.get("input"), at))
    return calls


def _span_data(span: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_object(span.get("span_data"))


def _visit(span: Mapping[str, Any], started: datetime | None, position: int, walk: _Walk) -> None:
    data = _span_data(span)
    kind = data.get("type")
    failure = error_text(span.get("error"))
    if kind in _MODEL_SPANS:
        entries = _model_entries(data)
        if entries is None:
            walk.textless_responses += 1
        else:
            walk.model_turns.append((position, started, entries))
        if walk.objective is None:
            walk.objective = user_text(data.get("input"))
        walk.system = walk.system or system_text(data.get("input"))
    elif kind == "agent":
        name = data.get("name")
        if isinstance(name, str) and name and name not in walk.agents:
            walk.agents.append(name)
    elif kind == "function":
        walk.tools += 1
        if data.get("input") is None and data.get("output") is None and not failure:
            walk.textless_tools += 1
    elif kind == "guardrail" and data.get("triggered") is True:
        name = data.get("name")
        walk.failures.append(f"guardrail {name} tripped" if name else "a guardrail tripped")
    is_task = (
        kind == "custom"
        and isinstance(data.get("data"), Mapping)
        and (data["data"].get("sdk_span_type") == "task")
    )
    if failure and (kind in _FAILING_SPANS or is_task):
        walk.failures.append(failure)
    elif failure and kind in ("function", "handoff"):
        error = span.get("error")
        said = as_object(error).get("data")
        detail = as_object(said).get("error")
        walk.step_errors.append(detail if isinstance(detail, str) and detail else failure)


def _told(failure: str, step_errors: Sequence[str]) -> bool:
    """Whether a step's error is the one the run failed with, passed up to its agent span.

    The SDK words it again there (``Error in agent run: Error running tool lookup: <the
    tool's error>``): the tool's own error text, inside it, says the failure was told.
    """
    return any(error in failure for error in step_errors)


def _model(span: Mapping[str, Any]) -> Any:
    """The model a model span names (a generation span's ``model``); ``None`` for another span."""
    data = span.get("span_data")
    return (
        data.get("model")
        if isinstance(data, Mapping) and data.get("type") in _MODEL_SPANS
        else None
    )


def _model_entries(data: Mapping[str, Any]) -> list[Entry] | None:
    """A model span's output entries; ``None`` when the span recorded no output at all."""
    if data.get("type") == "response":
        output = data.get("output")
        if not isinstance(output, list):
            return None  # an exported response span: the SDK keeps only its id and usage
        return [entry for item in output for entry in output_item_entries(item)]
    messages = data.get("output")
    if not isinstance(messages, list):
        return None
    return [entry for message in messages for entry in chat_message_entries(message)]


def _final_turn(walk: _Walk) -> int | None:
    """The position of the last model turn in time (its last message may be the answer)."""
    best: tuple[float, int] | None = None
    last_time = float("-inf")
    for position, at, _ in walk.model_turns:
        if at is not None:
            last_time = at.timestamp()
        candidate = (last_time, position)
        if best is None or candidate > best:
            best = candidate
    return best[1] if best is not None else None


def _tell_span(builder: StepBuilder, span: Mapping[str, Any], started: datetime | None) -> None:
    data = _span_data(span)
    kind = data.get("type")
    if kind == "function":
        mcp = data.get("mcp_data")
        server = as_object(mcp).get("server")
        builder.tool_result(
            str(data.get("name") or "tool"),
            arguments=data.get("input"),
            output=data.get("output"),
            error=error_text(span.get("error")),
            at=started,
            latency_ms=elapsed_ms(started, iso_time(span.get("ended_at"))),
            mcp_server=non_empty(server),
        )
    elif kind == "handoff":
        target = data.get("to_agent")
        builder.tool_result(
            transfer_tool(as_string(target)),
            error=error_text(span.get("error")),
            at=started,
            latency_ms=elapsed_ms(started, iso_time(span.get("ended_at"))),
        )


DEFAULT_WORKFLOW = "Agent workflow"
"""The ``workflow_name`` the SDK gives a run its user named none (``RunConfig``): no task."""


def _named_workflow(workflow: Any) -> str | None:
    """The run's workflow name, when its user gave one: the spec's objective of last resort.

    The SDK's default name says nothing of the task, nor does the agent's name: with neither
    the user's words nor a workflow name, the envelope's placeholder (``openai-agents run``)
    says plainly that the objective is unknown, and the invariants warn of it.
    """
    if not isinstance(workflow, str) or workflow.strip() in ("", DEFAULT_WORKFLOW):
        return None
    return workflow


def _warnings(walk: _Walk, awaiting: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    if awaiting:
        found.append(
            f"{INTERRUPTED}: {', '.join(awaiting)} gave no output and no model turn followed; "
            "resuming it from its RunState is not captured live (the SDK reopens this trace "
            "without telling trace processors): convert the resumed run's result with "
            "kp.integrations.openai_agents.to_trace(result)"
        )
    if walk.objective is None:
        # Only a model span holds the input: a run stopped before its first model call (an
        # input guardrail that tripped) recorded nothing of what the user asked.
        stopped = f" ({walk.failures[0]} before any model call)" if walk.failures else ""
        found.append(
            f"no span holds the user's input{stopped}: {PLACEHOLDER_OBJECTIVE}, not "
            "the user's request"
        )
    if walk.textless_responses:
        found.append(
            f"{walk.textless_responses} model span(s) hold no model text (the SDK's export "
            "keeps only a response's id and usage): reasoning, messages and the final answer "
            "are missing; capture runs live with kp.integrations.openai_agents.processor()"
        )
    if walk.textless_tools and walk.textless_tools == walk.tools:
        found.append(
            "no tool input or output was recorded: the run had "
            "RunConfig(trace_include_sensitive_data=False)"
        )
    return tuple(found)
