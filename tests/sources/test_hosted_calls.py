"""One reading of OpenAI's hosted calls (and of MCP servers) in every reader that meets them.

The Responses rows, the Agents SDK (its response spans, its ``RunResult`` / ``RunState`` items)
and Codex rollouts carry the same Responses items; Anthropic's Messages carry MCP connector
calls. A hosted call is named as its tool is in the request's ``tools`` list (openai-python's
``types/responses/tool.py``) and by the Agents SDK's tool classes: ``web_search``, not the
item's type ``web_search_call``; an ``incomplete`` one (the response stopped before it ended)
is no failure; an MCP call keeps the server that has its tool. The calls are the conformance
corpus's real ones (origins and licences in tests/conformance/SOURCES.md), changed where a rule
needs a variant.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse import sources
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._hosted import tool_name
from knowledgepulse.sources.openai_agents import _files as oa_files
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file

FILES = Path(__file__).parents[1] / "conformance" / "files"
SEARCH = (
    FILES
    / "openai-responses"
    / "test_openai_responses_model_web_search_tool_with_allowed_domains.jsonl"
)
"""Four ``web_search_call`` items (status ``completed``), then the answer ``14195730``."""
CODEX = FILES / "codex" / "codemie_codex_tui_0.125.jsonl"
"""A Codex 0.125 rollout whose model searched the web (``web_search_call`` items)."""
APPROVAL = FILES / "openai-responses" / "vercel_ai_openai_mcp_tool_approval_1.json"
"""A Response whose ``mcp_approval_request`` asks to run ``create_short_url`` on ``zip1``."""
ANTHROPIC_MCP = FILES / "anthropic" / "test_anthropic_mcp_servers.jsonl"
"""Two ``mcp_tool_use`` calls of ``ask_question`` on the ``deepwiki`` server, with results."""
TRACE_ID = "trace_" + "0" * 31 + "1"


def only(items: list[Any]) -> ReasoningTrace:
    assert [i for i in items if isinstance(i, Problem) and not i.warning] == []
    (item,) = (i for i in items if isinstance(i, TraceItem))
    return item.trace


def responses_trace(row: dict[str, Any]) -> ReasoningTrace:
    return only(list(sources.convert([row], source="openai-responses")))


def agents_trace(output: list[dict[str, Any]]) -> ReasoningTrace:
    """An Agents SDK export whose one response span's output is ``output``."""
    objects: list[dict[str, Any]] = [
        {"object": "trace", "id": TRACE_ID, "workflow_name": "Agent workflow"},
        {
            "object": "trace.span",
            "id": "span_1",
            "trace_id": TRACE_ID,
            "parent_id": None,
            "started_at": "2025-01-01T00:00:00+00:00",
            "ended_at": "2025-01-01T00:00:05+00:00",
            "span_data": {"type": "agent", "name": "Assistant"},
            "error": None,
        },
        {
            "object": "trace.span",
            "id": "span_2",
            "trace_id": TRACE_ID,
            "parent_id": "span_1",
            "started_at": "2025-01-01T00:00:01+00:00",
            "ended_at": "2025-01-01T00:00:02+00:00",
            "span_data": {"type": "response", "response_id": "r", "output": output},
            "error": None,
        },
    ]
    records = [Record(Location("t.jsonl", n, n - 1), o) for n, o in enumerate(objects, 1)]
    (converted,) = oa_files.convert_records(records, TraceOptions())
    assert isinstance(converted, TraceItem), converted
    return converted.trace


def searches() -> list[dict[str, Any]]:
    row = json.loads(SEARCH.read_text().splitlines()[0])
    return [item for item in row["input"] if item.get("type") == "web_search_call"]


def tools(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name) for step in trace.steps if step.tool is not None]


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("web_search_call", "web_search"),
        ("file_search_call", "file_search"),
        ("code_interpreter_call", "code_interpreter"),
        ("image_generation_call", "image_generation"),
        ("computer_call", "computer"),
        ("local_shell_call", "local_shell"),
        ("shell_call", "shell"),
        ("apply_patch_call", "apply_patch"),
        ("tool_search_call", "tool_search"),
    ],
)
def test_a_call_item_names_its_tool_as_the_requests_tools_list_does(kind: str, name: str) -> None:
    assert tool_name({"type": kind}) == name


