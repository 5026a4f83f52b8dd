"""MLflow Tracing exports (``Trace.to_json()``, ``mlflow.get_trace``) read by the ``mlflow`` source.

The files are in tests/conformance/files/mlflow/: traces MLflow 3.17 and 2.22 wrote of a
tool-calling agent replaying recorded model replies (``tests/conformance/mlflow_traces.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from knowledgepulse.cli.main import cli
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._registry import get_source
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import CORPUS, convert_file, recognise

FILES = CORPUS / "mlflow"
EXPORTED = sorted(path for path in FILES.iterdir() if not path.name.endswith(".facts.json"))
MLFLOW3 = FILES / "openai_agent_runs.jsonl"
MLFLOW2 = FILES / "mlflow2_openai_agent_runs.json"
CALL_ID = "call_IgqlTCby7lsxDXPIUPgkmAiq"
"""The temperature recording's call id."""
RETRY = [
    ("tool_call", "get_capital"),
    ("observation", "get_capital"),
    ("error_recovery", "get_capital"),
    ("observation", "get_capital"),
    ("thought", None),
]


def steps(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def traces(path: Path) -> list[ReasoningTrace]:
    items = convert_file(path, source="mlflow")
    assert [item for item in items if isinstance(item, Problem)] == []
    return [item.trace for item in items if isinstance(item, TraceItem)]


def test_each_file_is_recognised_as_mlflow_by_its_first_record() -> None:
    for path in EXPORTED:
        first = next(iter(line for line in path.read_text().splitlines() if line.strip()))
        value = json.loads(path.read_text()) if path.suffix == ".json" else json.loads(first)
        assert recognise(value[0] if isinstance(value, list) else value) == "mlflow", path


def test_both_mlflow_versions_give_the_same_runs() -> None:
    for path in (MLFLOW3, MLFLOW2):
        retry, raising, temperature = traces(path)
        assert retry.task.objective == "What is the capital of France?"
        assert steps(retry) == RETRY
        assert retry.outcome.result_summary == "The capital of France is Paris."
        assert raising.task.objective == "What is the capital of France?"
        assert steps(raising) == RETRY[:2]
        assert temperature.task.objective == "What is the temperature in Tokyo?"
        assert steps(temperature) == [
            ("tool_call", "get_temperature"),
            ("observation", "get_temperature"),
            ("thought", None),
        ]


def test_the_final_answer_is_told_once_as_the_last_step() -> None:
    for trace in traces(MLFLOW3):
        said = [step.content for step in trace.steps if step.type == "thought"]
        assert said.count(trace.outcome.result_summary) <= 1
    retry = traces(MLFLOW3)[0]
    assert retry.steps[-1].content == "The capital of France is Paris."


def test_success_is_the_trace_state_and_the_error_is_the_tool_s() -> None:
    for path in (MLFLOW3, MLFLOW2):
        retry, raising, temperature = traces(path)
        assert [retry.metadata.success, raising.metadata.success, temperature.metadata.success] == [
            True,
            False,
            True,
        ]
        failure = raising.steps[-1]
        assert failure.type == "observation"
        assert 'Use "La France" instead' in (failure.content or "")
        assert retry.steps[2].input == {"country": "La France"}


def test_one_trace_per_mlflow_trace_known_by_its_own_id() -> None:
    lines = [json.loads(line) for line in MLFLOW3.read_text().splitlines()]
    ids = [line["info"]["trace_id"] for line in lines]
    assert [trace.id for trace in traces(MLFLOW3)] == [f"kp:trace:{one}" for one in ids]
    single = traces(FILES / "openai_agent_google_model_retry.json")
    assert [trace.id for trace in single] == [f"kp:trace:{ids[0]}"]


def test_mlflow_2_numbered_span_names_are_the_tool_s_name() -> None:
    listed = json.loads(MLFLOW2.read_text())
    names = [span["name"] for span in listed[0]["data"]["spans"]]
    assert "get_capital_1" in names  # as MLflow 2 wrote them
    assert "get_capital_2" in names
    assert {name for _, name in steps(traces(MLFLOW2)[0]) if name} == {"get_capital"}


def test_mlflow_2_chat_messages_alone_give_the_model_calls(tmp_path: Path) -> None:
    """MLflow 2 keeps a chat span's conversation, the reply last, as ``mlflow.chat.messages``:
    enough without the span's inputs and outputs (the answer is then the last reply's)."""
    value = json.loads(MLFLOW2.read_text())[0]
    del value["data"]["spans"][0]["attributes"]["mlflow.spanOutputs"]  # the run's own answer
    for span in value["data"]["spans"]:
        if json.loads(span["attributes"]["mlflow.spanType"]) == "CHAT_MODEL":
            del span["attributes"]["mlflow.spanInputs"], span["attributes"]["mlflow.spanOutputs"]
            assert json.loads(span["attributes"]["mlflow.chat.messages"])[-1]["role"] == "assistant"
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(value))
    (trace,) = traces(path)
    assert steps(trace) == RETRY
    assert trace.outcome.result_summary == "The capital of France is Paris."


