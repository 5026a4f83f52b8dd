"""Pydantic AI message JSON to ReasoningTrace: recorded runs, retries, files and bad records."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Problem
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import pydantic_ai as pai
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, has_text, source_of

DATA = Path(__file__).parent / "data" / "pydantic_ai"


def load(name: str) -> list[dict[str, Any]]:
    value: list[dict[str, Any]] = json.loads((DATA / name).read_text())
    return value


def kinds(converted: TraceItem) -> list[str]:
    return [step.type for step in converted.trace.steps]


def request(*parts: dict[str, Any], at: str | None = None) -> dict[str, Any]:
    return {"parts": list(parts), "timestamp": at, "kind": "request"}


def response(*parts: dict[str, Any], at: str | None = None) -> dict[str, Any]:
    return {"parts": list(parts), "timestamp": at, "kind": "response"}


def user(text: str) -> dict[str, Any]:
    return {"content": text, "part_kind": "user-prompt"}


def text(content: str) -> dict[str, Any]:
    return {"content": content, "part_kind": "text"}


def call(name: str, args: Any, call_id: str) -> dict[str, Any]:
    return {"tool_name": name, "args": args, "tool_call_id": call_id, "part_kind": "tool-call"}


def ret(name: str, content: Any, call_id: str, outcome: str = "success") -> dict[str, Any]:
    return {
        "tool_name": name,
        "content": content,
        "tool_call_id": call_id,
        "outcome": outcome,
        "part_kind": "tool-return",
    }


def test_a_recorded_run_with_a_model_retry_gives_the_spec_steps() -> None:
    """Pydantic AI 2.x: a ModelRetry is a tool-return with outcome "retried" → error rule."""
    converted = pai.to_trace(load("weather_retry.json"))
    steps = [step.model_dump(exclude_none=True) for step in converted.trace.steps]
    failure = "the weather service timed out, try again"
    assert steps == [
        {
            "step_id": 0,
            "type": "thought",
            "content": "The user wants today's weather in Paris; the tool knows it.",
        },
        {
            "step_id": 1,
            "type": "tool_call",
            "content": 'get_weather {"city":"Paris"}',
            "tool": {"name": "get_weather"},
            "input": {"city": "Paris"},
            "output_summary": failure,
        },
        {
            "step_id": 2,
            "type": "observation",
            "content": failure,
            "tool": {"name": "get_weather"},
            "output_summary": failure,
        },
        {
            "step_id": 3,
            "type": "thought",
            "content": "The weather service timed out; trying once more.",
        },
        {
            "step_id": 4,
            "type": "error_recovery",
            "content": 'get_weather {"city":"Paris"}',
            "tool": {"name": "get_weather"},
            "input": {"city": "Paris"},
            "output_summary": "sunny, 24 °C in Paris",
        },
        {
            "step_id": 5,
            "type": "observation",
            "content": "sunny, 24 °C in Paris",
            "tool": {"name": "get_weather"},
            "output_summary": "sunny, 24 °C in Paris",
        },
        {"step_id": 6, "type": "thought", "content": "It is sunny in Paris, 24 °C."},
    ]
    trace = converted.trace
    assert trace.id == "kp:trace:pydantic-ai-01a208cf-6322-75f2-89ad-b6250765c897"
    assert trace.task.objective == "What is the weather in Paris today?"
    assert trace.outcome.result_summary == "It is sunny in Paris, 24 °C."
    assert trace.metadata.success is True
    assert trace.metadata.framework == "pydantic-ai"
    assert trace.metadata.created_at.isoformat() == "2026-11-23T14:28:58.799379+00:00"
    assert has_text(converted)


def test_a_legacy_retry_prompt_with_validation_errors_is_an_evident_error() -> None:
    """Pydantic AI 1.x: a retry-prompt part carries the validation errors as loc: msg."""
    converted = pai.to_trace(load("legacy_retry_prompt.json"), agent_id="support")
    assert kinds(converted) == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    steps = converted.trace.steps
    assert steps[1].input == {"user_id": "forty-two"}
    assert steps[2].content == (
        "user_id: Input should be a valid integer, unable to parse string as an integer"
    )
    assert steps[3].input == {"user_id": 42}
    assert steps[4].content == '{"id": 42, "city": "Lyon"}'
    trace = converted.trace
    assert trace.task.objective == "Where does user 42 live?"
    assert trace.metadata.agent_id == "support"
    assert trace.metadata.created_at.isoformat() == "2025-06-01T10:00:00+00:00"
    assert trace.id.startswith("kp:trace:pydantic-ai-")  # no run_id: a digest of the messages
    assert pai.to_trace(load("legacy_retry_prompt.json")).trace.id == trace.id


def test_the_legacy_payload_is_one_pydantic_ai_itself_loads() -> None:
    """The hand-kept 1.x payload is real: the installed pydantic_ai reads it."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    loaded = ModelMessagesTypeAdapter.validate_json((DATA / "legacy_retry_prompt.json").read_text())
    live = pai.to_trace(loaded)
    assert kinds(live) == kinds(pai.to_trace(load("legacy_retry_prompt.json")))