def test_a_named_call_keeps_its_name_and_no_call_names_none() -> None:
    for kind in ("function_call", "custom_tool_call", "mcp_call", "mcp_approval_request"):
        assert tool_name({"type": kind, "name": "lookup"}) == "lookup"
    others: list[dict[str, Any]] = [
        {"type": "message"},
        {"type": "_call"},
        {"type": {}},
        {"type": ["x_call"]},
    ]
    assert [tool_name(other) for other in others] == [None] * 4


def test_a_web_search_has_one_name_in_the_responses_the_agents_sdk_and_the_codex_readers() -> None:
    first = searches()[0]
    # before: web_search_call (Responses, Codex) but web_search (Agents SDK)
    assert tools(responses_trace({"input": [first]}))[0] == ("tool_call", "web_search")
    assert tools(agents_trace([first]))[0] == ("tool_call", "web_search")
    names = {name for _, name in tools(only(convert_file(CODEX)))}
    assert "web_search" in names
    assert "web_search_call" not in names


def test_an_incomplete_hosted_call_is_no_error_in_either_reader() -> None:
    first, second = copy.deepcopy(searches()[:2])
    first["status"] = "incomplete"  # the response stopped before the call ended
    # before: the Agents SDK's reader told it as failed (an error the next search recovered)
    for trace in (agents_trace([first, second]), responses_trace({"input": [first, second]})):
        assert "error_recovery" not in [step.type for step in trace.steps]
        assert "web_search incomplete" not in [step.content for step in trace.steps]
    first["status"] = "failed"  # a failure the format says: an error in both
    for trace in (agents_trace([first, second]), responses_trace({"input": [first, second]})):
        assert [step.type for step in trace.steps][:3] == [
            "tool_call",
            "observation",
            "error_recovery",
        ]
        assert trace.steps[1].content == "web_search failed"


def test_an_anthropic_mcp_call_keeps_its_server() -> None:
    trace = only(convert_file(ANTHROPIC_MCP))
    called = [step.tool for step in trace.steps if step.tool and step.type == "tool_call"]
    called = [tool for tool in called if tool.name != "respond"]  # the user answered
    assert [tool.name for tool in called] == ["ask_question"] * 2
    # before: None (``server_name`` dropped), where the OpenAI readers keep ``server_label``
    assert [tool.mcp_server for tool in called] == ["deepwiki"] * 2


def test_an_anthropic_mcp_result_is_the_text_its_blocks_gave_the_model() -> None:
    row = json.loads(ANTHROPIC_MCP.read_text().splitlines()[0])
    results = [
        block
        for message in row["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "mcp_tool_result"
    ]
    texts = ["\n".join(part["text"] for part in result["content"]) for result in results]
    trace = only(convert_file(ANTHROPIC_MCP))
    seen = [
        step.content
        for step in trace.steps
        if step.type == "observation" and step.tool and step.tool.name == "ask_question"
    ]
    # before: the JSON of the blocks (`[{"citations": null, "text": ...}]`), not the text
    assert seen == texts
    assert len(texts) == 2


def test_a_refused_mcp_approval_request_keeps_its_server() -> None:
    reply = json.loads(APPROVAL.read_text())
    request = next(i for i in reply["output"] if i["type"] == "mcp_approval_request")
    refused = {"type": "mcp_approval_response", "approval_request_id": request["id"]}
    trace = responses_trace({"input": [*reply["output"], {**refused, "approve": False}]})
    assert [(step.type, step.content) for step in trace.steps][1] == (
        "observation",
        "not approved",
    )
    call = trace.steps[0].tool
    assert call is not None
    # before: None, the server of a refused call dropped (an observation names only the tool)
    assert (call.name, call.mcp_server) == ("create_short_url", "zip1")


def test_a_hosted_call_in_a_langsmith_agents_sdk_run_is_named_as_the_other_readers_name_it(
    tmp_path: Path,
) -> None:
    """LangSmith's Agents SDK processor keeps a model call's ``{"output": [items]}`` as the API
    sent them: a web search beside the handoff is a call of ``web_search``, as in every reader
    of Responses items (the SDK runs no tool for it); one that failed is an error."""
    batches = json.loads((FILES / "langsmith" / "openai_agents_handoff.json").read_text())
    search = searches()[0]
    for batch in batches:
        for run in (*batch.get("post", []), *batch.get("patch", [])):
            output = (run.get("outputs") or {}).get("output")
            if run["run_type"] == "llm" and output and output[0]["type"] == "function_call":
                output.insert(0, search)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(batches))
    trace = only(list(sources.read(path, source="langsmith")))
    # before: the output list held an item the reader did not know: neither call was read
    assert tools(trace) == [("tool_call", "web_search"), ("tool_call", "transfer_to_handoff_agent")]
    assert trace.outcome.result_summary == "2 + 2 = 4"
    search["status"] = "failed"
    path.write_text(json.dumps(batches))
    trace = only(list(sources.read(path, source="langsmith")))
    assert tools(trace)[:2] == [("tool_call", "web_search"), ("observation", "web_search")]
    assert trace.steps[1].content == "web_search failed"
    assert trace.steps[2].type == "error_recovery"  # the handoff after it


