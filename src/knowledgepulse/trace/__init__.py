"""The ``ReasoningTrace`` document: models, and loading with path-precise errors."""

from __future__ import annotations

from knowledgepulse.trace.load import LoadedTrace, load_traces, parse_trace, validate_record
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
    "LoadedTrace",
    "Metadata",
    "Outcome",
    "ReasoningTrace",
    "Relationship",
    "Step",
    "StepType",
    "Task",
    "Tool",
    "load_traces",
    "parse_trace",
    "validate_record",
]
