"""Readers: a framework's files, an observability tool's export, dataset rows, as traces.

Pure: reading needs no framework, no scorer and no embedder. Each source reads the records of
one file (or rows held in memory) and gives a trace per source trace, or a located
:class:`~knowledgepulse.records.Problem` for what it cannot read; the rest goes on. The live
collectors that score runs as they finish are :mod:`knowledgepulse.integrations`.
"""

from __future__ import annotations

from knowledgepulse.sources._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    ConversionError,
    ConvertedTrace,
    TraceOptions,
)
from knowledgepulse.sources._rows import RowOptions
from knowledgepulse.sources._steps import StepBuilder

__all__ = [
    "CONFIDENCE_KEY",
    "DOMAIN_KEY",
    "ConversionError",
    "ConvertedTrace",
    "RowOptions",
    "StepBuilder",
    "TraceOptions",
]
