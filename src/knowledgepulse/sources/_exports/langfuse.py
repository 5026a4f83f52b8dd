"""Langfuse traces, as its UI exports them and its public API returns them.

One trace is ``{"trace": {...}, "observations": [...]}`` (the UI's export), or a trace object
with its ``observations`` inline (``GET /api/public/traces/{id}``); a file holds one, a list, or
a page ``{"data": [...], "meta": {...}}`` of traces or of observations
(``GET /api/public/observations``), or observations one by one (the UI's export of the
observations table), which are grouped by ``traceId``. Each observation becomes a
span of the OpenTelemetry model: a ``GENERATION`` is a model call (its ``input`` the messages
sent, its ``output`` the reply: thoughts and tool-call requests), a ``TOOL`` (or a ``SPAN`` named
as a tool the model called) a tool execution, a ``RETRIEVER`` a retrieval, an ``AGENT`` the
agent; ``CHAIN`` and the other ``SPAN`` observations are plumbing, read through. ``level:
ERROR`` marks a failure, ``statusMessage`` its text; an ``EVENT`` at that level is an error of its
own (its text the status message, else its output or input), which the next action recovers
from; other events say nothing. A tool observation below ``ERROR`` whose output says it failed
is an error as well: Langfuse keeps an OTel span at ``DEFAULT`` whether its status was OK or
unset, so the level says nothing of a tool that reported its failure as its result (a C#
agent's ``{"response_status": "Error", "message": ...}``, Google ADK's ``{"status": "error",
"error_message": ...}``); the output is read as a chat row's result is (``_text.error_text``),
or an object whose ``status`` (or ``..._status``) is ``error`` or ``failed``, its ``message``
the error's text. When Langfuse ingested OTel spans, the span's own attributes
sit in ``metadata.attributes``: they win (OpenInference, GenAI...), and what Langfuse made of
the span fills in what they leave out. The trace's ``input`` gives
the objective and its ``output`` the answer.

Langfuse's blob storage export writes the same observations as rows (Parquet, JSON Lines):
``observations_v2/`` holds the enriched observations of Langfuse v4, one row an observation with
its trace's context (``trace_name``, ``user_id``, ``session_id``, ``tags``), in snake_case
(``trace_id``, ``parent_observation_id`` empty at the root, ``start_time``, ``status_message``),
times in UTC with no zone, ``metadata`` a map of strings. The columns are those of its field
reference (langfuse.com/docs/api-and-data-platform/features/blob-storage-export-fields) and of
``EVENTS_FIELDS`` in ``packages/shared/src/server/queries/clickhouse-sql/event-query-builder.ts``.
The rows of one ``trace_id`` are read as that trace's export: each row as the observation the API
gives, and the trace's input and output those of its root observation, as Langfuse itself takes
them (``input: argMaxIf(input, event_ts, parent_span_id = '')`` there). The legacy
``observations/`` export (the same rows without the trace's context) reads the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from knowledgepulse._util.jsonpath import Loc, as_string, describe_value, non_empty
from knowledgepulse._util.times import aware, iso_time
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._chat._text import reported_failure
from knowledgepulse.sources._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    TraceOptions,
)
from knowledgepulse.sources._steps import as_text
from knowledgepulse.sources.otel import messages as msg
from knowledgepulse.sources.otel.build import CONTENT_HINT
from knowledgepulse.sources.otel.dialects import read
from knowledgepulse.sources.otel.files import convert_span_records
from knowledgepulse.sources.otel.spans import Span, SpanError, dotted, hex_id, time_ns
from knowledgepulse.trace import TraceItem

__all__ = ["CONTENT_HINT", "convert_records", "recognises"]

_TYPES = frozenset(
    {
        "SPAN",
        "GENERATION",
        "EVENT",
        "AGENT",
        "TOOL",
        "CHAIN",
        "RETRIEVER",
        "EVALUATOR",
        "EMBEDDING",
        "GUARDRAIL",
    }
)
_ROOT = "trace:"  # the span made of the trace itself: its input and output


def recognises(value: Any) -> bool:
    """Whether a record is a Langfuse trace export, an API trace, or a page of either."""
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        first = next(iter(value["data"]), None)
        return _is_trace(first) or _is_observation(first)
    return _is_export(value) or _is_trace(value) or _is_row(value) or _is_table_row(value)


def _is_table_row(value: Any) -> bool:
    """An observation on its own: a row of the UI's batch export of the observations table.

    Its JSON (an array) and JSON Lines files hold the API's observations one by one (each with
    its trace's ``traceName``, ``traceTags``, ``userId`` and its scores); a trace's observations
    are grouped by ``traceId`` as a page's are. An id and a start time, beside the type and
    trace id, tell one from a record that merely has a ``type``.
    """
    return _is_observation(value) and "id" in value and "startTime" in value


def _is_row(value: Any) -> bool:
    """An observation row of the blob storage export (snake_case, one row an observation)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("trace_id"), str)
        and isinstance(value.get("type"), str)
        and value["type"] in _TYPES
        and "id" in value
        and "start_time" in value
    )


