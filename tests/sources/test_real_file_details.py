"""What a trace read from a real file keeps: its date, a tool's text, a give-up, an image."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from knowledgepulse._util.times import moment
from knowledgepulse.cli.main import main
from knowledgepulse.sources import read
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS


def _items(path: object) -> list[TraceItem]:
    return [item for item in read(path) if isinstance(item, TraceItem)]  # type: ignore[arg-type]


def test_a_cline_sdk_session_is_dated_by_its_first_messages_ts() -> None:
    """Cline's SDK sessions keep ``ts`` on each message; before, their traces were undated."""
    for path in (
        CORPUS / "anthropic" / "cline_sdk_session_messages.json",
        CORPUS / "openai-chat" / "cline_sdk_basic_compaction.json",
    ):
        first = json.loads(path.read_text())["messages"][0]["ts"]
        (item,) = _items(path)
        assert item.trace.metadata.created_at == moment(first), path.name


def test_a_cline_sdk_compaction_summary_is_told_to_the_model_not_the_users_request(
    tmp_path: Path,
) -> None:
    """The Cline SDK's agentic compaction (July 2026) puts its summary of the turns it replaced
    ("Context summary: ## Goal ...") in a user message of ``metadata.kind`` ``compaction_summary``:
    the model's record, told to the model; it was read as the user's request, which is the next
    user turn. It is kept after the system prompt, in either reader of the SDK's messages."""
    path = CORPUS / "openai-chat" / "cline_sdk_agentic_compaction.json"
    session = json.loads(path.read_text())
    summary, request = session["messages"][:2]
    assert summary["metadata"]["kind"] == "compaction_summary"
    (item,) = _items(path)
    assert item.trace.task.objective == request["content"][0]["text"]
    assert item.system is not None
    assert item.system.startswith(session["system_prompt"])
    assert item.system.endswith(summary["content"][0]["text"])
    # The SDK's session with tool calls is read as Anthropic messages: the same summary there.
    tools = json.loads((CORPUS / "anthropic" / "cline_sdk_session_messages.json").read_text())
    tools["messages"] = [summary, *tools["messages"]]
    compacted = tmp_path / "compacted.messages.json"
    compacted.write_text(json.dumps(tools))
    (item,) = _items(compacted)
    assert any(step.type == "tool_call" for step in item.trace.steps)  # read as Anthropic's
    assert item.trace.task.objective == tools["messages"][1]["content"][0]["text"]
    assert item.system is not None
    assert item.system.endswith(summary["content"][0]["text"])


def test_a_nemo_gym_tau2_rollout_is_dated_by_its_results_start_time() -> None:
    """NeMo Gym's tau2 rollouts keep the run's start in ``result.start_time``."""
    path = CORPUS / "openai-responses" / "nemo_gym_tau2_retail_rollout.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    items = _items(path)
    assert [item.trace.metadata.created_at for item in items] == [
        moment(row["result"]["start_time"]) for row in rows
    ]
    assert all(isinstance(item.trace.metadata.created_at, datetime) for item in items)


def test_a_nemo_gym_rollout_is_dated_by_its_responses_created_at() -> None:
    """Its other rollouts keep only the ``created_at`` of the response they hold."""
    path = CORPUS / "openai-responses" / "nemo_gym_workplace_assistant_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert [item.trace.metadata.created_at for item in _items(path)] == [
        moment(row["response"]["created_at"]) for row in rows
    ]
    assert all(row["response"]["created_at"] > 0 for row in rows)


def test_an_any_agent_tools_json_string_output_is_the_text_the_model_got() -> None:
    """any-agent writes LlamaIndex's ``None`` result as the JSON string ``"None"``: the quotes
    are JSON's, not the tool's; before, the result kept them."""
    path = CORPUS / "otlp" / "any_agent_llama_index_trace.json"
    spans = json.loads(path.read_text())["spans"]
    written = [
        span["attributes"]["gen_ai.output"]
        for span in spans
        if span["attributes"].get("gen_ai.tool.name") == "write_file"
    ]
    assert written == ['"None"']
    (item,) = _items(path)
    (call,) = [
        step
        for step in item.trace.steps
        if step.type == "tool_call" and step.tool and step.tool.name == "write_file"
    ]
    assert call.output_summary == json.loads(written[0])
    results = [step.content for step in item.trace.steps if step.type == "observation"]
    assert json.loads(written[0]) in results
    assert written[0] not in results