def listed_tools() -> dict[str, Any]:
    """The corpus's real ``mcp_list_tools`` item: the tools the ``dmcp`` server offers."""
    response = json.loads(
        (FILES / "openai-responses" / "vercel_ai_openai_mcp_tool_1.json").read_text()
    )
    (item,) = (i for i in response["output"] if i["type"] == "mcp_list_tools")
    return dict(item)


def test_an_mcp_tool_list_in_a_langsmith_agents_sdk_run_is_no_step(tmp_path: Path) -> None:
    """An ``mcp_list_tools`` item (the API fetching an MCP server's tools) is no call of the
    model's, as in the Responses reader, and leaves the items beside it read; its ``error`` (the
    server could not list them) is an error of the run's."""
    batches = json.loads((FILES / "langsmith" / "openai_agents_handoff.json").read_text())
    listed = listed_tools()
    for batch in batches:
        for run in (*batch.get("post", []), *batch.get("patch", [])):
            output = (run.get("outputs") or {}).get("output")
            if run["run_type"] == "llm" and output and output[0]["type"] == "function_call":
                output.insert(0, listed)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(batches))
    trace = only(list(sources.read(path, source="langsmith")))
    # before: the list held an item the reader did not know: the handoff call was not read
    assert tools(trace) == [("tool_call", "transfer_to_handoff_agent")]
    assert trace.outcome.result_summary == "2 + 2 = 4"
    listed["error"] = "Error retrieving tool list from MCP server: 'dmcp'. Http status code: 424"
    path.write_text(json.dumps(batches))
    trace = only(list(sources.read(path, source="langsmith")))
    errors = [step for step in trace.steps if step.type == "observation" and step.tool is None]
    assert [step.content for step in errors] == [f"dmcp: {listed['error']}"]


MLFLOW_RESPONSES = FILES / "mlflow" / "openai_responses_parallel_tool_error.json"
"""``client.responses.create`` traced by ``mlflow.openai.autolog()``: two ``get_location`` calls,
the first failing, then the answer."""


def mlflow_with_hosted(tmp_path: Path, hosted: list[dict[str, Any]]) -> Path:
    """The MLflow trace with ``hosted`` calls before the first response's function calls."""
    document = json.loads(MLFLOW_RESPONSES.read_text())
    span = next(s for s in document["data"]["spans"] if s["name"] == "Responses")
    outputs = json.loads(span["attributes"]["mlflow.spanOutputs"])
    outputs["output"][:0] = hosted
    span["attributes"]["mlflow.spanOutputs"] = json.dumps(outputs)
    path = tmp_path / MLFLOW_RESPONSES.name
    path.write_text(json.dumps(document))
    return path