def _is_export(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("trace"), dict)
        and isinstance(value.get("observations"), list)
    )


def _is_trace(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "id" in value
        and "timestamp" in value
        and isinstance(value.get("observations"), list)
    )


def _is_observation(value: Any) -> bool:
    kind = value.get("type") if isinstance(value, dict) else None
    return isinstance(kind, str) and kind in _TYPES and "traceId" in value


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trace in one file's records; a located problem for each observation it cannot read.

    The whole file is read first: a ``SPAN`` is a tool when a generation anywhere in the file
    (pages of observations come in any order) asked for a tool of its name.
    """
    items = _traces_of_rows(records)
    groups = [
        (trace, observations)
        for record in items
        if isinstance(record, Record)
        for trace, observations, _, _ in _groups(record.value, ())
    ]
    tools = _requested_tools(item for _, observations in groups for item in observations)
    runs = _lone_roots(
        item for trace, observations in groups if trace is None for item in observations
    )

    def spans(value: Any) -> Iterator[tuple[Span | SpanError, Loc]]:
        for trace, observations, where, trace_key in _groups(value, ()):
            if trace is None and not observations:
                item = value["data"][where[1]] if where else value
                message = (
                    'expected a Langfuse trace ({"trace", "observations"}, or a trace with its '
                    f"observations) or an observation, found {describe_value(item)}"
                )
                yield SpanError(where, message), where
            elif trace is None:
                yield from _observation_spans(None, observations, where, (), tools, runs=runs)
            else:
                yield from _trace_spans(trace, observations, where, trace_key, tools)

    yield from convert_span_records(items, options, spans, source="langfuse")


_ROW_FIELDS = {
    "id": "id",
    "trace_id": "traceId",
    "type": "type",
    "name": "name",
    "start_time": "startTime",
    "end_time": "endTime",
    "parent_observation_id": "parentObservationId",
    "level": "level",
    "status_message": "statusMessage",
    "input": "input",
    "output": "output",
    "metadata": "metadata",
    "provided_model_name": "model",
    "usage_details": "usageDetails",
}
"""An export row's column, and the public API's name of the same observation field."""
_TRACE_FIELDS = {"user_id": "userId", "session_id": "sessionId", "tags": "tags"}
"""The trace's context each enriched row repeats, and its name on the API's trace."""


def _traces_of_rows(records: Iterable[Record | Problem]) -> list[Record | Problem]:
    """The records, each trace's export rows made one trace export, where its first row was."""
    items: list[Record | Problem] = []
    traces: dict[str, tuple[int, Record, list[dict[str, Any]]]] = {}
    for item in records:
        if not (isinstance(item, Record) and _is_row(item.value)):
            items.append(item)
            continue
        trace_id = item.value["trace_id"]
        if trace_id not in traces:
            traces[trace_id] = (len(items), item, [])
            items.append(item)
        traces[trace_id][2].append(item.value)
    for at, first, rows in traces.values():
        items[at] = Record(first.location, _export(rows))
    return items


