"""OpenAI Agents SDK runs, live: a trace processor that converts and scores every trace.

Live (the SDK's spans, read before their export drops the model text)::

    import agents
    import knowledgepulse as kp

    agents.add_trace_processor(kp.integrations.openai_agents.processor(domain="code"))

After the fact, from what ``Runner.run`` returned::

    item = kp.integrations.openai_agents.to_trace(result, domain="code")

Reading results and exported files needs no dependency
(:mod:`knowledgepulse.sources.openai_agents`). Nothing imports ``agents`` until
:func:`processor` or :func:`activate` is called.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING

from knowledgepulse.errors import missing_extra
from knowledgepulse.integrations._collector import DEFAULT_KEEP, Collector, OnTrace, live_module
from knowledgepulse.sources.openai_agents import convert_spans as convert_spans
from knowledgepulse.sources.openai_agents import to_trace as to_trace
from knowledgepulse.value import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.integrations.openai_agents._live import AgentsTraceProcessor
    from knowledgepulse.redact.items import Redactor


def _load_live() -> ModuleType:
    try:
        return live_module("knowledgepulse.integrations.openai_agents._live", "agents.tracing")
    except ImportError as error:
        raise missing_extra("openai-agents", "openai-agents", error) from error


def processor(
    *,
    domain: str | None = None,
    confidence: float | None = None,
    scorer: TraceValueScorer | None = None,
    on_trace: OnTrace | None = None,
    keep: int = DEFAULT_KEEP,
    redact: bool | Redactor = False,
) -> AgentsTraceProcessor:
    """An Agents SDK ``TracingProcessor`` that converts and scores every trace when it ends.

    Args:
        domain: the ``task_domain`` of every trace (else ``kp.task_domain`` in the trace
            metadata, else ``default``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each :class:`~knowledgepulse.value.ScoredItem`.
        keep: how many captured traces the processor keeps (``.captured``, ``.traces``).
        redact: redact each trace before it is scored and kept: ``True`` (by its privacy
            level, secrets always) or a :class:`~knowledgepulse.redact.items.Redactor`; as
            :func:`~knowledgepulse.integrations.capture.capture` says.

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
