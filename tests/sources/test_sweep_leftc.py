"""Reading defects the lead left open (leftovers C), each fixed by its format's own rule.

* An MCP tool's ``observation`` names the server its result came from, as its ``tool_call``
  does (the schema's ``Tool``, name and ``mcp_server``, is the same on every step type).
* Bedrock AgentCore's runtime log group holds the application's own JSON log lines beside
  ADOT's log records: by design, so an export of the group keeps them; they are left out with
  one warning for the file, not refused line by line.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse.records import Problem
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

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
