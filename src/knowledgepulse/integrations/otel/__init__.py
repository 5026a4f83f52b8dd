"""OpenTelemetry, live: a span processor that converts and scores every agent run as it ends.

Reads the GenAI semantic conventions, OpenInference and Pydantic AI's own attributes, so it covers
every framework that emits GenAI spans itself (Pydantic AI, AutoGen) or through an instrumentor
(LangChain, CrewAI, smolagents, LlamaIndex...)::

    import knowledgepulse as kp

    collector = kp.integrations.otel.install(domain="code")  # a SpanProcessor, live
    ...  # run the agent; each finished trace is converted and scored
    collector.breakdowns

    item = kp.integrations.otel.to_trace(exporter.get_finished_spans())  # after the fact

Reading spans and files needs no dependency (:mod:`knowledgepulse.sources.otel`); the live hooks
need the ``otel`` extra (``opentelemetry-sdk``), imported only when used.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Unpack, cast

from knowledgepulse.integrations._collector import Collector, CollectorSettings, live_module
from knowledgepulse.sources.otel import to_trace as to_trace
from knowledgepulse.sources.otel import to_traces as to_traces

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from knowledgepulse.integrations.otel.live import OTelCollector


def install(
    *, tracer_provider: TracerProvider | None = None, **settings: Unpack[CollectorSettings]
) -> OTelCollector:
    """Add a span processor that converts and scores every agent run traced with OpenTelemetry.

    Args:
        domain: the ``task_domain`` of every trace (else the root's ``kp.task_domain``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the default scorer when ``None``.
        on_trace: called with each captured trace.
        tracer_provider: the SDK provider to add the processor to; else the global one (an SDK
            provider is set globally when none is).
        keep: how many captured traces the collector keeps.
        redact: redact each trace before it is scored and kept: ``True`` (by its privacy
            level, secrets always) or a :class:`~knowledgepulse.redact.items.Redactor`; as
            :func:`~knowledgepulse.integrations.capture.capture` says.

    Returns:
        The collector: ``.captured``, ``.traces``, ``.breakdowns``; ``.close()`` stops it.

    Raises:
        MissingDependencyError: ``opentelemetry-sdk`` is not installed.
    """
    collector = _live().install(tracer_provider=tracer_provider, **settings)
    return cast("OTelCollector", collector)


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, traces whose root span starts in this context go to ``collector``.

    The hook ``kp.capture`` uses; spans go through the global SDK tracer provider.

    Raises:
        MissingDependencyError: ``opentelemetry-sdk`` is not installed.
    """
    return cast("AbstractContextManager[None]", _live().activate(collector))


def _live() -> ModuleType:
    return live_module(
        "knowledgepulse.integrations.otel.live",
        "opentelemetry.sdk.trace",
        "opentelemetry-sdk",
        "otel",
    )
