"""Trace files: OTLP JSON and JSON Lines, and the SDK's console span JSON, one trace per trace id.

The OTel file exporter writes one ``TracesData`` per line with no ordering guarantee, so the spans
of one trace may be spread over many lines (and ``resourceSpans``); every record of the file is
read before any trace is converted. A span that cannot be read is reported where it is and the
rest go on; so is a trace that gives no step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from knowledgepulse._util.jsonpath import Loc
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._envelope import TraceOptions, placed
from knowledgepulse.sources.otel.build import convert_spans, has_genai
from knowledgepulse.sources.otel.logs import (
    LoggedContent,
    SpanKey,
    document_spans,
    merge_content,
    record_content,
    with_logged,
)
from knowledgepulse.sources.otel.spans import (
    Span,
    SpanError,
    console_span,
    flat_span,
    is_app_log_line,
    is_console_span,
    is_flat_log,
    is_flat_span,
    is_otlp,
)
from knowledgepulse.trace import TraceItem

_SHAPES = (
    "expected an OTLP JSON object with resourceSpans (as the OTel file exporter writes, one a "
    "line; Tempo's batches too, its v2 API's {trace: {resourceSpans}}, Jaeger's API v3's "
    "{result: {resourceSpans}}), one span as the SDK's ConsoleSpanExporter writes it (with "
    "context.trace_id), or one span or log record as AWS writes it to CloudWatch (aws/spans: "
    "traceId, spanId, name, startTimeUnixNano beside resource and scope; AgentCore's "
    "{sessionSpans: [...]} too)"
)


class AppLogLineError(SpanError):
    """A line of the application's own log (:func:`is_app_log_line`): no span, by design.

    A runtime's log group holds it beside the log records of the spans, so an export of the
    group has it: it is left out, said once for the file, not refused line by line.
    """

    def __init__(self) -> None:
        super().__init__((), "the application's own log line")


_NOT_A_SPAN = f"not a span record: {_SHAPES}"


def recognises(value: Any) -> bool:
    """Whether a record is OTLP JSON (``resourceSpans``) or console spans (``context``).

    One span, or a list of them under ``spans``.
    """
    return (
        is_otlp(value)
        or _wrapper(value) is not None
        or is_console_span(value)
        or is_flat_span(value)
        or is_flat_log(value)
        or bool(_listed_spans(value))
        or bool(_session_spans(value))
    )


_WRAPPERS = ("trace", "result")
"""The keys query APIs wrap an OTLP trace in. Grafana Tempo's ``GET /api/v2/traces/{id}`` (what
Grafana's Tempo data source asks for) answers a ``TraceByIDResponse``, ``{"trace":
{"resourceSpans": [...]}, "metrics", "status", "message"}`` (``/api/traces/{id}`` answers the
trace itself); Jaeger's API v3 (``GET /api/v3/traces/{id}``, its gRPC gateway) answers
``{"result": {"resourceSpans": [...]}}``, one such object per chunk of its stream."""


def _wrapper(value: Any) -> str | None:
    """The key under which a query API's answer holds its OTLP trace, else ``None``."""
    if not isinstance(value, dict) or is_otlp(value):
        return None
    return next((key for key in _WRAPPERS if is_otlp(value.get(key))), None)


def _listed_spans(value: Any) -> list[Any]:
    """The console spans of ``{"spans": [...]}``, else none.

    That is any-agent's ``AgentTrace``; its ``final_output`` its last model call also holds.
    """
    spans = value.get("spans") if isinstance(value, dict) else None
    if isinstance(spans, list) and spans and all(is_console_span(span) for span in spans):
        return spans
    return []


def _session_spans(value: Any) -> list[Any]:
    """The spans and log records of ``{"sessionSpans": [...]}``, else none.

    That is the input of Bedrock AgentCore's Evaluate API (``evaluationInput.sessionSpans``), as
    its SDK gathers it from CloudWatch (``aws/spans`` and the runtime's ``otel-rt-logs``: ADOT's
    span and log documents) or from the SDK's spans (the console shape): a session's traces.
    """
    items = value.get("sessionSpans") if isinstance(value, dict) else None
    if isinstance(items, list) and items and all(_one_span(item) for item in items):
        return items
    return []


