"""The ``ReasoningTrace`` document: models, and loading with path-precise errors.

The document's parts (``Task``, ``Step``, ``Outcome``, ``Metadata``...) are in ``models``.
"""

from __future__ import annotations

from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import load_traces, parse_trace
from knowledgepulse.trace.models import ReasoningTrace

__all__ = ["ReasoningTrace", "TraceItem", "load_traces", "parse_trace"]
