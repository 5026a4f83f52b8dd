"""Traces from real agent frameworks: file readers, live collectors, and ``capture``.

One source per module, each importing its framework only when a live hook is used::

    import knowledgepulse as kp

    graph.invoke(inputs, config={"callbacks": [kp.integrations.langchain.tracer(domain="code")]})
    trace = kp.integrations.pydantic_ai.to_trace(result.all_messages()).trace

The rules every source follows (step types, the error rule, order, envelope, domain and
confidence, bounds) are in ``_steps.py`` and ``_envelope.py``; ``spec/integrations.md`` is the
contract.
"""

from __future__ import annotations

# Each source module imports its framework only when a live hook is made, so importing them
# here costs no framework; `kp.integrations.langchain` then works without an import line.
from knowledgepulse.integrations import (
    capture,
    chat,
    langchain,
    openai_agents,
    otel,
    pydantic_ai,
    smolagents,
)
from knowledgepulse.integrations._collector import CapturedTrace, Collector, OnTrace
from knowledgepulse.integrations._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    ConversionError,
    ConvertedTrace,
    TraceOptions,
)
from knowledgepulse.integrations._rows import RowOptions
from knowledgepulse.integrations._steps import StepBuilder
from knowledgepulse.integrations.chat import rows_to_traces
from knowledgepulse.integrations.convert import convert_file, recognise
from knowledgepulse.integrations.names import SOURCE_CHOICES, SOURCES

__all__ = [
    "CONFIDENCE_KEY",
    "DOMAIN_KEY",
    "SOURCES",
    "SOURCE_CHOICES",
    "CapturedTrace",
    "Collector",
    "ConversionError",
    "ConvertedTrace",
    "OnTrace",
    "RowOptions",
    "StepBuilder",
    "TraceOptions",
    "capture",
    "chat",
    "convert_file",
    "langchain",
    "openai_agents",
    "otel",
    "pydantic_ai",
    "recognise",
    "rows_to_traces",
    "smolagents",
]
