"""GenAI content an OTLP document keeps in its log records (``resourceLogs``), for its spans.

With content capture set to events (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` at
``event_only``, Google ADK's event modes), an instrumentation records the messages not on its
spans but as log records tied to them by ``traceId`` and ``spanId``: the latest conventions'
``gen_ai.client.inference.operation.details`` event (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` as structured attributes), or the
earlier per-message events (``gen_ai.user.message``, ``gen_ai.choice``..., the message in the
body). Where a document holds both signals (a collector's export, agentevals' recordings), each
span is read as if it carried its content itself: the details' attributes become the span's (its
own win), the per-message events its ``events`` attribute, as ``messages.event_messages`` reads it.
The details event recorded on the span itself, as a span event, is read the same way
(:func:`with_event_content`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from knowledgepulse._util.jsonpath import Loc, as_object
from knowledgepulse.sources.otel.messages import loads
from knowledgepulse.sources.otel.spans import (
    Span,
    SpanError,
    any_value,
    as_list,
    hex_id,
    key_values,
    otlp_spans,
    pick,
)

DETAILS = "gen_ai.client.inference.operation.details"
"""The latest conventions' event of a model call's (or an agent's, a tool's) content."""
_CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
_MESSAGE_EVENTS = (
    "gen_ai.system.message",
    "gen_ai.user.message",
    "gen_ai.assistant.message",
    "gen_ai.tool.message",
    "gen_ai.choice",
)

ELIDED = "<elided>"
"""What OTel's Python GenAI instrumentations write for a message's text when capture is off."""

SpanKey = tuple[str, str]
"""A span's (trace id, span id), both lowercase hex."""


@dataclass(frozen=True, slots=True)
class LoggedContent:
    """What a log record in a record of its own (ADOT's, :func:`record_content`) gives its span.

    Its span may be in another record of the file: it is joined to it once all are read.
    """

    key: SpanKey
    attributes: Mapping[str, Any]


def document_spans(document: Mapping[str, Any]) -> Iterator[tuple[Span, Loc] | SpanError]:
    """Each span of an OTLP document (as ``otlp_spans``), given the content its logs record."""
    logged = logged_content(document)
    for found in otlp_spans(document):
        given = None if isinstance(found, SpanError) else logged.get(_key(found[0]))
        if given and not isinstance(found, SpanError):  # the span's own attributes win
            span, loc = found
            yield with_logged(span, given), loc
        else:
            yield found


def _key(span: Span) -> SpanKey:
    return (span.trace_id, span.span_id)


def logged_content(document: Mapping[str, Any]) -> dict[SpanKey, dict[str, Any]]:
    """The GenAI attributes each span's log records give it (``events``: its message events)."""
    found: dict[SpanKey, dict[str, Any]] = {}
    for record in _log_records(document):
        told = record_content(record, plain=False)
        if told is not None:
            merge_content(found.setdefault(told[0], {}), told[1])
    return {key: given for key, given in found.items() if given}


def record_content(
    record: Mapping[str, Any], *, plain: bool
) -> tuple[SpanKey, dict[str, Any]] | None:
    """The span one log record belongs to and the GenAI attributes it gives it, else ``None``.

    ``plain``: the record's attributes and body are plain JSON (ADOT's flattened records,
    :func:`~knowledgepulse.sources.otel.spans.is_flat_log`), not OTLP's ``KeyValue`` lists.
    """
    try:
        key = (
            hex_id(pick(record, "traceId", "trace_id"), (), 16),
            hex_id(pick(record, "spanId", "span_id"), (), 8),
        )
    except SpanError:
        return None  # a log record of no span: nothing to give
    raw = record.get("attributes")
    attributes = dict(as_object(raw)) if plain else key_values(raw)
    name = pick(record, "eventName", "event_name") or attributes.get("event.name")
    body = record.get("body") if plain else any_value(record.get("body"))
    given: dict[str, Any] = {}
    if name in _MESSAGE_EVENTS:
        message = body if isinstance(body, dict) else _message_text(body)
        if message.get("content") != ELIDED:
            given["events"] = [{"event.name": name, **message}]
        return key, given
    given.update(_llo_events(body))
    for attribute in _CONTENT:
        if attribute in attributes:
            given[attribute] = attributes[attribute]
    return key, given


