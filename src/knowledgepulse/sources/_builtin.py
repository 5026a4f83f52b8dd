"""The sources that ship with knowledgepulse, registered in the order detection asks them.

A ``ReasoningTrace`` first (always itself, never converted); then the agent frameworks' files,
the observability tools' exports and the conversation datasets. Each is a few lines over its
reader module, registered through the same decorator as a third party's source.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources import pydantic_ai
from knowledgepulse.sources._chat import (
    _glaive,
    anthropic,
    gemini,
    hermes,
    openai_chat,
    openai_responses,
    sharegpt,
)
from knowledgepulse.sources._chat._row import ChatSource, convert_rows
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources._exports import jaeger, langfuse, mlflow, otel_js, phoenix
from knowledgepulse.sources._registry import REASONING_TRACE, Source, register_source
from knowledgepulse.sources._sessions import (
    adk,
    adp,
    atif,
    browser_use,
    claude_code,
    claude_managed_agents,
    cline,
    codex,
    copilot_cli,
    droid,
    gemini_cli,
    goose,
    hermes_agent,
    inspect_ai,
    kimi_code,
    letta,
    mini_swe_agent,
    opencode,
    openhands,
    openhands_v1,
    opentraces,
    pi,
    sts,
    swe_agent,
    tau2,
)
from knowledgepulse.sources.langchain import _files as langsmith
from knowledgepulse.sources.langchain import _history as langchain_history
from knowledgepulse.sources.openai_agents import _files as agents_files
from knowledgepulse.sources.openai_agents import _spans as agents_spans
from knowledgepulse.sources.otel import build as otel_build
from knowledgepulse.sources.otel import files as otel_files
from knowledgepulse.sources.smolagents import _files as smolagents_files
from knowledgepulse.sources.smolagents import _run as smolagents_run
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.load import trace_items
from knowledgepulse.trace.models import CONTEXT_URLS

Records = Iterable[Record | Problem]
Items = Iterator[TraceItem | Problem]


@register_source(REASONING_TRACE)
class ReasoningTraceSource(Source):
    """This tool's own documents (``@type: ReasoningTrace``), read as they are."""

    shapes = "this tool's own ReasoningTrace JSON, read as it is"

    def recognises(self, value: Any) -> bool:
        """A JSON object naming the trace's ``@type`` or ``@context``: a trace, even broken."""
        return isinstance(value, dict) and (
            value.get("@type") == "ReasoningTrace" or value.get("@context") in CONTEXT_URLS
        )

    def convert(self, records: Records, options: TraceOptions) -> Items:
        """Each record validated, a misspelt key warned; domain and confidence are the trace's."""
        ignored = options.domain is not None or options.confidence is not None
        for item in trace_items(records):
            if ignored and isinstance(item, TraceItem):
                ignored = False
                yield _own_values(item.location)
            yield item

    def describe(self, first: Any, count: int, options: TraceOptions) -> None:
        """Nothing: a trace file is what every command reads by default."""
        return


def _own_values(location: Location) -> Problem:
    return Problem(
        Location(location.file),
        "",
        "a ReasoningTrace has its own task_domain and confidence: the domain and confidence "
        "given for converted traces are not applied to it",
        warning=True,
    )


@register_source("otlp")
class Otlp(Source):
    """OTLP JSON and JSON Lines, console spans, and CloudWatch's (ADOT's) span documents."""

    shapes = (
        "OTLP JSON or JSON Lines (the OTel file exporter, a collector's file exporter; "
        "Tempo's exports), the Python SDK's console exporter output, or CloudWatch's span and "
        "log documents (aws/spans, one a line; Bedrock AgentCore's {sessionSpans})"
    )
    content_hint = otel_build.CONTENT_HINT
    recognises = staticmethod(otel_files.recognises)
    convert = staticmethod(otel_files.convert_records)