def _one_span(value: Any) -> bool:
    return is_console_span(value) or is_flat_span(value) or is_flat_log(value)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trace in one file's records; a located problem for each span or trace it cannot read.

    The problems of reading come first, as found; then the traces, in the order their first span
    appears in the file.
    """
    yield from convert_span_records(records, options, value_spans, source="otlp")


SpansOf = Callable[[Any], Iterable[tuple[Span | SpanError | LoggedContent, Loc]]]
"""Each span of a record's value with its path inside it, or a :class:`SpanError` for one
unreadable, or the content a log record of its own gives its span (:class:`LoggedContent`)."""


def convert_span_records(
    records: Iterable[Record | Problem], options: TraceOptions, spans_of: SpansOf, *, source: str
) -> Iterator[TraceItem | Problem]:
    """The traces of a file of spans in any shape ``spans_of`` reads (OTLP, Jaeger, Langfuse...).

    Every record is read before any trace is converted: the spans of one trace may be spread
    over the file. A span that cannot be read is reported where it is, and the rest go on.
    """
    traces: dict[str, list[Span]] = {}
    first: dict[str, tuple[Record, Loc]] = {}
    logged: dict[SpanKey, dict[str, Any]] = {}
    logged_at: dict[str, tuple[Record, Loc]] = {}
    yield from _gather(records, spans_of, traces, first, (logged, logged_at))
    for trace_id, (record, loc) in logged_at.items():
        if trace_id not in first:
            # ADOT's log records alone (the runtime's log group exported without aws/spans):
            # without the spans there is no run to give them to. Said, not silently no trace.
            yield record.problem(
                loc,
                f"trace {trace_id}: log records of its spans but none of its spans (CloudWatch "
                "keeps the spans in the aws/spans log group and their messages in the runtime's "
                "otel-rt-logs: put both in the file); skipped",
                warning=True,
            )
    for trace_id in list(traces):
        # Each trace's spans are let go once it is converted: a file's peak memory is its spans
        # and one trace, not every trace.
        spans = [_given(span, logged) for span in traces.pop(trace_id)]
        record, loc = first[trace_id]
        if not has_genai(spans):
            yield record.problem(
                loc,
                f"trace {trace_id} has no GenAI span (no agent, model call or tool execution "
                f"among its {len(spans)} span(s)); skipped",
                warning=True,
            )
            continue
        try:
            converted = convert_spans(spans, options, source=source)
        except ConversionError as error:
            yield record.problem(loc, f"trace {trace_id}: {error}")
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
            # A shape no producer we know writes: say which trace, and go on with the others.
            yield record.problem(loc, f"trace {trace_id} could not be converted: {error!r}")
        else:
            yield placed(converted, Location(record.location.file))


def _given(span: Span, logged: Mapping[SpanKey, Mapping[str, Any]]) -> Span:
    """The span with the content its own log records gave it (its own attributes win)."""
    given = logged.get((span.trace_id, span.span_id))
    return with_logged(span, given) if given else span


def _gather(
    records: Iterable[Record | Problem],
    spans_of: SpansOf,
    traces: dict[str, list[Span]],
    first: dict[str, tuple[Record, Loc]],
    logs: tuple[dict[SpanKey, dict[str, Any]], dict[str, tuple[Record, Loc]]],
) -> Iterator[Problem]:
    """Every span of the records into ``traces``, each trace's first place into ``first``.

    The content of log records that stand alone (ADOT's) goes into ``logs[0]``, by span, and
    the first place of each trace's such records into ``logs[1]``.

    Only the spans outlive this: a parsed record (a whole file, for OTLP JSON) is let go here, as
    soon as its spans are read, and a trace's place keeps the record's location, not its value.
    """
    app_lines: list[Record] = []  # the app's own log lines: the first kept, to say where
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        for found, loc in spans_of(item.value):
            if isinstance(found, LoggedContent):
                merge_content(logs[0].setdefault(found.key, {}), found.attributes)
                logs[1].setdefault(found.key[0], (replace(item, value=None, raw=None), loc))
                continue
            if isinstance(found, AppLogLineError):
                app_lines.append(replace(item, value=None, raw=None))
                continue
            if isinstance(found, SpanError):
                yield item.problem(found.loc, found.message)
                continue
            spans = traces.get(found.trace_id)
            if spans is None:
                spans = traces[found.trace_id] = []
                first[found.trace_id] = (replace(item, value=None, raw=None), loc)
            spans.append(found)
    if app_lines:
        yield app_lines[0].problem(
            (),
            f"{len(app_lines)} line(s) of the application's own log ({{level, message...}}, as "
            "a runtime's log group holds them beside the spans' log records): no spans; left "
            "out",
            warning=True,
        )


def _wrapped_spans(value: Any, key: str) -> Iterator[tuple[Span | SpanError | LoggedContent, Loc]]:
    """The spans of a document held under ``key``, each located inside it."""
    for inner, loc in value_spans(value):
        if isinstance(inner, SpanError):
            error = SpanError((key, *inner.loc), inner.message)
            yield error, error.loc
        else:
            yield inner, (key, *loc)


def _flat_spans(
    items: list[Any], key: str
) -> Iterator[tuple[Span | SpanError | LoggedContent, Loc]]:
    """The spans and log records of a list of ADOT documents or console spans, located."""
    for n, item in enumerate(items):
        found = _one(item)
        if isinstance(found, SpanError):
            error = SpanError((key, n, *found.loc), found.message)
            yield error, error.loc
        else:
            yield found, (key, n)


def _one(value: Any) -> Span | SpanError | LoggedContent:
    """One ADOT span or log document, or one console span, read."""
    if is_flat_log(value):
        told = record_content(value, plain=True)
        if told is None:
            return SpanError((), "a log record whose traceId / spanId is no id")
        return LoggedContent(*told)
    try:
        return flat_span(value) if is_flat_span(value) else console_span(value)
    except SpanError as error:
        return error


def value_spans(value: Any) -> Iterator[tuple[Span | SpanError | LoggedContent, Loc]]:
    """Each span of an OTLP document or a console span, or a :class:`SpanError` (as ``SpansOf``)."""
    wrapper = _wrapper(value)
    if wrapper is not None:
        yield from _wrapped_spans(value[wrapper], wrapper)
        return
    if is_otlp(value):
        for found in document_spans(value):
            if isinstance(found, SpanError):
                yield found, found.loc
            else:
                yield found[0], tuple(found[1])
        return
    if _one_span(value):
        one = _one(value)
        yield one, one.loc if isinstance(one, SpanError) else ()
        return
    session = _session_spans(value)
    if session:
        yield from _flat_spans(session, "sessionSpans")
        return
    listed = _listed_spans(value)
    for n, span in enumerate(listed):
        try:
            yield console_span(span), ("spans", n)
        except SpanError as error:
            yield error, ("spans", n, *error.loc)
    if not listed:
        yield (AppLogLineError() if is_app_log_line(value) else SpanError((), _NOT_A_SPAN)), ()