def test_a_trace_in_state_error_fails_even_when_its_root_span_says_ok(tmp_path: Path) -> None:
    value = json.loads(MLFLOW3.read_text().splitlines()[2])  # the temperature run, OK
    value["info"]["state"] = "ERROR"
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(value))
    (trace,) = traces(path)
    assert trace.metadata.success is False


def test_the_objective_is_the_last_user_message_never_the_system_prompt(tmp_path: Path) -> None:
    value = json.loads(MLFLOW3.read_text().splitlines()[2])
    root = value["data"]["spans"][0]
    root["attributes"]["mlflow.spanInputs"] = json.dumps(
        {
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi! How can I help?"},
                {"role": "user", "content": "What is the temperature in Tokyo?"},
            ]
        }
    )
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(value))
    (trace,) = traces(path)
    assert trace.task.objective == "What is the temperature in Tokyo?"


def _temperature_run(tmp_path: Path, **outputs: str) -> ReasoningTrace:
    """The temperature run with span attributes rewritten (``span name/attribute``: JSON)."""
    value = json.loads(MLFLOW3.read_text().splitlines()[2])
    for where, text in outputs.items():
        index, key = where.split("__")
        value["data"]["spans"][int(index.removeprefix("span"))]["attributes"][f"mlflow.{key}"] = (
            text
        )
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(value))
    (trace,) = traces(path)
    return trace


def test_a_responses_agent_request_and_response_give_the_objective_and_answer(
    tmp_path: Path,
) -> None:
    """A ``ResponsesAgent``'s ``predict`` span (Databricks agents): ``request.input`` items and
    ``output`` items of ``output_text`` parts."""
    request = {
        "request": {
            "input": [
                {"type": "message", "role": "system", "content": "You are a helpful assistant"},
                {"type": "message", "role": "user", "content": "What is the temperature in Tokyo?"},
            ],
            "custom_inputs": None,
        }
    }
    response = {
        "object": "response",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It is 20.0 degrees in Tokyo."}],
            }
        ],
    }
    trace = _temperature_run(
        tmp_path, span0__spanInputs=json.dumps(request), span0__spanOutputs=json.dumps(response)
    )
    assert trace.task.objective == "What is the temperature in Tokyo?"
    assert trace.outcome.result_summary == "It is 20.0 degrees in Tokyo."


