"""Exported Agents SDK spans to ReasoningTrace: the SDK's own snapshots, files and bad records."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import openai_agents as oa
from knowledgepulse.sources.openai_agents import _files as oa_files
from knowledgepulse.sources.openai_agents._items import user_text
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, has_text, source_of

DATA = Path(__file__).parent / "data" / "openai_agents"
TRACE_ID = "trace_" + "0" * 31 + "1"


def exported(name: str, trace_id: str = TRACE_ID) -> list[dict[str, Any]]:
    """The SDK's normalised snapshot turned back into its export objects, in tree order.

    ``fetch_normalized_spans`` dropped ids and timestamps; the ids are rebuilt, the times left
    out (the spans are then in the SDK's start order, which is the tree order).
    """
    snapshot = json.loads((DATA / name).read_text())
    records: list[dict[str, Any]] = []
    numbers = itertools.count(1)
    for trace in snapshot:
        records.append(
            {
                "object": "trace",
                "id": trace_id,
                "workflow_name": trace["workflow_name"],
                "group_id": None,
                "metadata": trace.get("metadata"),
            }
        )

        def walk(node: dict[str, Any], parent: str | None) -> None:
            span_id = f"span_{next(numbers):024d}"
            records.append(
                {
                    "object": "trace.span",
                    "id": span_id,
                    "trace_id": trace_id,
                    "parent_id": parent,
                    "started_at": None,
                    "ended_at": None,
                    "span_data": {"type": node["type"], **node.get("data", {})},
                    "error": node.get("error"),
                }
            )
            for child in node.get("children", []):
                walk(child, span_id)

        for child in trace.get("children", []):
            walk(child, None)
    return records


def convert(values: list[Any], options: TraceOptions | None = None) -> list[Any]:
    records = [Record(Location("t.jsonl", line, line - 1), v) for line, v in enumerate(values, 1)]
    return list(oa_files.convert_records(records, options or TraceOptions()))


def only_trace(values: list[Any], options: TraceOptions | None = None) -> TraceItem:
    (converted,) = convert(values, options)
    assert isinstance(converted, TraceItem), converted
    return converted


def steps(converted: TraceItem) -> list[dict[str, Any]]:
    return [
        step.model_dump(mode="json", exclude_none=True, exclude={"step_id"})
        for step in converted.trace.steps
    ]


def test_the_sdk_tool_call_error_snapshot_gives_a_failed_call_and_its_error() -> None:
    """tests/test_tracing_errors.py::test_tool_call_error: the bad-JSON call and its error."""
    converted = only_trace(exported("tool_call_error.snapshot.json"))
    error = "Error running tool: Expecting value: line 1 column 1 (char 0)"
    output = (
        "An error occurred while parsing tool arguments. Please try again with valid JSON. "
        "Error: Expecting value: line 1 column 1 (char 0)"
    )
    assert steps(converted) == [
        {
            "type": "tool_call",
            "content": 'foo {"_raw":"bad_json"}',
            "tool": {"name": "foo"},
            "input": {"_raw": "bad_json"},
            "output_summary": error,
        },
        {
            "type": "observation",
            "content": f"{error}\n{output}",
            "tool": {"name": "foo"},
            "output_summary": f"{error}\n{output}",
        },
    ]
    trace = converted.trace
    assert trace.id == f"kp:trace:{TRACE_ID}"
    # No model text exported, and "Agent workflow" is the SDK's default name: no task is known.
    assert trace.task.objective == "openai-agents run"
    assert trace.metadata.success is True  # the tool failed, the run did not
    assert trace.metadata.agent_id == "test_agent"
    assert trace.metadata.framework == "openai-agents"
    assert trace.outcome.confidence == 0.8
    assert (source_of(converted)["domain_source"], source_of(converted)["confidence_source"]) == (
        "default",
        "default",
    )
    assert has_text(converted) is True
    assert any("2 model span(s) hold no model text" in w for w in converted.warnings)


def test_the_sdk_mcp_snapshot_names_the_mcp_server_and_skips_the_listings() -> None:
    """tests/mcp/test_mcp_tracing.py: mcp_data.server becomes tool.mcp_server."""
    converted = only_trace(exported("mcp_tracing.snapshot.json"))
    assert steps(converted) == [
        {
            "type": "tool_call",
            "content": "test_tool_1",
            "tool": {"name": "test_tool_1", "mcp_server": "fake_mcp_server"},
            "output_summary": "{'type': 'text', 'text': 'result_test_tool_1_{}'}",
        },
        {
            "type": "observation",
            "content": "{'type': 'text', 'text': 'result_test_tool_1_{}'}",
            "tool": {"name": "test_tool_1", "mcp_server": "fake_mcp_server"},
            "output_summary": "{'type': 'text', 'text': 'result_test_tool_1_{}'}",
        },
    ]
    assert converted.trace.metadata.agent_id == "test"
    assert converted.warnings == (
        "no span holds the user's input: the objective is a placeholder, not the user's request",
    )


def span(
    number: int,
    data: dict[str, Any],
    *,
    parent: int | None = None,
    at: float = 0.0,
    took: float = 0.5,
    error: dict[str, Any] | None = None,
    trace_id: str = TRACE_ID,
) -> dict[str, Any]:
    """One ``Span.export()`` object, started ``at`` seconds past 10:00."""
    return {
        "object": "trace.span",
        "id": f"span_{number}",
        "trace_id": trace_id,
        "parent_id": None if parent is None else f"span_{parent}",
        "started_at": f"2026-11-23T10:00:{at:09.6f}+00:00",
        "ended_at": f"2026-11-23T10:00:{at + took:09.6f}+00:00",
        "span_data": data,
        "error": error,
    }


def head(trace_id: str = TRACE_ID, **metadata: object) -> dict[str, Any]:
    return {
        "object": "trace",
        "id": trace_id,
        "workflow_name": "Support desk",
        "group_id": None,
        "metadata": metadata or None,
    }


def agent(number: int = 1, name: str = "triage", **extra: Any) -> dict[str, Any]:
    data = {"type": "agent", "name": name, "handoffs": [], "tools": [], "output_type": "str"}
    return span(number, data, at=0.0, took=9.0, **extra)


def test_metadata_keys_give_domain_and_confidence_and_arguments_win() -> None:
    """kp.task_domain and kp.confidence in the trace metadata; an argument overrides them."""
    tool = {"type": "function", "name": "refund", "input": '{"order": 7}', "output": "done"}
    values = [
        head(TRACE_ID, **{"kp.task_domain": "finance", "kp.confidence": 0.65}),
        agent(),
        span(2, tool, parent=1, at=1.0),
    ]
    found = only_trace(values)
    assert (found.trace.metadata.task_domain, found.trace.outcome.confidence) == ("finance", 0.65)
    assert (source_of(found)["domain_source"], source_of(found)["confidence_source"]) == (
        "metadata",
        "metadata",
    )
    told = only_trace(values, TraceOptions(domain="code", confidence=0.3))
    assert (told.trace.metadata.task_domain, told.trace.outcome.confidence) == ("code", 0.3)
    assert told.trace.metadata.created_at.isoformat() == "2026-11-23T10:00:00+00:00"
    assert told.trace.steps[0].latency_ms == 500.0
    assert told.trace.steps[0].input == {"order": 7}


def test_an_agent_span_error_is_a_failed_run_with_its_error_as_the_result() -> None:
    """Max turns, a model error: the agent span's error fails the run (confidence 0.2)."""
    error = {"message": "Max turns exceeded", "data": {"max_turns": 1}}
    tool = {"type": "function", "name": "search", "input": "{}", "output": "nothing"}
    converted = only_trace([head(), agent(error=error), span(2, tool, parent=1, at=1.0)])
    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.confidence == 0.2
    assert converted.trace.outcome.result_summary == "Max turns exceeded"


def test_a_tripped_guardrail_fails_the_run() -> None:
    """A guardrail span with triggered=true aborts the run."""
    guard = {"type": "guardrail", "name": "no_pii", "triggered": True}
    tool = {"type": "function", "name": "search", "input": "{}", "output": "x"}
    converted = only_trace(
        [head(), agent(), span(2, guard, parent=1, at=0.5), span(3, tool, parent=1, at=1.0)]
    )
    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.result_summary == "guardrail no_pii tripped"


def test_a_handoff_is_a_transfer_tool_call_between_the_agents_steps() -> None:
    """handoff spans become transfer_to_<agent> tool calls, in time order."""
    values = [
        head(),
        agent(),
        span(2, {"type": "function", "name": "lookup", "input": "{}", "output": "42"}, at=1.0),
        span(3, {"type": "handoff", "from_agent": "triage", "to_agent": "Billing Desk"}, at=2.0),
        agent(4, "Billing Desk"),
        span(5, {"type": "function", "name": "refund", "input": "{}", "output": "ok"}, at=3.0),
    ]
    converted = only_trace(values)
    tools = [(s.type, s.tool.name if s.tool else None) for s in converted.trace.steps]
    assert tools == [
        ("tool_call", "lookup"),
        ("observation", "lookup"),
        ("tool_call", "transfer_to_billing_desk"),
        ("tool_call", "refund"),
        ("observation", "refund"),
    ]


def test_live_response_content_gives_thoughts_requests_and_the_answer() -> None:
    """Response spans with their output items (as the live processor keeps them)."""
    first = {
        "type": "response",
        "response_id": "resp_1",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Refund #7"}]}],
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Check it."}]},
            {
                "type": "function_call",
                "name": "refund",
                "arguments": '{"order": 7}',
                "call_id": "call_1",
            },
        ],
    }
    last = {
        "type": "response",
        "response_id": "resp_2",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Refunded."}],
            }
        ],
    }
    tool = {"type": "function", "name": "refund", "input": '{"order": 7}', "output": "ok"}
    converted = only_trace(
        [head(), agent(), span(2, first, at=1.0), span(3, tool, at=2.0), span(4, last, at=3.0)]
    )
    assert [(s.type, s.content) for s in converted.trace.steps] == [
        ("thought", "Check it."),
        ("tool_call", 'refund {"order":7}'),
        ("observation", "ok"),
        ("thought", "Refunded."),
    ]
    assert converted.trace.task.objective == "Refund #7"
    assert converted.trace.outcome.result_summary == "Refunded."
    assert converted.warnings == ()


