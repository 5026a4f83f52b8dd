"""OpenAI Responses items of the newer tools: MCP approvals, apply_patch, the shell tool.

The files are the conformance corpus's real ones (tests/conformance/files/openai-responses,
origins and licences in SOURCES.md there): the Responses API's replies that vercel/ai's tests
replay. A variant changes a real reply to reach a rule it does not show.
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
APPROVAL = FILES / "vercel_ai_openai_mcp_tool_approval_1.json"
"""``mcp_list_tools``, reasoning, an ``mcp_approval_request`` of ``create_short_url``."""
PATCH = FILES / "vercel_ai_openai_apply_patch_tool_1.json"
"""One ``apply_patch_call`` whose ``operation`` creates a file."""
SHELL = FILES / "vercel_ai_openai_shell_container_1.json"
"""A ``shell_call``, its ``shell_call_output`` (exit 0), the answer."""


def reply(path: Path) -> dict[str, Any]:
    found = json.loads(path.read_text())
    assert isinstance(found, dict)
    return found


def trace_of(row: dict[str, Any]) -> ReasoningTrace:
    items = list(sources.convert([row], source="openai-responses"))
    # a reply alone has no user's words: the placeholder objective's warning comes with it
    assert [i for i in items if isinstance(i, Problem) and not i.warning] == []
    (item,) = (i for i in items if isinstance(i, TraceItem))
    return item.trace


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_an_approval_request_is_the_models_call_of_its_tool() -> None:
    # before: the request was dropped and the reply "held no step", no trace at all
    # (the server's ``mcp_list_tools`` before it is no call of the model's: no step)
    trace = trace_of(reply(APPROVAL))
    assert kinds(trace) == [("tool_call", "create_short_url")]
    assert trace.steps[0].input is not None
    assert trace.steps[0].input["url"] == "https://ai-sdk.dev/"


def _said(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text}
    return {"type": "message", "role": "assistant", "content": [part]}


def _approved_then(answer: dict[str, Any]) -> dict[str, Any]:
    """The approval request, the user's answer to it, and what came of it."""
    request = next(i for i in reply(APPROVAL)["output"] if i["type"] == "mcp_approval_request")
    return {
        "input": [
            {"role": "user", "content": "Shorten https://ai-sdk.dev/"},
            request,
            answer,
        ]
    }


def test_a_refused_approval_is_the_calls_failure_and_an_approved_runs_result_no_second_call() -> (
    None
):
    request_id = next(
        i["id"] for i in reply(APPROVAL)["output"] if i["type"] == "mcp_approval_request"
    )
    refused = {"type": "mcp_approval_response", "approval_request_id": request_id, "approve": False}
    row = _approved_then(refused)
    row["input"].append(_said("It was not approved."))
    trace = trace_of(row)
    # the refusal is the call's failure: the model's reply after it is the recovery
    assert kinds(trace) == [
        ("tool_call", "create_short_url"),
        ("observation", "create_short_url"),
        ("error_recovery", None),
    ]
    assert trace.steps[1].content == "not approved"
    run = {
        "type": "mcp_call",
        "id": "mcp_1",
        "approval_request_id": request_id,
        "name": "create_short_url",
        "arguments": "{}",
        "output": "https://zip1.io/abc",
        "server_label": "zip1",
    }
    approved = {"type": "mcp_approval_response", "approval_request_id": request_id, "approve": True}
    row = _approved_then(approved)
    row["input"].append(run)
    trace = trace_of(row)
    assert kinds(trace) == [("tool_call", "create_short_url"), ("observation", "create_short_url")]
    assert trace.steps[1].content == "https://zip1.io/abc"


def test_an_apply_patch_call_keeps_its_operation_and_a_failed_output_is_an_error() -> None:
    # before: the call's input was empty, the patch lost
    trace = trace_of(reply(PATCH))
    assert kinds(trace) == [("tool_call", "apply_patch")]
    assert trace.steps[0].input is not None
    assert trace.steps[0].input["path"] == "shopping-checklist.md"
    row = copy.deepcopy(reply(PATCH))
    call = row["output"][0]
    output = {"type": "apply_patch_call_output", "call_id": call["call_id"], "status": "failed"}
    row = {"input": [{"role": "user", "content": "Make a list"}, call, output, _said("Failed.")]}
    trace = trace_of(row)
    assert kinds(trace)[1:] == [("observation", "apply_patch"), ("error_recovery", None)]


def test_a_shell_output_that_exited_non_zero_is_an_error_and_exit_zero_is_none() -> None:
    trace = trace_of(reply(SHELL))
    assert kinds(trace) == [
        ("tool_call", "shell"),
        ("observation", "shell"),
        ("thought", None),
    ]
    row = copy.deepcopy(reply(SHELL))
    for item in row["output"]:
        if item["type"] == "shell_call_output":
            item["output"][0]["outcome"] = {"type": "exit", "exit_code": 127}
    trace = trace_of(row)
    assert kinds(trace)[2] == ("error_recovery", None)


def test_a_shell_output_is_what_the_commands_printed_stdout_then_stderr() -> None:
    # before: the observation was the chunks' JSON ('[{"outcome": {...}, "stderr": "", ...}]')
    trace = trace_of(reply(SHELL))
    said = "Hello from container!\nLinux container-host 6.1.0 #1 SMP x86_64 GNU/Linux"
    assert trace.steps[1].content == said
    row = copy.deepcopy(reply(SHELL))
    for item in row["output"]:
        if item["type"] == "shell_call_output":
            chunk = item["output"][0]
            item["output"] = [
                {**chunk, "stdout": "", "stderr": "Error: no such file\n"},
                {**chunk, "stdout": "done\n", "stderr": ""},
            ]
    trace = trace_of(row)
    # every command exited 0: "Error" in what it printed is no failure of the call
    assert kinds(trace)[1] == ("observation", "shell")
    assert trace.steps[1].content == "Error: no such file\ndone"
    row["output"][1]["output"][1]["outcome"] = {"type": "timeout"}
    trace = trace_of(row)
    assert kinds(trace)[2] == ("error_recovery", None)
    assert trace.steps[1].content == "Error: no such file\ndone"
