"""One LangChain / LangSmith run tree as a ``ReasoningTrace``: the mapping of the spec.

A run tree is plain data (the JSON LangSmith exports, or a live run dumped to it): a root run and
its ``child_runs``, each ordered by start. ``llm`` / ``chat_model`` runs give thoughts (reasoning
blocks, assistant text) and the tool calls the model asked for, with their ids; ``tool`` and
``retriever`` runs are tool executions; everything else (chains, prompts, parsers, LangGraph
nodes) is plumbing, recursed into. Evident errors: a run's ``error``, and a ``ToolMessage`` with
``status: "error"`` (how LangGraph's ``ToolNode`` reports a failed or unknown tool).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from knowledgepulse._util.jsonpath import as_object, non_blank
from knowledgepulse._util.times import elapsed_ms, moment
from knowledgepulse.records.json_values import parsed_json, python_literal
from knowledgepulse.sources._chat._text import reported_failure
from knowledgepulse.sources._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    TraceOptions,
    assemble,
    first_model,
    last_model,
)
from knowledgepulse.sources._steps import TOOL_FAILED, StepBuilder, as_text, newest_request
from knowledgepulse.sources._structured import is_structured_extraction
from knowledgepulse.sources.langchain._messages import (
    FRAMEWORK,
    Message,
    as_message,
    content_text,
    find_messages,
    message_list,
    responses_reply,
)
from knowledgepulse.sources.openai_agents._spans import FRAMEWORK as AGENTS_SDK
from knowledgepulse.sources.openai_agents._spans import error_text as agents_error_text
from knowledgepulse.trace import TraceItem

MAX_RUNS_PER_TRACE = 10_000
"""Runs read per trace; the rest are left out (and the trace says so)."""

_MODEL_RUNS = frozenset({"llm", "chat_model"})
_TOOL_RUNS = frozenset({"tool", "retriever"})
_TRACEBACK = "Traceback (most recent call last)"
_OBJECTIVE_KEYS = ("input", "question", "query", "task", "prompt")
_SYSTEM_KEYS = frozenset({"instructions", "system", "system_prompt"})
"""Inputs that hold the system prompt (the Responses API's ``instructions``): never the task."""
_ALIASES = {"kp_task_domain": DOMAIN_KEY, "kp_confidence": CONFIDENCE_KEY}
_INTERRUPTS = ("GraphInterrupt(", "NodeInterrupt(")

INTERRUPTED = (
    "the run was interrupted (a LangGraph node called interrupt(): the graph awaits a human's "
    "input, and its resumed run is a trace of its own)"
)
"""The warning of a run that paused for a human; such a run is no success."""
PAUSED = "interrupted: awaits a human's input"
"""The ``result_summary`` of a run that paused for a human before any answer."""

CONTENT_HINT = (
    "LangSmith records no run inputs or outputs when LANGSMITH_HIDE_INPUTS=true or "
    "LANGSMITH_HIDE_OUTPUTS=true (or Client(hide_inputs=..., hide_outputs=...)); unset them "
    "and export the runs again"
)
"""How to get LangSmith runs that carry message text."""


@dataclass(slots=True)
class RunNode:
    """A run and its children, ordered by start (ties: the order they were recorded in)."""

    run: Mapping[str, Any]
    children: list[RunNode] = field(default_factory=list)

    def walk(self) -> Iterator[tuple[RunNode, bool]]:
        """Every node, depth first, with whether it runs inside a tool run."""
        stack: list[tuple[RunNode, bool]] = [(self, False)]
        while stack:
            node, inside_tool = stack.pop()
            yield node, inside_tool
            nested = inside_tool or _kind(node.run) == "tool"
            stack.extend((child, nested) for child in reversed(node.children))


def convert_tree(root: RunNode, options: TraceOptions) -> TraceItem:
    """The ``ReasoningTrace`` of one run tree.

    Raises:
        ConversionError: the tree holds no step (no model output, tool call or answer).
    """
    nodes = []
    cut = False
    for number, (node, inside_tool) in enumerate(root.walk()):
        if number >= MAX_RUNS_PER_TRACE:
            cut = True
            break
        nodes.append((node, inside_tool))
    walk, stopped_inside = _walked(nodes, answered=True)
    if stopped_inside:
        # A chain below the root ended the run in its error (the Agents SDK's agent run, when
        # an output guardrail rejected the answer): the run gave no answer, its last model
        # text is a thought before that error. Walked again, with no answer to mark.
        walk, stopped_inside = _walked(nodes, answered=False)
    if cut:
        walk.warnings.append(f"only the first {MAX_RUNS_PER_TRACE} runs were read")
    run = root.run
    result = None if stopped_inside else _result(run.get("outputs"))
    if walk.answer is None and result:
        walk.builder.answer(result)
    error = run.get("error")
    stopped = _error_text(error)
    if stopped and not any(text in stopped for text in walk.builder.error_texts):
        # The run was stopped by the graph itself (GraphRecursionError) or its caller, not by
        # a step's failure passed up: that error ends it, or the trace would not say why it
        # failed (a tool that failed earlier, and was retried, is not why).
        end = moment(run.get("end_time"))
        walk.builder.error(stopped, at=end, terminal=True)
    if walk.interrupted:
        walk.warnings.append(INTERRUPTED)
    source_id = non_blank(run.get("trace_id")) or non_blank(run.get("id")) or "langsmith-run"
    return assemble(
        walk.builder,
        source="langsmith",
        source_id=source_id,
        success=not error
        and run.get("status") != "error"
        and not walk.interrupted
        and not stopped_inside,
        options=options,
        objective=_objective(run.get("inputs")) or walk.first_user_text,
        fallback_objective=_name(run),
        created_at=moment(run.get("start_time")),
        # The structured output is the run's answer (the root's last AI text is the reply it
        # was made of), as the span reader takes it.
        result_summary=(walk.answer if walk.extraction is not None else None)
        or result
        or walk.answer
        or (PAUSED if walk.interrupted else None)
        or (walk.builder.error_texts[-1] if stopped_inside else None),
        agent_id=_name(run),
        framework=walk.framework,
        model=last_model(_model(node.run) for node, _ in nodes if _kind(node.run) in _MODEL_RUNS),
        metadata=_metadata(run),
        warnings=tuple(walk.warnings),
        content_hint=CONTENT_HINT,
        system=walk.system,
    )


def _model(run: Mapping[str, Any]) -> str | None:
    """The model a model run names: the one that replied, else the one asked for.

    The reply's: a wrapped client's response (``wrap_openai``'s Chat Completion, its
    ``model``), a chat model's ``llm_output.model_name``. The one asked for: LangChain's
    ``ls_model_name``, else the invocation's (an alias, ``gpt-4.1-mini``, where the reply names
    the version that ran, ``gpt-4.1-mini-2025-04-14``).
    """
    outputs = as_object(run.get("outputs"))
    extra = as_object(run.get("extra"))
    invoked = as_object(extra.get("invocation_params"))
    return first_model(
        outputs.get("model"),
        as_object(outputs.get("llm_output")).get("model_name"),
        as_object(extra.get("metadata")).get("ls_model_name"),
        invoked.get("model"),  # OpenAI's, Anthropic's
        invoked.get("model_name"),
    )


def _walked(nodes: list[tuple[RunNode, bool]], *, answered: bool) -> tuple[_Walk, bool]:
    """The walk over a tree's runs; whether a chain's error below the root ended the run.

    ``answered``: the last model run's text may be the answer (not after such an error).
    """
    walk = _Walk()
    walk.answer_run = _answer_run(nodes) if answered else None
    walk.recalled = _thinking_of_calls(nodes)
    walk.extraction = _extraction(nodes)
    for node, inside_tool in nodes:
        walk.visit(node.run, inside_tool=inside_tool)
    walk.settle_error_messages()
    root_error = (
        None
        if _interrupt(nodes[0][0].run.get("error"))
        else _error_text(nodes[0][0].run.get("error"))
    )
    return walk, walk.settle_run_errors(root_error)


_AGENTS_SDK_INTEGRATION = "openai-agents-sdk"
"""The ``ls_integration`` metadata of the runs LangSmith's ``OpenAIAgentsTracingProcessor`` posts
of an OpenAI Agents SDK run: no LangChain ran them."""


@dataclass
class _Walk:
    """What the walk over one tree told its builder, and what it still has to settle."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    answer_run: int | None = None
    extraction: int | None = None  # the model run whose one call is the structured answer
    answer: str | None = None
    first_user_text: str | None = None
    system: str | None = None
    """The system prompt the first model run that had one was sent."""
    langgraph: bool = False
    agents_sdk: bool = False  # LangSmith's processor of the OpenAI Agents SDK posted the runs
    requested: dict[str, str] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    error_messages: dict[str, Message] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    interrupted: bool = False  # a node paused the graph for a human (LangGraph's interrupt())
    # Chains' own errors (text, end), below the root: told once the walk knows its steps.
    run_errors: list[tuple[str, datetime | None]] = field(default_factory=list)
    last_start: datetime | None = None  # the latest start of a model or tool run
    # Anthropic's thinking, by the calls of the reply it came with, as later requests carry it.
    recalled: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def framework(self) -> str:
        """The framework that ran: LangGraph, the OpenAI Agents SDK, else LangChain."""
        if self.langgraph:
            return "langgraph"
        return AGENTS_SDK if self.agents_sdk else FRAMEWORK

    def visit(self, run: Mapping[str, Any], *, inside_tool: bool) -> None:
        if _interrupt(run.get("error")):
            self.interrupted = True
        started = moment(run.get("start_time"))
        if _kind(run) in _MODEL_RUNS | _TOOL_RUNS and started is not None:
            self.last_start = max(started, self.last_start or started)
        metadata = as_object(as_object(run.get("extra")).get("metadata"))
        if metadata.get("ls_integration") == "langgraph" or any(
            str(key).startswith("langgraph_") for key in metadata
        ):
            self.langgraph = True
        if metadata.get("ls_integration") == _AGENTS_SDK_INTEGRATION:
            self.agents_sdk = True
        kind = _kind(run)
        if kind in _MODEL_RUNS:
            self._model(run, inside_tool=inside_tool)
        elif kind in _TOOL_RUNS and metadata.get("ls_agent_type") == "middleware":
            # LangSmith's Agents SDK processor records a guardrail as a ``tool`` run marked
            # ``middleware`` (``triggered`` in its metadata): a check, no call; a tripwire that
            # stopped the run is its agent run's error.
            return
        elif kind in _TOOL_RUNS:
            self._tool(run)
        else:
            self._note_error_messages(run.get("outputs"))
            error = None if _interrupt(run.get("error")) else _error_text(run.get("error"))
            if error and not inside_tool:
                self.run_errors.append((error, moment(run.get("end_time"))))

    def _model(self, run: Mapping[str, Any], *, inside_tool: bool) -> None:
        at = moment(run.get("start_time"))
        inputs = as_object(run.get("inputs"))
        history = message_list(inputs.get("messages"))
        if not history and isinstance(inputs.get("input"), list):
            # A Responses API call (the Agents SDK's, as LangSmith's processor records it): its
            # ``input`` items are the conversation so far.
            history = message_list(inputs["input"])
        if self.first_user_text is None:
            self.first_user_text = next(
                (message.text for message in history if message.role == "human"), None
            )
        self.system = self.system or _system(inputs, history)
        self._note_error_messages(history)
        self._untraced_results(history, inputs.get("messages"))
        error = _error_text(run.get("error"))
        if error and not inside_tool:
            # A failure inside a tool belongs to the tool: its own error says it once.
            self.builder.error(f"{_name(run)}: {error}", at=moment(run.get("end_time")) or at)
        for message in model_output(run.get("outputs")):
            for listed in message.errors:  # an MCP server that could not list its tools
                self.builder.error(listed, at=at)
            for reasoning in message.reasoning or self._recalled(message):
                self.builder.thought(reasoning, at=at)
            if message.text and id(run) == self.answer_run and not message.tool_calls:
                self.answer = message.text
                self.builder.answer(message.text, at=at)
            else:
                self.builder.thought(message.text, at=at)
            if id(run) == self.extraction:  # LangGraph's structured response: the answer
                self.answer = as_text(message.tool_calls[0].arguments)
                self.builder.answer(self.answer, at=at, said=False)
                continue
            self._calls(message, at)

    def _recalled(self, message: Message) -> tuple[str, ...]:
        """The thinking a reply that records none came with, as the next request carries it.

        ``wrap_anthropic`` (a ``@traceable`` agent's model calls) records a reply as its text and
        tool calls, without its thinking blocks, which Anthropic's API has the next request send
        back with the calls: the same ``tool_use`` ids name the reply they came from.
        """
        ids = [call.call_id for call in message.tool_calls if call.call_id]
        found = [self.recalled.pop(call_id, ()) for call_id in ids]
        return next((thinking for thinking in found if thinking), ())

    def _calls(self, message: Message, at: datetime | None) -> None:
        """The calls a model's reply asks for; one the API ran and that failed, with its error."""
        for call in message.tool_calls:
            self.builder.tool_request(call.name, call.arguments, call_id=call.call_id, at=at)
            if call.call_id:
                self.requested[call.call_id] = call.name
            if call.error:
                self.builder.tool_result(call.name, error=call.error, call_id=call.call_id)
                if call.call_id:
                    self.failed.add(call.call_id)

    def _untraced_results(self, history: list[Message], raw: Any) -> None:
        """The results of calls no tool run recorded, as the next model call was sent them.

        A ``@traceable`` agent whose tools are not traced (only ``wrap_openai``'s or
        ``wrap_anthropic``'s model calls) records its tools' results only in the next request:
        ``tool`` messages, or Anthropic's ``tool_result`` blocks in a user turn (``raw``, the
        request's messages). One that says it failed (``status`` ``error``, ``is_error``,
        ``Error: ...``, an ``error`` key) is a failed call.
        """
        results = [
            (message.tool_call_id, message.text, message.status == "error")
            for message in history
            if message.role == "tool"
        ]
        results += list(_tool_result_blocks(raw))
        for call_id, text, marked in results:
            if call_id is None or call_id not in self.requested or self.builder.executed(call_id):
                continue
            error = (text or TOOL_FAILED) if marked or reported_failure(text) else None
            if error:
                self.failed.add(call_id)
            self.builder.tool_result(
                self.requested[call_id],
                output=None if error else text,
                error=error,
                call_id=call_id,
            )

    def _tool(self, run: Mapping[str, Any]) -> None:
        start, end = moment(run.get("start_time")), moment(run.get("end_time"))
        outputs = run.get("outputs")
        output: Any = None
        if isinstance(outputs, Mapping) and outputs:
            output = outputs.get("output", outputs.get("documents", outputs))
        reply = next((m for m in find_messages(output) if m.role == "tool"), None)
        call_id = non_blank(as_object(run.get("extra")).get("tool_call_id"))
        call_id = call_id or (reply.tool_call_id if reply else None)
        # A tool that paused the graph for a human neither failed nor returned: no observation.
        error = None if _interrupt(run.get("error")) else _error_text(run.get("error"))
        if reply is not None and reply.status == "error" and not error:
            error = reply.text or TOOL_FAILED
        text = reply.text if reply is not None else _output_text(output)
        if call_id and error:
            self.failed.add(call_id)
        arguments = _tool_input(run.get("inputs"))
        if not isinstance(arguments, Mapping) and _name(run) in self.requested.values():
            # ``{"input": text}`` is LangChain's one-string input, unwrapped above; but a tool
            # the model asked for by name (the Agents SDK's, whose arguments LangSmith's
            # processor records as they are: ``{"input": "2 + 2"}``) has the model's arguments.
            arguments = None
        self.builder.tool_result(
            _name(run),
            arguments=arguments,
            output=None if error else text,
            error=error,
            call_id=call_id,
            at=start,
            latency_ms=elapsed_ms(start, end),
        )

    def _note_error_messages(self, value: Any) -> None:
        messages = value if isinstance(value, list) else find_messages(value)
        for message in messages:
            failed = isinstance(message, Message) and message.status == "error"
            if failed and message.role == "tool" and message.tool_call_id:
                self.error_messages.setdefault(message.tool_call_id, message)

    def settle_run_errors(self, root_error: str | None) -> bool:
        """Tell the errors of chains below the root that no step inside already told.

        The Agents SDK's agent run, as LangSmith's processor records a tripped guardrail, is
        one; one after which no model or tool ran ends the run. Returns whether one did.
        """
        ended = False
        for error, end in self.run_errors:
            if any(error in told or told in error for told in self.builder.error_texts):
                continue  # a step's failure passed up
            if root_error and (error in root_error or root_error in error):
                continue  # the root's own error (the graph's limit), which the root tells
            last = end is None or self.last_start is None or self.last_start <= end
            self.builder.error(error, at=end, terminal=last)
            ended = ended or last
        return ended

    def settle_error_messages(self) -> None:
        """An error ``ToolMessage`` fails the call it answers, when this trace made that call.

        A call no tool run recorded (an unknown tool name) is known only from it; a call whose
        tool run already failed keeps the run's own error.
        """
        for call_id, message in self.error_messages.items():
            if call_id in self.failed or call_id not in self.requested:
                continue
            name = self.requested[call_id]
            self.builder.tool_result(name, error=message.text or TOOL_FAILED, call_id=call_id)


def _thinking_of_calls(nodes: list[tuple[RunNode, bool]]) -> dict[str, tuple[str, ...]]:
    """Anthropic's thinking blocks in the model runs' requests, by the ``tool_use`` ids beside them.

    An assistant turn of a request (``{"role": "assistant", "content": [blocks]}``) is an
    earlier reply sent back: its ``thinking`` blocks are that reply's reasoning, which the run
    of that reply may not record (see :meth:`_Walk._recalled`).
    """
    found: dict[str, tuple[str, ...]] = {}
    for node, _ in nodes:
        if _kind(node.run) not in _MODEL_RUNS:
            continue
        messages = as_object(node.run.get("inputs")).get("messages")
        for message in messages if isinstance(messages, list) else []:
            content = as_object(message).get("content")
            if as_object(message).get("role") != "assistant" or not isinstance(content, list):
                continue
            blocks = [as_object(block) for block in content]
            thinking = tuple(
                str(block["thinking"])
                for block in blocks
                if block.get("type") == "thinking" and non_blank(block.get("thinking"))
            )
            for block in blocks:
                call_id = non_blank(block.get("id")) if block.get("type") == "tool_use" else None
                if call_id and thinking:
                    found.setdefault(call_id, thinking)
    return found


def _tool_result_blocks(messages: Any) -> Iterator[tuple[str | None, str | None, bool]]:
    """Anthropic's ``tool_result`` blocks of a request's messages: call id, text, ``is_error``."""
    for message in messages if isinstance(messages, list) else []:
        content = as_object(message).get("content")
        for raw in content if isinstance(content, list) else []:
            block = as_object(raw)
            if block.get("type") != "tool_result":
                continue
            result = block.get("content")
            if isinstance(result, list):  # text blocks
                texts = [as_object(part).get("text") for part in result]
                result = "\n".join(text for text in texts if isinstance(text, str))
            text = result if isinstance(result, str) else None
            yield non_blank(block.get("tool_use_id")), text, block.get("is_error") is True


def model_output(outputs: Any) -> list[Message]:
    """The AI messages a model run returned, in every shape LangChain and LangSmith record."""
    if not isinstance(outputs, Mapping):
        return []
    found: list[Message] = []
    generations = outputs.get("generations")
    if isinstance(generations, list):
        for batch in generations:
            candidates = batch if isinstance(batch, list) else [batch]
            first = next((item for item in candidates if isinstance(item, Mapping)), None)
            if first is None:
                continue
            message = as_message(first.get("message"))
            if message is None and isinstance(first.get("text"), str):
                message = Message("ai", first["text"] or None)
            if message is not None:
                found.append(message)
        return found
    choices = outputs.get("choices")
    if isinstance(choices, list):
        first_choice = next((item for item in choices if isinstance(item, Mapping)), None)
        message = as_message(as_object(first_choice).get("message"))
        return [message] if message is not None else []
    items = responses_reply(outputs.get("output"))
    if items is not None:  # Responses API output items (the Agents SDK's, in LangSmith)
        return [items]
    for key in ("output", "message"):
        message = as_message(outputs.get(key)) if key in outputs else None
        if message is not None:
            return [message]
    message = as_message(outputs)
    return [message] if message is not None else []


def _answer_run(nodes: list[tuple[RunNode, bool]]) -> int | None:
    """The model run whose text is the final answer: the last one, when it calls no tool.

    Nor when a tool ran after it (no model run read its result): its words were said before
    acting, a thought, and the run ends on a tool's result, with no answer (as in spans).
    """
    last: Mapping[str, Any] | None = None
    ran_after = False
    for node, inside_tool in nodes:
        if (
            not inside_tool
            and _kind(node.run) in _MODEL_RUNS
            and model_output(node.run.get("outputs"))
        ):
            last, ran_after = node.run, False
        elif not inside_tool and _kind(node.run) in _TOOL_RUNS and not _middleware(node.run):
            ran_after = last is not None
    if last is None or ran_after:
        return None
    messages = model_output(last.get("outputs"))
    if any(message.tool_calls for message in messages):
        return None
    return id(last) if any(message.text for message in messages) else None


def _middleware(run: Mapping[str, Any]) -> bool:
    """Whether a tool run is a guardrail's check (LangSmith's Agents SDK processor's), no call."""
    metadata = as_object(as_object(run.get("extra")).get("metadata"))
    return metadata.get("ls_agent_type") == "middleware"


def _extraction(nodes: list[tuple[RunNode, bool]]) -> int | None:
    """The model run that put the agent's answer into a structured output.

    LangGraph's ``generate_structured_response``, by the rule the span reader reads it by
    (:func:`~knowledgepulse.sources._structured.is_structured_extraction`).
    """
    models = [
        n for n, (node, inside) in enumerate(nodes) if not inside and _kind(node.run) in _MODEL_RUNS
    ]
    if len(models) < 2:  # the answer, then its extraction
        return None
    last, before = nodes[models[-1]][0].run, nodes[models[-2]][0].run
    ran_after = any(
        _kind(node.run) in _TOOL_RUNS and not inside for node, inside in nodes[models[-1] + 1 :]
    )
    sent = message_list(as_object(last.get("inputs")).get("messages"))
    extracted = is_structured_extraction(
        _part_kinds(last),
        _part_kinds(before),
        ran_after=ran_after,
        sent_last_by_model=sent[-1].role == "ai" if sent else None,
    )
    return id(last) if extracted else None


def _part_kinds(run: Mapping[str, Any]) -> list[str]:
    """What a model run replied with, as the kinds of the GenAI parts it amounts to."""
    kinds: list[str] = []
    for message in model_output(run.get("outputs")):
        kinds += ["reasoning"] * len(message.reasoning)
        kinds += ["text"] if message.text else []
        kinds += ["tool_call"] * len(message.tool_calls)
    return kinds


def _objective(inputs: Any) -> str | None:
    """The task: the first human message, else ``input`` (and the like), else a string value."""
    if isinstance(inputs, str):
        return inputs or None
    if not isinstance(inputs, Mapping):
        return None
    # A graph without a checkpointer is given the conversation so far: its newest turn.
    messages = message_list(inputs.get("messages"))
    said = [message.text if message.role == "human" else None for message in messages]
    if asked := newest_request(said, [message.role in ("ai", "tool") for message in messages]):
        return asked
    for key in _OBJECTIVE_KEYS:
        value = inputs.get(key)
        text = value if isinstance(value, str) else _text_of(value)
        if text and text.strip():
            return text
    # Responses API input items (the Agents SDK's workflow, as LangSmith's processor records
    # it: ``{"input": [items], "instructions": ...}``): the first user message.
    for message in message_list(inputs.get("input")):
        if message.role == "human" and message.text:
            return message.text
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts and isinstance(prompts[0], str):
        return prompts[0].removeprefix("Human: ") or None
    return next(
        (
            value
            for key, value in inputs.items()
            if isinstance(value, str) and value and key not in _SYSTEM_KEYS
        ),
        None,
    )


def _system(inputs: Mapping[str, Any], history: list[Message]) -> str | None:
    """A model run's system prompt: its first ``system`` message, else its ``instructions``.

    A chat model is sent the prompt as a message (LangChain's ``SystemMessage``, the Agents
    SDK's agent instructions through the Chat Completions model); the Responses API as
    ``instructions``.
    """
    said = next((m.text for m in history if m.role == "system" and non_blank(m.text)), None)
    return said or non_blank(inputs.get("instructions"))


def _result(outputs: Any) -> str | None:
    """What a root run returned: ``output``, else the last AI message of ``messages``."""
    if isinstance(outputs, str):
        return outputs or None
    if not isinstance(outputs, Mapping):
        return None
    output = outputs.get("output")
    if isinstance(output, str) and output.strip():
        return output
    text = _text_of(output)
    if text:
        return text
    reply = responses_reply(output)
    if reply is not None and reply.text and not reply.tool_calls:
        return reply.text
    # The last AI message, unless it asks for tools: a run that stopped there (interrupted for a
    # human, or cut short) gave no answer, and the text said with the calls is no answer.
    replies = [m for m in message_list(outputs.get("messages")) if m.role == "ai"]
    if replies and replies[-1].text and not replies[-1].tool_calls:
        return replies[-1].text
    return None


def _text_of(value: Any) -> str | None:
    message = as_message(value) if isinstance(value, Mapping) else None
    return message.text if message is not None else None


def _tool_input(inputs: Any) -> Any:
    """A tool run's arguments: the inputs dict, or the one ``input`` string read as an object."""
    if not isinstance(inputs, Mapping) or set(inputs) != {"input"}:
        return inputs or None
    value = inputs["input"]
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return parsed_json(value)
        except (ValueError, RecursionError):
            pass
        try:  # LangChain writes ``str(dict)`` here: a Python literal, read safely
            parsed = python_literal(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, dict) else value
    return value


def _output_text(output: Any) -> str | None:
    if isinstance(output, list) and output and all(isinstance(doc, Mapping) for doc in output):
        contents = [doc.get("page_content") for doc in output]
        if all(isinstance(text, str) for text in contents):
            return "\n\n".join(text for text in contents if isinstance(text, str))
    return content_text(output)


def _interrupt(error: Any) -> bool:
    """Whether a run's error is LangGraph's pause for a human (``interrupt()``), no failure."""
    return isinstance(error, str) and error.lstrip().startswith(_INTERRUPTS)


def _error_text(error: Any) -> str | None:
    """A run's error without its Python traceback (the exception is what the agent saw)."""
    if not isinstance(error, str) or not error.strip():
        return None
    if error.startswith("{'message': "):
        # The Agents SDK's span error as LangSmith's processor writes it (``str()`` of
        # ``{"message", "data"}``): read as that SDK's own spans are.
        try:
            told = agents_error_text(as_object(python_literal(error)))
        except ValueError:
            told = None
        if told and told != "error":
            return told
    head = error.split(_TRACEBACK, 1)[0].strip()
    return head or error.strip()


def _metadata(run: Mapping[str, Any]) -> dict[str, Any]:
    metadata = dict(as_object(as_object(run.get("extra")).get("metadata")))
    for alias, key in _ALIASES.items():
        if key not in metadata and alias in metadata:
            metadata[key] = metadata[alias]
    return metadata


def _name(run: Mapping[str, Any]) -> str:
    name = non_blank(run.get("name")) or non_blank(as_object(run.get("serialized")).get("name"))
    return name or _kind(run) or "run"


def _kind(run: Mapping[str, Any]) -> str:
    kind = run.get("run_type")
    return kind.lower() if isinstance(kind, str) else ""


__all__ = ["MAX_RUNS_PER_TRACE", "RunNode", "convert_tree", "model_output"]