@register_source("langsmith")
class LangSmith(Source):
    """LangSmith and LangChain runs: a run with ``child_runs``, a list, a page, or batches."""

    shapes = (
        "a LangSmith run with child_runs, a list of runs, a {runs} page of the runs query, "
        "or {post, patch} payloads"
    )
    content_hint = langsmith.CONTENT_HINT
    recognises = staticmethod(langsmith.recognises)
    convert = staticmethod(langsmith.convert_records)


@register_source("openai-agents")
class OpenAIAgents(Source):
    """The OpenAI Agents SDK's saved RunState, or its exported trace and span objects."""

    shapes = "the Agents SDK's exported trace and span lines, or a saved RunState (to_json())"
    # A RunState keeps Responses API items (its original_input may be a list of them): it is the
    # whole run, not one request's rows.
    overrides = ("openai-responses",)
    content_hint = agents_spans.CONTENT_HINT
    recognises = staticmethod(agents_files.recognises)
    convert = staticmethod(agents_files.convert_records)


@register_source("smolagents")
class Smolagents(Source):
    """smolagents memory steps, lists of them, or run results."""

    shapes = "memory steps, or its benchmark's rows of the memory as messages"
    content_hint = smolagents_run.CONTENT_HINT
    overrides = ("openai-chat", "conversation")  # an ActionStep keeps the model's input messages
    recognises = staticmethod(smolagents_files.recognises)
    convert = staticmethod(smolagents_files.convert_records)


@register_source("pydantic-ai")
class PydanticAI(Source):
    """Pydantic AI's ``all_messages()`` JSON."""

    shapes = "all_messages() JSON"
    content_hint = pydantic_ai.CONTENT_HINT
    recognises = staticmethod(pydantic_ai.recognises)
    convert = staticmethod(pydantic_ai.convert_records)