def test_an_mcp_server_whose_tools_could_not_be_listed_is_the_runs_error(tmp_path: Path) -> None:
    """An OpenAI Responses reply (``mlflow.openai.autolog()``'s chat span) whose
    ``mcp_list_tools`` says the server's tools could not be listed: the error the Responses
    reader tells, the MCP call after it its recovery; a listing that worked is no step. Before,
    the spans' reader left the failed listing out, as Pydantic AI's spans did."""

    def run_with(listing: dict[str, Any]) -> ReasoningTrace:
        call = {"type": "mcp_call", "id": "mcp_1", "name": "search", "server_label": "dmcp"}
        reply = [
            {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "dmcp", **listing},
            {**call, "arguments": '{"q": "otel"}', "output": "3 hits"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "3."}],
            },
        ]
        outputs = json.dumps({"object": "response", "output": reply})
        return _temperature_run(tmp_path, span1__spanOutputs=outputs)

    assert steps(run_with({"tools": [{"name": "search"}]}))[:3] == [
        ("tool_call", "search"),
        ("observation", "search"),
        ("thought", None),
    ]
    failed = run_with({"tools": [], "error": "Http status code: 424"})
    assert steps(failed)[:2] == [("observation", None), ("error_recovery", "search")]
    assert failed.steps[0].content == "dmcp: Http status code: 424"


def test_a_langchain_chat_result_s_tool_calls_are_the_model_s_requests(tmp_path: Path) -> None:
    """``mlflow.langchain.autolog()``'s chat span outputs the ``ChatResult``, its message a
    serialised ``AIMessage`` whose ``tool_calls`` name the tool (the id the run's next model
    call is given the result by)."""
    message = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {
            "content": "Let me look it up.",
            "type": "ai",
            "tool_calls": [{"name": "get_temperature", "args": {"city": "Tokyo"}, "id": CALL_ID}],
        },
    }
    result = {"generations": [[{"text": "", "message": message}]], "llm_output": None}
    trace = _temperature_run(tmp_path, span1__spanOutputs=json.dumps(result))
    assert steps(trace) == [
        ("thought", None),
        ("tool_call", "get_temperature"),
        ("observation", "get_temperature"),
        ("thought", None),
    ]
    assert trace.steps[0].content == "Let me look it up."


def test_a_bad_span_is_located_and_the_batch_goes_on(tmp_path: Path) -> None:
    lines = MLFLOW3.read_text().splitlines()
    broken = json.loads(lines[0])
    broken["data"]["spans"][1] = ["not", "a", "span"]
    nameless = json.loads(lines[1])
    del nameless["data"]["spans"][1]["span_id"]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([json.dumps(broken), json.dumps(nameless), lines[2]]) + "\n")
    items = convert_file(path, source="mlflow")
    problems = [item for item in items if isinstance(item, Problem)]
    said = [str(problem) for problem in problems]
    assert said[0].startswith(f"{path}:1: data.spans[1]: expected a span object, found a list")
    assert said[1].startswith(f"{path}:2: data.spans[1].span_id: expected the span's id")
    assert len([item for item in items if isinstance(item, TraceItem)]) == 3


def test_a_page_of_mlflow_traces_search_reads_each_trace(tmp_path: Path) -> None:
    """``mlflow traces search --output json`` prints ``{"traces": [...], "next_page_token"}``."""
    lines = [json.loads(line) for line in MLFLOW3.read_text().splitlines()]
    page = {"traces": [*lines, {"info": lines[0]["info"]}], "next_page_token": None}
    path = tmp_path / "search.json"
    path.write_text(json.dumps(page))
    assert recognise(page) == "mlflow"
    items = convert_file(path)
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:1: traces[3]: expected an MLflow trace")
    found = [item.trace for item in items if isinstance(item, TraceItem)]
    assert [steps(trace) for trace in found] == [steps(trace) for trace in traces(MLFLOW3)]


def test_a_record_that_is_no_trace_says_what_was_expected() -> None:
    record = Record(Location("f.json", 1), {"info": {"trace_id": "tr-1"}, "data": {}})
    (problem,) = get_source("mlflow").convert([record], TraceOptions())
    assert isinstance(problem, Problem)
    assert "expected an MLflow trace" in problem.message


LANGGRAPH = FILES / "langgraph_google_model_retry.json"
"""LangGraph's ReAct agent traced by ``mlflow.langchain.autolog()`` (MLflow 3.17.2)."""