def test_chat_completions_generation_spans_give_the_same_steps() -> None:
    """Generation spans (Chat Completions messages) read like response spans."""
    first = {
        "type": "generation",
        "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
        "output": [
            {
                "role": "assistant",
                "content": "I will add.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'},
                    }
                ],
            }
        ],
    }
    last = {"type": "generation", "output": [{"role": "assistant", "content": "4"}]}
    tool = {"type": "function", "name": "add", "input": '{"a": 2, "b": 2}', "output": "4"}
    converted = only_trace(
        [head(), agent(), span(2, first, at=1.0), span(3, tool, at=2.0), span(4, last, at=3.0)]
    )
    assert [s.type for s in converted.trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "thought",
    ]
    assert converted.trace.task.objective == "2+2?"
    assert converted.trace.outcome.result_summary == "4"


def test_hosted_tool_calls_in_the_response_are_tool_calls_with_their_results() -> None:
    """web_search_call and mcp_call output items need no function span."""
    output = [
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "kp"}},
        {
            "type": "mcp_call",
            "id": "mcp_1",
            "name": "read_file",
            "arguments": '{"path": "a"}',
            "server_label": "files",
            "output": "text",
        },
    ]
    response = {"type": "response", "response_id": "r", "output": output}
    converted = only_trace([head(), agent(), span(2, response, at=1.0)])
    assert [(s.type, s.tool.name if s.tool else None) for s in converted.trace.steps] == [
        ("tool_call", "web_search"),
        ("tool_call", "read_file"),
        ("observation", "read_file"),
    ]
    assert converted.trace.steps[1].tool is not None
    assert converted.trace.steps[1].tool.mcp_server == "files"