def test_a_hosted_call_in_an_mlflow_response_is_a_call_with_its_own_result(
    tmp_path: Path,
) -> None:
    """A response's output (``mlflow.openai.autolog()``, a ``ResponsesAgent``'s) holds the calls
    the API ran itself: each a call named as every reader of Responses items names it, with the
    result it carries (an MCP call's ``output``); a failed one (``status: failed``, an MCP
    call's ``error``) is an error, an ``incomplete`` one none."""
    response = json.loads(
        (FILES / "openai-responses" / "vercel_ai_openai_mcp_tool_1.json").read_text()
    )
    (mcp,) = (i for i in response["output"] if i["type"] == "mcp_call")
    search = searches()[0]
    path = mlflow_with_hosted(tmp_path, [search, mcp])
    trace = only(convert_file(path, source="mlflow"))
    # before: both dropped, the two get_location calls the trace's first steps
    assert tools(trace)[:3] == [
        ("tool_call", "web_search"),
        ("tool_call", "web_search_exa"),
        ("observation", "web_search_exa"),
    ]
    assert (trace.steps[2].content or "").startswith(mcp["output"][:200])  # kept, clipped
    failed = {**search, "status": "failed"}
    refused = {
        **mcp,
        "status": "failed",
        "error": {"type": "mcp_tool_execution_error", "message": "quota"},
    }
    trace = only(convert_file(mlflow_with_hosted(tmp_path, [failed, refused]), source="mlflow"))
    observed = [
        (s.tool.name, s.content) for s in trace.steps[:4] if s.type == "observation" and s.tool
    ]
    assert observed == [("web_search", "web_search failed"), ("web_search_exa", "quota")]
    incomplete = {**search, "status": "incomplete"}
    trace = only(convert_file(mlflow_with_hosted(tmp_path, [incomplete]), source="mlflow"))
    assert tools(trace)[:2] == [("tool_call", "web_search"), ("tool_call", "get_location")]


PENDING = FILES / "openai-agents" / "run_state_resume_v1_13_pending_tool_approval.json"
"""A saved ``RunState`` (SDK 1.13) whose run stopped for a function tool's approval."""


def run_state_with(tmp_path: Path, items: list[dict[str, Any]]) -> ReasoningTrace:
    """The saved state with ``items`` as its run items, ended (no next step, no interruption)."""
    state = json.loads(PENDING.read_text())
    state["generated_items"] = items
    state["current_step"] = {"type": "next_step_final_output", "output": "done"}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    converted = [i for i in sources.read(path, source="openai-agents") if isinstance(i, TraceItem)]
    return converted[0].trace


def test_an_agents_sdk_hosted_mcp_approval_is_read_as_the_responses_reader_reads_it(
    tmp_path: Path,
) -> None:
    """A ``RunResult``'s (a ``RunState``'s) ``mcp_approval_request_item`` is the model's call
    of the MCP tool with its server; an ``mcp_approval_response_item`` refusing it that call's
    failure; the ``mcp_call`` that runs an approved one is its result, not a second call."""
    reply = json.loads(APPROVAL.read_text())
    request = next(i for i in reply["output"] if i["type"] == "mcp_approval_request")
    agent = {"name": "compat-agent"}
    asked = {"type": "mcp_approval_request_item", "raw_item": request, "agent": agent}
    answer = {"type": "mcp_approval_response", "approval_request_id": request["id"]}
    refused = {"type": "mcp_approval_response_item", "agent": agent}
    refused["raw_item"] = {**answer, "approve": False, "reason": "not now"}
    trace = run_state_with(tmp_path, [asked, refused])
    # before: neither item read, no step
    assert tools(trace) == [("tool_call", "create_short_url"), ("observation", "create_short_url")]
    call = trace.steps[0].tool
    assert call is not None
    assert call.mcp_server == "zip1"
    assert trace.steps[1].content == "not approved: not now"
    approved = {**refused, "raw_item": {**answer, "approve": True}}
    ran = {
        "type": "mcp_call",
        "id": "mcp_1",
        "approval_request_id": request["id"],
        "name": request["name"],
        "arguments": request["arguments"],
        "server_label": "zip1",
        "output": "https://zip1.io/abc",
        "status": "completed",
    }
    ran_item = {"type": "tool_call_item", "raw_item": ran, "agent": agent}
    trace = run_state_with(tmp_path, [asked, approved, ran_item])
    assert tools(trace) == [("tool_call", "create_short_url"), ("observation", "create_short_url")]
    assert trace.steps[1].content == "https://zip1.io/abc"