def test_retry_feedback_and_a_toolless_retry_make_the_next_call_a_recovery() -> None:
    """An output the agent rejected is an observation; the next tool call recovers."""
    for error_part in (
        {
            "content": "answer in French",
            "retry": {"cause": "model_retry"},
            "part_kind": "retry-feedback",
        },
        {"content": "answer in French", "tool_name": None, "part_kind": "retry-prompt"},
    ):
        messages = [
            request(user("Say hi")),
            response(text("hi")),
            request(error_part),
            response(call("translate", {"text": "hi"}, "c1")),
            request(ret("translate", "salut", "c1")),
            response(text("salut")),
        ]
        converted = pai.to_trace(messages)
        assert kinds(converted) == [
            "thought",
            "observation",
            "error_recovery",
            "observation",
            "thought",
        ]
        assert converted.trace.steps[1].content == "answer in French"


def test_failed_and_denied_tool_returns_are_errors() -> None:
    """outcome failed/denied: the observation carries the error, the next call recovers."""
    for outcome in ("failed", "denied"):
        messages = [
            request(user("Delete the file")),
            response(call("rm", {"path": "a"}, "c1")),
            request(ret("rm", "permission denied", "c1", outcome=outcome)),
            response(call("rm", {"path": "a", "force": True}, "c2")),
            request(ret("rm", "ok", "c2")),
            response(text("Deleted.")),
        ]
        steps = pai.to_trace(messages).trace.steps
        assert [s.type for s in steps] == [
            "tool_call",
            "observation",
            "error_recovery",
            "observation",
            "thought",
        ]
        assert steps[1].content == "permission denied"


def test_the_output_tool_is_the_answer_not_a_tool() -> None:
    """final_result's arguments are the answer; its "Final result processed." is dropped."""
    messages = [
        request(user("Which city?")),
        response(text("Looking at the map."), call("final_result", {"city": "Lyon"}, "c1")),
        request(ret("final_result", "Final result processed.", "c1")),
    ]
    converted = pai.to_trace(messages, success=True)
    assert kinds(converted) == ["thought", "thought"]
    assert converted.trace.outcome.result_summary == '{"city": "Lyon"}'
    assert all(step.tool is None for step in converted.trace.steps)


def test_the_first_output_call_of_a_response_is_the_answer() -> None:
    """Of two output calls in one response Pydantic AI processes the first: it is the answer."""
    messages = [
        request(user("A capital?")),
        response(
            call("final_result", {"city": "Addis Ababa"}, "c1"),
            call("final_result", {"city": "Suva"}, "c2"),
        ),
        request(
            ret("final_result", "Final result processed.", "c1"),
            ret(
                "final_result", "Output tool not used - a final result was already processed.", "c2"
            ),
        ),
    ]
    converted = pai.to_trace(messages)
    assert converted.trace.outcome.result_summary == '{"city": "Addis Ababa"}'