def test_a_langchain_tool_s_toolmessage_output_is_its_content_and_its_error_status_a_failure() -> (
    None
):
    """``mlflow.langchain.autolog()`` keeps a tool's output as the ``ToolMessage`` it returned;
    LangGraph's ``ToolNode`` catches what the tool raised and answers with ``status: "error"``,
    the span ending OK. Before, the observation was the message's JSON dump (ids, metadata)
    and the failure went unseen: the retry was a plain ``tool_call``, no ``error_recovery``."""
    spans = json.loads(LANGGRAPH.read_text())["data"]["spans"]
    tools = [span for span in spans if json.loads(span["attributes"]["mlflow.spanType"]) == "TOOL"]
    first = json.loads(tools[0]["attributes"]["mlflow.spanOutputs"])
    assert (first["type"], first["status"], tools[0]["status"]["code"]) == (
        "tool",
        "error",
        "STATUS_CODE_OK",
    )
    (trace,) = traces(LANGGRAPH)
    assert trace.task.objective == "What is the capital of France?"
    assert steps(trace) == RETRY
    observed = [step.content for step in trace.steps if step.type == "observation"]
    assert observed == ['The country is not supported. Use "La France" instead.', "Paris"]
    assert trace.outcome.result_summary == "The capital of France is Paris."
    assert trace.metadata.success is True


def test_mlflow_s_genai_semconv_export_reads_as_the_mlflow_trace_it_translates() -> None:
    """MLflow 3.17's GenAI translator (``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV``) sends the spans in
    the conventions: ``gen_ai.tool.call.result`` is JSON text, a text result a JSON string
    (``"Paris"``: the text is Paris, not the quoted string), and a LangChain tool's result the
    ``ToolMessage`` dump, read as ``mlflow.spanOutputs`` is."""
    for name in ("openai_agent", "langgraph"):
        path = CORPUS / "otlp" / f"mlflow_genai_semconv_{name}_google_model_retry.json"
        (item,) = convert_file(path)
        assert isinstance(item, TraceItem)
        assert item.trace.task.objective == "What is the capital of France?"
        assert steps(item.trace) == RETRY, name
        observed = [step.content for step in item.trace.steps if step.type == "observation"]
        assert observed[-1] == "Paris", name
        assert item.trace.outcome.result_summary == "The capital of France is Paris."


def test_the_agents_sdk_traced_by_mlflow_reads_each_model_call_once() -> None:
    """``mlflow.openai.autolog()``'s processor of the Agents SDK: each model call is the SDK's
    ``Generation`` span around the client's ``AsyncCompletions``, both ``CHAT_MODEL``."""
    (trace,) = traces(FILES / "openai_agents_sdk_google_model_retry.json")
    assert trace.task.objective == "What is the capital of France?"
    assert steps(trace) == RETRY
    assert trace.outcome.result_summary == "The capital of France is Paris."
    assert trace.metadata.success is True


def test_search_traces_dataframe_saved_by_pandas_reads_each_row_s_trace(tmp_path: Path) -> None:
    """``mlflow.search_traces()`` returns a dataframe whose ``trace`` column is each whole trace
    as JSON text; saved by pandas, as rows (JSON Lines) or by columns (its default), it is the
    same traces as their dumps. Before, neither form was a file kp knew."""
    rows = FILES / "search_traces_records.jsonl"
    columns = FILES / "search_traces_columns.json"
    dumped = tmp_path / "dumps.jsonl"
    dumped.write_text(
        "".join(json.loads(line)["trace"] + "\n" for line in rows.read_text().splitlines())
    )
    expected = [trace.model_dump() for trace in traces(dumped)]
    assert [trace.model_dump() for trace in traces(rows)] == expected
    assert [trace.model_dump() for trace in traces(columns)] == expected
    temperature, retry = traces(rows)
    assert retry.task.objective == "What is the capital of France?"
    assert steps(retry) == RETRY
    assert temperature.outcome.result_summary.startswith("The temperature in Tokyo")