def hosted_items(name: str, kind: str) -> list[dict[str, Any]]:
    """The corpus's real ``kind`` items of a Responses row file, in the order they came."""
    lines = (FILES / "openai-responses" / name).read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [item for row in rows for item in row["input"] if item.get("type") == kind]


def test_an_agents_sdk_hosted_result_is_read_as_the_responses_reader_reads_it() -> None:
    """A response span's code interpreter call is observed by what the code printed (its
    ``outputs``' logs), an image generator's by the image it made said by its type: the one
    reading of a hosted call's result (``_hosted.hosted_result``) every reader of Responses
    items shares, not the outputs' JSON nor nothing."""
    ran = "pydantic_ai_responses_code_execution_return_image.jsonl"
    printed = hosted_items(ran, "code_interpreter_call")[-1]  # the second run: it printed a warning
    drew = "pydantic_ai_responses_image_generation_jpeg.jsonl"
    (drawn,) = hosted_items(drew, "image_generation_call")
    trace = agents_trace([printed, drawn])
    observed = [(s.tool.name, s.content) for s in trace.steps if s.type == "observation" and s.tool]
    logs = printed["outputs"][0]["logs"]
    # before: the outputs' JSON ("[{'logs': ...") and no observation of the image at all
    assert [name for name, _ in observed] == ["code_interpreter", "image_generation"]
    assert (observed[0][1] or "").startswith(logs.rstrip("\n")[:100])
    assert "'logs'" not in (observed[0][1] or "")
    assert observed[1][1] == "<image/jpeg>"
    assert responses_trace({"input": [printed, drawn]}).steps[1].content == observed[0][1]


def mlflow_with_approval(
    tmp_path: Path, answer: dict[str, Any], ran: list[dict[str, Any]]
) -> ReasoningTrace:
    """The MLflow trace whose first response asks for the corpus's real MCP approval (its
    ``mcp_list_tools``, ``mcp_approval_request``), the next request sending ``answer`` back
    (after the history, the request among it) and the next response starting with ``ran``."""
    document = json.loads(MLFLOW_RESPONSES.read_text())
    first, second = (s for s in document["data"]["spans"] if s["name"] == "Responses")
    asked = [i for i in json.loads(APPROVAL.read_text())["output"] if i["type"] != "reasoning"]
    outputs = json.loads(first["attributes"]["mlflow.spanOutputs"])
    outputs["output"][:0] = asked
    first["attributes"]["mlflow.spanOutputs"] = json.dumps(outputs)
    inputs = json.loads(second["attributes"]["mlflow.spanInputs"])
    inputs["input"][1:1] = asked
    inputs["input"].append(answer)
    second["attributes"]["mlflow.spanInputs"] = json.dumps(inputs)
    outputs = json.loads(second["attributes"]["mlflow.spanOutputs"])
    outputs["output"][:0] = ran
    second["attributes"]["mlflow.spanOutputs"] = json.dumps(outputs)
    path = tmp_path / MLFLOW_RESPONSES.name
    path.write_text(json.dumps(document))
    return only(convert_file(path, source="mlflow"))


def test_an_mcp_approval_in_an_mlflow_response_is_read_as_the_responses_reader_reads_it(
    tmp_path: Path,
) -> None:
    """An ``mcp_approval_request`` in a response's output is the model's call of the MCP tool,
    with its server; the next request's ``mcp_approval_response`` refusing it that call's
    failure; the ``mcp_call`` that runs an approved one (its ``approval_request_id``) its
    result, not a second call: as in Responses rows and the Agents SDK's items."""
    request = next(i for i in json.loads(APPROVAL.read_text())["output"] if "name" in i)
    answer = {"type": "mcp_approval_response", "approval_request_id": request["id"]}
    refused = {**answer, "approve": False, "reason": "not now"}
    trace = mlflow_with_approval(tmp_path, refused, [])
    called = [step for step in trace.steps if step.type == "tool_call" and step.tool]
    # before: the request and its refusal dropped, no call of create_short_url
    tool = called[0].tool
    assert tool is not None
    assert (tool.name, tool.mcp_server) == ("create_short_url", "zip1")
    assert called[0].input == json.loads(request["arguments"])
    refusal = [s for s in trace.steps if s.tool and s.tool.name == "create_short_url"][1:]
    assert [(s.type, s.content) for s in refusal] == [("observation", "not approved: not now")]
    run = {
        "type": "mcp_call",
        "id": "mcp_1",
        "approval_request_id": request["id"],
        "name": request["name"],
        "arguments": request["arguments"],
        "server_label": "zip1",
        "output": "https://zip1.io/abc",
        "status": "completed",
    }
    trace = mlflow_with_approval(tmp_path, {**answer, "approve": True}, [run])
    # before: the request dropped, the run a call of its own
    short = [(s.type, s.content) for s in trace.steps if s.tool and s.tool.name == run["name"]]
    assert short[0][0] == "tool_call"
    assert short[1:] == [("observation", "https://zip1.io/abc")]
    assert "error_recovery" not in [s.type for s in trace.steps[:2]]