def test_a_run_that_answers_through_the_output_tool_succeeded() -> None:
    """The output tool's "Final result processed." closes a run that answered: success true."""
    messages = [
        request(user("Which city?")),
        response(call("final_result", {"city": "Lyon"}, "c1")),
        request(ret("final_result", "Final result processed.", "c1")),
    ]
    converted = pai.to_trace(messages)
    assert converted.trace.metadata.success is True
    assert converted.trace.outcome.confidence == 0.8


def test_a_providers_own_tool_returns_in_its_response_and_the_text_after_is_the_answer() -> None:
    """A native tool (web search, code execution) is run by the model's provider within the
    response: ``builtin-tool-call``, then its ``builtin-tool-return`` in the same response, then
    the text. Before, the return was dropped (no observation), and the text, said beside a call,
    was a thought: a run that answered was no success."""
    searched = {**call("web_search", {"query": "weather SF"}, "ws_1")}
    searched["part_kind"] = "builtin-tool-call"
    found = {**ret("web_search", {"status": "completed"}, "ws_1"), "timestamp": "2025-01-01"}
    found["part_kind"] = "builtin-tool-return"
    messages = [
        request(user("Weather in SF?"), at="2025-09-16T10:00:00Z"),
        response(
            {"content": "I should search.", "part_kind": "thinking"},
            searched,
            found,
            text("Sunny, 73°F."),
            at="2025-09-16T10:00:05Z",
        ),
    ]
    converted = pai.to_trace(messages)
    assert [(s.type, s.tool.name if s.tool else None) for s in converted.trace.steps] == [
        ("thought", None),  # in the order of the response's parts, not the return's own time
        ("tool_call", "web_search"),
        ("observation", "web_search"),
        ("thought", None),
    ]
    assert converted.trace.outcome.result_summary == "Sunny, 73°F."
    assert converted.trace.metadata.success is True


def test_a_run_resumed_with_approvals_is_the_same_trace_as_the_run_it_resumes() -> None:
    """A run stopped for a tool awaiting approval (``DeferredToolRequests``) is resumed by a run
    given ``deferred_tool_results``: a new ``run_id``, its request the approved call's return and
    no user prompt. Before, it was a trace of its own: its objective a placeholder, its call with
    no input, and the first run, which the second completes, no success of either's."""
    first, second = {"run_id": "r1"}, {"run_id": "r2"}
    messages = [
        {**request(user("Temperature in Tokyo?")), **first},
        {**response(call("get_temperature", {"city": "Tokyo"}, "c1")), **first},
        {**request(ret("get_temperature", 20.0, "c1")), **second},
        {**response(text("It is 20 degrees.")), **second},
    ]
    converted = pai.to_trace(messages)
    assert kinds(converted) == ["tool_call", "observation", "thought"]
    assert converted.trace.task.objective == "Temperature in Tokyo?"
    assert converted.trace.steps[0].input == {"city": "Tokyo"}
    assert converted.trace.metadata.success is True
    third = {"run_id": "r3"}
    again = [
        *messages,
        {**request(user("And Osaka?")), **third},
        {**response(text("22.")), **third},
    ]
    assert pai.to_trace(again).trace.task.objective == "And Osaka?"  # a new prompt: a new run


def test_a_run_whose_output_is_a_file_succeeded_with_no_text_answer() -> None:
    """``output_type=BinaryImage``: the last response gives the image (a ``file`` part) and no
    text. Before, a run that gave its output was no success, for want of a text answer."""
    image = {"content": {"data": "iVBORw0KGgo", "media_type": "image/png"}, "part_kind": "file"}
    messages = [request(user("Draw an axolotl.")), response(text("Here."), image)]
    converted = pai.to_trace(messages)
    assert converted.trace.metadata.success is True
    drawn = [
        request(user("Draw an axolotl.")),
        response(call("get_animal", {}, "c1")),
        request(ret("get_animal", "axolotl", "c1")),
        response(image),
    ]
    assert pai.to_trace(drawn).trace.metadata.success is True
    assert pai.to_trace(drawn).trace.outcome.result_summary == "completed"
    asking = [*drawn[:3], response(image, call("draw", {}, "c2"))]
    assert pai.to_trace(asking).trace.metadata.success is False  # a tool still to run