def _export(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One trace's rows as the UI's export: the trace, from its root row, and its observations."""
    observations = [
        {
            field: _value(column, row[column])
            for column, field in _ROW_FIELDS.items()
            if column in row
        }
        for row in rows
    ]
    marked = [n for n, row in enumerate(rows) if row.get("is_root_observation") is True]
    roots = marked or [n for n, row in enumerate(rows) if not row.get("parent_observation_id")]
    root = roots[0] if roots else 0
    # Several roots (a client that traced only its model calls, each a root generation), or
    # none (the root left out), say nothing of the run's input and output, as a page of the
    # same observations says nothing (:func:`_lone_roots`): the first root's output was read
    # as the answer, the model's words before its first tool call.
    observation = observations[root] if len(roots) == 1 else {}
    starts = [o["startTime"] for o in observations if isinstance(o.get("startTime"), datetime)]
    trace = {
        "id": rows[root]["trace_id"],
        "timestamp": min(starts, default=None),
        "name": rows[root].get("trace_name") or rows[root].get("name"),
        "input": observation.get("input") or None,
        "output": observation.get("output") or None,
        "metadata": observation.get("metadata"),
        **{
            field: rows[root][column]
            for column, field in _TRACE_FIELDS.items()
            if column in rows[root]
        },
    }
    return {"trace": trace, "observations": observations}


_MAPS = frozenset({"metadata", "usage_details"})
"""The export's map columns: Parquet gives a map as a list of (key, value) pairs."""


def _value(column: str, value: Any) -> Any:
    """An export cell as the API gives it: times in UTC, a map a dict."""
    if isinstance(value, datetime):
        return aware(value)
    if column.endswith("_time") and isinstance(value, str) and value:
        # the text exports' "YYYY-MM-DD HH:MM:SS.ffffff", in UTC
        return iso_time(value) or value
    if column in _MAPS and isinstance(value, list):
        return {pair[0]: pair[1] for pair in value if isinstance(pair, tuple) and len(pair) == 2}
    return value


_Group = tuple[Mapping[str, Any] | None, list[Any], Loc, Loc]
"""A trace (``None`` for loose observations), its observations, where the group is, and the key
of the trace inside it (``("trace",)`` in the UI's export, ``()`` for the API's trace)."""


def _groups(value: Any, where: Loc) -> Iterator[_Group]:
    """A record's traces with their observations, and its loose observations, with their paths."""
    if isinstance(value, dict) and isinstance(value.get("data"), list) and not where:
        for n, item in enumerate(value["data"]):
            yield from _groups(item, ("data", n))
    elif _is_export(value):
        yield value["trace"], value["observations"], where, ("trace",)
    elif _is_trace(value):
        yield value, value["observations"], where, ()
    elif _is_observation(value):
        yield None, [value], where, ()
    else:
        yield None, [], where, ()


def _trace_spans(
    trace: Mapping[str, Any],
    observations: list[Any],
    where: Loc,
    trace_key: Loc,
    tools: set[str],
) -> Iterator[tuple[Span | SpanError, Loc]]:
    key: Loc = ("observations",)
    try:
        trace_id = hex_id(trace.get("id"), (*where, *trace_key, "id"), 16)
    except SpanError as error:
        yield error, error.loc
        return
    if observations and all(isinstance(item, str) for item in observations):
        message = (
            "the trace lists its observations by id only (the list endpoint does); fetch each "
            "trace with GET /api/public/traces/{id}, which gives them whole"
        )
        yield SpanError((*where, *key), message), where
        return
    failed = any(
        isinstance(item, dict) and not item.get("parentObservationId") and _failed(item)
        for item in observations
    )
    yield _root(trace, trace_id, failed=failed), where
    yield from _observation_spans(trace_id, observations, where, key, tools)


def _root(trace: Mapping[str, Any], trace_id: str, *, failed: bool) -> Span:
    attributes: dict[str, Any] = {}
    if trace.get("input") is not None or trace.get("output") is not None:
        attributes = {
            "openinference.span.kind": "AGENT",
            "input.value": trace.get("input"),
            "output.value": trace.get("output"),
        }
        if isinstance(trace.get("name"), str):
            attributes["agent.name"] = trace["name"]
    metadata = _object(trace.get("metadata"))
    attributes.update(
        {key: metadata[key] for key in (DOMAIN_KEY, CONFIDENCE_KEY) if key in metadata}
    )
    return Span(
        trace_id=trace_id,
        span_id=_ROOT + trace_id,
        parent_id=None,
        name=str(trace.get("name") or "trace"),
        start_ns=time_ns(trace.get("timestamp")),
        error=failed,
        attributes=attributes,
    )


def _observation_spans(
    trace_id: str | None,
    observations: list[Any],
    where: Loc,
    key: Loc,
    tools: set[str],
    *,
    runs: frozenset[str] = frozenset(),
) -> Iterator[tuple[Span | SpanError, Loc]]:
    # Ids that are no string (a list, an object) are none here: _span reports them.
    wrappers = {
        as_string(item.get("parentObservationId"))
        for item in observations
        if isinstance(item, dict) and item.get("type") == "GENERATION"
    }
    for n, item in enumerate(observations):
        loc: Loc = (*where, *key, n) if key else where
        try:
            own = as_string(item.get("id")) if isinstance(item, dict) else None
            run = own is not None and own in runs
            yield _span(item, trace_id, tools, wraps=own in wrappers, run=run), loc
        except SpanError as error:
            yield SpanError((*loc, *error.loc), error.message), loc


def _span(
    item: Any, trace_id: str | None, tools: set[str], *, wraps: bool = False, run: bool = False
) -> Span:
    if not isinstance(item, dict):
        raise SpanError((), f"expected an observation object, found {describe_value(item)}")
    own_trace = hex_id(item.get("traceId") or trace_id, ("traceId",), 16)
    parent = item.get("parentObservationId")
    if parent in (None, ""):
        parent_id = _ROOT + own_trace if trace_id is not None else None
    else:
        parent_id = hex_id(parent, ("parentObservationId",), 8)
    metadata = _object(item.get("metadata"))
    scope = _object(metadata.get("scope")).get("name")
    message = item.get("statusMessage")
    if item.get("type") == "EVENT" and _failed(item) and not message:  # its output or input
        message = as_text(_first(item.get("output"), item.get("input"), item.get("name")))
    reported = None if _failed(item) else _reported_failure(item, metadata, tools)
    message = message or reported
    span = Span(
        trace_id=own_trace,
        span_id=hex_id(item.get("id"), ("id",), 8),
        parent_id=parent_id,
        name=str(item.get("name") or item.get("type") or ""),
        start_ns=time_ns(item.get("startTime")),
        end_ns=time_ns(item.get("endTime")),
        error=_failed(item) or reported is not None,
        status_message=non_empty(message),
        attributes=dotted(_object(metadata.get("attributes"))),
        scope=as_string(scope),
    )
    # The span's own attributes win, name by name; what Langfuse made of the span (its type,
    # input and output) fills in what they leave out (an ADK tool's arguments, say).
    made = _attributes(item, tools, wraps=wraps, run=run)
    return dataclasses.replace(span, attributes={**_agreeing(made, span), **span.attributes})


_OPERATIONS = {"agent": "invoke_agent", "inference": "chat", "tool": "execute_tool"}
"""The GenAI operation of each role a span's own attributes can give it."""


def _agreeing(made: dict[str, Any], span: Span) -> dict[str, Any]:
    """What Langfuse made of a span, told in the role and tool name its own attributes give.

    Langfuse's fill-in speaks GenAI, which the dialects read before the others: a Vercel AI SDK
    span's own ``ai.*`` attributes (an ``ai.toolCall`` observation, named so by Langfuse before
    it named them after the tool, whose ``ai.toolCall.name`` is the tool; an ``ai.streamText``
    typed GENERATION, the SDK's whole call) would be overruled by its observation name and type.
    """
    own = read(span)
    operation = made.get("gen_ai.operation.name")
    if not own.said or operation is None:  # the span's attributes say nothing themselves
        return made
    agreed = {key: value for key, value in made.items() if key != "gen_ai.operation.name"}
    if own.role in _OPERATIONS:
        agreed["gen_ai.operation.name"] = _OPERATIONS[own.role]
    if own.tool_name:
        agreed["gen_ai.tool.name"] = own.tool_name
    return agreed


def _attributes(
    item: Mapping[str, Any], tools: set[str], *, wraps: bool, run: bool = False
) -> dict[str, Any]:
    """What an observation's type, input and output say, as GenAI / OpenInference attributes.

    A GENERATION that holds generations of its own (an app's handler the SDK's ``observe``
    typed as one, around the model calls it made) is no model call: it is the run they make,
    its input the request and its output the answer, as an AGENT's are; so is the lone root of
    observations given without their trace (``run``: :func:`_lone_roots`).
    """
    kind = item.get("type")
    name = item.get("name")
    if kind == "AGENT" or (kind == "GENERATION" and wraps) or run:
        return {
            "openinference.span.kind": "AGENT",
            "agent.name": name,
            "input.value": item.get("input"),
            "output.value": item.get("output"),
        }
    if kind == "GENERATION":
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": _messages(item.get("input"), "user"),
            "gen_ai.output.messages": _messages(item.get("output"), "assistant"),
            "gen_ai.response.model": item.get("model"),
        }
    # Langfuse's RETRIEVER is a retrieval the agent ran as a step: a tool call, as a TOOL.
    if kind in ("TOOL", "RETRIEVER") or (
        kind == "SPAN" and isinstance(name, str) and name in tools
    ):
        return {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.arguments": item.get("input"),
            "gen_ai.tool.call.result": item.get("output"),
        }
    if kind == "EVENT":  # an error at ERROR level (the next action recovers), else nothing
        return {"langfuse.observation.type": "event"}
    return {}