def test_interleaved_traces_in_one_file_each_give_one_trace_in_first_seen_order() -> None:
    """Spans are grouped by trace_id, wherever they are in the file."""
    other = "trace_" + "9" * 32
    tool = {"type": "function", "name": "t", "input": "{}", "output": "o"}
    results = convert(
        [
            span(1, tool, trace_id=other),
            span(2, tool, trace_id=TRACE_ID),
            head(other),
            span(3, tool, trace_id=other, at=2.0),
        ]
    )
    assert [r.trace.id for r in results] == [f"kp:trace:{other}", f"kp:trace:{TRACE_ID}"]
    assert [len(r.trace.steps) for r in results] == [4, 2]


def test_bad_objects_are_located_and_the_rest_converted() -> None:
    """Each bad object is a problem at its line and path; the good trace still converts."""
    tool = {"type": "function", "name": "t", "input": "{}", "output": "o"}
    results = convert(
        [
            [1, 2],
            {"object": "response", "id": "resp_1"},
            {"object": "trace.span", "id": "s", "span_data": {"type": "agent"}},
            {"object": "trace.span", "id": "s", "trace_id": TRACE_ID, "span_data": {}},
            span(1, tool),
        ]
    )
    problems = [str(r) for r in results if isinstance(r, Problem)]
    assert problems == [
        "t.jsonl:1: expected an Agents SDK trace or span object, found a JSON array",
        't.jsonl:2: object: expected "trace" or "trace.span", found \'response\' (the file '
        "should hold the SDK's Trace.export() and Span.export() objects)",
        "t.jsonl:3: trace_id: expected the trace id as a string, found no such key in an object "
        "with keys id, object, span_data",
        't.jsonl:4: span_data: expected an object with a "type" (agent, response, function...), '
        "found object without one",
    ]
    assert [r.trace.id for r in results if isinstance(r, TraceItem)] == [f"kp:trace:{TRACE_ID}"]