def test_a_toolbench_give_up_is_the_models_finish_call_not_a_user_turn(tmp_path: Path) -> None:
    """ToolBench's ``Finish`` giving up is the model's last call; before, it was a terminal
    error that training rows wrote as a user turn holding its JSON."""
    path = CORPUS / "openai-chat" / "toolbench_G2_127_ChatGPT_DFS_woFilter_w2.jsonl"
    (row,) = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    called = row["messages"][-1]["function_call"]
    assert called["name"] == "Finish"
    (item,) = _items(path)
    last = item.trace.steps[-1]
    assert (last.type, last.tool and last.tool.name) == ("tool_call", "Finish")
    assert last.input == json.loads(called["arguments"])
    assert not any(step.type == "error_recovery" for step in item.trace.steps)
    assert item.trace.metadata.success is False
    written = tmp_path / "rows.jsonl"
    assert main(["convert", str(path), "--to", "messages", "-o", str(written)]) == 0
    (training,) = [json.loads(line) for line in written.read_text().splitlines()]
    assert training["kp_error_turns"] == []
    final = training["messages"][-1]
    assert final["role"] == "assistant"
    assert [call["function"]["name"] for call in final["tool_calls"]] == ["Finish"]


def test_a_pydantic_ai_tools_image_url_is_said_as_an_image_not_its_fields() -> None:
    """A tool returning ``ImageUrl`` sent the model an image; before, its observation was the
    object's JSON (``force_download``, ``identifier``...)."""
    path = CORPUS / "pydantic-ai" / "image_url_tool_response.json"
    returned = [
        part["content"]
        for message in json.loads(path.read_text())
        for part in message["parts"]
        if part["part_kind"] == "tool-return"
    ]
    assert [content["kind"] for content in returned] == ["image-url"]
    (item,) = _items(path)
    (seen,) = [step.content for step in item.trace.steps if step.type == "observation"]
    assert seen == f"<{returned[0]['media_type']}>"
    assert "force_download" not in json.dumps(item.trace.model_dump(mode="json"))


def test_a_pydantic_ai_tool_returning_its_own_object_with_a_kind_list_is_its_json(
    tmp_path: Path,
) -> None:
    """A tool's own object whose "kind" is no file's (a list, here) is returned as it is; before,
    asking whether the list named a file was a TypeError, kp's internal error (the fuzzer's)."""
    messages = json.loads((CORPUS / "pydantic-ai" / "image_url_tool_response.json").read_text())
    (returned,) = [p for m in messages for p in m["parts"] if p["part_kind"] == "tool-return"]
    returned["content"] = {"kind": ["image-url"], "url": "https://example.com/a.png"}
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages))
    (item,) = _items(path)
    (seen,) = [step.content for step in item.trace.steps if step.type == "observation"]
    assert seen is not None
    assert json.loads(seen) == returned["content"]


def test_a_langsmith_runs_system_prompt_is_its_training_rows(tmp_path: Path) -> None:
    """The Agents SDK's LangSmith runs send the model the agent's instructions as a system
    message; before, a training row written from them had no system prompt."""
    path = CORPUS / "langsmith" / "openai_agents_output_guardrail.json"
    runs = json.loads(path.read_text())[0]["post"]
    (sent,) = {
        message["content"]
        for run in runs
        if run["run_type"] == "llm"
        for message in run["inputs"]["input"]
        if message["role"] == "system"
    }
    (item,) = _items(path)
    assert item.system == sent
    written = tmp_path / "rows.jsonl"
    assert main(["convert", str(path), "--to", "messages", "-o", str(written)]) == 0
    (training,) = [json.loads(line) for line in written.read_text().splitlines()]
    assert training["messages"][0] == {"role": "system", "content": sent}