def test_a_hosted_result_is_its_results_when_its_output_is_null() -> None:
    """A Parquet column's struct gives every Responses item every key: a file search's
    ``results`` come with the ``output`` of null that the MCP call's key leaves, and are its
    result all the same, in every reader (``_hosted.hosted_result``)."""
    search = copy.deepcopy(searches()[0])
    found = [{"file_id": "file_1", "filename": "notes.txt", "score": 0.9, "text": "14195730"}]
    search.update(type="file_search_call", queries=["the number"], results=found, output=None)
    for trace in (responses_trace({"input": [search]}), agents_trace([search])):
        observed = [s.content for s in trace.steps if s.type == "observation"]
        # before: no observation (the null ``output`` taken for the result)
        assert len(observed) == 1
        assert "14195730" in (observed[0] or "")


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("test_anthropic_web_search_tool.jsonl", {"type", "title", "url", "page_age"}),
        ("test_anthropic_advisor_tool_redacted.jsonl", {"type", "stop_reason"}),
    ],
)
def test_a_server_results_ciphertext_is_left_out_of_its_observation(
    name: str, kept: set[str]
) -> None:
    """Anthropic's server results hold what only its API can read: a page's
    ``encrypted_content``, a redacted advisor's reply. The observation keeps the rest (the
    pages' titles and addresses): before, it was kilobytes of ciphertext, in the trace, its
    novelty and its training row."""
    raw = (FILES / "anthropic" / name).read_text()
    trace = only(convert_file(FILES / "anthropic" / name))
    observed = [step.content or "" for step in trace.steps if step.type == "observation"]
    results = [json.loads(text) for text in observed if text.startswith(("[", "{"))]
    assert results
    assert '"encrypted_content"' in raw
    blocks = [
        block for found in results for block in (found if isinstance(found, list) else [found])
    ]
    assert {key for block in blocks for key in block} == kept


CODE_RUNS = FILES / "anthropic" / "test_anthropic_code_execution_tool_container_reuse.jsonl"
"""Two ``bash_code_execution`` server calls, each with its ``bash_code_execution_result``."""


def test_an_anthropic_code_run_is_what_its_command_printed() -> None:
    """As a Responses shell call's output is: its stdout, then its stderr, not the result's JSON."""
    trace = only(convert_file(CODE_RUNS))
    seen = [step.content for step in trace.steps if step.type == "observation"]
    # before: '{"content": [], "return_code": 0, "stderr": "", "stdout": "37170\n", ...}'
    assert seen == ["37170", "And what about 4 * 12390?", "49560"]
    assert [step.type for step in trace.steps].count("error_recovery") == 0


def test_an_anthropic_code_run_that_exited_non_zero_failed() -> None:
    """A command that exited 1 is an evident error, as a shell command's is; what the model does
    next recovers it."""
    row = json.loads(CODE_RUNS.read_text().splitlines()[0])
    ran = row["messages"][1]["content"][1]["content"]
    ran.update(return_code=1, stdout="", stderr="bash: bc: command not found\n")
    trace = only(list(sources.convert([row], source="anthropic")))
    kinds = [(step.type, step.tool.name if step.tool else None) for step in trace.steps]
    # before: a plain observation of the result's JSON, and the next call no recovery
    assert kinds[:3] == [
        ("tool_call", "bash_code_execution"),
        ("observation", "bash_code_execution"),
        ("error_recovery", "respond"),  # what the model said next, having seen it fail
    ]
    assert trace.steps[1].content == "bash: bc: command not found"