def test_a_run_that_ends_in_a_request_did_not_succeed() -> None:
    """Without a final response the run did not finish: success false, confidence 0.2."""
    messages = [
        request(user("Go")),
        response(call("step", {}, "c1")),
        request(ret("step", "x", "c1")),
    ]
    converted = pai.to_trace(messages)
    assert converted.trace.metadata.success is False
    assert converted.trace.outcome.confidence == 0.2


def test_domain_and_confidence_come_from_the_argument_then_message_metadata() -> None:
    """kp.task_domain / kp.confidence on a message's metadata are read when no argument."""
    messages = [
        {**request(user("Go")), "metadata": {"kp.task_domain": "finance", "kp.confidence": 0.6}},
        response(text("Done.")),
    ]
    from_metadata = pai.to_trace(messages)
    assert from_metadata.trace.metadata.task_domain == "finance"
    assert from_metadata.trace.outcome.confidence == 0.6
    assert source_of(from_metadata)["domain_source"] == "metadata"
    argued = pai.to_trace(messages, domain="code", confidence=0.9)
    assert argued.trace.metadata.task_domain == "code"
    assert source_of(argued)["confidence_source"] == "argument"


def test_bytes_text_and_dicts_give_the_same_trace() -> None:
    """dump_json bytes, its text and the parsed list convert alike."""
    raw = (DATA / "weather_retry.json").read_bytes()
    assert (
        pai.to_trace(raw).trace
        == pai.to_trace(raw.decode()).trace
        == pai.to_trace(json.loads(raw)).trace
    )


def test_unreadable_messages_are_refused_with_their_path() -> None:
    """A bad message names its index and part; a non-list says what is expected."""
    with pytest.raises(ConversionError, match=r"\[1\]: not a Pydantic AI message"):
        pai.to_trace([request(user("x")), {"role": "user"}])
    with pytest.raises(ConversionError, match=r"\[1\]\.parts\[0\]\.tool_name"):
        pai.to_trace([request(user("x")), response({"args": {}, "part_kind": "tool-call"})])
    with pytest.raises(ConversionError, match="expected a list of Pydantic AI messages"):
        pai.to_trace({"kind": "request"})
    with pytest.raises(ConversionError, match="not valid JSON"):
        pai.to_trace(b"{oops")
    with pytest.raises(ConversionError, match="no step"):
        pai.to_trace([request(user("only a question"))])