def test_a_missing_or_null_key_is_told_in_json_words_not_as_none() -> None:
    """A missing ``object`` names what the record holds; a null trace id is ``null``.

    Before, both said Python's ``found None``, which a JSON file never holds.
    """
    results = convert([{"id": "x"}, {"object": "trace", "id": None}])
    assert [str(r) for r in results if isinstance(r, Problem)] == [
        't.jsonl:1: object: expected "trace" or "trace.span", found no such key in an object with '
        "keys id (the file should hold the SDK's Trace.export() and Span.export() objects)",
        "t.jsonl:2: id: expected the trace id as a string, found null",
    ]


def test_a_trace_with_no_step_is_a_problem_at_its_first_record() -> None:
    """Only an MCP listing: nothing to make a trace of, said where the trace starts."""
    listing = {"type": "mcp_tools", "server": "s", "result": ["a"]}
    (problem,) = convert([head(), span(1, listing)])
    assert isinstance(problem, Problem)
    assert problem.location.line == 1
    assert problem.message.startswith(f"trace {TRACE_ID}: the trace holds no step")


def test_an_exporter_batch_is_read_and_its_bad_element_located() -> None:
    """The exporter's {"data": [...]} payload: each element, located by its index."""
    tool = {"type": "function", "name": "t", "input": "{}", "output": "o"}
    results = convert(
        [{"data": [head(), {"object": "trace.span", "span_data": {}}, span(1, tool)]}]
    )
    assert [str(r) for r in results if isinstance(r, Problem)] == [
        "t.jsonl:1: data[1].trace_id: expected the trace id as a string, found no such key in an "
        "object with keys object, span_data"
    ]
    assert sum(isinstance(r, TraceItem) for r in results) == 1


