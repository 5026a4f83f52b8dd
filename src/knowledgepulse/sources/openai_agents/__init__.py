"""OpenAI Agents SDK runs as ReasoningTraces: from a ``RunResult`` or from exported spans.

After the fact, from what ``Runner.run`` returned::

    item = kp.integrations.openai_agents.to_trace(result, domain="code")

From a file of exported ``{"object": "trace"}`` / ``{"object": "trace.span"}`` objects:
``kp convert --from openai-agents FILE`` (its response spans hold no model text: it says so).

Domain and confidence come from the argument, else the trace metadata keys ``kp.task_domain``
and ``kp.confidence`` (``RunConfig(trace_metadata={...})``), else the defaults. Nothing here
imports ``agents``; the live processor is :mod:`knowledgepulse.integrations.openai_agents`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.openai_agents._result import to_trace as to_trace
from knowledgepulse.sources.openai_agents._spans import convert_spans as _convert_spans
from knowledgepulse.trace import TraceItem


def convert_spans(
    trace: Mapping[str, Any] | None,
    spans: Sequence[Mapping[str, Any]],
    *,
    domain: str | None = None,
    confidence: float | None = None,
) -> TraceItem:
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