def test_the_json_path_does_not_import_pydantic_ai() -> None:
    """Reading message JSON needs no framework."""
    import subprocess

    code = (
        "import sys, json; from knowledgepulse.sources import pydantic_ai as p; "
        f"p.to_trace(json.load(open({str(DATA / 'weather_retry.json')!r}))); "
        "print('pydantic_ai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_recognises_messages_and_lists_but_not_other_sources() -> None:
    """auto detection: Pydantic AI shapes yes; OTLP, LangSmith, Agents, smolagents no."""
    messages = load("weather_retry.json")
    assert pai.recognises(messages[0])
    assert pai.recognises(messages)
    others: list[Any] = [
        {"resourceSpans": []},
        {"name": "AgentExecutor", "run_type": "chain", "inputs": {}, "child_runs": []},
        {"object": "trace.span", "id": "span_1", "span_data": {"type": "function"}},
        {"task": "x", "task_images": None},
        {"step_number": 1, "timing": {"start_time": 0.0}},
        {"kind": "request", "parts": [{"content": "no part_kind"}]},
        {"kind": "span", "parts": []},
        [],
    ]
    assert not any(pai.recognises(value) for value in others)


def test_a_file_of_one_run_and_a_file_of_runs_a_line(tmp_path: Path) -> None:
    """A JSON list is one run; JSON Lines hold one run a line; bad lines are located."""
    single = list(convert_file(DATA / "weather_retry.json", source="pydantic-ai"))
    assert len(single) == 1
    assert isinstance(single[0], TraceItem)

    good = load("weather_retry.json")
    bad_part = [
        request(user("x")),
        response({"part_kind": "tool-call", "args": {}}),
        response(text("ok")),
    ]
    lines = [
        json.dumps(good),
        json.dumps(bad_part),
        json.dumps([request(user("?"))]),
        "[1,",
        json.dumps(load("legacy_retry_prompt.json")),
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    items = list(convert_file(path, source="pydantic-ai", options=TraceOptions(domain="code")))
    traces = [item for item in items if isinstance(item, TraceItem)]
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert len(traces) == 3  # the bad part is left out, its run still converts
    assert all(t.trace.metadata.task_domain == "code" for t in traces)
    assert problems[0] == f"{path}:2: [1].parts[0].tool_name: expected a tool name, found null"
    assert problems[1].startswith(f"{path}:3: ")
    assert "no step" in problems[1]
    assert problems[2].startswith(f"{path}:4: ")
    assert len(problems) == 3


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["ok", "retried", "failed"]), min_size=1, max_size=6))
def test_every_failed_return_is_followed_by_a_recovery(outcomes: list[str]) -> None:
    """Law: each failure is recovered by the next call, or by the final reply after the last."""
    messages: list[dict[str, Any]] = [request(user("Fetch it"))]
    for index, outcome in enumerate(outcomes):
        messages.append(response(call("fetch", {"try": index}, f"c{index}")))
        result = "data" if outcome == "ok" else "boom"
        messages.append(
            request(ret("fetch", result, f"c{index}", "success" if outcome == "ok" else outcome))
        )
    messages.append(response(text("Done.")))
    converted = pai.to_trace(messages)
    expected = sum(1 for outcome in outcomes if outcome != "ok")
    assert kinds(converted).count("error_recovery") == expected
    assert kinds(converted).count("observation") == len(outcomes)


def test_a_file_of_only_a_bad_message_is_reported_once(tmp_path: Path) -> None:
    """No second "no step" problem for a run that never started."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    items = [str(item) for item in convert_file(path, source="pydantic-ai")]
    assert len(items) == 1
    assert items[0].startswith(
        f"{path}[0]: not a Pydantic AI message: an object with keys content, role"
    )


@pytest.mark.parametrize("kind", [["request"], {"kind": "request"}])
def test_a_kind_that_is_a_list_or_an_object_is_a_located_problem(
    kind: object, tmp_path: Path
) -> None:
    """Neither recognising nor converting a message whose kind is not a string raises."""
    message = {"kind": kind, "parts": [{"part_kind": "user-prompt", "content": "hi"}]}
    assert pai.recognises(message) is False
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([message]), encoding="utf-8")
    items = list(convert_file(path, source="pydantic-ai"))
    assert items
    assert all(isinstance(item, Problem) for item in items)
    assert list(convert_file(path, source="auto"))


def builtin(kind: str, call_id: str, **fields: Any) -> dict[str, Any]:
    """A part of DeepWiki's remote MCP server, as Pydantic AI names it."""
    server = "mcp_server:deepwiki"
    return {"tool_name": server, "tool_call_id": call_id, "part_kind": kind, **fields}


def test_a_remote_mcp_call_is_a_call_of_the_servers_tool_and_its_listing_no_step() -> None:
    """``mcp_server:<id>``: ``call_tool`` calls the server's tool; ``list_tools`` is no call."""
    asked = {"repoName": "pydantic/pydantic-ai", "question": "What is it?"}
    messages = [
        request(user("Tell me about pydantic-ai")),
        response(
            builtin("builtin-tool-call", "mcpl_1", args={"action": "list_tools"}),
            builtin("builtin-tool-return", "mcpl_1", content={"tools": [], "error": None}),
            builtin(
                "builtin-tool-call",
                "mcp_1",
                args={"action": "call_tool", "tool_name": "ask_question", "tool_args": asked},
            ),
            builtin("builtin-tool-return", "mcp_1", content={"output": "An agent framework."}),
            text("It is an agent framework."),
        ),
    ]
    steps = pai.to_trace(messages).trace.steps
    assert [(s.type, s.tool.name, s.tool.mcp_server) for s in steps if s.tool] == [
        ("tool_call", "ask_question", "deepwiki"),
        ("observation", "ask_question", "deepwiki"),
    ]
    assert steps[0].input == asked
    assert steps[1].content == "An agent framework."