def test_unreadable_lines_pass_through(tmp_path: Path) -> None:
    """A line that is not JSON is reported by the file reader; the spans around it convert."""
    tool = {"type": "function", "name": "t", "input": "{}", "output": "o"}
    path = tmp_path / "spans.jsonl"
    path.write_text(f"{json.dumps(head())}\n{{not json\n{json.dumps(span(1, tool))}\n")
    results = list(convert_file(path, source="openai-agents"))
    assert [type(r).__name__ for r in results] == ["Problem", "TraceItem"]
    assert str(results[0]).startswith(f"{path}:2:")


def test_auto_recognises_exports_and_batches_but_not_other_sources() -> None:
    """The first record decides; other sources' shapes are not taken for Agents exports."""
    assert oa_files.recognises(head())
    assert oa_files.recognises({"object": "trace.span", "span_data": {"type": "agent"}})
    assert oa_files.recognises({"data": [head()]})
    assert not oa_files.recognises({"resourceSpans": []})
    assert not oa_files.recognises({"run_type": "chain", "name": "x", "child_runs": []})
    assert not oa_files.recognises({"kind": "request", "parts": [{"part_kind": "user-prompt"}]})
    assert not oa_files.recognises({"step_number": 1, "model_output": "x", "tool_calls": []})
    assert not oa_files.recognises({"object": "response", "id": "resp_1"})
    assert not oa_files.recognises({"data": []})
    assert not oa_files.recognises([head()])


def test_convert_spans_takes_export_dicts_in_memory() -> None:
    """The public reader of exported objects, with domain and confidence keywords."""
    tool = {"type": "function", "name": "t", "input": "{}", "output": "o"}
    converted = oa.convert_spans(head(), [span(1, tool)], domain="code", confidence=0.9)
    assert converted.trace.metadata.task_domain == "code"
    assert converted.trace.outcome.confidence == 0.9
    with pytest.raises(ConversionError):
        oa.convert_spans(None, [])


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(6)))
def test_the_order_of_objects_in_the_file_does_not_matter(order: list[int]) -> None:
    """Shuffled records (spans export as they end, in any order) give the same trace."""
    request = {
        "type": "response",
        "response_id": "r1",
        "output": [
            {"type": "function_call", "name": "get", "arguments": '{"id": 1}', "call_id": "c1"},
            {"type": "function_call", "name": "get", "arguments": '{"id": 2}', "call_id": "c2"},
        ],
    }
    failed = {"message": "Error running tool", "data": {"tool_name": "get", "error": "timeout"}}
    values = [
        head(),
        agent(),
        span(2, request, parent=1, at=1.0),
        span(3, {"type": "function", "name": "get", "input": '{"id": 1}'}, at=2.0, error=failed),
        span(4, {"type": "function", "name": "get", "input": '{"id": 2}', "output": "b"}, at=3.0),
        span(5, {"type": "handoff", "from_agent": "triage", "to_agent": "x"}, at=4.0),
    ]
    expected = only_trace(values).trace.model_dump(mode="json")
    shuffled = only_trace([values[i] for i in order]).trace.model_dump(mode="json")
    assert shuffled == expected
    # The second get was asked for with the failed one: the handoff after them recovers.
    assert [step["type"] for step in expected["steps"]] == [
        "tool_call",
        "observation",
        "tool_call",
        "observation",
        "error_recovery",
    ]


GUARDRAIL = Path(__file__).parents[1] / "conformance" / "files" / "openai-agents"


