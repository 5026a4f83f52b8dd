"""OpenAI Responses hosted calls that failed, and an MCP server whose tools could not be listed.

openai-python's types give the web search, file search, code interpreter, image generator and
MCP calls a ``status`` that may be ``failed``, often with no ``error`` to say why; an
``mcp_call``'s ``error`` is text or (``McpToolCallError``) an object; an ``mcp_list_tools``'s
``error`` is "Error message if the server could not list tools". A variant changes the
conformance corpus's real replies (origins and licences in tests/conformance/SOURCES.md) to
reach each rule.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.trace import ReasoningTrace, TraceItem

FILES = Path(__file__).parents[1] / "conformance" / "files" / "openai-responses"
SEARCH = FILES / "test_openai_responses_model_web_search_tool_with_allowed_domains.jsonl"
"""Four ``web_search_call`` items, then the answer ``14195730``."""
MCP = FILES / "vercel_ai_openai_mcp_tool_1.json"
"""An ``mcp_list_tools``, an ``mcp_call`` of ``web_search_exa``, the answer."""


def trace_of(row: dict[str, Any]) -> ReasoningTrace:
    items = list(sources.convert([row], source="openai-responses"))
    assert [i for i in items if isinstance(i, Problem) and not i.warning] == []
    (item,) = (i for i in items if isinstance(i, TraceItem))
    return item.trace


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def search_row() -> dict[str, Any]:
    row = json.loads(SEARCH.read_text().splitlines()[0])
    assert isinstance(row, dict)
    return row


def test_a_web_search_that_failed_with_no_error_is_an_error_and_the_next_search_recovers() -> None:
    row = search_row()
    assert kinds(trace_of(row))[:2] == [("tool_call", "web_search")] * 2
    first = next(i for i in row["input"] if i.get("type") == "web_search_call")
    first["status"] = "failed"
    trace = trace_of(row)
    # before: the failed search was a plain call, and the run went on as if it had not failed
    assert kinds(trace)[:3] == [
        ("tool_call", "web_search"),
        ("observation", "web_search"),
        ("error_recovery", "web_search"),
    ]
    assert trace.steps[1].content == "web_search failed"


def test_an_incomplete_or_completed_search_is_no_error() -> None:
    row = search_row()
    first = next(i for i in row["input"] if i.get("type") == "web_search_call")
    first["status"] = "incomplete"  # the response stopped before the call ended: no failure
    assert "error_recovery" not in [step.type for step in trace_of(row).steps]


def mcp_reply() -> dict[str, Any]:
    found = json.loads(MCP.read_text())
    assert isinstance(found, dict)
    return found


def test_an_mcp_call_that_failed_says_its_errors_message_not_its_json() -> None:
    reply = copy.deepcopy(mcp_reply())
    call = next(i for i in reply["output"] if i["type"] == "mcp_call")
    call.update(status="failed", output=None)
    call["error"] = {"type": "http_error", "code": 502, "message": "Bad Gateway"}
    trace = trace_of(reply)
    assert kinds(trace)[:2] == [("tool_call", "web_search_exa"), ("observation", "web_search_exa")]
    # before: the observation was the error object's JSON
    assert trace.steps[1].content == "Bad Gateway"
    assert trace.steps[2].type == "error_recovery"
    call["error"] = {
        "type": "mcp_tool_execution_error",
        "content": [{"type": "text", "text": "rate limited"}],
    }
    assert trace_of(reply).steps[1].content == "rate limited"
    call["error"] = None  # failed, and no error to say why: still its failure
    trace = trace_of(reply)
    assert trace.steps[1].content == "web_search_exa failed"
    assert trace.steps[2].type == "error_recovery"


def test_an_mcp_server_whose_tools_could_not_be_listed_is_an_error_and_a_listed_one_no_step() -> (
    None
):
    reply = copy.deepcopy(mcp_reply())
    assert kinds(trace_of(reply))[0] == ("tool_call", "web_search_exa")  # the list: no step
    listed = next(i for i in reply["output"] if i["type"] == "mcp_list_tools")
    listed.update(tools=[], error="Error retrieving tool list from MCP server: 'dmcp'. Http 424")
    trace = trace_of(reply)
    # before: no step, as a list that worked
    assert kinds(trace)[:2] == [("observation", None), ("error_recovery", "web_search_exa")]
    assert trace.steps[0].content == (
        "dmcp: Error retrieving tool list from MCP server: 'dmcp'. Http 424"
    )


def test_an_mcp_call_is_named_by_its_tool_and_keeps_its_server() -> None:
    # before: the server (``server_label``) was dropped; the Agents SDK's reader keeps it
    trace = trace_of(mcp_reply())
    call = trace.steps[0]
    assert call.tool is not None
    assert (call.tool.name, call.tool.mcp_server) == ("web_search_exa", "dmcp")
    hosted = trace_of(search_row()).steps[0].tool  # a hosted call: its tool as the request names it
    assert hosted is not None
    assert (hosted.name, hosted.mcp_server) == ("web_search", None)