def test_a_remote_mcp_calls_error_and_a_failed_listing_are_errors() -> None:
    """An MCP return's ``is_error`` (Anthropic) fails its call; a listing's ``error`` is said."""
    messages = [
        request(user("Tell me about pydantic-ai")),
        response(
            builtin("builtin-tool-call", "mcpl_1", args={"action": "list_tools"}),
            builtin("builtin-tool-return", "mcpl_1", content={"error": "401 Unauthorized"}),
            builtin(
                "builtin-tool-call",
                "mcp_1",
                args={"action": "call_tool", "tool_name": "ask_question", "tool_args": {}},
            ),
            builtin(
                "builtin-tool-return",
                "mcp_1",
                content={"content": [{"type": "text", "text": "repo not found"}], "is_error": True},
            ),
            text("I could not reach DeepWiki."),
        ),
    ]
    steps = pai.to_trace(messages).trace.steps
    # each error an observation, the model's next action its recovery
    assert [(s.type, s.tool and s.tool.name, s.content) for s in steps] == [
        ("observation", None, "deepwiki: 401 Unauthorized"),
        ("error_recovery", "ask_question", "ask_question"),
        ("observation", "ask_question", "repo not found"),
        ("error_recovery", None, "I could not reach DeepWiki."),
    ]


def test_a_compaction_before_any_run_id_opens_the_run_after_it(tmp_path: Path) -> None:
    """``OpenAICompaction``'s response (no ``run_id``) stands for earlier turns: no run alone."""
    compacted = {
        **response({"part_kind": "compaction", "content": None, "id": "cmp_1"}),
        "run_id": None,
    }
    third = [
        {**request(user("And 5+5?")), "run_id": "run-3"},
        {**response(text("5 + 5 = 10")), "run_id": "run-3"},
    ]
    listed, lines = tmp_path / "messages.json", tmp_path / "messages.jsonl"
    listed.write_text(json.dumps([compacted, *third]))
    lines.write_text("".join(json.dumps(message) + "\n" for message in [compacted, *third]))
    for path in (listed, lines):
        items = list(convert_file(path, source="pydantic-ai"))
        assert [
            (item.trace.id, item.trace.task.objective, item.trace.outcome.result_summary)
            for item in items
            if isinstance(item, TraceItem)
        ] == [("kp:trace:pydantic-ai-run-3", "And 5+5?", "5 + 5 = 10")], path.name
        assert not [item for item in items if isinstance(item, Problem)], path.name


def test_a_conversation_continued_with_message_history_gives_one_trace_per_run(
    tmp_path: Path,
) -> None:
    """``all_messages()`` after ``message_history``: each ``run_id`` is a trace of its own."""
    first = [
        {**request(user("Weather in Paris?")), "run_id": "run-1"},
        {**response(text("Sunny in Paris.")), "run_id": "run-1"},
    ]
    second = [
        {**request(user("And in Lyon?")), "run_id": "run-2"},
        {**response(text("Rainy in Lyon.")), "run_id": "run-2"},
    ]
    trace = pai.to_trace(first + second).trace
    assert (trace.task.objective, trace.outcome.result_summary) == (
        "And in Lyon?",
        "Rainy in Lyon.",
    )
    assert trace == pai.to_trace(second).trace
    listed, lines = tmp_path / "messages.json", tmp_path / "messages.jsonl"
    listed.write_text(json.dumps(first + second))
    lines.write_text("".join(json.dumps(message) + "\n" for message in first + second))
    for path in (listed, lines):
        items = list(convert_file(path, source="pydantic-ai"))
        assert [
            (item.trace.id, item.trace.task.objective)
            for item in items
            if isinstance(item, TraceItem)
        ] == [
            ("kp:trace:pydantic-ai-run-1", "Weather in Paris?"),
            ("kp:trace:pydantic-ai-run-2", "And in Lyon?"),
        ], path.name
    lines.write_text(json.dumps(first + second) + "\n[]\n")
    *_, nothing = convert_file(lines, source="pydantic-ai")
    assert isinstance(nothing, Problem)
    assert "no step" in str(nothing)