def test_a_tripped_input_guardrail_gives_no_made_up_objective_and_says_so() -> None:
    """The SDK's own export of a run its input guardrail stopped (the docs' math_guardrail,
    blocking): no span holds the user's words and the workflow name is the SDK's default, so
    the objective is the placeholder the invariants flag, and a warning says why."""
    (item,) = [
        item
        for item in convert_file(GUARDRAIL / "input_guardrail_tripwire.jsonl")
        if isinstance(item, TraceItem)
    ]
    assert item.trace.task.objective == "openai-agents run"
    assert not item.trace.metadata.success
    assert item.trace.outcome.result_summary == "guardrail math_guardrail tripped"
    (warning,) = [text for text in item.warnings if "user's input" in text]
    assert "guardrail math_guardrail tripped before any model call" in warning


def test_an_output_guardrail_that_rejected_the_answer_leaves_no_answer() -> None:
    """The SDK's export of a run whose output guardrail tripped on the model's answer: that
    text is a thought, the tripwire (the agent span's error) the last step and the outcome.
    Before, the rejected text was the answer, told after the failure."""
    (item,) = [
        item
        for item in convert_file(GUARDRAIL / "langsmith_sdk_output_guardrail.jsonl")
        if isinstance(item, TraceItem)
    ]
    assert [step.type for step in item.trace.steps] == [
        "tool_call",
        "observation",
        "thought",
        "observation",
    ]
    assert item.trace.steps[-1].content == "Guardrail tripwire triggered"
    assert item.trace.outcome.result_summary == "Guardrail tripwire triggered"
    assert not item.trace.metadata.success


@pytest.mark.parametrize("to", ["messages", "atif"])
def test_a_run_that_is_only_its_tripped_guardrail_reads_back_from_kp_convert(
    to: str, tmp_path: Path
) -> None:
    """Rows in, rows out: the guardrail run written by ``kp convert --to messages`` or ``--to
    atif`` reads back as the same trace (its placeholder objective, its one error observation,
    failed), not as a file with no step."""
    from click.testing import CliRunner

    from knowledgepulse.cli.main import cli

    source = GUARDRAIL / "input_guardrail_tripwire.jsonl"
    (item,) = [item for item in convert_file(source) if isinstance(item, TraceItem)]
    out = tmp_path / f"out.{to}.jsonl"
    result = CliRunner().invoke(cli, ["convert", str(source), "--to", to, "-o", str(out)])
    assert result.exit_code == 0, result.output
    (back,) = [item for item in convert_file(out) if isinstance(item, TraceItem)]
    assert back.trace.task.objective == item.trace.task.objective
    assert [(step.type, step.content) for step in back.trace.steps] == [
        (step.type, step.content) for step in item.trace.steps
    ]
    assert back.trace.metadata.success is item.trace.metadata.success is False


def test_a_call_beside_a_failed_one_in_a_textless_turn_is_no_recovery() -> None:
    """Exported Responses-API spans keep no output: the function spans under one turn span are
    that turn's calls, so London, asked for with the failing Londos, is a plain tool_call."""
    (item,) = [
        item
        for item in convert_file(GUARDRAIL / "responses_model_retry.jsonl")
        if isinstance(item, TraceItem)
    ]
    steps = [(step.type, step.input) for step in item.trace.steps]
    assert steps[0] == ("tool_call", {"loc_name": "Londos"})
    assert steps[1][0] == "observation"
    assert steps[2] == ("tool_call", {"loc_name": "London"})
    assert not any(step.type == "error_recovery" for step in item.trace.steps)


def test_a_workflow_name_the_user_gave_is_still_the_objective_of_last_resort() -> None:
    """Only the SDK's default workflow name is dropped: a name the user chose stands in."""
    spans = [
        line
        for line in map(
            json.loads, (GUARDRAIL / "input_guardrail_tripwire.jsonl").read_text().split("\n")[:-1]
        )
        if line["object"] == "trace.span"
    ]
    head = {"object": "trace", "id": spans[0]["trace_id"], "workflow_name": "Homework triage"}
    assert oa.convert_spans(head, spans).trace.task.objective == "Homework triage"


