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
from typing import TYPE_CHECKING, Unpack, cast

from knowledgepulse.integrations._collector import Collector, CollectorSettings, live_module
from knowledgepulse.sources.openai_agents import convert_spans as convert_spans
from knowledgepulse.sources.openai_agents import to_trace as to_trace

if TYPE_CHECKING:
    from knowledgepulse.integrations.openai_agents._live import AgentsTraceProcessor


def _load_live() -> ModuleType:
    # Not named _live: importing the submodule _live sets that name on this package.
    return live_module(
        "knowledgepulse.integrations.openai_agents._live",
        "agents.tracing",
        "openai-agents",
        "openai-agents",
    )


def processor(**settings: Unpack[CollectorSettings]) -> AgentsTraceProcessor:
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
    return processor_type(**settings)


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, every Agents trace started in this context goes to ``collector.finish``.

    Used by ``kp.capture``; it registers one processor with the SDK the first time.

    Raises:
        MissingDependencyError: ``openai-agents`` is not installed.
    """
    return cast("AbstractContextManager[None]", _load_live().activate(collector))
