"""What a span means, read in the dialects instrumentations speak, in Phoenix's precedence.

Per span, Claude Code's own attributes win on its ``claude_code.*`` spans, then OpenInference
attributes, then the GenAI conventions (latest), then the legacy / OpenLLMetry flattened names,
then the Vercel AI SDK's ``ai.*`` names, then Pydantic AI's own (``agent run``, ``running tool``,
``pydantic_ai.all_messages``, ``final_result``), then Langfuse's, then MLflow's: each later
dialect only fills in what the earlier ones left empty. A span is an *agent* (the run: objective
and answer), an *inference* (model output: thoughts and requested tool calls), a *tool*
execution, an *event* (a point in time, Langfuse's ``EVENT``: an evident error when it failed,
else nothing), or *other* (embeddings, ``create_agent``, HTTP, databases: ignored, their children
still read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from knowledgepulse._util.jsonpath import as_object, as_string, non_blank
from knowledgepulse.sources import pydantic_ai
from knowledgepulse.sources._chat._tools import row_tools
from knowledgepulse.sources._envelope import (
    DSPY_REACT_CALL,
    MODEL_KEYS,
    dspy_field_values,
    first_model,
)
from knowledgepulse.sources._hosted import (
    approved_request,
    failure,
    hosted_result,
    list_tools_error,
    refusal,
    tool_name,
)
from knowledgepulse.sources._steps import TOOL_FAILED, as_text, python_dict, python_fields
from knowledgepulse.sources.openai_agents._spans import error_text
from knowledgepulse.sources.otel import messages as msg
from knowledgepulse.sources.otel._haystack import is_chat_message
from knowledgepulse.sources.otel.logs import with_event_content
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.sources.smolagents._run import FINAL_ANSWER_TOOL

Role = Literal["agent", "inference", "tool", "event", "other"]

_OPENINFERENCE_ROLES: dict[str, Role] = {
    "LLM": "inference",
    "TOOL": "tool",
    "RETRIEVER": "tool",
    "AGENT": "agent",
    "CHAIN": "agent",
}
_GENAI_ROLES: dict[str, Role] = {
    "invoke_agent": "agent",
    "invoke_workflow": "agent",
    "chat": "inference",
    "text_completion": "inference",
    "generate_content": "inference",
    "execute_tool": "tool",
    "retrieval": "tool",  # see RETRIEVE
}
RETRIEVE = "retrieve"
"""The tool name of a retrieval whose span names no retriever.

A retrieval (OpenInference's ``RETRIEVER`` span, the GenAI conventions' ``retrieval``
operation) is an action the run took that had a result, the documents: a tool call, its
query the input and the documents its observation, in both conventions alike. Inside a tool's
own span it is how that tool did its work, which the tool's call already tells (build.py)."""
_TRACELOOP_ROLES: dict[str, Role] = {"workflow": "agent", "agent": "agent", "tool": "tool"}


@dataclass
class View:
    """What one span says, in GenAI terms (``None``: this span does not say)."""

    role: Role | None = None
    agent_name: str | None = None
    model: str | None = None
    """The model the span names (the one that replied, else the one asked for): a model call's,
    or the agent's a run's span names."""
    input_messages: list[msg.Message] | None = None
    output_messages: list[msg.Message] | None = None
    input_text: str | None = None
    output_text: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    arguments: Any = None
    result: Any = None
    mcp_server: str | None = None
    is_mcp: bool = False
    retrieval: bool = False
    error: str | None = None
    succeeded: bool = False
    """Whether the span says the call succeeded (Claude Code's ``tool.execution`` ``success``):
    then its result's words (``Error: result ... exceeds maximum allowed tokens``, Claude Code's
    note that it saved an oversized result to a file) fail nothing."""
    awaiting: bool = False  # the agent stopped for tool results or approvals it was not given
    answers: bool = False  # the call is the run's answer (smolagents' final_answer), no tool
    instant: bool = False  # the span marks a moment (an event): its end times nothing
    streamed: bool = False
    """Whether the tool returned a generator, its result what the spans run after it gave (an
    Agno team's delegation, its members' runs)."""
    said: bool = False
    """Whether any dialect read anything of the span."""

    def fill(self, **values: Any) -> None:
        """Set each field still empty (a dialect read before this one wins)."""
        for name, value in values.items():
            if value is None or value in ([], ""):
                continue
            if getattr(self, name) in (None, False):
                setattr(self, name, value)
                self.said = True


def read(span: Span) -> View:
    """What ``span`` means, every dialect read in precedence order."""
    view = View()
    attributes = with_event_content(span)  # content recorded as span events is the span's
    for dialect in _DIALECTS:
        dialect(span, attributes, view)
    if view.role is None:
        view.role = "other"
    view.model = view.model or first_model(*map(attributes.get, MODEL_KEYS))
    if view.role == "inference" and view.output_messages:
        view.output_messages = [_dspy_reply(message) for message in view.output_messages]
    view.error = evident_error(span) or view.error  # the span's status, else what a dialect read
    return view


def offered_tools(span: Span, *, inference: bool = False) -> tuple[dict[str, Any], ...]:
    """The tools the span says the model was offered, as OpenAI function definitions.

    The conventions' ``gen_ai.tool.definitions`` (a list: OpenAI's definitions, or flat
    ``{"type", "name", "description", "parameters"}``), else OpenInference's ``llm.tools``: each
    ``tool.json_schema`` the provider's own definition (OpenAI's, Anthropic's ``input_schema``),
    or only the arguments' schema beside ``tool.name`` and ``tool.description`` (Microsoft's
    Agent Framework); else OpenLLMetry's ``llm.request.functions.{i}`` (LiteLLM's too); else
    MLflow's ``mlflow.chat.tools``, the Vercel AI SDK's ``ai.prompt.tools``; else the Gemini
    tools Google ADK's ``call_llm`` span records in the request it sent
    (``gcp.vertex.agent.llm_request``'s ``config.tools``); else, for a model call
    (``inference``), the ``tools`` of the request body the span records as its input (the Langfuse
    SDK's ``langfuse.observation.input``, LangSmith's ``gen_ai.prompt``, OpenInference's
    ``input.value`` or ``llm.invocation_parameters``). None when the span names none, or one
    cannot be read.
    """
    attrs = span.attributes
    listed = msg.loads(attrs.get("gen_ai.tool.definitions"))
    if not isinstance(listed, list):
        listed = [_openinference_tool(entry) for entry in msg.indexed(attrs, "llm.tools")]
    if not listed:
        listed = [_flattened_function(entry) for entry in msg.indexed(attrs, _FUNCTIONS)]
    if not listed:
        listed = next(filter(None, (_listed(attrs.get(key)) for key in _TOOL_LISTS)), None)
    if not listed:
        request = _request(attrs.get(_ADK_REQUEST))
        listed = as_object(request.get("config")).get("tools")
    if not listed and inference:
        requests = (_request(attrs.get(key)).get("tools") for key in _REQUESTS)
        listed = next((found for found in requests if isinstance(found, list) and found), None)
    if not listed and inference and "model_request_parameters" in str(attrs.get(_MLFLOW_INPUTS)):
        # ``mlflow.pydantic_ai.autolog()``: the model's arguments, its ``function_tools`` offered
        request = as_object(msg.loads(attrs.get(_MLFLOW_INPUTS)))
        listed = pydantic_ai.function_tools(request.get("model_request_parameters"))
    return row_tools({"tools": listed}) if listed else ()


def _request(value: Any) -> Mapping[str, Any]:
    """A recorded request body, read only where its text may name ``tools``.

    The body is the whole conversation sent, which the span's reader has parsed for its
    messages already: parsing it again for a ``tools`` key it does not hold is wasted.
    """
    if isinstance(value, str) and "tools" not in value and "\\u" not in value:
        return {}
    return as_object(msg.loads(value))


_REQUESTS = (
    "langfuse.observation.input",
    "gen_ai.prompt",
    "input.value",
    "llm.invocation_parameters",
)
"""Where a model call's span keeps the request body it sent (its ``tools`` beside the messages)."""


_TOOL_LISTS = ("mlflow.chat.tools", "ai.prompt.tools")
"""Attributes that list the definitions, as JSON text: MLflow's (OpenAI's definitions, what its
autologging records of every chat model call) and the Vercel AI SDK's (a JSON text each)."""


def _listed(value: Any) -> list[Any] | None:
    """An attribute's list (its JSON text read), else ``None``."""
    loaded = msg.loads(value)
    return loaded if isinstance(loaded, list) else None


_FUNCTIONS = "llm.request.functions"
"""OpenLLMetry's flattened tool definitions (``.{i}.name``, ``.description``, ``.parameters``
its JSON Schema as JSON text), which LiteLLM's spans write too."""


