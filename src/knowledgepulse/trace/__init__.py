"""The ``ReasoningTrace`` document: models, and loading with path-precise errors."""

from __future__ import annotations

from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.load import load_traces, parse_trace, validate_record
from knowledgepulse.trace.models import (
    CONTEXT_URLS,
    STEP_TYPES,
    Entity,
    KnowledgeGraphDelta,
    Metadata,
    Outcome,
    ReasoningTrace,
    Relationship,
    Step,
    StepType,
    Task,
    Tool,
)

__all__ = [
    "CONTEXT_URLS",
    "STEP_TYPES",
    "Entity",
    "KnowledgeGraphDelta",
    "Metadata",
    "Outcome",
    "ReasoningTrace",
    "Relationship",
    "Step",
    "StepType",
    "Task",
    "Tool",
    "TraceItem",
    "load_traces",
    "parse_trace",
    "validate_record",
]