_PYTHON_NONE = "None"
"""Python's ``str(None)``: OpenLIT writes a reply that has no text (tool calls only) as its
``str`` of the message's content, so Agno's run traced by it reaches Langfuse with a generation
whose output is ``"None"``: no words of the model, no thought."""


def _messages(value: Any, role: str) -> list[Any]:
    """A generation's input or output as chat messages: text is one message of ``role``.

    Text that is a chat flattened into ``role: text`` turns (OpenLIT's, as AutoGen's model calls
    traced by it reach Langfuse) is those messages: its system turn is no user's request.
    """
    loaded = msg.loads(value)
    if isinstance(loaded, str):
        if role == "assistant" and loaded.strip() == _PYTHON_NONE:
            return []
        turns = msg.transcript(loaded)
        if turns is not None:
            return turns
        return [{"role": role, "content": loaded}] if loaded.strip() else []
    if isinstance(loaded, dict):
        if "role" in loaded or "parts" in loaded or "tool_calls" in loaded:
            return [{"role": role, **loaded}]
        if isinstance(loaded.get("messages"), list):
            return list(loaded["messages"])
        # Gemini's request and response as Vertex AI's SDK sends and returns them: the turns
        # are its ``contents``, the reply its first candidate's ``{"content": {"role", "parts"}}``.
        if isinstance(loaded.get("contents"), list):
            return list(loaded["contents"])
        candidates = loaded.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            loaded = candidates[0]
        content = loaded.get("content")
        if isinstance(content, dict):  # Gemini / ADK: {"content": {"role": "model", "parts"}}
            return [{"role": role, **content}]
        if content is not None:
            return [{"role": role, "content": content}]
        return []
    if isinstance(loaded, list):
        blocks = all(isinstance(item, dict) and "role" not in item for item in loaded)
        # Anthropic and the AI SDK write an output as its content blocks: one message.
        return [{"role": role, "content": loaded}] if loaded and blocks else list(loaded)
    return []


