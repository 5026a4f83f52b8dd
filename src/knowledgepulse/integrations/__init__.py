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

from typing import TYPE_CHECKING

from knowledgepulse._util.lazy import lazy_exports
from knowledgepulse.integrations.names import SOURCE_CHOICES, SOURCES

if TYPE_CHECKING:
    from knowledgepulse.integrations._collector import CapturedTrace, Collector, OnTrace
    from knowledgepulse.integrations._envelope import (
        CONFIDENCE_KEY,
        DOMAIN_KEY,
        ConversionError,
        ConvertedTrace,
        TraceOptions,
    )
    from knowledgepulse.integrations._steps import StepBuilder
    from knowledgepulse.integrations.convert import convert_file, recognise

# The names below bring the trace models (and pydantic): imported on first use, so that the
# CLI can name the sources at start-up for free.
_HOME_OF = {
    **dict.fromkeys(("CapturedTrace", "Collector", "OnTrace"), f"{__name__}._collector"),
    **dict.fromkeys(
        ("CONFIDENCE_KEY", "DOMAIN_KEY", "ConversionError", "ConvertedTrace", "TraceOptions"),
        f"{__name__}._envelope",
    ),
    "StepBuilder": f"{__name__}._steps",
    **dict.fromkeys(("convert_file", "recognise"), f"{__name__}.convert"),
}
# `kp.integrations.langchain` works without an import line; the framework itself is still
# imported only when a live hook is made.
_SUBMODULES = ("otel", "langchain", "openai_agents", "smolagents", "pydantic_ai", "capture")
__getattr__, __dir__ = lazy_exports(__name__, _HOME_OF, globals(), submodules=_SUBMODULES)


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
    "StepBuilder",
    "TraceOptions",
    "convert_file",
    "recognise",
]