def _message_text(body: Any) -> dict[str, Any]:
    """A message event's body that is text: the message it writes as JSON, else its content.

    Semantic Kernel logs each message as a Python log record whose body is the message's JSON
    (``{"role": "user", "content": ...}``, a choice's ``{"message": ..., "finish_reason"}``),
    which OpenTelemetry's ``LoggingHandler`` sends as a string.
    """
    loaded = loads(body)
    if isinstance(loaded, dict) and _MESSAGE_KEYS & loaded.keys():
        return loaded
    return {"content": body}


_MESSAGE_KEYS = frozenset(("role", "content", "message", "tool_calls"))


def merge_content(given: dict[str, Any], more: Mapping[str, Any]) -> None:
    """Add one log record's content to a span's: events and texts in order, else the first."""
    for attribute, value in more.items():
        if attribute in ("events", LLO_TEXTS):
            given.setdefault(attribute, []).extend(value)
        else:
            given.setdefault(attribute, value)


_LLO_ROLES = {
    "system": "gen_ai.system.message",
    "user": "gen_ai.user.message",
    "tool": "gen_ai.tool.message",
}

LLO_TEXTS = "kp.adot.llo_texts"
"""Where the text contents of an ADOT LLO record wait for their span (:func:`with_logged`)."""


def _llo_events(body: Any) -> dict[str, Any]:
    """The message events (and texts) of a log record ADOT's LLO handler wrote, else none.

    ADOT (``aws-opentelemetry-distro``, ``llo_handler.py``) takes a span's large content out of
    it (its message span events, ``input.value``, ``traceloop.entity.input``,
    ``gen_ai.input.messages``...) into one log record of that span, named by the span's scope,
    whose body is ``{"input": {"messages": [...]}, "output": {"messages": [...]}}``, each
    message ``{"content", "role"}``; every ``assistant`` message goes to the output, a history
    message too. A span event's content is the event's own attributes: Strands'
    ``gen_ai.user.message`` ``{"content": <JSON of Converse blocks>}``, a ``gen_ai.choice``
    ``{"message", "finish_reason"}``, and a history ``gen_ai.assistant.message`` ``{"content"}``
    in the output (so an output message with a ``content`` and no ``message`` is history, not
    the reply). Read as those events were. An attribute's content is its text, whose attribute
    only the span can tell: kept under :data:`LLO_TEXTS` for :func:`with_logged`.
    """
    if not isinstance(body, dict) or not ({"input", "output"} & body.keys()):
        return {}
    told: dict[str, list[dict[str, Any]]] = {"input": [], "history": [], "output": []}
    texts: list[tuple[str, str, str]] = []
    for side in ("input", "output"):
        for message in as_list(as_object(body.get(side)).get("messages")):
            if not isinstance(message, dict):
                continue
            role, content = str(message.get("role")), message.get("content")
            if isinstance(content, str):
                if content != ELIDED:
                    texts.append((side, role, content))
                continue
            if (
                not isinstance(content, dict)
                or content.get("content", content.get("message")) == ELIDED
            ):
                continue
            if side == "input" and role in _LLO_ROLES:
                told["input"].append({"event.name": _LLO_ROLES[role], **content})
            elif side == "output" and "message" in content:
                told["output"].append({"event.name": "gen_ai.choice", **content})
            elif side == "output":
                told["history"].append({"event.name": "gen_ai.assistant.message", **content})
    # ADOT keeps the span's events by name, so of each kind of message only the request's last
    # is left, in the order the kinds first came: the user's last message, the assistant's
    # last turn, the last tool results. Those results are this call's (sent after that turn)
    # only when they answer a call of it; others were an earlier turn's, answered before.
    history = told["history"]
    asked = {key for event in history for key in _use_ids(event.get("content"), "toolUse")}
    inputs = [
        event
        for event in told["input"]
        if event["event.name"] != "gen_ai.tool.message"
        or _use_ids(event.get("content"), "toolResult") & asked
    ]
    users = [event for event in inputs if event["event.name"] != "gen_ai.tool.message"]
    tools = [event for event in inputs if event["event.name"] == "gen_ai.tool.message"]
    events = [*users, *history, *tools, *told["output"]]
    found: dict[str, Any] = {}
    if events:
        found["events"] = events
    if texts:
        found[LLO_TEXTS] = texts
    return found


def _use_ids(content: Any, block: str) -> set[str]:
    """The ``toolUseId`` of each Converse ``toolUse`` / ``toolResult`` block in a message's JSON."""
    try:
        loaded = json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return set()
    return {
        str(as_object(item.get(block)).get("toolUseId"))
        for item in as_list(loaded)
        if isinstance(item, dict) and as_object(item.get(block)).get("toolUseId")
    }