FETCH = FILES / "anthropic" / "test_anthropic_web_fetch_tool.jsonl"
"""A ``web_fetch`` server call of https://ai.pydantic.dev, its page a text ``document``."""


def test_an_anthropic_web_fetch_is_the_page_text_the_model_read() -> None:
    row = json.loads(FETCH.read_text().splitlines()[0])
    (result,) = (
        block
        for message in row["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "web_fetch_tool_result"
    )
    page = result["content"]["content"]["source"]["data"]
    trace = only(convert_file(FETCH))
    seen = [step.content for step in trace.steps if step.tool and step.type == "observation"]
    # before: '{"content": {"citations": null, "source": {"data": "Pydantic AI\nGenAI ...'
    said = (seen[0] or "").removesuffix(" …")  # a long step is cut, its end marked
    assert said.startswith("Pydantic AI\nGenAI Agent Framework")
    assert page.startswith(said)


def test_an_anthropic_web_fetch_of_a_pdf_is_said_by_its_type() -> None:
    """A PDF's base64 is no text: said as ``<application/pdf>``, as an image is said."""
    row = json.loads(FETCH.read_text().splitlines()[0])
    fetched = row["messages"][1]["content"][2]["content"]["content"]
    fetched["source"] = {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}
    trace = only(list(sources.convert([row], source="anthropic")))
    seen = [step.content for step in trace.steps if step.tool and step.type == "observation"]
    assert seen[0] == "<application/pdf>"


EDITOR = FILES / "anthropic" / "test_anthropic_text_editor_code_execution_tool.jsonl"
"""Two ``text_editor_code_execution`` calls that failed (``unavailable``), a create, a view."""


def test_an_anthropic_text_editors_results_read_as_what_it_reported() -> None:
    """A view is the file's text, a create what it did; a failed one is an evident error."""
    trace = only(convert_file(EDITOR))
    seen = [
        (step.type, step.content) for step in trace.steps if step.tool and step.type != "tool_call"
    ]
    # before: '{"is_file_update": false, "type": ...}', '{"content": "Hello, world!", ...}'
    assert [content for kind, content in seen if kind == "observation"][2:] == [
        "File created",
        "Hello, world!",
    ]
    assert (seen[0][1] or "").startswith("unavailable: Tool response parsing error for create")
    assert [kind for kind, _ in seen].count("error_recovery") == 1  # the retried create


def test_an_anthropic_text_editors_str_replace_reads_as_its_diff() -> None:
    """A str_replace's result is the edit's hunk, as a diff shows it, not its JSON."""
    row = json.loads(EDITOR.read_text().splitlines()[0])
    created = row["messages"][1]["content"][7]["content"]
    assert created["type"] == "text_editor_code_execution_create_result"
    created.clear()
    created.update(
        type="text_editor_code_execution_str_replace_result",
        old_start=1,
        old_lines=1,
        new_start=1,
        new_lines=1,
        lines=["-Hello, world!", "+Hello, Claude!"],
    )
    trace = only(list(sources.convert([row], source="anthropic")))
    seen = [step.content for step in trace.steps if step.tool and step.type == "observation"]
    assert seen[2] == "@@ -1,1 +1,1 @@\n-Hello, world!\n+Hello, Claude!"


TOOL_SEARCH = FILES / "anthropic" / "test_anthropic_native_tool_search_round_trip.jsonl"
"""A ``tool_search_tool_bm25`` server call that found ``get_exchange_rate``, then its call."""


def test_an_anthropic_tool_search_is_the_names_of_the_tools_it_found() -> None:
    trace = only(convert_file(TOOL_SEARCH))
    seen = [step.content for step in trace.steps if step.tool and step.type == "observation"]
    # before: '{"tool_references": [{"tool_name": "get_exchange_rate", "type": ...}], ...}'
    assert seen == ["get_exchange_rate", "1 USD = 0.92 EUR"]