def test_a_dataframe_row_whose_trace_is_no_trace_is_located(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = json.loads(MLFLOW3.read_text().splitlines()[2])
    path.write_text(
        json.dumps({"trace_id": "tr-1", "trace": json.dumps(good)})
        + "\n"
        + json.dumps({"trace_id": "tr-2", "trace": json.dumps({"info": {}})})
        + "\n"
    )
    items = convert_file(path, source="mlflow")
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert problem.location is not None
    assert problem.location.line == 2
    assert "an MLflow trace" in problem.message
    assert len([item for item in items if isinstance(item, TraceItem)]) == 1


def test_mlflow_spans_sent_over_otlp_read_the_same_through_the_otlp_source() -> None:
    """MLflow's OTLP exporter sends the same ``mlflow.*`` attributes: the otlp source reads them."""
    path = CORPUS / "otlp" / "mlflow_openai_agent_google_model_retry.json"
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert recognise(json.loads(path.read_text())) == "otlp"
    assert item.trace.task.objective == "What is the capital of France?"
    assert steps(item.trace) == RETRY
    assert item.trace.outcome.result_summary == "The capital of France is Paris."
    assert item.trace.metadata.success is True


def test_a_training_row_lists_the_tools_mlflow_says_each_model_call_was_offered() -> None:
    """MLflow's autologging records the tools a chat model call was offered in
    ``mlflow.chat.tools`` (OpenAI's definitions), in its trace exports and over OTLP alike: the
    row's tools are those, described, their arguments required, not a schema guessed from the
    calls."""
    for path in (
        FILES / "bedrock_converse_tool_error.json",
        FILES / "openai_agent_google_model_retry.json",
        CORPUS / "otlp" / "mlflow_openai_agent_google_model_retry.json",
    ):
        assert "mlflow.chat.tools" in path.read_text()
        (item,) = convert_file(path)
        assert isinstance(item, TraceItem)
        listed = json.loads(chat_row(item.trace, offered=item.tools)["tools"])
        (tool,) = [tool["function"] for tool in listed]
        assert tool["name"] == "get_capital", path.name
        assert tool["description"] == "Get the capital of a country.", path.name
        assert tool["parameters"]["required"] == ["country"], path.name


def test_mlflow_pydantic_ai_autolog_model_calls_give_the_system_prompt_and_offered_tools() -> None:
    """``mlflow.pydantic_ai.autolog()`` records each model call's arguments as Pydantic AI keeps
    them: its ``messages`` (``part_kind`` parts, the system prompt among them) and the
    ``model_request_parameters`` whose ``function_tools`` the model was offered. The row has
    that system prompt and those tools (described, their schema), not tools guessed from the
    calls."""
    path = FILES / "pydantic_ai_google_model_retry.json"
    spans = json.loads(path.read_text())["data"]["spans"]
    sent = json.loads(
        next(s for s in spans if s["name"] == "OpenAIChatModel.request")["attributes"][
            "mlflow.spanInputs"
        ]
    )
    (system,) = [
        part["content"]
        for message in sent["messages"]
        for part in message["parts"]
        if part["part_kind"] == "system-prompt"
    ]
    (offered,) = sent["model_request_parameters"]["function_tools"]
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    row = chat_row(item.trace, offered=item.tools, system=item.system)
    assert row["messages"][0] == {"role": "system", "content": system}
    (tool,) = [tool["function"] for tool in json.loads(row["tools"])]
    assert tool == {
        "name": offered["name"],
        "description": offered["description"],
        "parameters": offered["parameters_json_schema"],
    }
    assert [step.type for step in item.trace.steps] == [
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]


def test_kp_inspect_convert_and_score_read_each_file_as_mlflow(tmp_path: Path) -> None:
    runner = CliRunner()
    for path in EXPORTED:
        shown = runner.invoke(cli, ["inspect", str(path)])
        assert shown.exit_code == 0, shown.output
        assert "read as    mlflow" in shown.output
        out = tmp_path / f"{path.stem}.jsonl"
        converted = runner.invoke(cli, ["convert", str(path), "-o", str(out)])
        assert converted.exit_code == 0, converted.output
        scored = runner.invoke(cli, ["score", str(path)])
        assert scored.exit_code == 0, scored.output


def test_a_model_call_s_mlflow_llm_model_names_the_model_its_response_does_not() -> None:
    """MLflow names a model call's model in ``mlflow.llm.model`` where the response names none
    (Bedrock's Converse response, LangChain's Chat Completion dump, DSPy's ``LM``). Before,
    these runs had no model at all though every model call span named it."""
    for name in ("bedrock_converse_tool_error", "langgraph_google_model_retry", "dspy_react"):
        path = next(FILES.glob(f"{name}*.json"))
        spans = json.loads(path.read_text())["data"]["spans"]
        last = max(
            (span for span in spans if "mlflow.llm.model" in span["attributes"]),
            key=lambda span: span["start_time_unix_nano"],
        )
        assert "model" not in json.loads(last["attributes"]["mlflow.spanOutputs"]), name
        (trace,) = traces(path)
        model = json.loads(last["attributes"]["mlflow.llm.model"])
        assert (trace.metadata.model_extra or {})["source"]["model"] == model, name


def test_an_answer_the_app_wrote_after_its_only_model_call_failed_is_no_answer() -> None:
    """Databricks' endpoint: Azure's content filter refuses the only model call (a 400), and the
    agent answers "This question has been flagged as inappropriate" itself. No model said it:
    the run failed at its model call, and the training row teaches no model to say it."""
    path = FILES / "databricks_agent_endpoint_content_filter.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    spans = record["databricks_output"]["trace"]["data"]["spans"]
    chats = [span for span in spans if '"CHAT_MODEL"' in span["attributes"]["mlflow.spanType"]]
    assert [span["status"]["code"] for span in chats] == ["STATUS_CODE_ERROR"]
    app_said = record["output"][0]["content"][0]["text"]
    assert record["databricks_output"]["trace"]["info"]["state"] == "OK"
    (trace,) = traces(path)
    assert trace.metadata.success is False
    assert app_said not in trace.outcome.result_summary
    assert [step.type for step in trace.steps] == ["observation"]
    assert "content_filter" in (trace.steps[0].content or "")
    row = chat_row(trace)
    assert all(turn["role"] != "assistant" for turn in row["messages"])
    assert app_said not in json.dumps(row)


def test_mlflow_pydantic_ai_autolog_reads_a_tool_the_provider_ran_as_pydantic_ai_does(
    tmp_path: Path,
) -> None:
    """A reply's ``builtin-tool-call`` and ``builtin-tool-return`` (the provider's code
    execution) are its call and observation, the sandbox's ``container_id`` no argument of the
    model's, as the messages' own reader reads them; before, the return was dropped and the
    call kept the sandbox's id."""
    path = FILES / "pydantic_ai_google_model_retry.json"
    exported = json.loads(path.read_text())
    first = next(s for s in exported["data"]["spans"] if s["name"] == "OpenAIChatModel.request")
    reply = json.loads(first["attributes"]["mlflow.spanOutputs"])
    ran = {"tool_name": "code_execution", "tool_call_id": "b1", "provider_name": "openai"}
    reply["parts"][:0] = [
        {**ran, "part_kind": "builtin-tool-call", "args": {"code": "2+2", "container_id": "c9"}},
        {**ran, "part_kind": "builtin-tool-return", "content": "4"},
    ]
    first["attributes"]["mlflow.spanOutputs"] = json.dumps(reply)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(exported))
    (item,) = convert_file(edited)
    assert isinstance(item, TraceItem)
    call, seen = item.trace.steps[:2]
    assert (call.type, call.tool and call.tool.name, call.input) == (
        "tool_call",
        "code_execution",
        {"code": "2+2"},
    )
    assert (seen.type, seen.content) == ("observation", "4")
