"""The ReasoningTrace schema: what validates and what is rejected, by JSON path."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgepulse.errors import TraceValidationError
from knowledgepulse.trace import ReasoningTrace, parse_trace
from tests.builders import trace_json


def problems_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(TraceValidationError) as caught:
        parse_trace(data, source="t.json")
    return [f"{p.path}: {p.message}" for p in caught.value.problems]


@pytest.mark.parametrize(
    "context", ["https://openknowledgepulse.org/schema/v1", "https://knowledgepulse.dev/schema/v1"]
)
def test_both_context_urls_validate(context: str) -> None:
    """Either @context URL from the seeds is accepted."""
    data = trace_json()
    data["@context"] = context
    assert parse_trace(data).context == context


def test_unknown_fields_are_kept() -> None:
    """Extra JSON-LD fields survive validation and serialisation."""
    data = trace_json()
    data["x-producer"] = {"name": "lab"}
    data["steps"][0]["x-tokens"] = 12
    trace = parse_trace(data)
    dumped = trace.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert dumped["x-producer"] == {"name": "lab"}
    assert dumped["steps"][0]["x-tokens"] == 12


def test_bad_step_type_names_its_path_value_and_choices() -> None:
    """A wrong step type says where, what it holds, and the four valid types."""
    data = trace_json()
    data["steps"][1]["type"] = "action"
    (message,) = problems_of(data)
    assert message.startswith('steps[1].type: got "action"; expected ')
    for kind in ("thought", "tool_call", "observation", "error_recovery"):
        assert kind in message


def test_every_problem_is_reported_at_once() -> None:
    """All schema problems of one trace are listed together."""
    data = trace_json(trace_id="trace-1")
    data["metadata"]["success"] = "yes"
    data["outcome"]["confidence"] = 1.5
    del data["task"]
    messages = problems_of(data)
    paths = sorted(m.split(":", 1)[0] for m in messages)
    assert paths == ["id", "metadata.success", "outcome.confidence", "task"]


def test_string_is_not_coerced_to_bool_or_number() -> None:
    """'true' and '1' are strings, not a boolean or a number."""
    data = trace_json()
    data["metadata"]["success"] = "true"
    data["steps"][0]["step_id"] = "1"
    assert sorted(m.split(":", 1)[0] for m in problems_of(data)) == [
        "metadata.success",
        "steps[0].step_id",
    ]


def test_id_must_have_the_trace_prefix() -> None:
    """An id without kp:trace: is rejected with the expected form."""
    (message,) = problems_of(trace_json(trace_id="kp:trace:"))
    assert message == "id: got \"kp:trace:\"; expected an id of the form 'kp:trace:<anything>'"


def test_steps_must_not_be_empty() -> None:
    """A trace has at least one step."""
    (message,) = problems_of(trace_json(step_list=[]))
    assert message.startswith("steps:")


def test_negative_step_id_and_latency_are_rejected() -> None:
    """step_id and latency_ms are >= 0."""
    data = trace_json()
    data["steps"][0]["step_id"] = -1
    data["steps"][1]["latency_ms"] = -3
    assert sorted(m.split(":", 1)[0] for m in problems_of(data)) == [
        "steps[0].step_id",
        "steps[1].latency_ms",
    ]


def test_nan_passed_from_python_is_rejected() -> None:
    """A NaN confidence given directly from Python (not via JSON) is still invalid."""
    data = trace_json()
    data["outcome"]["confidence"] = float("nan")
    (message,) = problems_of(data)
    assert message.startswith("outcome.confidence:")


def test_created_at_must_be_an_iso_string() -> None:
    """A Unix timestamp is not an ISO 8601 date-time."""
    data = trace_json()
    data["metadata"]["created_at"] = 1767225600
    (message,) = problems_of(data)
    assert message.startswith("metadata.created_at: got 1767225600; expected an ISO 8601")


def test_source_skill_has_name_and_version() -> None:
    """source_skill is kp:skill:<name>:<version>."""
    assert (
        parse_trace(trace_json(source_skill="kp:skill:search:1.0")).source_skill
        == "kp:skill:search:1.0"
    )
    (message,) = problems_of(trace_json(source_skill="kp:skill:search"))
    assert message.startswith("source_skill:")


def test_a_validated_trace_passes_through_parse_trace() -> None:
    """parse_trace returns a ReasoningTrace given one, unchanged."""
    trace = ReasoningTrace.model_validate(trace_json())
    assert parse_trace(trace) is trace
