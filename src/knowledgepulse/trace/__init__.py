"""The ``ReasoningTrace`` document: models, and loading with path-precise errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledgepulse._util.lazy import lazy_exports
from knowledgepulse.trace.load import LoadedTrace, load_traces, parse_trace, validate_record
from knowledgepulse.trace.vocabulary import CONTEXT_URLS, STEP_TYPES, StepType

if TYPE_CHECKING:
    from knowledgepulse.trace.models import (
        Entity,
        KnowledgeGraphDelta,
        Metadata,
        Outcome,
        ReasoningTrace,
        Relationship,
        Step,
        Task,
        Tool,
    )

_MODELS = "knowledgepulse.trace.models"
_HOME_OF = dict.fromkeys(
    (
        "Entity",
        "KnowledgeGraphDelta",
        "Metadata",
        "Outcome",
        "ReasoningTrace",
        "Relationship",
        "Step",
        "Task",
        "Tool",
    ),
    _MODELS,
)

__getattr__, __dir__ = lazy_exports(__name__, _HOME_OF, globals())

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
