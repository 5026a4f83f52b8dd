"""Reading defects the lead left open (leftovers C), each fixed by its format's own rule.

* An MCP tool's ``observation`` names the server its result came from, as its ``tool_call``
  does (the schema's ``Tool``, name and ``mcp_server``, is the same on every step type).
* Phoenix's PXI ends a call the user refused to approve with an output, not an error: its
  ``approval`` marker (``{"decision": "rejected"}``), which Phoenix's server copies to the span
  as ``pxi.approval.decision``, says the call failed.
* An OTLP attribute whose value is no ``AnyValue`` (a bare ``"value": "search"``) is outside
  the encoding: not guessed at, but said, naming the attribute and the span.
* Bedrock AgentCore's runtime log group holds the application's own JSON log lines beside
  ADOT's log records: by design, so an export of the group keeps them; they are left out with
  one warning for the file, not refused line by line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

PXI = CORPUS / "otlp" / "phoenix_pxi_suggestion_mixed_annotation_config.json"
AGENTCORE = CORPUS / "otlp" / "agentcore_toolkit_strands_openai_cloudwatch.jsonl"
APP_LINE = {
    "timestamp": "2025-11-18T07:43:54.057Z",
    "level": "INFO",
    "message": "Invocation completed successfully (16.847s)",
    "logger": "bedrock_agentcore.app",
    "requestId": "d42556b3-d415-4d87-88c8-62d44370b561",
    "sessionId": "cfd84bec-fec8-47a5-8a28-73b9aa5ee6c6",
}


def test_an_mcp_tools_observation_names_its_server_as_its_call_does() -> None:
    builder = StepBuilder()
    builder.tool_request("search", {"q": "kp"}, call_id="c1", mcp_server="docs")
    builder.tool_result("search", output="found", call_id="c1", mcp_server="docs")
    builder.tool_result("local", output="ran", call_id="c2")
    steps = builder.steps()
    assert [(s["type"], s.get("tool")) for s in steps] == [
        ("tool_call", {"name": "search", "mcp_server": "docs"}),
        ("observation", {"name": "search", "mcp_server": "docs"}),
        ("tool_call", {"name": "local"}),
        ("observation", {"name": "local"}),  # no server named: none made up
    ]


def _items(path: Path) -> tuple[list[TraceItem], list[Problem]]:
    items = convert_file(path)
    traces = [item for item in items if isinstance(item, TraceItem)]
    return traces, [item for item in items if isinstance(item, Problem)]


def test_the_apps_own_log_lines_in_the_runtime_log_group_are_one_warning() -> None:
    """The corpus file keeps the toolkit fixture's two app lines where the fixture has them."""
    traces, problems = _items(AGENTCORE)
    assert len(traces) == 2
    assert [(p.warning, p.location.line) for p in problems] == [(True, 50)]
    assert "2 line(s) of the application's own log" in problems[0].message


def test_app_log_lines_change_nothing_the_spans_give(tmp_path: Path) -> None:
    lines = [
        line
        for line in AGENTCORE.read_text(encoding="utf-8").splitlines()
        if "level" not in json.loads(line)
    ]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with_app, _ = _items(AGENTCORE)
    without, problems = _items(bare)
    assert problems == []
    assert [t.trace.model_dump() for t in with_app] == [t.trace.model_dump() for t in without]


def test_a_line_with_a_traceid_is_never_taken_for_an_app_log_line(tmp_path: Path) -> None:
    """A broken record of the spans' own shapes is still refused, where it is."""
    broken = tmp_path / "broken.jsonl"
    lines = AGENTCORE.read_text(encoding="utf-8").splitlines()
    odd = json.dumps({**APP_LINE, "traceId": "x"})
    broken.write_text("\n".join([lines[0], odd]) + "\n", encoding="utf-8")
    _, problems = _items(broken)
    refused = [(p.location.line, p.warning) for p in problems if "not a span record" in p.message]
    assert refused == [(2, False)]
    assert not any("own log" in p.message for p in problems)


def _kinds(trace: TraceItem) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.trace.steps]


