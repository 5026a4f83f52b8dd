"""The ReasoningTrace schema: what validates and what is rejected, by JSON path."""

from __future__ import annotations

from datetime import UTC, datetime
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


def test_id_must_have_the_trace_prefix_and_a_suffix() -> None:
    """An id without kp:trace:, or with nothing after it, is rejected with the expected form,
    which says the suffix must not be empty (``kp:trace:`` is of the form kp:trace:<anything>)."""
    expected = "expected an id of the form 'kp:trace:<anything non-empty>'"
    (message,) = problems_of(trace_json(trace_id="kp:trace:"))
    assert message == f'id: got "kp:trace:"; {expected}'
    (message,) = problems_of(trace_json(trace_id="trace:1"))
    assert message == f'id: got "trace:1"; {expected}'


def test_an_id_whose_suffix_is_a_newline_is_valid() -> None:
    """``kp:trace:\\n`` has a non-empty suffix, as the reference schema's ``.+`` with the dotall
    flag would have it; it is shown escaped on a terminal, never refused."""
    assert parse_trace(trace_json(trace_id="kp:trace:\n")).id == "kp:trace:\n"
    assert parse_trace(trace_json(trace_id="kp:trace:\r\n\t")).id == "kp:trace:\r\n\t"


def test_steps_must_not_be_empty() -> None:
    """A trace has at least one step."""
    (message,) = problems_of(trace_json(step_list=[]))
    assert message.startswith("steps:")


def test_an_empty_objective_is_told_in_kps_words() -> None:
    """An empty string where text is needed reads as the other problems do, not as pydantic's."""
    data = trace_json()
    data["task"]["objective"] = ""
    assert problems_of(data) == ['task.objective: got ""; expected a non-empty string']


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


@pytest.mark.parametrize(
    "created_at",
    [1767225600, "2026-01-31", "2026-01-31T12:00:00", "1767225600", "2026-01-31 12:00:00Z"],
)
def test_created_at_must_be_an_rfc3339_date_time_with_a_zone(created_at: object) -> None:
    """A timestamp, a date alone, a time without a zone or a number in a string is refused."""
    data = trace_json()
    data["metadata"]["created_at"] = created_at
    (message,) = problems_of(data)
    assert message.startswith("metadata.created_at: got ")
    assert "expected an RFC 3339 date-time with Z or an offset" in message


@pytest.mark.parametrize("created_at", ["2026-01-31T12:00:00Z", "2026-01-31T13:00:00.25+01:00"])
def test_created_at_takes_z_or_an_offset(created_at: str) -> None:
    """Z and a numeric offset are the same kind of instant (Python's isoformat writes one)."""
    data = trace_json()
    data["metadata"]["created_at"] = created_at
    assert parse_trace(data).metadata.created_at.utcoffset() is not None


def test_created_at_may_be_a_leap_second() -> None:
    """RFC 3339 allows 23:59:60; it is the next day's first second, as Unix time counts it."""
    data = trace_json()
    data["metadata"]["created_at"] = "2016-12-31T23:59:60Z"
    assert parse_trace(data).metadata.created_at == datetime(2017, 1, 1, tzinfo=UTC)


def test_an_impossible_created_at_says_why() -> None:
    """A date no calendar has is refused with the parser's reason, not only the form."""
    data = trace_json()
    data["metadata"]["created_at"] = "2026-13-01T00:00:00Z"
    (message,) = problems_of(data)
    assert message.startswith("metadata.created_at: got ")
    assert "month" in message


def test_source_skill_is_any_string() -> None:
    """The kp:skill:<name>:<version> form is a convention; the reference takes any string."""
    assert parse_trace(trace_json(source_skill="search")).source_skill == "search"


def test_empty_tool_name_is_a_tool_name() -> None:
    """An empty tool name validates, as in the reference schema."""
    data = trace_json()
    data["steps"][1]["tool"] = {"name": ""}
    assert parse_trace(data).steps[1].tool is not None