def test_a_tool_that_returns_none_is_an_observation_of_null() -> None:
    """A tool that returns nothing gives a ``tool-return`` whose ``content`` is null; Pydantic
    AI still sends the model that return (``model_response_str``: the JSON ``null``), so the
    call has its observation, ``null``, as its ``running tool`` span's ``tool_response`` reads."""
    messages = [
        request(user("Turn the lights off")),
        response(call("lights_off", {}, "c1")),
        request(ret("lights_off", None, "c1")),
        response(text("Done.")),
    ]
    steps = pai.to_trace(messages).trace.steps
    assert [(s.type, s.tool.name if s.tool else None, s.content) for s in steps] == [
        ("tool_call", "lights_off", "lights_off"),
        ("observation", "lights_off", "null"),
        ("thought", None, "Done."),
    ]
    assert steps[0].output_summary == "null"


def test_the_recorded_null_return_of_a_real_run_is_its_observation() -> None:
    """A real Pydantic AI 1.0 run (the corpus's): ``get_player_name`` returned ``null``."""
    path = Path(__file__).parents[1] / "conformance" / "files" / "pydantic-ai"
    recorded = json.loads((path / "strands_fork_gemini_tools_and_output.json").read_text())
    steps = pai.to_trace(recorded).trace.steps
    observed = [(s.tool.name, s.content) for s in steps if s.type == "observation" and s.tool]
    assert ("get_player_name", "null") in observed


def test_the_instructions_and_system_prompt_are_the_runs_system_prompt() -> None:
    """gpt-5 called ``update_plan`` because its instructions said it MUST (the corpus's run): its
    training row opens with them. Before, the row dropped them and taught the call unasked."""
    path = Path(__file__).parents[1] / "conformance" / "files" / "pydantic-ai"
    recorded = json.loads((path / "responses_thinking_with_tool_calls.json").read_text())
    item = pai.to_trace(recorded)
    assert item.system == recorded[0]["instructions"]
    assert "MUST use the update_plan tool" in (item.system or "")
    prompted = [
        {
            **request({"content": "Be brief.", "part_kind": "system-prompt"}, user("Hi")),
            "instructions": "Be kind.",
        },
        response(text("Hello.")),
    ]
    assert pai.to_trace(prompted).system == "Be kind.\n\nBe brief."
    assert pai.to_trace([request(user("Hi")), response(text("Hello."))]).system is None


def test_the_code_interpreters_container_is_no_argument_of_its_call() -> None:
    """gpt-5's code interpreter call (the corpus's run): Pydantic AI keeps the sandbox's
    ``container_id`` beside the code in its ``args``; the model wrote the code alone. Before, the
    training row taught a container_id argument and the tool schema listed it."""
    path = Path(__file__).parents[1] / "conformance" / "files" / "pydantic-ai"
    recorded = json.loads((path / "responses_thinking_code_execution.json").read_text())
    (called,) = [
        part
        for message in recorded
        for part in message["parts"]
        if part["part_kind"] == "builtin-tool-call"
    ]
    assert "container_id" in called["args"]
    (step,) = [s for s in pai.to_trace(recorded).trace.steps if s.type == "tool_call"]
    assert step.input == {"code": called["args"]["code"]}
    mine = [request(user("Go")), response(call("lookup", {"container_id": "c"}, "c1"))]
    assert pai.to_trace(mine).trace.steps[0].input == {"container_id": "c"}  # a tool's own