def test_a_call_the_user_refused_in_pxi_failed_and_the_next_action_recovers() -> None:
    traces, _ = _items(PXI)
    [trace] = traces
    kinds = _kinds(trace)
    refused = kinds.index(("observation", "update_annotation_config"))
    assert trace.trace.steps[refused].content == "redacted message"  # the output's message
    later = [kind for kind in kinds[refused + 1 :] if kind[0] != "thought"]
    assert later[0] == ("error_recovery", "ask_user")
    assert ("tool_call", "update_annotation_config") in later  # accepted the second time
    assert trace.trace.metadata.success is True  # the run went on and answered


def _pxi_turn(tmp_path: Path, output: dict[str, Any], attributes: dict[str, str]) -> Path:
    """One PXI turn in Phoenix's span JSON: the agent, a gated tool, the agent's reply."""

    def span(n: int, name: str, kind: str, parent: str | None, tags: dict[str, Any]) -> Any:
        return {
            "name": name,
            "context": {"trace_id": "t1", "span_id": f"s{n}"},
            "span_kind": kind,
            "parent_id": parent,
            "start_time": f"2026-07-24T12:00:0{n}+00:00",
            "end_time": f"2026-07-24T12:00:0{n + 1}+00:00",
            "status_code": "OK",
            "attributes": tags,
        }

    spans = [
        span(0, "pxi.turn", "AGENT", None, {"input.value": "make a dataset"}),
        span(1, "create_dataset", "TOOL", "s0", {"output.value": json.dumps(output), **attributes}),
        span(2, "claude", "LLM", "s0", {"output.value": "Nothing was written."}),
    ]
    path = tmp_path / "pxi.json"
    path.write_text(json.dumps(spans), encoding="utf-8")
    return path


def _call_failed(path: Path) -> bool:
    traces, _ = _items(path)
    [trace] = traces
    return any(step.type == "error_recovery" for step in trace.trace.steps)


def test_the_marker_in_the_output_alone_says_the_refusal(tmp_path: Path) -> None:
    """The marker in the tool's output, where the span has no attribute of it (an exporter
    of the browser's spans, not Phoenix's server)."""
    marked = {
        "status": "rejected",
        "message": "You rejected it.",
        "approval": {"decision": "rejected", "source": "user"},
    }
    assert _call_failed(_pxi_turn(tmp_path, marked, {}))


def test_an_accepted_call_and_a_bare_rejected_status_are_no_failure(tmp_path: Path) -> None:
    accepted = {
        "status": "accepted",
        "acceptedBy": "user",
        "approval": {"decision": "accepted", "source": "user"},
    }
    assert not _call_failed(_pxi_turn(tmp_path, accepted, {"pxi.approval.decision": "accepted"}))
    # A tool's status of "rejected" with no marker is a value (an order's, a claim's).
    assert not _call_failed(_pxi_turn(tmp_path, {"status": "rejected"}, {}))


def _otlp_tool_span(tmp_path: Path, attributes: list[dict[str, Any]]) -> Path:
    span = {
        "traceId": "0102030405060708090a0b0c0d0e0f10",
        "spanId": "0102030405060708",
        "name": "execute_tool search",
        "startTimeUnixNano": "1000000000",
        "endTimeUnixNano": "2000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.call.result", "value": {"stringValue": "found"}},
            *attributes,
        ],
        "events": [{"name": "note", "attributes": [{"key": "n", "value": 3}]}],
    }
    document = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}]}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_an_attribute_with_no_any_value_is_said_with_its_span(tmp_path: Path) -> None:
    bare = [{"key": "gen_ai.tool.name", "value": "search"}]
    traces, _ = _items(_otlp_tool_span(tmp_path, bare))
    [trace] = traces
    [warning] = [w for w in trace.warnings if "AnyValue" in w]
    assert warning.startswith("span 'execute_tool search' (0102030405060708): attribute(s) ")
    assert "gen_ai.tool.name, n hold no OTLP AnyValue" in warning  # the event's too


def test_an_empty_any_value_is_otlps_no_value_and_says_nothing(tmp_path: Path) -> None:
    tagged = [{"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}]
    empty = [{"key": "gen_ai.tool.description", "value": {}}]
    path = _otlp_tool_span(tmp_path, [*tagged, *empty])
    data = json.loads(path.read_text(encoding="utf-8"))
    data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["events"] = []
    path.write_text(json.dumps(data), encoding="utf-8")
    traces, _ = _items(path)
    [trace] = traces
    assert not [w for w in trace.warnings if "AnyValue" in w]
    assert trace.trace.steps[0].tool is not None
    assert trace.trace.steps[0].tool.name == "search"