def with_logged(span: Span, given: Mapping[str, Any]) -> Span:
    """The span given the content its log records hold; its own attributes win.

    The texts of ADOT's LLO records (:data:`LLO_TEXTS`) go back to the attribute the span's
    dialect writes them in: an OpenInference span's ``input.value`` / ``output.value``, an
    OpenLLMetry span's ``traceloop.entity.input`` / ``output``; JSON of the conventions'
    messages (``[{"role", "parts"}]``) is ``gen_ai.input.messages`` / ``output.messages``;
    other text is a message event of its role (the user's, a system prompt, a reply).
    """
    attributes = dict(given)
    texts = attributes.pop(LLO_TEXTS, [])
    for side, role, text in texts:
        _restore_text(attributes, span.attributes, side, role, text)
    return replace(span, attributes={**attributes, **span.attributes}) if attributes else span


def _restore_text(
    given: dict[str, Any], own: Mapping[str, Any], side: str, role: str, text: str
) -> None:
    if role == "system":
        given.setdefault("events", []).append(
            {"event.name": "gen_ai.system.message", "content": text}
        )
        return
    if "openinference.span.kind" in own:
        given.setdefault(f"{side}.value", text)
    elif "traceloop.span.kind" in own:
        given.setdefault(f"traceloop.entity.{side}", text)
    elif _parts_messages(text):
        given.setdefault(f"gen_ai.{side}.messages", text)
    elif side == "input":
        given.setdefault("events", []).append(
            {"event.name": _LLO_ROLES.get(role, "gen_ai.user.message"), "content": text}
        )
    else:
        given.setdefault("events", []).append({"event.name": "gen_ai.choice", "message": text})


def _parts_messages(text: str) -> bool:
    """Whether text is JSON of the GenAI conventions' messages (``[{"role", "parts"}, ...]``)."""
    try:
        loaded = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(loaded, list)
        and bool(loaded)
        and all(isinstance(item, dict) and "parts" in item for item in loaded)
    )


def _log_records(document: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for resource in as_list(pick(document, "resourceLogs", "resource_logs")):
        for scope in as_list(pick(as_object(resource), "scopeLogs", "scope_logs")):
            for record in as_list(pick(as_object(scope), "logRecords", "log_records")):
                if isinstance(record, dict):
                    yield record


def with_event_content(span: Span) -> Mapping[str, Any]:
    """The span's attributes, with the GenAI content its own details span events carry.

    An instrumentation may record the details event on the span itself rather than as a log
    record: Strands Agents does (``strands/telemetry/tracer.py``, ``_add_event`` with
    ``gen_ai_latest_experimental``), on its ``invoke_agent``, ``chat`` and ``execute_tool``
    spans, the input in one event and the output in another. Read as the log records are: the
    events' ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
    ``gen_ai.system_instructions`` are the span's (the first event to tell one wins), and the
    span's own attributes win over them (Strands sets them too when it exports to Langfuse).
    Without this the run's user text and answer were lost: the objective was the agent's name.
    """
    given: dict[str, Any] = {}
    for event in span.events:
        if event.name == DETAILS:
            for attribute in _CONTENT:
                if attribute in event.attributes:
                    given.setdefault(attribute, event.attributes[attribute])
    # Strands' default telemetry (the conventions before 1.37) records each message as a span
    # event of its own, the message in its attributes (``content``, a choice's ``message``):
    # the ``events`` attribute that ``messages.event_messages`` reads, as log records give it.
    told = [
        {"event.name": event.name, **_event_message(event.attributes)}
        for event in span.events
        if event.name in _MESSAGE_EVENTS
        and event.attributes.get("content", event.attributes.get("message")) != ELIDED
    ]
    if told:
        given["events"] = told
    return {**given, **span.attributes} if given else span.attributes


def _event_message(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A message span event's message: its attributes, with the JSON object in them read.

    Azure AI Inference's tracing (azure-ai-inference, Python and JS) keeps the message as JSON
    text in ``gen_ai.event.content`` (``{"role", "content"}``; a choice's ``{"message",
    "finish_reason", "index"}``).
    """
    content = attributes.get("gen_ai.event.content")
    if isinstance(content, str):
        try:
            loaded = json.loads(content)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            return {**attributes, **loaded}
    return dict(attributes)
