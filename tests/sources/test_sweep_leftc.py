"""Reading defects the lead left open (leftovers C), each fixed by its format's own rule.

* An MCP tool's ``observation`` names the server its result came from, as its ``tool_call``
  does (the schema's ``Tool``, name and ``mcp_server``, is the same on every step type).
"""

from __future__ import annotations

from knowledgepulse.sources._steps import StepBuilder


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
