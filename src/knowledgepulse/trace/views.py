"""A compiled check of the common trace: the models' rules as msgspec structs, run in C.

pydantic's validation of a :class:`~knowledgepulse.trace.models.ReasoningTrace` takes about
30 µs, the largest cost of scoring a trace without an embedder. The same rules written as
msgspec structs take about 6 µs. :func:`trace_view` runs them first and returns a
:class:`TraceView` only when the models would accept the trace too: every rule here is the
models' rule or a stricter one (an integral float ``step_id`` such as ``1.0``, say, or a
date-time the models would have to parse), and whatever this check refuses goes on to the models,
which accept it or say precisely what is wrong. So the models stay the one definition of a
valid trace and of its error messages; ``tests/trace/test_views.py`` checks that the two agree
on every trace hypothesis makes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from knowledgepulse.records.strict_json import kept_colons, too_deep, too_nested_to_tell
from knowledgepulse.trace.vocabulary import StepType

_NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
_Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
# The models' pattern with every field's range spelled out, so that what matches is a date-time
# every parser takes (the models' parser may refuse a 61st second or a 7th fraction digit).
_RFC3339 = (
    r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)\Z"
)


class _Struct(msgspec.Struct, frozen=True, omit_defaults=True):
    """Unknown fields are the models' ``extra``: allowed, and not read by scoring.

    ``omit_defaults``: turned back into data, a view holds only what the trace said.
    """


class _Tool(_Struct, frozen=True):
    name: str
    mcp_server: str | None = None


class _Step(_Struct, frozen=True):
    step_id: Annotated[int, msgspec.Meta(ge=0)]
    type: StepType
    content: str | None = None
    tool: _Tool | None = None
    input: dict[str, Any] | None = None
    output_summary: str | None = None
    latency_ms: Annotated[float, msgspec.Meta(ge=0.0)] | None = None


class _Metadata(_Struct, frozen=True):
    created_at: Annotated[str, msgspec.Meta(pattern=_RFC3339)]
    task_domain: _NonEmpty
    success: bool
    quality_score: _Unit
    visibility: Literal["private", "org", "network"]
    privacy_level: Literal["aggregated", "federated", "private"]
    agent_id: str | None = None
    framework: str | None = None
    validated_by: list[str] | None = None
    # Not a field of the schema: where a converted trace's domain and confidence came from
    # (an extra to the models, read by scoring; any value, as an extra may be).
    source: Any = None


class _Task(_Struct, frozen=True):
    objective: _NonEmpty
    input_schema: dict[str, Any] | None = None


class _Outcome(_Struct, frozen=True):
    result_summary: str
    confidence: _Unit


class _Entity(_Struct, frozen=True):
    name: str
    type: str


class _Relationship(_Struct, frozen=True):
    fact: str
    valid_from: str


class _KnowledgeGraphDelta(_Struct, frozen=True):
    entities: list[_Entity]
    relationships: list[_Relationship]


class TraceView(_Struct, frozen=True):
    """A trace the models accept, as msgspec structs: its declared fields, no extras.

    Made by :func:`trace_view` or :func:`decode_view`; scoring reads it as it reads a model.
    """

    context: Literal[
        "https://openknowledgepulse.org/schema/v1", "https://knowledgepulse.dev/schema/v1"
    ] = msgspec.field(name="@context")
    type: Literal["ReasoningTrace"] = msgspec.field(name="@type")
    id: Annotated[str, msgspec.Meta(pattern=r"^kp:trace:.+")] = msgspec.field()
    metadata: _Metadata = msgspec.field()
    task: _Task = msgspec.field()
    steps: Annotated[list[_Step], msgspec.Meta(min_length=1)] = msgspec.field()
    outcome: _Outcome = msgspec.field()
    source_skill: str | None = None
    knowledge_graph_delta: _KnowledgeGraphDelta | None = None


def trace_view(value: Any) -> TraceView | None:
    """``value`` (parsed JSON) as a :class:`TraceView`, or ``None`` when the models must decide.

    ``None`` does not mean invalid: the value may be valid in a way this check leaves to the
    models (``step_id: 1.0``), or invalid, which only the models can explain.
    """
    try:
        view = msgspec.convert(value, TraceView)
    except msgspec.ValidationError:
        return None
    return view if _real_date(view) else None


_DECODER = msgspec.json.Decoder(TraceView)
_ENCODER = msgspec.json.Encoder()


def decode_view(line: bytes) -> TraceView | None:
    """One JSON Lines line as a :class:`TraceView`, parsed and checked in one pass, or ``None``.

    msgspec's parser is as strict as :mod:`knowledgepulse.records.strict_json` (no NaN, no
    overflowing number, no lone surrogate, no invalid UTF-8, Python's 4,300-digit integer
    limit) but for two things, left to the usual path with its messages: a repeated key (msgspec
    keeps the last) and nesting past ``MAX_NESTING``. A key the view does not declare (an extra,
    an explicit ``null``) goes that way too, which costs time, not correctness: re-encoding the
    view writes one colon a key, so it matches the line's only when every key was kept.
    """
    try:
        view = _DECODER.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if _ENCODER.encode(view).count(b":") != kept_colons(line):
        return None
    if too_nested_to_tell(line) and _too_deep(view):
        return None
    return view if _real_date(view) else None


def _too_deep(view: TraceView) -> bool:
    # The structs nest four levels at most: only their free-form values can go deeper.
    free: list[tuple[Any, tuple[str | int, ...]]] = [
        (view.task.input_schema, ("task", "input_schema")),
        (view.metadata.source, ("metadata", "source")),
    ]
    free += [(step.input, ("steps", index, "input")) for index, step in enumerate(view.steps)]
    return any(value is not None and too_deep(value, at) is not None for value, at in free)


def _real_date(view: TraceView) -> bool:
    # The pattern fixes each field's range; a 30th of February is left to the calendar.
    try:
        datetime.fromisoformat(view.metadata.created_at)
    except ValueError:
        return False
    return True