def test_a_row_of_tau2_messages_reads_its_flat_calls_and_is_dated_by_its_first_message() -> None:
    """AReaL saves tau2 rollouts as rows of tau2's own messages: each call flat, ``{id, name,
    arguments}``, every id ``-1``, each tool message naming its call by ``id``. Before, the row
    was refused ("expected a tool name"), and a message's ``timestamp`` dated nothing."""
    path = CORPUS / "openai-chat" / "areal_tau2_airline_transfer_rows.jsonl"
    messages = json.loads(path.read_text())["messages"]
    calls = [call for m in messages for call in m.get("tool_calls") or []]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    (item,) = _items(path)
    steps = item.trace.steps
    # each call with its own arguments, then the result that answered it, in order
    told = [
        (step.type, step.tool.name, step.input if step.type == "tool_call" else step.content)
        for step in steps
        if step.tool is not None and step.tool.name != "respond"
    ]
    assert told == [
        told
        for call, result in zip(calls, results, strict=True)
        for told in (
            ("tool_call", call["name"], call["arguments"]),
            ("observation", call["name"], result),
        )
    ]
    assert item.trace.metadata.created_at == moment(messages[0]["timestamp"])


def test_a_responses_reply_begun_inside_the_templates_think_block_answers_after_it() -> None:
    """Qwen3's thinking model, served with no reasoning parser (NeMo Gym's Spider 2.0-lite
    rollouts), writes its reasoning then a ``</think>`` nothing opens, then the SQL: the answer
    is the SQL, the reasoning a thought. Before, the answer was the whole text, cut at 8 KB."""
    path = CORPUS / "openai-responses" / "nemo_gym_spider2_lite_qwen3_thinking_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row, item in zip(rows, _items(path), strict=True):
        (message,) = row["response"]["output"]
        reasoning, reply = message["content"][0]["text"].split("</think>")
        assert item.trace.outcome.result_summary == reply.strip()
        thought = next(step.content for step in item.trace.steps if step.type == "thought")
        # a step's text is cut at 8 KB, marked with "…"
        assert thought is not None
        assert reasoning.strip().startswith(thought.removesuffix("…").rstrip())


def test_ether0s_think_tokens_are_its_reasoning_not_its_answer() -> None:
    """FutureHouse's ether0 (NeMo Gym's rollouts) reasons between ``<|think_start|>`` and
    ``<|think_end|>``, then answers: the answer is what follows, the reasoning a thought.
    Before, the answer was the whole text, its reasoning in it."""
    path = CORPUS / "openai-responses" / "nemo_gym_ether0_think_tokens_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row, item in zip(rows, _items(path), strict=True):
        (message,) = row["response"]["output"]
        reasoning, reply = message["content"][0]["text"].split("<|think_end|>")
        assert item.trace.outcome.result_summary == reply
        thoughts = [step.content for step in item.trace.steps if step.type == "thought"]
        assert thoughts[0] == reasoning.removeprefix("<|think_start|>").strip()


def test_a_responses_reply_that_writes_its_call_in_qwen_xml_calls_it() -> None:
    """NeMo Gym's image-tools rollouts keep the model's reply as text: a Qwen3-Coder
    ``<tool_call><function=NAME><parameter=...>`` call, served with no tool parser, that the
    environment scores as the call. Before, the call's XML was the answer and no tool was
    called."""
    path = CORPUS / "openai-responses" / "nemo_gym_image_tools_qwen_xml_calls.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row, item in zip(rows, _items(path), strict=True):
        (step,) = [step for step in item.trace.steps if step.type == "tool_call"]
        assert step.tool is not None
        assert step.tool.name == row["rollout_tool_name"]
        assert step.input is not None
        assert set(step.input) == set(row["expected_action"]["arguments"])


def test_the_think_tags_a_reasoning_parser_left_before_the_reply_are_no_part_of_it() -> None:
    """vLLM's reasoning parser (Qwen3-32B, NeMo Gym's SWE-RL judge rollouts) takes the reasoning
    out into its own item but leaves one or two ``</think>`` before the reply: the answer is the
    reply. Before, it began "</think>"."""
    path = CORPUS / "openai-responses" / "nemo_gym_swerl_judge_reasoning_leftover_think.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row, item in zip(rows, _items(path), strict=True):
        (message,) = [out for out in row["response"]["output"] if out["type"] == "message"]
        reply = message["content"][0]["text"]
        assert reply.lstrip().startswith("</think>")
        assert item.trace.outcome.result_summary == reply.rsplit("</think>", 1)[1].strip()
