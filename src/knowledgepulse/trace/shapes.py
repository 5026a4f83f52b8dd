"""What scoring without an embedder reads of a trace, as protocols a model and a view both meet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from knowledgepulse.trace.vocabulary import StepType


class ToolShape(Protocol):
    """What scoring reads of a step's tool."""

    @property
    def name(self) -> str:
        """The tool's name."""


class StepShape(Protocol):
    """What scoring reads of a step."""

    @property
    def type(self) -> StepType:
        """The step's type."""

    @property
    def tool(self) -> ToolShape | None:
        """The step's tool, if any."""


class MetadataShape(Protocol):
    """What scoring reads of a trace's metadata."""

    @property
    def task_domain(self) -> str:
        """The domain, which selects the weight profile."""

    @property
    def success(self) -> bool:
        """Whether the task succeeded."""


class OutcomeShape(Protocol):
    """What scoring reads of a trace's outcome."""

    @property
    def confidence(self) -> float:
        """The agent's confidence in the result."""


class ScorableTrace(Protocol):
    """What scoring without an embedder reads: a ``ReasoningTrace`` or a :class:`TraceView`."""

    @property
    def id(self) -> str:
        """The trace's id."""

    @property
    def metadata(self) -> MetadataShape:
        """Domain and success."""

    @property
    def steps(self) -> Sequence[StepShape]:
        """The steps, in order."""

    @property
    def outcome(self) -> OutcomeShape:
        """Confidence."""


def metadata_source(metadata: MetadataShape) -> Any:
    """``metadata.source`` (where a converted trace's values came from), or ``None``."""
    # On a model it is an extra: reading model_extra spares pydantic's attribute fallback, which
    # raises and catches an error for every trace without one.
    extra = getattr(metadata, "model_extra", None)
    if extra is not None:
        return extra.get("source")
    return getattr(metadata, "source", None)