def test_integral_float_step_id_reads_as_an_int() -> None:
    """1.0 is 1 (JavaScript producers cannot tell them apart); 1.5 is refused."""
    data = trace_json()
    data["steps"][0]["step_id"] = 1.0
    assert parse_trace(data).steps[0].step_id == 1
    assert isinstance(parse_trace(data).steps[0].step_id, int)
    data["steps"][0]["step_id"] = 1.5
    (message,) = problems_of(data)
    assert message.startswith("steps[0].step_id:")


@pytest.mark.parametrize(
    ("section", "field", "value"),
    [
        ("outcome", "confidence", "0.9"),
        ("outcome", "confidence", True),
        ("metadata", "quality_score", "0.5"),
        ("metadata", "quality_score", False),
        ("metadata", "success", 1),
    ],
)
def test_numbers_and_booleans_are_never_coerced(section: str, field: str, value: object) -> None:
    """A string or a boolean where a number belongs (and a number for a boolean) is refused."""
    data = trace_json()
    data[section][field] = value
    (message,) = problems_of(data)
    assert message.startswith(f"{section}.{field}: got ")


def test_latency_must_be_a_json_number() -> None:
    """latency_ms "120" is a string, not a number."""
    data = trace_json()
    data["steps"][0]["latency_ms"] = "120"
    (message,) = problems_of(data)
    assert message.startswith("steps[0].latency_ms: got ")


def test_context_and_type_are_read_only_under_their_json_ld_keys() -> None:
    """ "context" and "type" are unknown fields, not stand-ins for "@context" and "@type"."""
    data = trace_json()
    data["context"] = data.pop("@context")
    data["type"] = data.pop("@type")
    assert sorted(m.split(":", 1)[0] for m in problems_of(data)) == ["@context", "@type"]


def test_null_for_an_optional_field_means_absent() -> None:
    """Python producers write None; for an optional field that is the same as leaving it out."""
    data = trace_json()
    data["source_skill"] = None
    data["knowledge_graph_delta"] = None
    data["steps"][0]["tool"] = None
    data["steps"][0]["latency_ms"] = None
    trace = parse_trace(data)
    assert (trace.source_skill, trace.knowledge_graph_delta, trace.steps[0].tool) == (
        None,
        None,
        None,
    )


def test_knowledge_graph_delta_needs_both_lists() -> None:
    """A delta with entities but no relationships is refused, as in the reference schema."""
    data = trace_json()
    data["knowledge_graph_delta"] = {"entities": []}
    (message,) = problems_of(data)
    assert message == "knowledge_graph_delta.relationships: required field is missing"


def test_a_validated_trace_passes_through_parse_trace() -> None:
    """parse_trace returns a ReasoningTrace given one, unchanged."""
    trace = ReasoningTrace.model_validate(trace_json())
    assert parse_trace(trace) is trace


def test_a_dataset_row_given_as_a_trace_says_which_call_reads_it() -> None:
    """A chat row handed to parse_trace is told as another format's record, with the call that
    converts it, not only as seven required fields missing."""
    row = {"messages": [{"role": "user", "content": "hi"}], "id": "r1"}
    with pytest.raises(TraceValidationError) as caught:
        parse_trace(row)
    summary = str(caught.value).splitlines()[0]
    assert "neither @context nor @type (its keys: id, messages)" in summary
    assert "knowledgepulse.score([record])" in summary


def test_a_path_given_as_a_trace_says_how_to_read_the_file() -> None:
    """A string (a path, or JSON text) is told as such, with the calls that read it."""
    with pytest.raises(TraceValidationError) as caught:
        parse_trace("examples/traces/finance-tsmc.json")
    assert "it is a string; give the parsed JSON" in str(caught.value).splitlines()[0]


def test_a_trace_with_mistakes_gets_no_format_hint() -> None:
    """A document that says it is a trace (@type) is told only its problems; so is {}."""
    for value in ({"@type": "ReasoningTrace"}, {}):
        with pytest.raises(TraceValidationError) as caught:
            parse_trace(value)
        assert str(caught.value).splitlines()[0] == "<trace>: not a valid ReasoningTrace"
