"""The ``ReasoningTrace`` JSON-LD document as typed, validated models.

Unknown fields are kept (JSON-LD documents grow); known fields are checked strictly. We accept
what the reference's zod ``ReasoningTraceSchema`` accepts, but where ``spec/trace-value.md``
decides otherwise; ``null`` for an optional field means absent.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
)

from knowledgepulse._util.times import iso_time

ContextUrl = Literal[
    "https://openknowledgepulse.org/schema/v1", "https://knowledgepulse.dev/schema/v1"
]
CONTEXT_URLS: tuple[str, ...] = get_args(ContextUrl)
"""Both ``@context`` URLs the seeds use; either validates. The first is the spec's, which kp
writes (a converted trace's)."""

StepType = Literal["thought", "tool_call", "observation", "error_recovery"]
STEP_TYPES: tuple[StepType, ...] = get_args(StepType)

PrivacyLevel = Literal["aggregated", "federated", "private"]
PRIVACY_LEVELS: tuple[PrivacyLevel, ...] = get_args(PrivacyLevel)

NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]
# StrictFloat takes JSON integers (1 is a number) but never "0.9" or true.
UnitFloat = Annotated[StrictFloat, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[StrictFloat, Field(ge=0.0, allow_inf_nan=False)]

# RFC 3339 section 5.6: a full date, "T", a time, and a zone ("Z" or an offset).
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$")
_NOT_RFC3339 = (
    "expected an RFC 3339 date-time with Z or an offset, "
    "such as 2026-11-23T08:00:00Z or 2026-11-23T09:00:00+01:00"
)


# Remembered: the traces of a file mostly share one time text (a dataset's undated rows all
# have the epoch's); a datetime is immutable, so one can be given to every trace.
@functools.lru_cache(maxsize=256)
def _created_at(value: str) -> datetime | str:
    """RFC 3339 text as a datetime, read as every source reads a time (a leap second too).

    What it cannot read is given back as it is, for pydantic to say why (a 13th month).
    """
    if not _RFC3339.match(value):
        raise ValueError(_NOT_RFC3339)
    return iso_time(value) or value


def _integral(value: Any) -> Any:
    # JavaScript producers cannot tell 1.0 from 1, and the reference schema takes both.
    return int(value) if isinstance(value, float) and value.is_integer() else value


StepId = Annotated[StrictInt, Field(ge=0), BeforeValidator(_integral)]


class _JsonLdModel(BaseModel):
    """Keeps unknown fields, rejects NaN, and never coerces a string into a number or bool."""

    model_config = ConfigDict(
        extra="allow",
        allow_inf_nan=False,
        # "@context" and "@type" are JSON-LD keywords: "context" is just an unknown field.
        validate_by_name=False,
        frozen=True,
    )


class Tool(_JsonLdModel):
    """The tool a step used."""

    name: StrictStr = Field(
        description='The tool\'s name; distinct names ("" included) count for diversity.'
    )
    mcp_server: StrictStr | None = Field(default=None, description="The MCP server, if any.")


class Step(_JsonLdModel):
    """One step of the agent: a thought, a tool call, an observation or an error recovery."""

    step_id: StepId = Field(description="The step's number, >= 0 (1.0 reads as 1).")
    type: StepType = Field(description="What kind of step this is.")
    content: StrictStr | None = Field(default=None, description="The step's text.")
    tool: Tool | None = Field(default=None, description="The tool used, if any.")
    input: dict[str, Any] | None = Field(default=None, description="The tool's input.")
    output_summary: StrictStr | None = Field(default=None, description="A summary of the output.")
    latency_ms: NonNegativeFloat | None = Field(
        default=None, description="How long the step took, in milliseconds."
    )


class Metadata(_JsonLdModel):
    """Who produced the trace, when, in which domain, and whether it succeeded."""

    created_at: datetime = Field(
        description="When the trace was made: an RFC 3339 date-time with Z or an offset."
    )
    agent_id: StrictStr | None = None
    framework: StrictStr | None = None
    task_domain: NonEmptyStr = Field(description="Selects the weight profile (exact match).")
    success: StrictBool = Field(description="Whether the task succeeded.")
    quality_score: UnitFloat = Field(description="The trace's value score, 0.0-1.0.")
    visibility: Literal["private", "org", "network"]
    privacy_level: PrivacyLevel
    validated_by: list[StrictStr] | None = None

    @field_validator("created_at", mode="before")
    @classmethod
    def _rfc3339(cls, value: Any) -> Any:
        # pydantic alone would take a Unix timestamp, a date, or a time without a zone.
        if isinstance(value, datetime):
            if value.tzinfo is None:
                raise ValueError("expected a date-time with a time zone")
            return value
        if not isinstance(value, str):
            raise ValueError(_NOT_RFC3339)
        return _created_at(value)


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

    entities: list[Entity] = Field(description="Entities; required, possibly empty.")
    relationships: list[Relationship] = Field(description="Facts; required, possibly empty.")


class ReasoningTrace(_JsonLdModel):
    """The steps an AI agent took on one task, and how it ended (JSON-LD).

    Build one from parsed JSON with :meth:`ReasoningTrace.model_validate` or use
    :func:`knowledgepulse.trace.parse_trace` for errors that name each field's JSON path.
    """

    context: ContextUrl = Field(alias="@context")
    type: Literal["ReasoningTrace"] = Field(alias="@type")
    id: Annotated[StrictStr, Field(pattern=r"^kp:trace:[\s\S]+")] = Field(
        description="The trace's id, `kp:trace:<anything non-empty>`."
    )
    source_skill: StrictStr | None = Field(
        default=None,
        description="The skill that produced it, by convention `kp:skill:<name>:<version>`.",
    )
    metadata: Metadata
    task: Task
    steps: Annotated[list[Step], Field(min_length=1)]
    outcome: Outcome
    knowledge_graph_delta: KnowledgeGraphDelta | None = None


JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def trace_json_schema() -> dict[str, Any]:
    """The JSON Schema of one trace (``kp schema trace``; a test keeps schemas/ equal to it)."""
    schema = ReasoningTrace.model_json_schema(by_alias=True)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}
