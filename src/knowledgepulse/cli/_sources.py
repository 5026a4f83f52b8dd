"""Agent frameworks' files as trace input: ``--from``, ``--domain`` and ``--confidence``.

``kp convert`` and ``kp score --from`` read a framework's telemetry (OTLP JSON, LangSmith runs,
Agents SDK spans, smolagents steps, Pydantic AI messages, observability tools' exports) through
:mod:`knowledgepulse.integrations`; a source record that cannot be read is reported as
``FILE:LINE: message`` and the rest go on, like a bad trace record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import stderr_console
from knowledgepulse.cli._traces import ProblemSink, sources
from knowledgepulse.integrations.names import SOURCE_CHOICES
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.trace.load import LoadedTrace

if TYPE_CHECKING:  # the converters bring pydantic: loaded for --from only
    from knowledgepulse.integrations import ConvertedTrace, TraceOptions

_Command = TypeVar("_Command", bound=Callable[..., Any])

SHAPES = (
    "otlp: OTLP JSON or JSON Lines (the OTel file exporter, a collector's file exporter) or the "
    "Python SDK's console exporter output; langsmith: a LangSmith run with child_runs, a list of "
    "runs, or {post, patch} payloads; openai-agents: the Agents SDK's exported trace and span "
    "lines; smolagents: memory steps; pydantic-ai: all_messages() JSON; langfuse: a trace "
    "export ({trace, observations}) or the public API's traces or observations; phoenix: Arize "
    "Phoenix span rows (context.trace_id, attributes.* columns); jaeger: the query API's JSON "
    "({data: [{traceID, spans, processes}]}); otel-js: OTel JS spans (spanContext, HrTime "
    "times), the Vercel AI SDK's included; Tempo exports are otlp; auto: recognised from the "
    "first record."
)


def source_options(*, required: bool) -> Callable[[_Command], _Command]:
    """``--from``, ``--domain`` and ``--confidence``."""

    def decorate(command: _Command) -> _Command:
        for option in reversed(
            [
                click.option(
                    "--from",
                    "source",
                    type=click.Choice(SOURCE_CHOICES),
                    default="auto" if required else None,
                    show_default=required,
                    help="The framework's file format to convert from. " + SHAPES,
                ),
                click.option(
                    "--domain",
                    help="The task_domain of every converted trace (it selects the weight "
                    "profile) [default: the run's kp.task_domain metadata, else 'default'].",
                ),
                click.option(
                    "--confidence",
                    type=click.FloatRange(0.0, 1.0),
                    help="The outcome confidence of every converted trace [default: the run's "
                    "kp.confidence metadata, else 0.8 on success and 0.2 on failure].",
                ),
            ]
        ):
            command = option(command)
        return command

    return decorate


def trace_options(
    source: str | None, domain: str | None, confidence: float | None
) -> TraceOptions | None:
    """The options for the converted traces (``None`` without ``--from``, which they need)."""
    if source is None and (domain is not None or confidence is not None):
        raise click.UsageError(
            "--domain and --confidence set what a framework's file does not record; they go "
            "with --from (a ReasoningTrace file already has its domain and confidence)"
        )
    if domain is not None and not domain.strip():
        raise click.UsageError("--domain must not be empty")
    if source is None:
        return None
    from knowledgepulse.integrations import TraceOptions  # noqa: PLC0415

    return TraceOptions(domain=domain, confidence=confidence)


def converted_traces(
    paths: Sequence[str],
    source: str,
    options: TraceOptions | None,
    sink: ProblemSink,
) -> Iterator[LoadedTrace]:
    """The traces converted from a framework's files, in order; problems go to ``sink``.

    A source whose files hold no message text (only names and timings) is told once, with the
    switch that turns content capture on.
    """
    from knowledgepulse.integrations import TraceOptions  # noqa: PLC0415 - see the imports
    from knowledgepulse.integrations.convert import convert_files  # noqa: PLC0415

    options = options or TraceOptions()
    hinted: set[str] = set()
    warned: set[str] = set()
    for item in convert_files(sources(paths), source=source, options=options, read_as=_say_read):
        if isinstance(item, Problem):
            sink(item)
            continue
        if not item.has_text:
            _hint_once(item, hinted)
        for warning in item.warnings:
            if warning not in warned:  # the same loss in every trace of a file is said once
                warned.add(warning)
                sink(Problem(item.location or Location("-"), "", warning, warning=True))
        document = item.trace.model_dump(mode="json", by_alias=True, exclude_none=True)
        yield LoadedTrace(Record(item.location or Location("-"), document), item.trace)


def _say_read(path: str, found: str, count: int) -> None:
    stderr_console().print(
        f"{path}: read as {found} ({counted(count, 'trace')})", markup=False, highlight=False
    )


def _hint_once(item: ConvertedTrace, hinted: set[str]) -> None:
    found = item.source_format
    if found in hinted:
        return
    hinted.add(found)
    from knowledgepulse.integrations.convert import reader  # noqa: PLC0415

    hint = reader(found).CONTENT_HINT if found else ""
    stderr_console().print(
        f"kp: warning: {item.location}: the {found} traces hold no message text, only names and "
        f"timings, so novelty has little to go on; {hint}",
        markup=False,
        highlight=False,
    )
