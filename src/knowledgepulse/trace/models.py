"""The ``ReasoningTrace`` JSON-LD document as typed, validated models.

Unknown fields are kept (JSON-LD documents grow as producers add to them); known fields are
checked strictly: a string where a boolean belongs, a NaN, a negative ``step_id`` are errors.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator

CONTEXT_URLS: tuple[str, ...] = (
    "https://openknowledgepulse.org/schema/v1",
    "https://knowledgepulse.dev/schema/v1",
)
"""Both ``@context`` URLs the seeds use; either validates."""

StepType = Literal["thought", "tool_call", "observation", "error_recovery"]
STEP_TYPES: tuple[StepType, ...] = ("thought", "tool_call", "observation", "error_recovery")

NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]
UnitFloat = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=False)]


class _JsonLdModel(BaseModel):
    """Keeps unknown fields, rejects NaN, and never coerces a string into a number or bool."""

    model_config = ConfigDict(
        extra="allow",
        allow_inf_nan=False,
        populate_by_name=True,
        frozen=True,
        str_strip_whitespace=False,
    )


class Tool(_JsonLdModel):
    """The tool a step used."""

    name: NonEmptyStr = Field(description="The tool's name; distinct names count for diversity.")
    mcp_server: StrictStr | None = Field(default=None, description="The MCP server, if any.")


class Step(_JsonLdModel):
    """One step of the agent: a thought, a tool call, an observation or an error recovery."""

    step_id: Annotated[StrictInt, Field(ge=0)] = Field(description="The step's number, >= 0.")
    type: StepType = Field(description="What kind of step this is.")
    content: StrictStr | None = Field(default=None, description="The step's text.")
    tool: Tool | None = Field(default=None, description="The tool used, if any.")
    input: dict[str, Any] | None = Field(default=None, description="The tool's input.")
    output_summary: StrictStr | None = Field(default=None, description="A summary of the output.")
    latency_ms: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = Field(
        default=None, description="How long the step took, in milliseconds."
    )


class Metadata(_JsonLdModel):
    """Who produced the trace, when, in which domain, and whether it succeeded."""

    created_at: datetime = Field(description="ISO 8601 date-time the trace was made.")
    agent_id: StrictStr | None = None
    framework: StrictStr | None = None
    task_domain: NonEmptyStr = Field(description="Selects the weight profile (exact match).")
    success: StrictBool = Field(description="Whether the task succeeded.")
    quality_score: UnitFloat = Field(description="The trace's value score, 0.0-1.0.")
    visibility: Literal["private", "org", "network"]
    privacy_level: Literal["aggregated", "federated", "private"]
    validated_by: list[StrictStr] | None = None

    @field_validator("created_at", mode="before")
    @classmethod
    def _iso_string(cls, value: Any) -> Any:
        # pydantic would also take a Unix timestamp; the schema says an ISO 8601 string.
        if isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            raise ValueError("expected an ISO 8601 date-time string such as 2025-01-31T12:00:00Z")
        return value


class Task(_JsonLdModel):
    """What the agent was asked to do."""

    objective: NonEmptyStr = Field(description="The task, in words; embedded for novelty.")
    input_schema: dict[str, Any] | None = None


class Outcome(_JsonLdModel):
    """How the task ended."""

    result_summary: StrictStr = Field(description="What came of it.")
    confidence: UnitFloat = Field(description="The agent's confidence in the result, 0.0-1.0.")


class Entity(_JsonLdModel):
    """An entity the trace taught."""

    name: StrictStr
    type: StrictStr


class Relationship(_JsonLdModel):
    """A fact the trace taught, and since when it holds."""

    fact: StrictStr
    valid_from: StrictStr


class KnowledgeGraphDelta(_JsonLdModel):
    """What the trace adds to a knowledge graph."""

    entities: list[Entity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)


class ReasoningTrace(_JsonLdModel):
    """The steps an AI agent took on one task, and how it ended (JSON-LD).

    Build one from parsed JSON with :meth:`ReasoningTrace.model_validate` or use
    :func:`knowledgepulse.trace.parse_trace` for errors that name each field's JSON path.
    """

    context: Literal[
        "https://openknowledgepulse.org/schema/v1", "https://knowledgepulse.dev/schema/v1"
    ] = Field(alias="@context")
    type: Literal["ReasoningTrace"] = Field(alias="@type")
    id: Annotated[StrictStr, Field(pattern=r"^kp:trace:.+")] = Field(
        description="The trace's id, `kp:trace:<anything non-empty>`."
    )
    source_skill: Annotated[StrictStr, Field(pattern=r"^kp:skill:[^:]+:[^:]+$")] | None = Field(
        default=None, description="The skill that produced it, `kp:skill:<name>:<version>`."
    )
    metadata: Metadata
    task: Task
    steps: Annotated[list[Step], Field(min_length=1)]
    outcome: Outcome
    knowledge_graph_delta: KnowledgeGraphDelta | None = None