def _lone_roots(observations: Iterable[Any]) -> frozenset[str]:
    """The ids of the observations that stand for their trace: each trace's one root SPAN/CHAIN.

    Observations read without their trace (an API page of them) have no trace input to give the
    objective. Langfuse takes a trace's input and output from its root observation (v4's
    ``argMaxIf(input, event_ts, parent_span_id = '')``), as the export rows of the same
    observations are read (:func:`_export`): so are a page's, when one root (a ``SPAN`` or
    ``CHAIN``: the app's run, as LangGraph's) holds the rest and records either. Several roots
    say no such thing; a root model call or agent is read as itself.
    """
    roots: dict[str, list[dict[str, Any]]] = {}
    for item in observations:
        if (
            isinstance(item, dict)
            and not item.get("parentObservationId")
            and isinstance(item.get("traceId"), str)
            and isinstance(item.get("id"), str)
        ):
            roots.setdefault(item["traceId"], []).append(item)
    return frozenset(
        found[0]["id"]
        for found in roots.values()
        if len(found) == 1
        and found[0].get("type") in ("SPAN", "CHAIN")
        and (found[0].get("input") or found[0].get("output"))
    )


def _requested_tools(observations: Iterable[Any]) -> set[str]:
    """The names of the tools the generations asked for (a ``SPAN`` of that name ran one)."""
    names: set[str] = set()
    for item in observations:
        if isinstance(item, dict) and item.get("type") == "GENERATION":
            for message in msg.messages(_messages(item.get("output"), "assistant")):
                names.update(
                    str(part.get("name"))
                    for part in message["parts"]
                    if part.get("type") == "tool_call" and part.get("name")
                )
    return names


def _reported_failure(
    item: Mapping[str, Any], metadata: Mapping[str, Any], tools: set[str]
) -> str | None:
    """Why a tool observation's output says the tool failed; ``None`` when it does not.

    Only a tool's: a model's or an agent's output saying "error" is what it said. The test is
    the one the span reader applies to a tool span's result (:func:`reported_failure`).
    """
    kind, name = item.get("type"), item.get("name")
    attributes = _object(metadata.get("attributes"))
    ran = (
        kind in ("TOOL", "RETRIEVER")
        or (kind == "SPAN" and isinstance(name, str) and name in tools)
        or attributes.get("gen_ai.operation.name") == "execute_tool"
    )
    return reported_failure(msg.loads(item.get("output"))) if ran else None


def _first(*values: Any) -> Any:
    return next((value for value in values if value not in (None, "", {}, [])), "")


def _failed(item: Mapping[str, Any]) -> bool:
    return item.get("level") == "ERROR"


def _object(value: Any) -> dict[str, Any]:
    loaded = msg.loads(value)
    return loaded if isinstance(loaded, dict) else {}