@register_source("adk")
class Adk(Source):
    """Google ADK's own files: a saved session, an eval set (``*.evalset.json``) or its result."""

    shapes = (
        "a Google ADK session ({id, app_name, user_id, state, events}, as adk web and adk "
        "api_server serve it), or an ADK eval set ({eval_set_id, eval_cases: [{conversation}]}, "
        "*.evalset.json and the older *.test.json), or its result (*.evalset_result.json, "
        "{eval_set_result_id, eval_case_results}): a trace per session, per eval case"
    )
    content_hint = adk.CONTENT_HINT
    recognises = staticmethod(adk.recognises)
    convert = staticmethod(adk.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """A session or an eval set; an eval case is a reference run, no verdict."""
        return adk.describe(first, count)

    def evidence(self, value: Any) -> str:
        """A session's events, or an eval set's cases."""
        return adk.evidence(value)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The fields a session's or an eval case's trace is read from."""
        return adk.mapping(first)


@register_source("browser-use")
class BrowserUse(Source):
    """browser-use's saved agent history (``AgentHistoryList.save_to_file``)."""

    shapes = (
        "a browser-use agent history ({history: [{model_output, result, state, metadata}]}, as "
        "agent.save_history() writes it): a trace per file"
    )
    content_hint = browser_use.CONTENT_HINT
    recognises = staticmethod(browser_use.recognises)
    convert = staticmethod(browser_use.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """A history, and where its task comes from."""
        return browser_use.describe(first, count)

    def evidence(self, value: Any) -> str:
        """The history's steps."""
        return browser_use.evidence(value)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The fields a history's trace is read from."""
        return browser_use.mapping()


@register_source("langfuse")
class Langfuse(Source):
    """A Langfuse trace export, the public API's traces or observations, or export rows."""

    shapes = (
        "a trace export ({trace, observations}), the public API's traces or observations, the "
        "observations table's export (JSON, JSON Lines), or the blob storage export's "
        "observation rows (Parquet, JSON Lines)"
    )
    content_hint = langfuse.CONTENT_HINT
    # An export row's input column holds a generation's messages: a chat row's, to them.
    overrides = ("openai-chat", "openai-responses", "anthropic", "gemini")
    recognises = staticmethod(langfuse.recognises)
    convert = staticmethod(langfuse.convert_records)


@register_source("phoenix")
class Phoenix(Source):
    """Arize Phoenix span rows, or a page of its REST API's spans.

    Rows: ``context.trace_id``, ``attributes.*`` columns; a page:
    ``{"data": [...], "next_cursor"}``.
    """

    shapes = (
        "Arize Phoenix span rows (context.trace_id, attributes.* columns); "
        "a page of its REST API's spans ({data, next_cursor})"
    )
    content_hint = phoenix.CONTENT_HINT
    # A model call's row holds its request's messages in attributes.input.value (as the Agents
    # SDK's OpenInference spans write them): a chat row's, to the chat sources.
    overrides = ("openai-chat", "openai-responses", "anthropic", "gemini")
    recognises = staticmethod(phoenix.recognises)
    convert = staticmethod(phoenix.convert_records)


@register_source("jaeger")
class Jaeger(Source):
    """The Jaeger query API's JSON (``{data: [{traceID, spans, processes}]}``)."""

    shapes = "the query API's JSON ({data: [{traceID, spans, processes}]})"
    content_hint = jaeger.CONTENT_HINT
    recognises = staticmethod(jaeger.recognises)
    convert = staticmethod(jaeger.convert_records)


@register_source("otel-js")
class OtelJs(Source):
    """OpenTelemetry JS spans (``spanContext``, HrTime times), the Vercel AI SDK's included."""

    shapes = "OTel JS spans (spanContext, HrTime times), the Vercel AI SDK's included"
    content_hint = otel_js.CONTENT_HINT
    recognises = staticmethod(otel_js.recognises)
    convert = staticmethod(otel_js.convert_records)


@register_source("mlflow")
class Mlflow(Source):
    """MLflow Tracing's traces (``Trace.to_json()``, ``mlflow.get_trace``): ``{info, data}``."""

    shapes = (
        "MLflow traces as Trace.to_json() and mlflow.get_trace() give them ({info, data: "
        "{spans}}, MLflow 2 or 3): one, a list, JSON Lines, or mlflow traces search's pages; "
        "a Databricks agent endpoint's response with its trace (databricks_output.trace)"
    )
    content_hint = mlflow.CONTENT_HINT
    # A Databricks agent endpoint's response carries the run's trace beside the agent's Responses
    # output (``databricks_output.trace``): the Responses source sees only the answer in it.
    overrides = ("openai-responses",)
    recognises = staticmethod(mlflow.recognises)
    convert = staticmethod(mlflow.convert_records)


# Coding agents' own logs.


@register_source("swe-agent")
class SweAgent(Source):
    """SWE-agent ``.traj`` files (``trajectory``, ``history``, ``info``)."""

    shapes = "SWE-agent .traj files (trajectory, history, info; or a demonstration's history)"
    content_hint = swe_agent.CONTENT_HINT
    overrides = ("openai-chat", "sharegpt")  # its history is chat messages too
    recognises = staticmethod(swe_agent.recognises)
    convert = staticmethod(swe_agent.convert_records)


@register_source("mini-swe-agent")
class MiniSweAgent(Source):
    """mini-SWE-agent ``.traj.json`` files (``trajectory_format``, ``messages``, ``info``).

    Its tests' files are a bare list of the messages, the system prompt first.
    """

    shapes = (
        "mini-SWE-agent .traj.json files (trajectory_format, messages, info), or a bare JSON "
        "list of its messages opening with its system prompt"
    )
    content_hint = mini_swe_agent.CONTENT_HINT
    overrides = ("openai-chat", "conversation")  # its messages are chat messages too
    recognises = staticmethod(mini_swe_agent.recognises)
    convert = staticmethod(mini_swe_agent.convert_records)


@register_source("openhands")
class OpenHands(Source):
    """OpenHands trajectories (V0 and V1), conversation folders and ``output.jsonl`` rows.

    V1 is the software agent SDK's: events with a ``kind``, persisted as a conversation folder.
    """

    shapes = (
        "OpenHands trajectories (a JSON list of events: id, source, action with args or "
        "observation with content and cause; the GUI's {trajectory: [...]} export); OpenHands "
        "V1 (software agent SDK) events (kind, id, timestamp, source) as a JSON list, JSON Lines "
        "or a conversation folder (base_state.json, events/event-*.json); or evaluation "
        "output.jsonl rows (instance_id, instruction, history of events, test_result)"
    )
    content_hint = openhands.CONTENT_HINT
    recognises = staticmethod(openhands_v1.recognises)
    convert = staticmethod(openhands_v1.convert_records)


@register_source("claude-code")
class ClaudeCode(Source):
    """Claude Code session JSONL (``sessionId`` records), and its stream-json output."""

    shapes = (
        "Claude Code session JSONL (type, message, sessionId records), or the stream-json "
        "that claude -p prints (and Amp's, Qwen Code's and Cursor's CLI's, the same protocol)"
    )
    content_hint = claude_code.CONTENT_HINT
    recognises = staticmethod(claude_code.recognises)
    convert = staticmethod(claude_code.convert_records)


@register_source("codex")
class Codex(Source):
    """Codex rollouts (``~/.codex/sessions/.../rollout-*.jsonl``), and ``codex exec --json``."""

    shapes = (
        "Codex rollout JSONL (session_meta, response_item, event_msg, turn_context lines), or "
        "the JSON events codex exec prints"
    )
    content_hint = codex.CONTENT_HINT
    recognises = staticmethod(codex.recognises)
    convert = staticmethod(codex.convert_records)


@register_source("gemini-cli")
class GeminiCli(Source):
    """Gemini CLI sessions (``session-*.json`` or ``.jsonl``), streams, ``/chat save`` lists.

    ``gemini -p`` streams its events; ``/chat save`` and ``/chat share`` write the API history
    (a JSON list of contents). Its fork Qwen Code's sessions (``chats/<sessionId>.jsonl``) too.
    """

    shapes = (
        "Gemini CLI session JSON (sessionId, projectHash, messages of user and gemini turns), "
        "the stream-json events gemini -p prints, or a /chat save or /chat share JSON list of "
        "Gemini API contents ({role: user|model, parts}); Qwen Code session JSONL (uuid, "
        "parentUuid, sessionId records whose message holds Gemini parts)"
    )
    content_hint = gemini_cli.CONTENT_HINT
    # A Qwen Code record has a Claude Code record's identity fields, but Gemini parts.
    overrides = ("claude-code",)
    recognises = staticmethod(gemini_cli.recognises)
    convert = staticmethod(gemini_cli.convert_records)


@register_source("droid")
class Droid(Source):
    """Factory Droid sessions (``~/.factory/sessions/<workspace>/<session>.jsonl``)."""

    shapes = (
        "Factory Droid session JSONL (a session_start line with id and title, then message "
        "lines of Anthropic content blocks, todo_state and compaction_state lines)"
    )
    content_hint = droid.CONTENT_HINT
    recognises = staticmethod(droid.recognises)
    convert = staticmethod(droid.convert_records)


@register_source("kimi-code")
class KimiCode(Source):
    """Kimi Code's wire journals, and Kimi CLI's older wire files.

    Kimi Code's are ``~/.kimi-code/sessions/*/*/agents/<agent>/wire.jsonl``, Kimi CLI's
    ``~/.kimi/sessions/*/<session>/wire.jsonl``.
    """

    shapes = (
        "Kimi Code wire.jsonl (a metadata line of protocol_version and created_at, then "
        "operations: context.append_message, context.append_loop_event of steps, thoughts, "
        "tool calls and results, llm.request...), Kimi CLI wire.jsonl (a metadata line of "
        "protocol_version, then {timestamp, message: {type: TurnBegin, StepBegin, ContentPart, "
        "ToolCall, ToolResult..., payload}} lines)"
    )
    content_hint = kimi_code.CONTENT_HINT
    recognises = staticmethod(kimi_code.recognises)
    convert = staticmethod(kimi_code.convert_records)


@register_source("copilot-cli")
class CopilotCli(Source):
    """GitHub Copilot CLI's session events, ``~/.copilot/session-state/<session>/events.jsonl``."""

    shapes = (
        "GitHub Copilot CLI events.jsonl (a session.start event of producer copilot-agent, then "
        "{type, data, id, timestamp, parentId} events: user.message, assistant.message of "
        "reasoningText, content and toolRequests, tool.execution_complete, hooks...)"
    )
    content_hint = copilot_cli.CONTENT_HINT
    recognises = staticmethod(copilot_cli.recognises)
    convert = staticmethod(copilot_cli.convert_records)


@register_source("claude-managed-agents")
class ClaudeManagedAgents(Source):
    """Claude Managed Agents' session events, as ``/v1/sessions/<id>/events`` lists them."""

    shapes = (
        "Claude Managed Agents session events (the session object, then {type, id: sevt_..., "
        "processed_at} events: user.message, agent.message, agent.tool_use, agent.mcp_tool_use, "
        "agent.tool_result, user.tool_confirmation...), or the Anthropic SDK's recorded "
        "[client.beta.sessions.<call>, payload] lines"
    )
    content_hint = claude_managed_agents.CONTENT_HINT
    recognises = staticmethod(claude_managed_agents.recognises)
    convert = staticmethod(claude_managed_agents.convert_records)


@register_source("goose")
class Goose(Source):
    """Block's goose: its session store and files, ``goose run``'s json and stream-json, exports."""

    shapes = (
        "goose's session store (sessions.db, SQLite), goose session JSONL (a metadata line of "
        "description and message_count, then one "
        "message a line: role, created, content of text, toolRequest, toolResponse... parts), "
        "what goose run prints as json or stream-json, or goose session export's "
        "JSON"
    )
    content_hint = goose.CONTENT_HINT
    # Its messages have a role and content, a run's JSON a messages column: goose's own parts.
    overrides = ("openai-chat", "conversation")
    recognises = staticmethod(goose.recognises)
    convert = staticmethod(goose.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """Which of goose's files, and where success comes from."""
        return goose.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every file: its messages."""
        return dict(goose.MAPPING)


@register_source("opencode")
class OpenCode(Source):
    """OpenCode: its store, ``opencode export``'s sessions, its messages, its run's JSON."""

    shapes = (
        "OpenCode's store (opencode.db, SQLite), what opencode export prints (info, messages "
        "of info and parts), a JSON list of "
        "OpenCode's messages ({info, parts}), or what opencode run prints in its json format "
        "(one event a line: type, timestamp, sessionID, part)"
    )
    content_hint = opencode.CONTENT_HINT
    recognises = staticmethod(opencode.recognises)
    convert = staticmethod(opencode.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """Which of OpenCode's files, and where success comes from."""
        return opencode.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every file: its messages' parts."""
        return dict(opencode.MAPPING)


@register_source("hermes-agent")
class HermesAgent(Source):
    """Hermes Agent sessions: ``~/.hermes/sessions/session_<id>.json``, ``hermes sessions export``.

    Its batch runner's ShareGPT rows (``save_trajectories``) are the ``hermes`` source's.
    """

    shapes = (
        "Hermes Agent session logs (session_id, platform, session_start, messages of Chat "
        "Completions turns), or the lines hermes sessions export writes (id, source, "
        "started_at, end_reason, messages)"
    )
    content_hint = hermes_agent.CONTENT_HINT
    overrides = ("openai-chat", "conversation")  # its messages are chat messages too
    recognises = staticmethod(hermes_agent.recognises)
    convert = staticmethod(hermes_agent.convert_records)


@register_source("letta")
class Letta(Source):
    """Letta agent files (``.af``): a stateful agent exported with its message history."""

    shapes = (
        "Letta agent files (.af): AgentFileSchema ({agents: [{agent_type, name, messages}], "
        "groups, blocks, tools, mcp_servers}) or an agent before Letta 0.12 ({agent_type, "
        "messages, in_context_message_indices, llm_config})"
    )
    content_hint = letta.CONTENT_HINT
    overrides = ("openai-chat", "conversation")  # an agent before 0.12 holds chat messages
    recognises = staticmethod(letta.recognises)
    convert = staticmethod(letta.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The file's version, a trace per agent, and where success comes from."""
        return letta.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every agent file: each agent's messages."""
        return dict(letta.MAPPING)


@register_source("cline")
class Cline(Source):
    """Cline's and Roo Code's task histories (``tasks/<taskId>/api_conversation_history.json``)."""

    shapes = (
        "Cline's or Roo Code's api_conversation_history.json (a task's messages, the first "
        "holding <task>)"
    )
    content_hint = cline.CONTENT_HINT
    overrides = ("conversation",)  # its task's messages are a conversation's, the first tagged
    recognises = staticmethod(cline.recognises)
    convert = staticmethod(cline.convert_records)


@register_source("pi")
class Pi(Source):
    """Pi's sessions (``~/.pi/agent/sessions/*/*.jsonl``), and what ``pi --mode json`` prints."""

    shapes = (
        "Pi session JSONL (a {type: session, version, id, cwd} header, then message entries "
        "linked by id and parentId), or the events pi prints in its json mode (agent_start, "
        "message_end, tool_execution_end...)"
    )
    content_hint = pi.CONTENT_HINT
    recognises = staticmethod(pi.recognises)
    convert = staticmethod(pi.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The session's version, the branch read, and where success comes from."""
        return pi.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every session: its header and the messages of its branch."""
        return dict(pi.MAPPING)


@register_source("sts")
class Sts(Source):
    """The Hugging Face Hub's Session Trace Simple Format: a ``harness`` header, then messages."""

    shapes = (
        "Session Trace Simple Format JSONL (a {type: session, harness, id} header, then "
        "{type: message, message: {role, content, reasoningContent, toolCalls}} lines)"
    )
    content_hint = sts.CONTENT_HINT
    recognises = staticmethod(sts.recognises)
    convert = staticmethod(sts.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The harness that wrote the session, and where success comes from."""
        return sts.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every session: its header and its messages."""
        return dict(sts.MAPPING)


@register_source("opentraces")
class OpenTraces(Source):
    """opentraces.ai's ``TraceRecord`` JSON Lines (``schema_version: 0.x``), as datasets hold."""

    shapes = (
        "opentraces TraceRecord JSONL (schema_version 0.x, trace_id, agent, task, steps of "
        "role, content, tool_calls and observations, outcome)"
    )
    content_hint = opentraces.CONTENT_HINT
    recognises = staticmethod(opentraces.recognises)
    convert = staticmethod(opentraces.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The schema version, sub-agents' traces, and where success comes from."""
        return opentraces.describe(first, count)

    def evidence(self, value: Any) -> str:
        """Its ``0.x`` schema version beside its ``trace_id`` and ``steps``."""
        return opentraces.evidence(value)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every record."""
        return dict(opentraces.MAPPING)


@register_source("atif")
class Atif(Source):
    """Harbor's Agent Trajectory Interchange Format (``schema_version: ATIF-v1.x``)."""

    shapes = "Harbor's Agent Trajectory Interchange Format (schema_version ATIF-v1.x)"
    content_hint = atif.CONTENT_HINT
    recognises = staticmethod(atif.recognises)
    convert = staticmethod(atif.convert_records)


@register_source("adp")
class Adp(Source):
    """The Agent Data Protocol's standardized trajectories (``{id, content, details}``)."""

    shapes = (
        "Agent Data Protocol trajectories (id, content of text_observation, api_action, "
        "code_action, message_action... items, details), a JSON list or JSON Lines"
    )
    content_hint = adp.CONTENT_HINT
    recognises = staticmethod(adp.recognises)
    convert = staticmethod(adp.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """``read as adp (N traces)``, the fields read, and where success comes from."""
        return adp.describe(first, count)

    def evidence(self, value: Any) -> str:
        """The class of the trajectory's first item, one of ADP's actions and observations."""
        return adp.evidence(value)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The fields of a trajectory each part is read from."""
        return adp.mapping(first)


# Evaluation frameworks' logs.


@register_source("inspect-ai")
class InspectAI(Source):
    """Inspect AI evaluation logs (``.json``): a trace per sample and epoch."""

    shapes = (
        "Inspect AI evaluation logs (.eval or .json: version, status, eval, samples with messages)"
    )
    content_hint = inspect_ai.CONTENT_HINT
    recognises = staticmethod(inspect_ai.recognises)
    convert = staticmethod(inspect_ai.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The log's task, model and status; a trace per sample and epoch."""
        return inspect_ai.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every log: the samples' messages, ids, epochs and scores."""
        return dict(inspect_ai.MAPPING)


@register_source("tau2")
class Tau2(Source):
    """tau2-bench results files (``tau2 run``'s JSON, or its run folder): a trace per simulation."""

    shapes = (
        "tau2-bench results files (info, tasks, simulations with messages and reward_info), "
        "a run folder of results.json and simulations/*.json, or one such simulation"
    )
    content_hint = tau2.CONTENT_HINT
    overrides = ("openai-chat", "conversation")  # a simulation's messages are chat messages too
    recognises = staticmethod(tau2.recognises)
    convert = staticmethod(tau2.convert_records)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """The run's domain and models; a trace per simulation."""
        return tau2.describe(first, count)

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The same fields for every results file: the simulations' messages, ids and rewards."""
        return dict(tau2.MAPPING)


# Conversation datasets, one row a conversation.


@register_source("hermes")
class Hermes(ChatSource):
    """ShareGPT or chat turns whose text holds Hermes ``<tool_call>`` tags."""

    shapes = "dataset rows with <tool_call> tags"
    fields = ("conversations", "messages", "conversation")
    framework = "hermes"
    content_hint = hermes.CONTENT_HINT
    overrides = ("sharegpt", "openai-chat")  # its tags sit inside ShareGPT or chat turns
    matches = staticmethod(hermes.matches)
    tell = staticmethod(hermes.tell)


@register_source("gemini")
class Gemini(ChatSource):
    """Gemini API contents (``{role: user|model, parts}``) in rows, a request's each.

    A bare list of contents (Gemini CLI's ``/chat save`` and ``/chat share`` JSON) is one
    conversation, no rows: the ``gemini-cli`` source reads it.
    """

    shapes = "dataset rows of contents (generateContent requests: contents, systemInstruction)"
    fields = ("contents", "history", "messages")
    system_fields = ("systemInstruction", "system_instruction")
    framework = "gemini"
    content_hint = gemini.CONTENT_HINT
    overrides = ("sharegpt",)  # its model role and text parts read as ShareGPT turns too
    matches = staticmethod(gemini.matches)
    tell = staticmethod(gemini.tell)

    def convert(self, records: Records, options: TraceOptions) -> Items:
        """Every row as a trace; a record that is a content, no row, a problem saying why."""
        return convert_rows(_no_contents(records), options, self)


def _no_contents(records: Records) -> Iterator[Record | Problem]:
    """The records, a bare content (a ``/chat save`` list's) a problem that names its reader."""
    for item in records:
        if isinstance(item, Record) and gemini.is_content(item.value):
            yield item.problem(
                (),
                "a Gemini content, not a row of contents: a JSON list of contents (Gemini CLI's "
                "/chat save or /chat share) is one conversation; read it as one with "
                "source='gemini-cli' (kp: --from gemini-cli; a file of one is recognised "
                "without it)",
            )
        else:
            yield item


@register_source("anthropic")
class Anthropic(ChatSource):
    """Anthropic Messages: user and assistant turns of content blocks."""

    shapes = "dataset rows of content blocks"
    fields = ("messages", "conversation")
    system_fields = ("system",)  # the Messages API's system prompt, text or text blocks
    framework = "anthropic"
    content_hint = anthropic.CONTENT_HINT
    # Its text blocks are chat parts too: a typed Message (the API's reply) is Anthropic's.
    overrides = ("openai-chat",)
    matches = staticmethod(anthropic.matches)
    tell = staticmethod(anthropic.tell)


@register_source("openai-responses")
class OpenAIResponses(ChatSource):
    """OpenAI Responses items (typed items, messages with ``input_text`` parts)."""

    shapes = "dataset rows of items"
    fields = ("items", "input", "output", "messages")
    framework = "openai"
    continued = ("input", "output")
    # NeMo Gym's rollouts: the Responses request made, then the response it got.
    wrapped = (("responses_create_params", "input"), ("response", "output"))
    system_fields = ("instructions",)  # the request's system prompt (beside input, or in it)
    content_hint = openai_responses.CONTENT_HINT
    overrides = ("openai-chat",)  # its messages are chat messages too
    matches = staticmethod(openai_responses.matches)
    tell = staticmethod(openai_responses.tell)


@register_source("openai-chat")
class OpenAIChat(ChatSource):
    """OpenAI Chat Completions messages, with ``tool_calls``; TRL's prompt/completion rows.

    A row's text columns are read as its messages too (TRL's standard prompt/completion and
    preference rows; alpaca's ``instruction``, ``input``, ``output`` and ``history``, SFT,
    preference and KTO rows; Dolly's ``response`` and ``context``; ms-swift's ``query``,
    ``response`` and ``history``): :meth:`text_turn`. xLAM's ``query`` is followed by its
    ``answers``, the calls made for it: :meth:`calls_turn`. Glaive's ``chat`` transcript is read
    as the messages it writes out: :meth:`transcript`.
    """

    shapes = (
        "dataset rows of messages with tool_calls, prompt and completion messages, or alpaca "
        "instruction and output"
    )
    fields = ("messages", "conversation", "chat", "prompt", "instruction", "query", "chosen")
    framework = "openai"
    continued = ("prompt", "completion")
    completion = "response"  # a logged call's reply (LiteLLM's logs: messages, then response)
    system_fields = ("system", "system_prompt")  # alpaca rows' (LLaMA-Factory's), Nemotron's
    content_hint = openai_chat.CONTENT_HINT
    matches = staticmethod(openai_chat.matches)
    tell = staticmethod(openai_chat.tell)
    text_turn = staticmethod(openai_chat.text_message)
    calls_turn = staticmethod(openai_chat.calls_message)
    transcript = staticmethod(_glaive.transcript_messages)


@register_source("sharegpt")
class ShareGPT(ChatSource):
    """ShareGPT turns (``from`` / ``value``) and their agent variants."""

    shapes = "dataset rows of conversations of from/value"
    fields = ("conversations", "conversation", "trajectory", "messages")
    system_fields = ("system", "system_prompt")  # ms-swift's and LLaMA-Factory's system column
    framework = "sharegpt"
    content_hint = sharegpt.CONTENT_HINT
    matches = staticmethod(sharegpt.matches)
    tell = staticmethod(sharegpt.tell)


@register_source("conversation")
class Conversation(Source):
    """A conversation saved as the model's API takes it: a JSON list of messages, one run."""

    shapes = (
        "a conversation saved as a JSON list of chat messages (Chat Completions, Anthropic, "
        "Responses or ShareGPT turns, or LangChain's messages_to_dict and dumpd dumps), or "
        "JSON Lines of them: one run a file, or one a list; a session file's header line "
        "before them (nanobot's)"
    )
    content_hint = openai_chat.CONTENT_HINT
    recognises = staticmethod(langchain_history.recognises)
    convert = staticmethod(langchain_history.convert_records)