def test_a_failed_mcp_call_and_an_unlisted_mcp_server_are_errors() -> None:
    """openai-python's types: an ``mcp_call`` may end ``status: failed`` with no ``error``, or
    with an ``McpToolCallError`` object; an ``mcp_list_tools`` ``error`` says the server could
    not list its tools."""
    listed = {
        "type": "mcp_list_tools",
        "id": "mcpl_1",
        "server_label": "files",
        "tools": [],
        "error": "Http 424",
    }
    failed: dict[str, Any] = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "read_file",
        "arguments": '{"path": "a"}',
        "server_label": "files",
        "status": "failed",
        "error": {"type": "http_error", "code": 502, "message": "Bad Gateway"},
    }
    retried = {**failed, "id": "mcp_2", "status": "completed", "error": None, "output": "text"}
    response = {"type": "response", "response_id": "r", "output": [listed, failed, retried]}
    converted = only_trace([head(), agent(), span(2, response, at=1.0)])
    # before: the listing's error made no step, and the failed call's object error was lost
    assert [(s.type, s.tool.name if s.tool else None) for s in converted.trace.steps] == [
        ("observation", None),
        ("error_recovery", "read_file"),
        ("observation", "read_file"),
        ("error_recovery", "read_file"),
        ("observation", "read_file"),
    ]
    assert [s.content for s in converted.trace.steps[::2]] == [
        "files: Http 424",
        "Bad Gateway",
        "text",
    ]
    failed["error"] = None  # no error to say why: its status says it failed all the same
    converted = only_trace([head(), agent(), span(2, {**response, "output": [failed]}, at=1.0)])
    assert [s.type for s in converted.trace.steps] == ["tool_call", "observation"]
    assert converted.trace.steps[1].content == "read_file failed"


@pytest.mark.parametrize(
    ("model_input", "asked"),
    [
        ("Weather?", "Weather?"),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "Hi"),
        (
            [
                {"role": "user", "content": "Capital of France?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
                {"role": "tool", "tool_call_id": "c", "content": "Paris"},
                {"role": "assistant", "content": "Paris."},
                {"role": "user", "content": "And of England?"},
            ],
            "And of England?",
        ),
        (
            [
                {"role": "user", "content": "Find it."},
                {"type": "function_call", "name": "search", "arguments": "{}", "call_id": "c"},
                {"type": "function_call_output", "call_id": "c", "output": "found"},
            ],
            "Find it.",
        ),
        ([{"role": "user", "content": "One"}, {"role": "user", "content": "Two"}], "One"),
    ],
)
def test_the_objective_is_the_newest_turns_request(model_input: Any, asked: str) -> None:
    """A run given the conversation so far (``to_input_list()``) and the next question was
    asked that question: the conversation's first one was every later run's objective."""
    assert user_text(model_input) == asked


def test_the_system_message_a_generation_was_sent_is_the_runs_system_prompt() -> None:
    """The Chat Completions model sends the agent's instructions as the input's system message
    (the corpus's replayed run): the trace's system prompt, which opens its training row. Before,
    it was dropped."""
    (item,) = [
        item
        for item in convert_file(GUARDRAIL / "openai_instructions_with_tool_calls.jsonl")
        if isinstance(item, TraceItem)
    ]
    assert item.system == "You are a helpful assistant."
    lines = (GUARDRAIL / "two_runs_one_conversation.jsonl").read_text().splitlines()
    spans = [json.loads(line) for line in lines]
    assert not any(  # the file's runs were given no instructions: none made up
        message.get("role") == "system"
        for span in spans
        for message in span.get("span_data", {}).get("input") or []
        if isinstance(message, dict)
    )
    assert all(
        item.system is None
        for item in convert_file(GUARDRAIL / "two_runs_one_conversation.jsonl")
        if isinstance(item, TraceItem)
    )