def _flattened_function(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One of ``llm.request.functions.{i}``, its schema read from its JSON text."""
    return {**entry, "parameters": msg.loads(entry.get("parameters")) or {"type": "object"}}


def _openinference_tool(entry: Mapping[str, Any]) -> Any:
    """One of OpenInference's ``llm.tools.{i}``, as a definition ``row_tools`` reads."""
    schema = msg.loads(entry.get("tool.json_schema"))
    name = non_blank(entry.get("tool.name"))
    if name is None or (isinstance(schema, dict) and ("name" in schema or "function" in schema)):
        return schema
    described = {"description": entry["tool.description"]} if "tool.description" in entry else {}
    return {"name": name, **described, "parameters": schema or {"type": "object"}}


def _dspy_reply(message: msg.Message) -> msg.Message:
    """A model's reply to a DSPy adapter, its text read as the fields it wrote, a part each.

    The reply's ``[[ ## next_thought ## ]]`` markers are DSPy's format, not what the model said
    (``_envelope.dspy_field_values``); any other text is kept as it is. Each field is its own
    part, so that the ``answer`` an extract step writes after its ``reasoning`` is the answer,
    told once; ReAct's ``next_tool_name`` and ``next_tool_args`` are its call, not words.
    """
    parts = [told for part in message["parts"] for told in _dspy_field_parts(part)]
    return {**message, "parts": parts}


def _dspy_field_parts(part: dict[str, Any]) -> list[dict[str, Any]]:
    """A text part as the fields of the DSPy reply it is, a part a field; other parts as given."""
    content = part.get("content")
    values = (
        dspy_field_values(content)
        if part.get("type") == "text" and isinstance(content, str)
        else None
    )
    if values is None:
        return [part]
    return [
        {**part, "content": value}
        for name, value in values.items()
        if value and name not in DSPY_REACT_CALL
    ]


def evident_error(span: Span) -> str | None:
    """The error text when the span failed (status ERROR, ``error.type``, an exception event).

    An exception recorded on a span whose status is OK did not fail it: the instrumentation
    set OK after it (AutoGen's agent span records the ``CancelledError`` that closes its
    message stream, then ends OK).
    """
    exception = next(
        (
            event
            for event in span.events
            if event.name in ("exception", "gen_ai.execute_tool.exception") and not span.ok
        ),
        None,
    )
    error_type = span.attributes.get("error.type")
    if not (span.error or error_type or exception):
        return None
    if exception is not None:
        message = exception.attributes.get("exception.message")
        kind = exception.attributes.get("exception.type")
        if isinstance(message, str) and message:
            return message
        if isinstance(kind, str) and kind:
            return kind
    if isinstance(error_type, str) and error_type and _openlit_tool_failure(span):
        return error_type
    if span.status_message:
        return span.status_message
    return str(error_type) if error_type else "the span ended with status ERROR"


_OPENLIT_TOOL_FAILED = "Tool execution failed"
"""The status message OpenLIT gives every failed Agno tool span, whatever the error."""


def _openlit_tool_failure(span: Span) -> bool:
    """Whether ``span`` is an OpenLIT tool span whose status message is OpenLIT's fixed one.

    OpenLIT's Agno instrumentation (sdk/python/src/openlit/instrumentation/agno/utils.py,
    ``_set_tool_attributes``) sets ``error.type`` to ``str(response.error)`` (the error text
    the model was sent) when the tool's ``status`` is not ``success``, then ends the span
    ERROR with the fixed "Tool execution failed"; it marks its spans with the attribute
    ``telemetry.sdk.name`` = ``openlit``. Elsewhere ``error.type`` is a class (OTel's
    convention), so the status message stays the better text.
    """
    return (
        span.error
        and span.status_message == _OPENLIT_TOOL_FAILED
        and span.attributes.get("telemetry.sdk.name") == "openlit"
    )


def _openinference(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    kind = attrs.get("openinference.span.kind")
    if not isinstance(kind, str):
        return
    role = _OPENINFERENCE_ROLES.get(kind.upper(), "other")
    dspy_tool = _dspy_tool(span, attrs) if kind.upper() == "TOOL" else None
    if dspy_tool == DSPY_FINISH:
        # DSPy ReAct's ``finish`` ends its loop: choosing it says the outputs can be extracted
        # (dspy/predict/react.py: ``if pred.next_tool_name == "finish": break``). It runs no
        # tool, and returns "Completed." whatever was asked; MLflow's DSPy tracer, for one,
        # makes no span of it. Plumbing, as OpenHands' ``finish`` is no call.
        view.fill(role="other")
        return
    view.fill(role=role, agent_name=non_blank(attrs.get("agent.name")))
    if role == "inference":
        view.fill(
            input_messages=_told_messages(attrs)
            or msg.openinference_messages(attrs, "llm.input_messages")
            or msg.prompt_messages(attrs, "llm.prompts"),
            output_messages=_spoken(msg.openinference_messages(attrs, "llm.output_messages"))
            or _called(attrs.get("output.value"))
            or _completion(attrs.get("output.value"), attrs.get("output.mime_type")),
            model=_google_replied_model(attrs.get("output.value")),
        )
    elif role == "tool" and kind.upper() == "RETRIEVER":
        documents = msg.indexed(attrs, "retrieval.documents")
        view.fill(
            retrieval=True,
            # the retriever's run name; a DSPy retriever's without the Python method's name
            tool_name=_dspy_retriever(span.name) or non_blank(span.name) or RETRIEVE,
            arguments=_query(msg.input_text(attrs.get("input.value"))),
            # Each document as recorded: its id, content, score and metadata.
            result=[
                {key.removeprefix("document."): value for key, value in entry.items()}
                for entry in documents
            ]
            or attrs.get("output.value"),
        )
    elif role == "tool":
        tool_name = non_blank(attrs.get("tool.name")) or dspy_tool or span.name
        called = msg.loads(attrs.get("input.value"))
        output = _tool_run_output(attrs.get("output.value"))
        view.fill(
            tool_name=tool_name,
            call_id=non_blank(attrs.get("tool_call.id")),
            arguments=_called_with(called),
            result=_tool_result(output, tool_name),
            error=msg.tool_failure(output) or _tool_output_error(_llama_index_tool_output(output)),
            answers=tool_name == FINAL_ANSWER_TOOL and _smolagents_call(called),
        )
    elif role == "agent":
        view.fill(
            input_text=_crew_tasks(attrs) or msg.input_text(attrs.get("input.value")),
            # A LangGraph agent's output is its state: OpenInference's LangChain instrumentor
            # (0.1.x) wrote its messages as ``str(message)`` (``content='...' name=...``), no
            # message kp reads, and that JSON is no answer: the model's last reply is.
            output_text=_state_text(attrs.get("output.value")),
        )


_DSPY_TOOL_SPAN = re.compile(r"(?P<tool>.+)\.(?:__call__|acall)")
"""How OpenInference's DSPy instrumentor names a tool's span: ``(Tool.name or the class's name)``
then the method traced, ``.__call__`` or ``.acall`` (``_ToolCallWrapper``); it writes no
``tool.name``."""
DSPY_FINISH = "finish"
"""The tool DSPy's ReAct adds to every agent's tools to end its loop (``Tool(name="finish")``)."""


def _dspy_tool(span: Span, attrs: Mapping[str, Any]) -> str | None:
    """The name of the DSPy ``Tool`` a tool span without ``tool.name`` ran, from its span name.

    A Python method's name (``add.__call__``) names no tool: the ``Tool.name`` before it does.
    Tool spans of other instrumentations name their tool (``tool.name``) and are left alone.
    """
    if non_blank(attrs.get("tool.name")):
        return None
    found = _DSPY_TOOL_SPAN.fullmatch(span.name)
    return found.group("tool") if found else None


_DSPY_RETRIEVER_SPAN = re.compile(r"(?P<retriever>.+)\.(?:__call__|forward)")
"""How OpenInference's DSPy instrumentor names a retriever's span: the class's name then the
method traced, ``.forward`` for ``dspy.Retrieve`` and its subclasses (``_RetrieverForwardWrapper``)
and ``.__call__`` for a retriever model such as ``ColBERTv2`` (``_RetrieverModelCallWrapper``)."""


def _dspy_retriever(span_name: str) -> str | None:
    """The retriever a DSPy ``RETRIEVER`` span ran (``Retrieve``), from its span's name.

    As for a DSPy tool's span (``_dspy_tool``), the Python method's name (``ColBERTv2.__call__``)
    names no retriever: the class before it does. Other instrumentations name the retriever
    (LangChain's run name ``VectorStoreRetriever``) and are left alone.
    """
    found = _DSPY_RETRIEVER_SPAN.fullmatch(span_name)
    return found.group("retriever") if found else None


def _told_messages(attrs: Mapping[str, Any]) -> list[msg.Message]:
    """A model call's request from its ``input.value``, where the flattened messages lack some.

    OpenInference's Haystack instrumentor flattens a tool message to its role alone (no result,
    no call id) and keeps the whole request in ``input.value`` as ``{"messages": [repr, ...]}``,
    Haystack ``ChatMessage`` reprs: the results are read from there. Else none (the flattened
    messages, which every other instrumentor writes whole, are read).
    """
    flat = msg.openinference_messages(attrs, "llm.input_messages")
    if all(message["parts"] for message in flat):
        return []
    told = msg.loads(attrs.get("input.value"))
    listed = told.get("messages") if isinstance(told, dict) else None
    if not isinstance(listed, list) or not listed or not all(map(is_chat_message, listed)):
        return []
    return msg.messages(listed)


def _tool_run_output(value: Any) -> Any:
    """A LangChain tool run's result, out of the run's outputs ``{"output": ...}``.

    LangChain's tracers keep what a tool returned as its run's ``{"output": value}``, and the
    model is given the value. The LangSmith SDK writes the outputs whole; OpenInference's
    LangChain instrumentor writes them as JSON unless their one value is text (0.1.x, as
    any-agent's traces of May 2025 hold, wrote that too). Any other value is kept as it is.
    """
    loaded = msg.loads(value)
    if isinstance(loaded, dict) and set(loaded) == {"output"}:
        return loaded["output"]
    return value


def _tool_result(value: Any, tool_name: str) -> Any:
    """An OpenInference tool span's result, out of what its framework wraps it in."""
    ran = _llama_index_tool_output(value)
    if ran is not None:
        return _tool_output_text(ran)
    return _function_response(msg.tool_output(value), tool_name)


def _llama_index_tool_output(value: Any) -> Mapping[str, Any] | None:
    """LlamaIndex's ``ToolOutput`` (a tool's run as its instrumentations dump it), else ``None``.

    ``{"tool_name", "raw_input", "raw_output", "is_error"}`` with the result as text in
    ``content`` (before 0.12.x) or in ``blocks`` (``[{"block_type": "text", "text"}]``).
    """
    loaded = msg.loads(value)
    if (
        isinstance(loaded, dict)
        and isinstance(loaded.get("tool_name"), str)
        and {"raw_input", "raw_output"} <= loaded.keys()
    ):
        return loaded
    return None


def _llama_index_tool_call_result(value: Any) -> Mapping[str, Any] | None:
    """LlamaIndex's ``ToolCallResult`` as OpenLLMetry dumps a workflow step's output, else ``None``.

    ``tool_name``, ``tool_kwargs``, ``tool_id`` and its ``tool_output``, a ``ToolOutput``.
    """
    loaded = msg.loads(value)
    if (
        isinstance(loaded, dict)
        and isinstance(loaded.get("tool_name"), str)
        and isinstance(loaded.get("tool_kwargs"), dict)
        and _llama_index_tool_output(loaded.get("tool_output")) is not None
    ):
        return loaded
    return None


def _tool_output_text(ran: Mapping[str, Any]) -> Any:
    """A ``ToolOutput``'s result as the agent was given it: its text, else the raw output."""
    if isinstance(ran.get("content"), str):
        return ran["content"]
    blocks = ran.get("blocks")
    texts = [
        block["text"]
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts) if texts else ran.get("raw_output")


def _tool_output_error(ran: Mapping[str, Any] | None) -> str | None:
    """The error text of a ``ToolOutput`` marked ``is_error`` (LlamaIndex caught the raise)."""
    if ran is None or ran.get("is_error") is not True:
        return None
    text = _tool_output_text(ran)
    return text if isinstance(text, str) and text else TOOL_FAILED


def _function_response(output: Any, tool_name: str) -> Any:
    """A tool's result out of the Gemini ``FunctionResponse`` that carries it, else the output.

    OpenInference's Google ADK instrumentor records a tool's output as the function response
    ADK sends the model, ``{"id": "adk-...", "name": "get_weather", "response": {...}}``: the
    result is its ``response`` (whose ``error`` or ``status`` says when the tool failed); the
    call's id and the tool's name are no part of it.
    """
    loaded = msg.loads(output)
    if (
        isinstance(loaded, dict)
        and {"id", "name", "response"} <= loaded.keys()
        and loaded["name"] == tool_name
    ):
        return loaded["response"]
    return output


def _called(value: Any) -> list[msg.Message]:
    """A model call's output that is only the tool calls it made, as OpenAI lists them.

    OpenInference's crewAI event listener (``use_event_listener=True``) records a reply that
    calls tools as ``output.value`` alone: ``[{"id", "function": {"name", "arguments"}}]``.
    """
    calls = msg.loads(value)
    if not isinstance(calls, list) or not calls:
        return []
    if not all(isinstance(call, dict) and isinstance(call.get("function"), dict) for call in calls):
        return []
    return msg.messages([{"role": "assistant", "tool_calls": calls}])


def _google_replied_model(value: Any) -> str | None:
    """The model that replied, as a Gemini response names it (``model_version``).

    OpenInference's Vertex AI instrumentation names the model asked for, the resource path
    (``projects/.../publishers/google/models/gemini-2.5-flash``) as ``llm.model_name``; the
    response it keeps as ``output.value`` says which model replied: ``gemini-2.5-flash``.
    """
    response = as_object(msg.loads(value))
    return non_blank(response.get("model_version")) or non_blank(response.get("modelVersion"))


def _spoken(messages: list[msg.Message]) -> list[msg.Message]:
    """The messages, when one of them says anything (an entry with only a role says nothing)."""
    return messages if any(message["parts"] for message in messages) else []


def _completion(value: Any, mime_type: Any) -> list[msg.Message]:
    """A model call's answer told only as ``output.value``, as an assistant message.

    Completion-style calls record no ``llm.output_messages``: LlamaIndex's ``OpenAI.complete``
    writes the text itself (``text/plain``, OpenInference's default when no mime type is
    written); LangChain's LLM runs dump their outputs as JSON (``{"generations": [[{"text"}]]}``),
    OpenAI's completions API answers ``{"choices": [{"text"}]}``, LlamaIndex's
    ``CompletionResponse`` is ``{"text"}``. JSON holding no text says no answer. A LlamaIndex
    ``ChatResponse`` written as text is its message's ``role: content`` (``assistant: Yes``):
    that turn, without its label.
    """
    if not isinstance(value, str) or not value.strip():
        return []
    loaded: Any = value if mime_type == "text/plain" else msg.loads(value)
    text = loaded if isinstance(loaded, str) else _completion_text(loaded)
    if not text or not text.strip():
        return []
    return msg.transcript(text) or msg.messages([{"role": "assistant", "content": text}])


def _completion_text(loaded: Any) -> str | None:
    """The text a completion's JSON output holds: its first generation's or choice's."""
    if not isinstance(loaded, dict):
        return None
    generations = loaded.get("generations")
    if isinstance(generations, list) and generations:  # LangChain's LLMResult: a list a prompt
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else None
        return _completion_text(first)
    choices = loaded.get("choices")
    if isinstance(choices, list) and choices:
        return _completion_text(choices[0])
    for key in ("text", "content", "completion", "output"):
        if isinstance(loaded.get(key), str):
            return str(loaded[key])
    return None


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A ``{name}`` in a crewAI task's description, filled from the kickoff's inputs."""


def _crew_tasks(attrs: Mapping[str, Any]) -> str | None:
    """What a crewAI crew was asked: its tasks' descriptions, each with the kickoff's inputs.

    OpenInference's crew kickoff span lists the tasks (``crew_tasks``) as written, before crewAI
    fills their ``{name}`` placeholders from the inputs (``crew_inputs``, also the span's
    ``input.value``: JSON, no request); OpenLLMetry's ``crewai.workflow`` span lists them as
    ``crewai.crew.tasks``, and records no inputs. Its agents are sent each description inside
    crewAI's own prompt (``Current Task: ...``), which is no user's words either.
    """
    tasks = msg.loads(attrs.get("crew_tasks", attrs.get("crewai.crew.tasks")))
    if not isinstance(tasks, list):
        return None
    inputs = msg.loads(attrs.get("crew_inputs"))
    values = inputs if isinstance(inputs, dict) else {}

    def filled(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    descriptions = [
        _PLACEHOLDER.sub(filled, task["description"]).strip()
        for task in tasks
        if isinstance(task, dict) and non_blank(task.get("description"))
    ]
    return "\n\n".join(descriptions) or None


def _genai(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    operation = attrs.get("gen_ai.operation.name")
    method = attrs.get("mcp.method.name")
    role: Role
    if method == "tools/call":
        role = "tool"
        view.is_mcp = True
    elif isinstance(operation, str):
        role = _GENAI_ROLES.get(operation, "other")
        if role == "other" and "gen_ai.output.messages" in attrs:
            # A model's reply under an operation of the caller's own naming: LiteLLM names its
            # span's operation by its call type (``acompletion``); before, the trace was
            # skipped as holding no GenAI span.
            role = "inference"
        elif role == "other" and _names_its_tool(attrs, view):
            role = "tool"  # a tool's run under an operation of the caller's own naming
    elif isinstance(method, str):
        role = "other"  # MCP listings and other methods are plumbing
    elif _names_its_tool(attrs, view):
        role = "tool"
    else:
        return
    if role == "tool" and attrs.get("gen_ai.tool.name") == ADK_MERGED_TOOLS:
        role = "other"  # ADK's span of parallel calls' results merged: no call of its own
    agent_name = non_blank(attrs.get("gen_ai.agent.name"))
    agent_name = agent_name or non_blank(attrs.get("gen_ai.workflow.name"))
    view.fill(
        role=role,
        agent_name=agent_name,
        input_text=_crew_tasks(attrs) if role == "agent" else None,
        input_messages=msg.messages(attrs.get("gen_ai.input.messages")),
        output_messages=msg.messages(attrs.get("gen_ai.output.messages")),
    )
    if "events" in attrs:  # the conventions' earlier message events, kept as one attribute
        inputs, outputs = msg.event_messages(attrs["events"])
        view.fill(input_messages=inputs, output_messages=outputs)
    if operation == "retrieval":
        view.fill(
            retrieval=True,
            tool_name=RETRIEVE,  # the conventions name the data source, not the retriever
            arguments=_query(non_blank(attrs.get("gen_ai.retrieval.query.text"))),
            result=msg.loads(attrs.get("gen_ai.retrieval.documents")),
        )
    elif role == "tool":
        name = non_blank(attrs.get("gen_ai.tool.name"))
        if not name and view.is_mcp:
            name = span.name.removeprefix("tools/call").strip() or span.name
        result = _unwrapped(attrs, "gen_ai.tool.call.result", "traceloop.entity.output", "output")
        returned, failed = msg.tool_result(_tool_call_result(result))
        view.fill(
            tool_name=name or span.name.removeprefix("execute_tool").strip() or span.name,
            call_id=_model_call_id(attrs),
            arguments=msg.loads(
                _unwrapped(attrs, "gen_ai.tool.call.arguments", "traceloop.entity.input", "inputs")
            ),
            # A LangChain tool's result is the ToolMessage it returned (MLflow's GenAI
            # translator of ``mlflow.langchain.autolog()``'s spans): read as in its own dialects.
            # Strands (1.62, ``gen_ai_latest_experimental``) writes a result as the JSON of its
            # Converse content blocks (``[{"text": "Paris"}]``): their text is the result.
            result=_blocks_text(returned),
            error=failed,
            mcp_server=_server(attrs) if view.is_mcp else None,
        )
        # Strands Agents tells a tool's call and result as the span's messages instead (its
        # input: the ``tool_call`` part, its output: the ``tool_call_response``), no call
        # attributes (strands/telemetry/tracer.py, start/end_tool_call_span).
        call = _first_part(view.input_messages, "tool_call")
        response = _first_part(view.output_messages, "tool_call_response")
        view.fill(
            call_id=non_blank(call.get("id")),
            arguments=msg.loads(call.get("arguments")),
            result=msg.converse_result(response.get("response")),
        )
        # Sentry's AI agents module names a tool's arguments and result ``gen_ai.tool.input``
        # and ``gen_ai.tool.output`` (its SDKs write them on ``execute_tool`` spans, its
        # JavaScript SDK's being OpenTelemetry spans; jaeger-ui's GenAI fixture has them too):
        # before, the call's result was lost, a tool_call with no observation.
        written, failed = msg.tool_result(attrs.get("gen_ai.tool.output"))
        view.fill(
            arguments=msg.loads(attrs.get("gen_ai.tool.input")),
            result=written,
            error=failed,
        )
        # Koog 0.3 (JetBrains/koog, agents-features-opentelemetry) names its tool spans
        # ``tool.<name>``, with no operation (see _names_its_tool), and keeps the call's
        # arguments and result in OpenInference's ``input.value`` / ``output.value``, without
        # OpenInference's span kind. Before, the result was lost and the model's next request,
        # which carries it as a tool message naming no call, told it as another call.
        output, failed = msg.tool_result(attrs.get("output.value"))
        view.fill(
            arguments=msg.loads(attrs.get("input.value")),
            result=output,
            error=failed,
        )
        view.fill(arguments=_copilot_parameters(attrs))


_COPILOT_PARAMETERS = "github.copilot.tool.parameters."
"""How GitHub Copilot CLI names what a tool was called with, a parameter an attribute (1.0.83:
``github.copilot.tool.parameters.skill_name`` on its ``execute_tool skill`` span), where it
records no ``gen_ai.tool.call.arguments``."""


def _copilot_parameters(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The arguments of a Copilot CLI tool call, by parameter name; ``None`` when it names none."""
    given = {
        key.removeprefix(_COPILOT_PARAMETERS): value
        for key, value in attrs.items()
        if key.startswith(_COPILOT_PARAMETERS)
    }
    return given or None


_MODEL_CALL_KEYS = (
    "gen_ai.request.",
    "gen_ai.response.",
    "gen_ai.usage.",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "llm.request.type",
)
"""Attribute names (or their prefixes) that only a model call's span carries."""


def _names_its_tool(attrs: Mapping[str, Any], view: View) -> bool:
    """Whether a span with no operation the conventions name is a tool's execution.

    From v1.31 (when ``execute_tool`` came) to v1.36 the conventions' execute-tool span only
    SHOULD carry ``gen_ai.operation.name`` (made required in v1.37): its defining attribute is
    ``gen_ai.tool.name``, which no other span of theirs had (the MCP spans, read above, came
    later). So a span naming a tool is that tool's run, as Jaeger's UI classifies it
    (``utils/genai/detect.ts``), unless it is a model call that mentions a tool (its request,
    reply or usage), or an earlier dialect already read it as something else. A
    ``gen_ai.tool.call.id`` alone names no tool: it refers to a call made elsewhere.
    """
    if view.role not in (None, "tool") or not non_blank(attrs.get("gen_ai.tool.name")):
        return False
    return not any(str(key).startswith(_MODEL_CALL_KEYS) for key in attrs)


def _blocks_text(result: Any) -> Any:
    """A tool result that is a list of text blocks (JSON text or not) as their text, else as is."""
    loaded = msg.loads(result)
    if isinstance(loaded, list) and loaded:
        text = msg.converse_result(loaded)
        if isinstance(text, str):
            return text
    return result


def _first_part(messages: list[msg.Message] | None, kind: str) -> dict[str, Any]:
    """The first part of this type among the messages (empty when none)."""
    parts = (part for message in messages or [] for part in message.get("parts", []))
    return next((part for part in parts if part.get("type") == kind), {})


def _unwrapped(attrs: Mapping[str, Any], key: str, entity: str, field: str) -> Any:
    """A tool's ``gen_ai.tool.call.arguments`` or ``.result``, out of OpenLLMetry's wrapper.

    OpenLLMetry's LangChain instrumentation (0.62) copies a tool span's ``traceloop.entity.input``
    and ``.output`` into these: LangChain's callback payloads (``{"input_str", "tags",
    "metadata", "inputs", "kwargs"}``, ``{"output", "kwargs"}``), the call's arguments and result
    one field of each. Only such a copy is unwrapped; any other value is the tool's own.
    """
    value = attrs.get(key)
    if value is None or value != attrs.get(entity):
        return value
    loaded = msg.loads(value)
    if isinstance(loaded, dict) and _CALLBACK_PAYLOAD[field] <= loaded.keys():
        return loaded[field]
    return value


_CALLBACK_PAYLOAD = {"inputs": {"input_str", "inputs"}, "output": {"output", "kwargs"}}
"""The keys that make a value LangChain's callback payload (``on_tool_start``'s, ``_end``'s)."""


def _tool_call_result(value: Any) -> Any:
    """``gen_ai.tool.call.result`` as the tool returned it.

    The conventions type it ``any``, and a span holds it as JSON text, so a result that was
    text may arrive as a JSON string (MLflow's GenAI translator writes ``"Paris"`` with its
    quotes): that string is the text. Other values stay as recorded.
    """
    if isinstance(value, str) and value.strip()[:1] == '"':
        loaded = msg.loads(value)
        if isinstance(loaded, str):
            return loaded
    return value


_ANY_AGENT_CALL = "call_llm"
"""The operation mozilla-ai/any-agent names its model calls (no operation of the conventions)."""
_ANY_AGENT_ANSWER = "final_output"
"""The tool any-agent gives a model for the run's structured output: its ``answer``, no tool."""


def _any_agent(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """The spans mozilla-ai/any-agent writes alike for every framework it wraps.

    A model call is operation ``call_llm``: its request is ``gen_ai.input.messages`` and its
    reply ``gen_ai.output``, text or (``gen_ai.output.type`` ``json``) the tool calls it asked
    for, ``[{"tool.name", "tool.args"}]``; a tool's arguments are ``gen_ai.tool.args`` and its
    result ``gen_ai.output``. Read before the conventions, which have no place for either.
    """
    operation = attrs.get("gen_ai.operation.name")
    output = attrs.get("gen_ai.output")
    if operation == _ANY_AGENT_CALL:
        loaded = msg.loads(output) if attrs.get("gen_ai.output.type") == "json" else output
        listed = loaded if isinstance(loaded, list) else []
        parts = [
            msg.tool_call(None, call.get("tool.name"), msg.loads(call.get("tool.args")))
            for call in listed
            if isinstance(call, dict) and "tool.name" in call
        ]
        if not parts and output is not None and non_blank(as_text(output)):
            # no output is no text (``as_text`` writes ``None`` as JSON's ``null``)
            parts = [{"type": "text", "content": as_text(output)}]
        view.fill(
            role="inference",
            input_messages=msg.messages(attrs.get("gen_ai.input.messages")),
            output_messages=[{"role": "assistant", "parts": parts}] if parts else None,
        )
    elif operation == "execute_tool" and "gen_ai.tool.args" in attrs:
        arguments = msg.loads(attrs["gen_ai.tool.args"])
        if attrs.get("gen_ai.tool.name") in (_ANY_AGENT_ANSWER, FINAL_ANSWER_TOOL):
            # the run's answer (any-agent's structured output, smolagents' final_answer), no tool
            answer = as_text(as_object(arguments).get("answer", output))
            said = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            name = attrs["gen_ai.tool.name"]
            view.fill(role="inference", answers=True, tool_name=name, output_messages=said)
        view.fill(arguments=arguments, result=_json_text(output, attrs))


def _json_text(output: Any, attrs: Mapping[str, Any]) -> Any:
    """An any-agent tool's output as the model got it.

    Text any-agent wrote as JSON (``gen_ai.output.type`` ``json``) is the text itself:
    LlamaIndex's ``None``, written ``"None"``.
    """
    if attrs.get("gen_ai.output.type") != "json" or not isinstance(output, str):
        return output
    try:
        loaded = json.loads(output)
    except ValueError:
        return output
    return loaded if isinstance(loaded, str) else output


ADK_MERGED_TOOLS = "(merged tools)"
"""The tool name of the span Google ADK adds after parallel tool calls (``execute_tool
(merged)``): their results merged into one event, already told by each call's own span."""
_ADK_ARGUMENTS = "gcp.vertex.agent.tool_call_args"
_ADK_RESULT = "gcp.vertex.agent.tool_response"
_ADK_REQUEST = "gcp.vertex.agent.llm_request"
_ADK_RESPONSE = "gcp.vertex.agent.llm_response"
_ADK_EVENT = "gcp.vertex.agent.event_id"
"""The id of the session event an ADK span records: on every span ADK itself writes."""
_ADK_NO_CONTENT = ("{}", "N/A")
"""What ADK writes in its tool attributes when content capture is off (or there is none)."""
_ADK_UNSPECIFIED = "<not specified>"
"""What ADK writes for a call's id and response when the tool raised and so gave none: the
response attribute then reads ``{"result": "<not specified>"}``, a placeholder, not an output."""


def _model_call_id(attrs: Mapping[str, Any]) -> str | None:
    """The call id that ties a tool span to the model's request of it.

    Google ADK gives a call the model sent without an id one of its own (``adk-<uuid>``, or
    ``<not specified>``) that the model call's messages never carry: they number the calls
    ``<tool>_<n>`` instead. Such a span is matched to its request by name, in order. ADK's own
    span says it is ADK's by its legacy arguments attribute, or, where those are off (its spans
    projected onto the conventions' upstream shape), by ADK's event id.
    """
    call_id = non_blank(attrs.get("gen_ai.tool.call.id"))
    adk_own = call_id is not None and (call_id.startswith("adk-") or call_id == _ADK_UNSPECIFIED)
    adk_span = _ADK_ARGUMENTS in attrs or _ADK_EVENT in attrs
    return None if adk_own and adk_span else call_id


def _adk(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    # Google ADK's own attributes, whatever GenAI content mode is on: its call_llm span keeps
    # the request it sent (Gemini ``contents``) and the reply; its execute_tool spans keep the
    # arguments and the response (``{"result": X}`` when the tool returned no object).
    request = msg.loads(attrs.get(_ADK_REQUEST))
    if view.role is None and isinstance(request, dict):
        reply = as_object(msg.loads(attrs.get(_ADK_RESPONSE))).get("content")
        view.fill(
            role="inference",
            input_messages=[*_adk_system(request), *msg.messages(request.get("contents"))],
            output_messages=msg.messages([{"role": "model", **reply}])
            if isinstance(reply, dict)
            else None,
        )
        return
    if view.role != "tool" or _ADK_ARGUMENTS not in attrs:
        return
    arguments, result = attrs.get(_ADK_ARGUMENTS), attrs.get(_ADK_RESULT)
    told = result not in _ADK_NO_CONTENT and not _adk_unspecified(result)
    # An MCP tool's response is its CallToolResult (kagent's): its text, or its failure.
    output, failed = msg.tool_result(result) if told else (None, None)
    view.fill(
        arguments=None if arguments in _ADK_NO_CONTENT else msg.loads(arguments),
        result=output,
        error=failed,
    )


def _adk_system(request: Mapping[str, Any]) -> list[msg.Message]:
    """The system instruction ADK's request was sent, as a system message (none when none).

    Its ``config.system_instruction``: text, or a Gemini ``Content`` of text parts.
    """
    told = as_object(request.get("config")).get("system_instruction")
    if isinstance(told, str):
        return msg.messages([{"role": "system", "content": told}]) if told.strip() else []
    if isinstance(told, dict) and isinstance(told.get("parts"), list):
        return msg.messages([{"role": "system", "parts": told["parts"]}])
    return []


def _adk_unspecified(result: Any) -> bool:
    """Whether ADK's tool response is its placeholder for a tool that raised (no response)."""
    return as_object(msg.loads(result)) == {"result": _ADK_UNSPECIFIED}


def _legacy(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    kind = attrs.get("traceloop.span.kind")
    role: Role | None = _TRACELOOP_ROLES.get(kind) if isinstance(kind, str) else None
    prompt = (
        msg.legacy_messages(attrs, "gen_ai.prompt")
        or msg.messages(attrs.get("gen_ai.prompt"))
        or _openlit(span, "prompt")
    )
    completion = (
        msg.legacy_messages(attrs, "gen_ai.completion")
        or msg.messages(attrs.get("gen_ai.completion"))
        or _openlit(span, "completion")
    )
    if role is None and (prompt or completion or "llm.request.type" in attrs):
        role = "inference"
    entity_input = attrs.get("traceloop.entity.input")
    entity_output = attrs.get("traceloop.entity.output")
    handled = _llama_index_tool_call_result(entity_output) if kind == "task" else None
    if handled is not None:
        # LlamaIndex's agent workflows (0.14) hand each call's result to the agent as a
        # ``ToolCallResult`` (its call's id, arguments and ``ToolOutput``): OpenLLMetry's
        # ``call_tool`` step, a "task" span, says the call, even where the tool's own span is
        # lost (one that raised: before, the failed call was lost and the next told twice).
        ran = handled["tool_output"]
        view.fill(
            role="tool",
            tool_name=handled["tool_name"],
            call_id=non_blank(handled.get("tool_id")),
            arguments=handled.get("tool_kwargs"),
            result=_tool_output_text(ran),
            error=_tool_output_error(ran),
        )
        return
    ran = _llama_index_tool_output(entity_output) if kind == "task" else None
    if ran is not None:
        # OpenLLMetry's LlamaIndex instrumentation makes a tool's run (``FunctionTool.call``) a
        # "task" span like any other step; what it returned, LlamaIndex's ``ToolOutput``, says
        # it was a tool: which one, its result and whether it failed.
        view.fill(
            role="tool",
            tool_name=ran["tool_name"],
            arguments=_called_with(entity_input),
            result=_tool_output_text(ran),
            error=_tool_output_error(ran),
        )
        return
    if role is None and isinstance(kind, str):
        role = "other"  # traceloop "task" spans are plumbing
    if role is None:
        return
    view.fill(role=role, input_messages=prompt, output_messages=completion)
    if role == "tool":
        # A LangChain tool's output is the ToolMessage it made: its content, or its failure.
        output, failed = msg.tool_result(_execution_result(_entity(entity_output, "output")))
        view.fill(
            tool_name=non_blank(attrs.get("traceloop.entity.name")) or span.name,
            arguments=_entity(entity_input, "inputs"),
            result=output,
            error=failed,
            streamed=_streams(entity_output),
        )
    elif role == "agent":
        view.fill(
            agent_name=non_blank(attrs.get("traceloop.entity.name")),
            input_text=msg.input_text(_entity(entity_input, "inputs")),
            output_text=_output_text(_entity(entity_output, "outputs")),
        )


def _execution_result(output: Any) -> Any:
    """A tool's output, unwrapped from Agno's ``FunctionExecutionResult`` written as text.

    OpenLLMetry's Agno instrumentation (``opentelemetry-instrumentation-agno``) records a tool's
    output as ``str()`` of what Agno's ``FunctionCall.execute`` returned, pydantic's fields
    (``status='success' result=4 error=None ...``), and ends the span OK even when the tool
    raised (``status='failure' result=None error='...'``). The result is what the model was
    sent; a failure stays the object, whose ``status`` and ``error`` say it failed and why.
    """
    fields = python_fields(output) if isinstance(output, str) else None
    if fields is None or not {"status", "result", "error"} <= fields.keys():
        return output
    return fields["result"] if fields["status"] == "success" else fields


_GENERATOR_RESULT = re.compile(r"(?:^|\s)result=<generator object ")
"""Agno's ``FunctionExecutionResult`` written as text, its result a generator (by its address)."""


def _streams(output: Any) -> bool:
    """Whether an OpenLLMetry/Agno tool span's output is a generator, consumed after the span.

    A tool that yields (Agno's team ``delegate_task_to_members``: ``yield f"Agent {name}:
    {content}"`` per member) returns its generator; OpenLLMetry ends the tool's span then, and
    the members run as Agno reads it, their ``.agent`` spans after the tool's, under the team.
    """
    return isinstance(output, str) and _GENERATOR_RESULT.search(output) is not None


_OPENLIT_KEYS = {
    "prompt": ("gen_ai.prompt", "gen_ai.input.messages"),
    "completion": ("gen_ai.completion", "gen_ai.output.messages"),
}
"""The attributes OpenLIT has kept a model call's prompt and completion text in."""


def _openlit(span: Span, side: Literal["prompt", "completion"]) -> list[msg.Message]:
    """OpenLIT's prompt or completion, told as text on the span or in its content events.

    OpenLIT (sdk/python/src/openlit) has written them three ways: span attributes
    ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` (before commit 86dde167, 2024:
    ``instrumentation/openai/openai.py`` lines 148-150 at 40118b37); then span attributes
    ``gen_ai.prompt`` / ``gen_ai.completion`` with span events ``gen_ai.content.prompt`` /
    ``gen_ai.content.completion`` carrying the same (``instrumentation/cohere/utils.py`` lines
    266-284 at 2b9ea101); since fe267296 the events carry ``gen_ai.input.messages`` /
    ``gen_ai.output.messages`` (``instrumentation/together/utils.py`` lines 293-316). The prompt
    is the chat flattened into ``role: text`` lines (``format_content``), the completion the
    reply's text; JSON is read as messages.
    """
    name = f"gen_ai.content.{side}"
    keys = (*_OPENLIT_KEYS[side], name)
    told = [span.attributes.get(key) for key in keys] + [
        event.attributes.get(key) for event in span.events if event.name == name for key in keys
    ]
    role = "user" if side == "prompt" else "assistant"
    for value in told:
        loaded = msg.loads(value)
        if isinstance(loaded, str) and loaded.strip():
            turns = msg.transcript(loaded) if side == "prompt" else None
            return turns or msg.messages([{"role": role, "content": loaded}])
        if isinstance(loaded, list | dict) and (found := msg.messages(loaded)):
            return found
    return []


def _pydantic_ai(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    all_messages = attrs.get("pydantic_ai.all_messages")
    events = attrs.get("all_messages_events")  # its first instrumentation version's name
    if span.name == "agent run" or "agent_name" in attrs or all_messages is not None or events:
        history = msg.messages(all_messages) or msg.event_messages(events)[0]
        final = attrs.get("final_result")
        # DeferredToolRequests: the run stopped for calls someone else runs or approves; the
        # text said with those calls is no answer, and the dump of the requests none either.
        awaiting = _deferred(msg.loads(final))
        view.fill(
            role="agent",
            agent_name=non_blank(attrs.get("agent_name")),
            input_text=msg.first_user_text(history),
            output_text=None
            if awaiting
            else _output_text(final) or msg.last_assistant_text(history),
            awaiting=awaiting,
        )
    elif span.name == "running tool" or "tool_arguments" in attrs:
        view.fill(
            role="tool",
            tool_name=non_blank(attrs.get("gen_ai.tool.name")) or span.name,
            call_id=non_blank(attrs.get("gen_ai.tool.call.id")),
            arguments=msg.loads(attrs.get("tool_arguments")),
            result=attrs.get("tool_response"),
        )


_AI_SDK_CALLS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")


def _ai_sdk(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """The Vercel AI SDK's ``ai.*`` spans: a call, its model steps (``.doGenerate``), tools."""
    operation = non_blank(attrs.get("ai.operationId")) or span.name
    if not operation.startswith("ai."):
        return
    if operation == "ai.toolCall":
        view.fill(
            role="tool",
            tool_name=non_blank(attrs.get("ai.toolCall.name")) or span.name,
            call_id=non_blank(attrs.get("ai.toolCall.id")),
            arguments=msg.loads(attrs.get("ai.toolCall.args", attrs.get("ai.toolCall.input"))),
            result=attrs.get("ai.toolCall.result", attrs.get("ai.toolCall.output")),
        )
    elif operation in _AI_SDK_CALLS:
        prompt = msg.loads(attrs.get("ai.prompt"))
        view.fill(
            role="agent",
            agent_name=non_blank(attrs.get("ai.telemetry.functionId")),
            input_text=msg.input_text(prompt) if not isinstance(prompt, dict) else _prompt(prompt),
            output_text=non_blank(attrs.get("ai.response.text"))
            or _output_text(attrs.get("ai.response.object")),
        )
    elif operation.startswith(_AI_SDK_CALLS) and operation.endswith((".doGenerate", ".doStream")):
        view.fill(
            role="inference",
            # the step names its call's function too: a file of model steps alone has the name
            agent_name=non_blank(attrs.get("ai.telemetry.functionId")),
            input_messages=msg.messages(attrs.get("ai.prompt.messages")),
            output_messages=_ai_sdk_output(attrs),
        )
    else:
        view.fill(role="other")  # embeddings and the SDK's other calls


def _prompt(prompt: Mapping[str, Any]) -> str | None:
    # ``ai.prompt`` is {"system", "prompt"} or {"system", "messages"}.
    if isinstance(prompt.get("prompt"), str):
        return str(prompt["prompt"])
    return msg.first_user_text(msg.messages(prompt.get("messages")))


def _ai_sdk_output(attrs: Mapping[str, Any]) -> list[msg.Message]:
    parts: list[dict[str, Any]] = []
    reasoning = non_blank(attrs.get("ai.response.reasoning"))
    if reasoning:
        parts.append({"type": "reasoning", "content": reasoning})
    # generateObject / streamObject answer with the object (JSON text), not with text.
    text = non_blank(attrs.get("ai.response.text")) or non_blank(attrs.get("ai.response.object"))
    if text:
        parts.append({"type": "text", "content": text})
    calls = msg.loads(attrs.get("ai.response.toolCalls"))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            arguments = call.get("input", call.get("args"))
            parts.append(msg.tool_call(call.get("toolCallId"), call.get("toolName"), arguments))
    return [{"role": "assistant", "parts": parts}] if parts else []


_LANGFUSE_ROLES: dict[str, Role] = {
    "generation": "inference",
    "tool": "tool",
    "agent": "agent",
    "event": "event",
}
"""Langfuse's observation types (``langfuse.observation.type``) that are a GenAI role."""


def _langfuse(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """The Langfuse SDK's own spans: ``langfuse.observation.{type,input,output}``.

    A generation's input is the request (``{"messages": [...], "tools": ...}`` from its OpenAI
    wrapper, or the messages) and its output the reply; an ``@observe``'d function's input is
    ``{"args": [...], "kwargs": {...}}``, a tool's arguments its keyword arguments.
    """
    kind = str(attrs.get("langfuse.observation.type", "")).lower()
    role = _LANGFUSE_ROLES.get(kind)
    if role is None:
        return
    given, output = (
        attrs.get("langfuse.observation.input"),
        attrs.get("langfuse.observation.output"),
    )
    if role == "inference":
        view.fill(
            role=role,
            input_messages=msg.messages(given),
            output_messages=_reply(output),
        )
    elif role == "tool":
        # A LangChain tool's output is the ToolMessage it made (LangGraph's, through Langfuse's
        # callback handler): its content was the result, its status says whether it failed.
        result, failure = msg.tool_result(output)
        view.fill(role=role, tool_name=span.name, arguments=_called_with(given))
        view.fill(result=msg.loads(result), error=failure)
    elif role == "agent":
        arguments = _called_with(given)
        view.fill(
            role=role,
            agent_name=span.name,
            input_text=msg.input_text(arguments),
            output_text=_state_text(output),
        )
    else:
        view.fill(role=role)


def _state_text(value: Any) -> str | None:
    """An agent's output as text; a graph state only by its assistant's text.

    LangGraph's node that Langfuse types ``agent`` outputs the state (``{"messages": [...]}``):
    one whose assistant only asked for tools answered nothing, and is no answer written as JSON.
    So is the Vercel AI SDK's ``generateText`` that ended asking for tools, whose output
    Langfuse keeps as its ``ai.response.toolCalls``: ``[{"toolCallId", "toolName", "input"}]``.
    """
    loaded = msg.loads(value)
    if isinstance(loaded, dict) and isinstance(loaded.get("messages"), list):
        return msg.last_assistant_text(msg.messages(loaded["messages"]))
    if _ai_sdk_tool_calls(loaded) or _llama_index_stop_event(loaded):
        return None
    return _output_text(value)


def _llama_index_stop_event(value: Any) -> bool:
    """Whether ``value`` is a LlamaIndex workflow's ``StopEvent`` as Python writes it.

    OpenInference's LlamaIndex instrumentation (4.6) records an agent workflow's result as the
    event's ``repr``, cut short (``StopEvent(result=AgentOutput(response=ChatMessage(role=...,
    blocks=[TextBlock(...)]), structured_response=None, cu...``): no answer as written, and
    before, a second one after the model's last reply. That reply is the answer.
    """
    return isinstance(value, str) and value.startswith("StopEvent(result=AgentOutput(")


def _ai_sdk_tool_calls(value: Any) -> bool:
    """Whether ``value`` lists the Vercel AI SDK's tool calls (``toolCallId``, ``toolName``)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(call, dict) and {"toolCallId", "toolName"} <= set(call) for call in value
        )
    )


def _called_with(value: Any) -> Any:
    """A wrapped call's arguments: its one positional argument, else its keywords.

    Langfuse's ``@observe`` records ``{"args": [...], "kwargs": {...}}``; OpenInference's
    smolagents instrumentation records a tool's ``__call__`` arguments the same way, with
    smolagents' own ``sanitize_inputs_outputs`` flag beside them (no argument of the tool).
    LlamaIndex's ``FunctionTool.acall(*args, **kwargs)``, as OpenInference traces it, leaves the
    empty ``args`` out: ``{"kwargs": {...}}``.
    """
    loaded = msg.loads(value)
    if (
        isinstance(loaded, dict)
        and set(loaded) == {"kwargs"}
        and isinstance(loaded["kwargs"], dict)
    ):
        return loaded["kwargs"]
    if not isinstance(loaded, dict) or set(loaded) - {_SMOLAGENTS_FLAG} != {"args", "kwargs"}:
        return loaded
    args, kwargs = loaded["args"], loaded["kwargs"]
    if isinstance(args, list) and len(args) == 1 and not kwargs:
        return args[0]
    return kwargs if not args else loaded


_SMOLAGENTS_FLAG = "sanitize_inputs_outputs"
"""The keyword smolagents' ``Tool.__call__`` takes beside the tool's own arguments."""


def _smolagents_call(called: Any) -> bool:
    """Whether a tool span's input is a smolagents ``Tool.__call__``'s arguments (as traced)."""
    return isinstance(called, dict) and {"args", "kwargs", _SMOLAGENTS_FLAG} <= set(called)


def _reply(value: Any) -> list[msg.Message]:
    """A generation's output: a reply message (its role set), or the reply's text."""
    loaded = msg.loads(value)
    if isinstance(loaded, str):
        return msg.messages([{"role": "assistant", "content": loaded}]) if loaded.strip() else []
    return msg.messages(loaded)


def _claude_code(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """Claude Code's own spans (``claude_code.*``, its tracing beta), named by ``span.type``.

    An ``interaction`` is a turn of the session, the user's prompt its input (``user_prompt``,
    when prompts are logged); a ``tool`` is one call (``tool_name``, the Bash command as
    ``full_command`` and its ``tool.output`` event when tool details are logged), and its
    ``tool.execution`` child says whether the call succeeded: the span carries the call's id, so
    that its failure is the call's (build.py). Model calls (``llm_request``) record no text.
    Read before the GenAI conventions: agentevals' Collector recipe adds ``gen_ai.tool.name`` to
    these spans without the MCP server (``k8s_get_resources`` for Claude Code's
    ``mcp__kagent-tool-server__k8s_get_resources``), and ``chat`` to model calls it has no text of.
    """
    kind = attrs.get("span.type") if span.name.startswith("claude_code.") else None
    if kind == "interaction":
        view.fill(role="agent", input_text=non_blank(attrs.get("user_prompt")))
    elif kind == "tool":
        output = next((e for e in span.events if e.name == "tool.output"), None)
        view.fill(
            role="tool",
            tool_name=non_blank(attrs.get("tool_name")) or span.name,
            call_id=non_blank(attrs.get("tool_use_id")),
            arguments=_claude_code_input(attrs),
            result=output.attributes.get("output") if output is not None else None,
        )
    elif kind == "tool.execution":
        view.fill(
            role="other",
            call_id=non_blank(attrs.get("tool_use_id")),
            succeeded=attrs.get("success") is True or None,
        )
    elif isinstance(kind, str):
        view.fill(role="other")


_CLAUDE_CODE_INPUTS = (
    ("full_command", "command"),
    ("file_path", "file_path"),
    ("subagent_type", "subagent_type"),
)
"""The arguments Claude Code writes on its ``claude_code.tool`` span (when tool details are
logged), each as the attribute and the tool's own input key: Bash's command, the file a ``Read``
/ ``Edit`` / ``Write`` works on, the kind of subagent an ``Agent`` call starts."""


def _claude_code_input(attrs: Mapping[str, Any]) -> dict[str, str] | None:
    """A ``claude_code.tool`` span's arguments, as far as its attributes record them."""
    given = {key: non_blank(attrs.get(name)) for name, key in _CLAUDE_CODE_INPUTS}
    return {key: value for key, value in given.items() if value is not None} or None


_MLFLOW_ROLES: dict[str, Role] = {
    "AGENT": "agent",
    "CHAIN": "agent",  # as OpenInference's CHAIN: the top-most one is the run
    "LLM": "inference",
    "CHAT_MODEL": "inference",
    "TOOL": "tool",
    "RETRIEVER": "tool",  # see RETRIEVE
}
"""MLflow's span types (``mlflow.entities.SpanType``) that are a GenAI role; the others
(``EMBEDDING``, ``PARSER``, ``RERANKER``, ``MEMORY``, ``UNKNOWN``...) are plumbing, but for a
trace's root: MLflow takes the root span's inputs and outputs as the trace's request and
response, so the root of any other type is the run."""
_MLFLOW_TYPE = "mlflow.spanType"
_MLFLOW_INPUTS = "mlflow.spanInputs"
_MLFLOW_OUTPUTS = "mlflow.spanOutputs"
_MLFLOW_CHAT = "mlflow.chat.messages"
_MLFLOW_MODEL = "mlflow.llm.model"


def _mlflow(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """MLflow Tracing's own attributes, each value JSON text (the type ``AGENT`` as ``"AGENT"``).

    ``mlflow.spanType`` gives the role; ``mlflow.spanInputs`` and ``mlflow.spanOutputs`` are the
    traced function's arguments and return value: a chat model's request (``{"messages",
    "tools"...}``) and response (a Chat Completion, Anthropic's message, a LangChain
    ``ChatResult``...), a tool's arguments and result, an agent's request (text, messages, a
    ``ResponsesAgent`` request's ``input``) and answer. MLflow 2.x also keeps a chat span's
    conversation, the reply last, as ``mlflow.chat.messages``.
    """
    kind = msg.loads(attrs.get(_MLFLOW_TYPE))
    if not isinstance(kind, str):
        return
    inputs, outputs = msg.loads(attrs.get(_MLFLOW_INPUTS)), msg.loads(attrs.get(_MLFLOW_OUTPUTS))
    named = msg.loads(attrs.get("name"))
    if kind.upper() == "TOOL" and isinstance(named, str):
        # MLflow keeps a tool object's own attributes on its span (DSPy's ``Tool``: ``name``,
        # ``description``, ``args``), whose name is the traced method's (``Tool.get_capital``):
        # the ``name`` attribute is the tool's.
        view.fill(tool_name=non_blank(named))
    _typed_run(span, kind.upper(), (inputs, outputs, msg.messages(attrs.get(_MLFLOW_CHAT))), view)
    if view.role == "inference":
        # MLflow's own name of the model (``SpanAttributeKey.MODEL``), which its autologgers
        # set where the response names none (Bedrock's Converse, LangChain's ``ChatResult``,
        # DSPy's ``LM``): after the response's and the request's ``model``.
        view.fill(model=non_blank(msg.loads(attrs.get(_MLFLOW_MODEL))))


def _typed_run(span: Span, kind: str, io: tuple[Any, Any, list[msg.Message]], view: View) -> None:
    """A span that records a traced function's type, arguments and return value.

    As MLflow's and LangSmith's do: the type (MLflow's, upper case) gives the role; ``io``, the
    arguments, the return value and a chat span's conversation (MLflow 2's), what a run, a model
    call or a tool said.
    """
    inputs, outputs, chat = io
    role = _MLFLOW_ROLES.get(kind)
    if role is None:
        role = "agent" if span.parent_id is None else "other"
    if role == "agent":
        asked = _mlflow_messages(inputs)
        view.fill(
            role=role,
            agent_name=span.name if kind == "AGENT" else None,
            input_text=msg.last_user_text(asked) or _mlflow_input_text(inputs),
            output_text=_mlflow_output_text(outputs),
        )
    elif role == "inference":
        if isinstance(outputs, list) and outputs and isinstance(outputs[0], str):
            outputs = outputs[0]  # a DSPy ``LM``'s completions, a text a choice: the first
        replied = _mlflow_reply(outputs)
        view.fill(
            role=role,
            model=_io_model(inputs, outputs),
            input_messages=_mlflow_messages(inputs) or _before_reply(chat),
            output_messages=replied or _after_request(chat),
        )
    elif kind == "RETRIEVER":
        view.fill(
            role=role,
            retrieval=True,
            tool_name=non_blank(span.name) or RETRIEVE,
            arguments=_query(msg.input_text(inputs)),
            result=outputs,
        )
    else:
        view.fill(role=role)
        if role == "tool":
            # ``mlflow.langchain.autolog()`` keeps a LangChain tool's output as the ToolMessage
            # it returned: its content is the result, its ``status`` "error" (LangGraph's
            # ``ToolNode`` catching what the tool raised; the span ends OK) the failure.
            output, failed = msg.tool_result(outputs)
            view.fill(
                tool_name=non_blank(span.name),
                arguments=inputs,
                result=output,
                error=failed,
            )


def _io_model(inputs: Any, outputs: Any) -> str | None:
    """The model a traced model call names: its response's, else its request's.

    A Chat Completion's or Anthropic message's ``model``, a LangChain result's
    ``llm_output.model_name``.
    """
    llm_output = as_object(as_object(outputs).get("llm_output"))
    return first_model(
        as_object(outputs).get("model"),
        llm_output.get("model_name"),
        llm_output.get("model"),
        as_object(inputs).get("model"),
    )


_LANGSMITH_KIND = "langsmith.span.kind"


def _langsmith(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """The LangSmith SDK's own spans, in its OpenTelemetry mode (``LANGSMITH_OTEL_ENABLED``).

    A run is a span: ``langsmith.span.kind`` its run type (``chain``, ``llm``, ``tool``,
    ``retriever``...), ``gen_ai.prompt`` and ``gen_ai.completion`` its inputs and outputs as
    JSON (a model call's request and response, a LangChain ``ChatResult``, a tool's arguments
    and result; not OpenLIT's text of the same names), read as MLflow's typed spans are. A
    value that is no object is kept as ``{"output": value}``, as the SDK keeps a run's.
    """
    kind = attrs.get(_LANGSMITH_KIND)
    if not isinstance(kind, str):
        return
    inputs, outputs = (
        msg.loads(attrs.get("gen_ai.prompt")),
        msg.loads(attrs.get("gen_ai.completion")),
    )
    if isinstance(inputs, dict) and _is_batch(inputs.get("messages")):
        inputs = {**inputs, "messages": inputs["messages"][0]}  # a chat model's batch of one
    if kind == "tool":
        outputs = _tool_run_output(outputs)
        # Langfuse moves ``gen_ai.prompt`` into its observation's input (our GenAI fill-in).
        inputs = _langsmith_tool_arguments(
            msg.loads(attrs.get("gen_ai.tool.call.arguments")) if inputs is None else inputs
        )
    _typed_run(span, kind.upper(), (inputs, outputs, []), view)
    if view.role == "tool":
        view.fill(tool_name=non_blank(attrs.get("gen_ai.tool.name")))


def _langsmith_tool_arguments(inputs: Any) -> Any:
    """A LangSmith tool run's arguments: its inputs, or the object its one ``input`` holds.

    LangSmith's Claude Agent SDK hooks record a tool's arguments as ``{"input": tool_input}``
    (``{"input": {"city": "Berlin"}}`` where the model asked for ``{"city": "Berlin"}``); the
    LangSmith runs reader unwraps the same (``_runs._tool_input``).
    """
    if isinstance(inputs, dict) and set(inputs) == {"input"} and isinstance(inputs["input"], dict):
        return inputs["input"]
    return inputs


def _is_batch(messages: Any) -> bool:
    """LangChain's chat model run inputs: ``messages`` as a batch, a list of message lists."""
    return isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], list)


def _mlflow_messages(inputs: Any) -> list[msg.Message]:
    """The chat messages of a traced call's arguments (a model's request, an agent's).

    ``{"messages": [...]}`` (Chat Completions, ``ChatAgent``), a ``ResponsesAgent`` request
    (``{"request": {"input": [...]}}`` or its ``input`` itself), or a list of messages.
    """
    if isinstance(inputs, dict) and isinstance(inputs.get("request"), dict):
        inputs = inputs["request"]
    if isinstance(inputs, dict):
        # ``contents``: Google's Gen AI SDK's request, turns of ``parts`` (a user turn's
        # ``function_response`` parts the results of the calls the model asked for).
        inputs = inputs.get("messages", inputs.get("input", inputs.get("contents")))
    if not isinstance(inputs, list):
        return []
    if inputs and pydantic_ai.recognises(inputs):  # Pydantic AI's (its MLflow autolog's)
        return msg.messages(pydantic_ai.genai_messages(inputs))
    items = [_responses_item(item) for item in inputs if isinstance(item, dict)]
    return msg.messages([item for item in items if "role" in item])


def _responses_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API input or output item as a chat message (its text parts as text).

    A ``function_call`` item is the model asking for a tool (an assistant message with that
    call), a ``function_call_output`` its result (a tool message): the calls of one response
    are one turn's, so a failed one's siblings are no recovery. A call the API ran itself
    (``web_search_call``, ``file_search_call``, ``mcp_call``...) is read as :func:`_hosted_call`,
    an MCP approval's request or response as :func:`_approval`. An ``mcp_list_tools`` (the API
    fetching an MCP server's tools) is no step, unless its ``error`` says the tools could not be
    listed: the run's error, as the Responses reader tells it.
    """
    kind = item.get("type")
    if kind in ("mcp_approval_request", "mcp_approval_response"):
        return _approval(item)
    if kind == "mcp_list_tools":  # the API fetching a server's tools: no step, but a failure
        said = list_tools_error(item)
        if said is None:
            return {}
        return {"role": "assistant", "parts": [{"type": msg.LISTING_FAILED, "content": said}]}
    if isinstance(kind, str) and kind.endswith("_call") and kind != "function_call":
        hosted = _hosted_call(item)
        if hosted is not None:
            return hosted
    if kind == "function_call":
        function = {"name": item.get("name"), "arguments": item.get("arguments")}
        return {
            "role": "assistant",
            "tool_calls": [{"id": item.get("call_id"), "function": function}],
        }
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
    content = item.get("content")
    if not isinstance(content, list):
        return dict(item)
    texts = [
        {"type": "text", "text": block.get("text")}
        if isinstance(block, dict) and block.get("type") in ("input_text", "output_text")
        else block
        for block in content
    ]
    return {**item, "content": texts}


_CLIENT_CALLS = frozenset(
    {"custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call"}
)
"""Calls the client runs, their results in ``*_output`` items of their own: no result here."""


def _hosted_call(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """A call the API ran itself, in a response's output, as the assistant's own parts.

    The call (named as every reader of Responses items names it, :func:`_hosted.tool_name`:
    ``web_search``, an MCP call by its tool) and the result it carries (its ``results``,
    ``output``, what the code printed), failed as the Responses reader reads it: an
    ``mcp_call``'s ``error``, else the ``status`` ``failed`` (:func:`_hosted.call_failed`;
    ``incomplete`` is none). The conventions' server tool parts keep them: no tool span runs
    such a call. A call the client runs (``shell_call``...) is ``None``, left to be read with
    the rest of what the client said.
    """
    name = tool_name(item)
    if name is None or item.get("type") in _CLIENT_CALLS:
        return None
    call_id = item.get("call_id") or item.get("id")
    arguments = next((item[key] for key in _HOSTED_INPUTS if item.get(key) is not None), None)
    if item.get("type") == "code_interpreter_call" and isinstance(arguments, str):
        arguments = {"code": arguments}  # as the Responses reader gives it
    server = _mcp_server(item)
    call = {"type": "server_tool_call", "id": call_id, "name": name, "arguments": arguments}
    parts: list[dict[str, Any]] = [{**call, "mcp_server": server}]
    request = approved_request(item)
    if request is not None:
        # The run of an approved request (an earlier response's ``mcp_approval_request``, the
        # call): its result, joined by the request's id, not a second call.
        call_id, parts = request, []
    result = hosted_result(item)
    said = failure(item, name, result)
    if said is not None:
        parts.append(_server_response(call_id, name, said, failed=True, server=server))
    elif result is not None:
        parts.append(_server_response(call_id, name, result, failed=False, server=server))
    if request is not None:  # its arguments kept, for a request no span's output holds
        parts = [{**part, "arguments": arguments} for part in parts]
    return {"role": "assistant", "parts": parts}


def _approval(item: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP approval, read as the Responses reader and the Agents SDK reader read it.

    A hosted MCP tool that needs the user's approval is asked for by an
    ``mcp_approval_request`` in a response's output (the tool's ``name``, its ``arguments``,
    the ``server_label`` of its server): the model's call of the tool, with its server. The
    ``mcp_approval_response`` the next request's input sends back is that call's failure when
    it refuses (``approve: false``: ``not approved[: reason]``, a tool result the model is
    given), nothing when it approves: the ``mcp_call`` that then runs it is its result
    (:func:`_hosted_call`).
    """
    if item.get("type") == "mcp_approval_request":
        call = {"type": "server_tool_call", "id": item.get("id"), "name": tool_name(item)}
        parts = [{**call, "arguments": item.get("arguments"), "mcp_server": _mcp_server(item)}]
        return {"role": "assistant", "parts": parts}
    said = refusal(item)
    if said is None:
        return {}  # approved: no step of its own
    response = {"type": "tool_call_response", "id": item.get("approval_request_id")}
    return {"role": "tool", "parts": [{**response, "response": said, "is_error": True}]}


def _mcp_server(item: Mapping[str, Any]) -> str | None:
    """The MCP server an MCP call (or its approval request) is of: its ``server_label``."""
    mcp = item.get("type") in ("mcp_call", "mcp_approval_request")
    return as_string(item.get("server_label")) if mcp else None


_HOSTED_INPUTS = ("arguments", "action", "code", "queries", "input")
"""Where a hosted call keeps its input: an MCP call's ``arguments``, a web search's ``action``,
the code interpreter's ``code``, a file search's ``queries``."""


def _server_response(
    call_id: Any, name: str, result: Any, *, failed: bool, server: str | None
) -> dict[str, Any]:
    return {
        "type": "server_tool_call_response",
        "id": call_id,
        "name": name,
        "response": result,
        "is_error": failed,
        "mcp_server": server,
    }


def _mlflow_input_text(inputs: Any) -> str | None:
    """A run's request as text: its text, or the question among its named arguments.

    Arguments that hold no text (numbers, a graph's state) are no request: no JSON is taken.
    """
    if isinstance(inputs, str):
        return non_blank(inputs)
    if isinstance(inputs, dict):
        return msg.input_text(inputs)
    return None


def _mlflow_reply(outputs: Any) -> list[msg.Message]:
    """A model call's response as assistant messages, whatever client the span traced.

    A Chat Completion (``choices[0].message``), Anthropic's message (``content`` blocks), a
    LangChain ``ChatResult`` (``generations[0][0].message``), a ``ChatAgent``'s ``messages``, a
    ``ResponsesAgent``'s ``output`` items, a Bedrock Converse response (``output.message``), a
    Gemini ``GenerateContentResponse`` (``candidates[0].content``), a Pydantic AI
    ``ModelResponse``, or the reply's text.
    """
    if isinstance(outputs, str):
        return msg.messages([{"role": "assistant", "content": outputs}]) if outputs.strip() else []
    if not isinstance(outputs, dict):
        return []
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return msg.messages([{**message, "role": message.get("role") or "assistant"}])
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations and isinstance(generations[0], list):
        first = generations[0][0] if generations[0] else None
        message = as_object(first).get("message")
        if isinstance(message, dict):
            return msg.messages([{**as_object(message.get("kwargs")), **message, "role": "ai"}])
    if isinstance(outputs.get("output"), list):
        return msg.messages(
            [_responses_item(item) for item in outputs["output"] if isinstance(item, dict)]
        )
    candidates = outputs.get("candidates")
    if isinstance(candidates, list) and candidates:
        # Google's Gen AI SDK (``mlflow.gemini.autolog()``): the ``GenerateContentResponse``,
        # its reply the first candidate's ``content`` (``parts``: ``text``, ``function_call``).
        content = as_object(as_object(candidates[0]).get("content"))
        return msg.messages([{**content, "role": "model"}]) if content else []
    converse = as_object(outputs.get("output")).get("message")
    if isinstance(converse, dict):
        # Amazon Bedrock's Converse response (``mlflow.bedrock.autolog()``): the reply is
        # ``output.message``, its ``content`` blocks ``text``, ``toolUse``, ``reasoningContent``.
        return msg.messages([{**converse, "role": converse.get("role") or "assistant"}])
    if isinstance(outputs.get("content"), list):
        return msg.messages([{**outputs, "role": outputs.get("role") or "assistant"}])
    if isinstance(outputs.get("messages"), list):
        return msg.messages(outputs["messages"])
    if pydantic_ai.recognises(outputs):  # a Pydantic AI response (its MLflow autolog's)
        return msg.messages(pydantic_ai.genai_messages([outputs]))
    return []


def _mlflow_output_text(outputs: Any) -> str | None:
    """A run's answer: its reply's last assistant text, else its output as ``_output_text``."""
    if outputs is None:
        return None
    return msg.last_assistant_text(_mlflow_reply(outputs)) or _output_text(outputs)


def _before_reply(chat: list[msg.Message]) -> list[msg.Message]:
    """MLflow 2.x's ``mlflow.chat.messages`` less the reply it ends with."""
    ends = bool(chat) and chat[-1]["role"] in msg.ASSISTANT_ROLES
    return chat[:-1] if ends else chat


def _after_request(chat: list[msg.Message]) -> list[msg.Message]:
    """The reply ``mlflow.chat.messages`` ends with."""
    return chat[-1:] if chat and chat[-1]["role"] in msg.ASSISTANT_ROLES else []


_BEEAI_SCOPE = "openinference.instrumentation.beeai"
_BEEAI_EVENT = re.compile(r"(?P<emitter>[a-z_]+(?:\.[a-z_]+)+)\.(?P<event>[a-z_]+)-\d+")
"""A span of one event a BeeAI emitter fired: ``agent.react.update-13``, ``tool.search.wikipedia
.start-12`` (the emitter's path, the event's name, the number of the event)."""


def _beeai(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """The spans beeai-framework 0.1's own OpenInference instrumentation makes of its events.

    It makes a span of each event the framework's emitters fire, not of each operation: a tool
    call is its ``start``, ``finish`` and ``success`` spans (typed TOOL, named after the
    emitter, not the tool), a model call its ``start`` span, its stream chunks a ``success``
    span of one message each, and a tool's emitter may not be traced at all. The ReAct agent's
    ``update`` events say what the agent did: the ``thought`` and ``tool.name`` it streamed,
    then, once parsed, the call's ``tool.parameters``, then the tool's output or the final
    answer as ``output.value``. Read before OpenInference, whose span kinds would make a tool
    call of each lifecycle event and a thought of each chunk.
    """
    found = _BEEAI_EVENT.fullmatch(span.name) if span.scope == _BEEAI_SCOPE else None
    if found is None:
        return
    if found["emitter"].startswith("agent.") and found["event"] == "update":
        thought = non_blank(attrs.get("thought"))
        tool = non_blank(attrs.get("tool.name"))
        parameters = attrs.get("tool.parameters")  # "null" until the call is parsed
        arguments = None if parameters in (None, "null") else msg.loads(parameters)
        output = attrs.get("output.value")
        if tool and arguments is not None and output is None:  # the call, parsed
            call = msg.tool_call(None, tool, arguments)
            parts = [{"type": "text", "content": thought}] if thought else []
            view.fill(
                role="inference", output_messages=[{"role": "assistant", "parts": [*parts, call]}]
            )
        elif tool and arguments is not None:  # the call's output (the span ends with the run)
            view.fill(role="tool", tool_name=tool, arguments=arguments, result=output, instant=True)
        elif output is not None:  # the final answer, after the thought that led to it
            said = [thought, _output_text(output)]
            view.fill(
                role="inference",
                output_messages=[
                    {"role": "assistant", "parts": [{"type": "text", "content": text}]}
                    for text in said
                    if text
                ],
            )
    view.fill(role="other")  # a lifecycle event, a partial update, a stream chunk


_LOGFIRE_AGENTS = "logfire.openai_agents"
"""The scope of the spans ``logfire.instrument_openai_agents()`` makes of the SDK's trace."""


def _logfire_agents(span: Span, attrs: Mapping[str, Any], view: View) -> None:
    """Logfire's spans of the OpenAI Agents SDK: each SDK span's data as its attributes.

    ``logfire.msg_template`` names the kind: ``Agent run: {name!r}`` (the agent),
    ``Function: {name}`` (a tool: ``input`` its arguments, ``output`` what the model was given,
    ``error`` the SDK's ``{"message", "data"}``), ``Chat completion with ...`` (``input`` and
    ``output``: Chat Completions messages) and ``Responses API ...`` (``raw_input``: the
    request's items; ``response``: the Response, its ``output`` items the reply).
    """
    if span.scope != _LOGFIRE_AGENTS:
        return
    template = str(attrs.get("logfire.msg_template") or "")
    if template.startswith("Agent run"):
        view.fill(role="agent", agent_name=as_string(attrs.get("name")))
    elif template.startswith("Function"):
        failed = error_text(msg.loads(attrs.get("error")))
        view.fill(
            role="tool",
            tool_name=as_string(attrs.get("name")),
            arguments=msg.loads(attrs.get("input")),
            result=msg.loads(attrs.get("output")),
            error=failed,
        )
    elif template.startswith("Chat completion"):
        view.fill(
            role="inference",
            input_messages=msg.messages(attrs.get("input")),
            output_messages=msg.messages(attrs.get("output")),
        )
    elif template.startswith("Responses API"):
        response = as_object(msg.loads(attrs.get("response")))
        instructions = as_string(response.get("instructions"))
        system = [{"role": "system", "content": instructions}] if instructions else []
        view.fill(
            role="inference",
            input_messages=msg.messages(system)
            + _mlflow_messages(msg.loads(attrs.get("raw_input"))),
            output_messages=_mlflow_reply(response),
        )


_DIALECTS: tuple[Callable[[Span, Mapping[str, Any], View], None], ...] = (
    _claude_code,  # its own names first: a Collector's GenAI projection of them drops MCP servers
    _beeai,
    _openinference,
    _any_agent,
    _langsmith,  # before the conventions: its gen_ai.prompt is the run's inputs, as JSON
    _logfire_agents,  # before the conventions: its Responses spans name a chat, no messages
    _genai,
    _adk,
    _legacy,
    _ai_sdk,
    _pydantic_ai,
    _langfuse,
    _mlflow,
)


def _entity(value: Any, key: str) -> Any:
    # Traceloop wraps LangChain's payloads: {"inputs": {...}, "tags": [...], ...}.
    loaded = msg.loads(value)
    if isinstance(loaded, dict) and key in loaded:
        return loaded[key]
    return loaded


def _deferred(final: Any) -> bool:
    """Whether a Pydantic AI run's ``final_result`` is its ``DeferredToolRequests`` (not empty)."""
    if not isinstance(final, dict) or not {"calls", "approvals"} <= final.keys():
        return False
    calls, approvals = final["calls"], final["approvals"]
    return isinstance(calls, list) and isinstance(approvals, list) and bool(calls or approvals)


def _output(value: Any) -> Any:
    """An output as data: JSON decoded, a message written as ``str(dict)`` as that message.

    BeeAI's run output is the Python repr of its message; any other text stays text.
    """
    loaded = msg.loads(value)
    if isinstance(loaded, str) and "role" in (message := python_dict(loaded) or {}):
        return message
    return loaded


def _output_text(value: Any) -> str | None:
    loaded = _output(value)
    if loaded is None:
        return None
    if isinstance(loaded, str):
        return loaded.strip() or None
    if isinstance(loaded, dict):
        text = _replied(loaded)
        if text is None:
            text = _component_reply(loaded)
        if text is not None:
            return text or None  # "": a reply that says nothing (it only called tools)
        # ``raw``: crewAI's CrewOutput and TaskOutput, whose other fields restate it.
        for key in ("output", "answer", "result", "content", "text", "raw"):
            if isinstance(loaded.get(key), str) and loaded[key].strip():
                return str(loaded[key])
        candidates = loaded.get("candidates")  # Gemini's response: its first candidate's content
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            loaded = candidates[0]
        content = loaded.get("content")
        if isinstance(content, dict | list):  # a reply: ADK's model content, Anthropic's blocks
            reply = content if isinstance(content, dict) else {"content": content}
            text = msg.last_assistant_text(msg.messages([{"role": "assistant", **reply}]))
            if text:
                return text
    if isinstance(loaded, list):
        text = msg.last_assistant_text(msg.messages(loaded))
        if text:
            return text
    # JSON that holds no message is the answer as written (spacing and all), so that it matches
    # the model's own text of it and is told once.
    return _as_written(value) if isinstance(value, str) else as_text(loaded)


def _replied(loaded: Mapping[str, Any]) -> str | None:
    """The assistant's text of a run's output object, else ``None``.

    The last of its ``messages`` (a graph's state), or its ``response`` message (LlamaIndex's
    ``AgentOutput``, an agent workflow's result). A Chat Completion (``choices[0].message``: an
    app's function that returns the client's response, as OpenLLMetry's workflow span records
    it) is its message's text, ``""`` when it only calls tools: no answer, not its JSON.
    """
    choices = loaded.get("choices")
    if (
        isinstance(choices, list)
        and choices
        and isinstance(as_object(choices[0]).get("message"), dict)
    ):
        return msg.last_assistant_text(_mlflow_reply(loaded)) or ""
    if isinstance(loaded.get("messages"), list):
        text = msg.last_assistant_text(msg.messages(loaded["messages"]))
        if text:
            return text
    response = loaded.get("response")
    if isinstance(response, dict) and "role" in response:
        return msg.last_assistant_text(msg.messages([response]))
    return None


def _component_reply(loaded: Mapping[str, Any]) -> str | None:
    """The reply of a Haystack pipeline's output: its components' outputs by name.

    ``Pipeline.run`` returns ``{"agent": {"messages": [...], "last_message": ...}}``: the answer
    is the last component's that holds a reply; an output of anything else holds none.
    """
    if not loaded or not all(isinstance(value, dict) for value in loaded.values()):
        return None
    replies = [_replied(value) for value in loaded.values()]
    return next((text for text in reversed(replies) if text is not None), None)


def _as_written(text: str) -> str:
    """JSON text as its producer wrote it, out of any JSON strings around it (Langfuse's)."""
    stripped = text.strip()
    while stripped[:1] == '"':  # msg.loads decoded it, so it is valid JSON
        inner = json.loads(stripped)
        if not isinstance(inner, str):
            break
        stripped = inner.strip()
    return stripped


def _query(text: str | None) -> dict[str, str] | None:
    """A retrieval's input: its query."""
    return {"query": text} if text else None


def _server(attrs: Mapping[str, Any]) -> str | None:
    address = non_blank(attrs.get("server.address"))
    if not address:
        return None
    port = attrs.get("server.port")
    return f"{address}:{port}" if isinstance(port, int | str) and str(port) else address
