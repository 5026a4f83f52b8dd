"""OpenAI Agents SDK runs as ReasoningTraces: live, from a ``RunResult``, or from exported spans.

Live (the SDK's spans, read before their export drops the model text)::

    import agents
    import knowledgepulse as kp

    agents.add_trace_processor(kp.integrations.openai_agents.processor(domain="code"))

After the fact, from what ``Runner.run`` returned::

    converted = kp.integrations.openai_agents.to_trace(result, domain="code")

From a file of exported ``{"object": "trace"}`` / ``{"object": "trace.span"}`` objects:
``kp convert --from openai-agents FILE`` (its response spans hold no model text: it says so).

Domain and confidence come from the argument, else the trace metadata keys ``kp.task_domain``
and ``kp.confidence`` (``RunConfig(trace_metadata={...})``), else the defaults. Nothing imports
``agents`` until :func:`processor` or :func:`activate` is called.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from knowledgepulse.errors import missing_extra
from knowledgepulse.integrations._collector import DEFAULT_KEEP, Collector, OnTrace
from knowledgepulse.integrations._envelope import ConvertedTrace, TraceOptions
from knowledgepulse.integrations.openai_agents._files import convert_records, recognises
from knowledgepulse.integrations.openai_agents._result import to_trace
from knowledgepulse.integrations.openai_agents._spans import CONTENT_HINT
from knowledgepulse.integrations.openai_agents._spans import convert_spans as _convert_spans
from knowledgepulse.value import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.integrations.openai_agents._live import AgentsTraceProcessor


def _load_live() -> ModuleType:
    try:
        importlib.import_module("agents.tracing")
    except ImportError as error:
        raise missing_extra("openai-agents", "openai-agents", error) from error
    return importlib.import_module("knowledgepulse.integrations.openai_agents._live")


def processor(
    *,
    domain: str | None = None,
    confidence: float | None = None,
    scorer: TraceValueScorer | None = None,
    on_trace: OnTrace | None = None,
    keep: int = DEFAULT_KEEP,
    redact: bool = False,
) -> AgentsTraceProcessor:
    """An Agents SDK ``TracingProcessor`` that converts and scores every trace when it ends.

    Args:
        domain: the ``task_domain`` of every trace (else ``kp.task_domain`` in the trace
            metadata, else ``default``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each :class:`~knowledgepulse.integrations.CapturedTrace`.
        keep: how many captured traces the processor keeps (``.captured``, ``.traces``).
        redact: redact each trace (secrets always, personal identifiers by its
            ``metadata.privacy_level``; see :mod:`knowledgepulse.redact`) before it is scored
            and kept; only novelty reads its text, so only novelty can change.

    Raises:
        MissingDependencyError: ``openai-agents`` is not installed.
    """
    processor_type: type[AgentsTraceProcessor] = _load_live().AgentsTraceProcessor
    return processor_type(
        domain=domain,
        confidence=confidence,
        scorer=scorer,
        on_trace=on_trace,
        keep=keep,
        redact=redact,
    )


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, every Agents trace started in this context goes to ``collector.finish``.

    Used by ``kp.capture``; it registers one processor with the SDK the first time.

    Raises:
        MissingDependencyError: ``openai-agents`` is not installed.
    """
    context: AbstractContextManager[None] = _load_live().activate(collector)
    return context


def convert_spans(
    trace: Mapping[str, Any] | None,
    spans: Sequence[Mapping[str, Any]],
    *,
    domain: str | None = None,
    confidence: float | None = None,
) -> ConvertedTrace:
    """The ReasoningTrace of one trace's exported objects (``Trace.export()``, ``Span.export()``).

    Args:
        trace: the trace object (id, ``workflow_name``, ``metadata``), or ``None``.
        spans: the trace's span objects.
        domain: the trace's ``task_domain``.
        confidence: the outcome's confidence.

    Raises:
        ConversionError: the spans hold no step.
    """
    return _convert_spans(trace, spans, TraceOptions(domain=domain, confidence=confidence))


__all__ = [
    "CONTENT_HINT",
    "activate",
    "convert_records",
    "convert_spans",
    "processor",
    "recognises",
    "to_trace",
]
