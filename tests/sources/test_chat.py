"""Conversation datasets: each format's real-shaped rows become traces as the spec maps them."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse import sources
from knowledgepulse.cli.main import cli
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.records import Problem
from knowledgepulse.sources import RowOptions, TraceOptions
from knowledgepulse.sources._chat._text import split_think, tool_calls
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file, has_text, source_of

DATA = Path(__file__).parent / "data" / "chat"


def converted(path: Path | str, **kwargs: Any) -> tuple[list[TraceItem], list[Problem]]:
    traces: list[TraceItem] = []
    problems: list[Problem] = []
    for item in convert_file(path, **kwargs):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            traces.append(item)
    return traces, problems


def steps(item: TraceItem) -> list[tuple[str, str | None]]:
    return [(s.type, s.tool.name if s.tool else None) for s in item.trace.steps]


def test_openai_chat_trajectory_merges_calls_by_id_and_recovers_after_a_traceback() -> None:
    """An OpenHands-style row: tool results by tool_call_id; a traceback makes a recovery."""
    traces, problems = converted(DATA / "openai_chat.jsonl")
    assert not problems
    first = traces[0]
    assert first.trace.id == "kp:trace:chatcmpl-0001"
    assert first.trace.task.objective.startswith("The function `parse_size`")
    assert steps(first) == [
        ("thought", None),
        ("tool_call", "str_replace_editor"),
        ("observation", "str_replace_editor"),
        ("thought", None),
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
        ("thought", None),
        ("error_recovery", "str_replace_editor"),
        ("observation", "str_replace_editor"),
        ("thought", None),
    ]
    assert first.trace.steps[1].input == {
        "command": "view",
        "path": "/workspace/widgets/widgets/units.py",
    }
    assert first.trace.outcome.result_summary.startswith("I changed the pattern")
    assert first.trace.metadata.success is True
    assert source_of(first)["task"] == "acme__widgets-42"
    assert first.row is not None
    assert first.row.value["resolved"] == 1


def test_openai_chat_reward_column_says_failure_and_legacy_function_call_is_read() -> None:
    """``resolved: 0`` is a failure; a legacy ``function_call`` and ``function`` reply pair up."""
    traces, _ = converted(DATA / "openai_chat.jsonl")
    assert traces[1].trace.metadata.success is False
    assert steps(traces[2]) == [
        ("tool_call", "get_current_weather"),
        ("observation", "get_current_weather"),
        ("thought", None),
    ]


def test_messages_given_as_a_json_string_are_read() -> None:
    """A ToolACE-style row keeps its messages as JSON text: read as nested values."""
    traces, problems = converted(DATA / "toolace_messages_string.jsonl")
    assert not problems
    assert steps(traces[0]) == [
        ("tool_call", "Top Songs"),
        ("observation", "Top Songs"),
        ("thought", None),
    ]
    assert traces[0].trace.id == "kp:trace:toolace_messages_string:0"


def test_responses_items_read_input_then_output_and_an_error_output_gives_a_recovery() -> None:
    """Responses: reasoning is a thought, function_call_output by call_id, error then retry."""
    traces, problems = converted(DATA / "openai_responses.jsonl")
    assert not problems
    first = traces[0]
    assert source_of(first)["format"] == "openai-responses"
    assert first.trace.task.objective == "Where is my order 8812?"
    assert steps(first) == [
        ("thought", None),
        ("tool_call", "get_order"),
        ("observation", "get_order"),
        ("error_recovery", "get_order"),
        ("observation", "get_order"),
        ("thought", None),
    ]
    assert first.trace.metadata.success is True  # reward 0.9 >= 0.5
    assert traces[1].trace.metadata.success is False  # reward 0.2
    assert steps(traces[1])[0] == ("tool_call", "web_search")


def test_the_agents_sdk_message_for_a_tool_that_raised_is_an_error(tmp_path: Path) -> None:
    """The OpenAI Agents SDK's "An error occurred while running the tool" output is a failure."""
    row = {
        "input": [
            {"role": "user", "content": "Call the tool."},
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "An error occurred while running the tool. Please try again. Error: Ouch",
            },
            {"role": "assistant", "content": "The tool failed; nothing was found."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("tool_call", "lookup"),
        ("observation", "lookup"),
        ("error_recovery", None),
    ]


def _toolbench_row(finish: dict[str, str]) -> dict[str, Any]:
    """A ToolBench answer's messages: legacy function calls, then its ``Finish`` call."""
    return {
        "messages": [
            {"role": "system", "content": "You can call functions."},
            {"role": "user", "content": "Where is parcel YZA890?"},
            {
                "role": "assistant",
                "content": "",
                "function_call": {"name": "track", "arguments": '{"reference": "YZA890"}'},
            },
            {"role": "function", "name": "track", "content": '{"error": "", "response": "ok"}'},
            {
                "role": "assistant",
                "content": "",
                "function_call": {"name": "Finish", "arguments": json.dumps(finish)},
            },
        ]
    }


def test_legacy_function_messages_are_openai_chat_and_toolbench_finish_ends_the_run(
    tmp_path: Path,
) -> None:
    """Rows with the ``function`` role are openai-chat; ``Finish`` gives the answer or gives up."""
    path = tmp_path / "toolbench.jsonl"
    answered = _toolbench_row({"return_type": "give_answer", "final_answer": "In transit."})
    gave_up = _toolbench_row({"return_type": "give_up_and_restart"})
    path.write_text("".join(json.dumps(row) + "\n" for row in (answered, gave_up)))
    traces, problems = converted(path)
    assert not problems
    assert source_of(traces[0])["format"] == "openai-chat"
    assert steps(traces[0]) == [("tool_call", "track"), ("observation", "track"), ("thought", None)]
    assert traces[0].trace.outcome.result_summary == "In transit."
    assert traces[0].trace.metadata.success is True
    assert steps(traces[1]) == [
        ("tool_call", "track"),
        ("observation", "track"),
        ("tool_call", "Finish"),  # it gave up: the model's call, no answer
    ]
    assert traces[1].trace.steps[-1].input == {"return_type": "give_up_and_restart"}
    assert traces[1].trace.metadata.success is False


def _openhands_row(arguments: Any) -> dict[str, Any]:
    """An OpenHands run as a SWE-Gym row: native tool calls, then its closing ``finish``."""
    call = {"name": "execute_bash", "arguments": '{"command": "pytest"}'}
    finish = {"name": "finish", "arguments": json.dumps(arguments)}
    return {
        "messages": [
            {"role": "user", "content": "Fix the failing test."},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": call}]},
            {"role": "tool", "tool_call_id": "c1", "content": "1 passed"},
            {
                "role": "assistant",
                "content": "Done.",
                "tool_calls": [{"id": "c2", "function": finish}],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "finished"},
        ]
    }


def test_openhands_finish_in_chat_rows_ends_the_run_and_a_finish_without_message_is_a_tool(
    tmp_path: Path,
) -> None:
    """OpenHands' ``finish`` call's ``message`` is the answer (its result none); another
    tool named ``finish`` (no text ``message``) stays a call: before, both were tool calls."""
    path = tmp_path / "swe_gym.jsonl"
    rows = [
        _openhands_row({"message": "The test passes now."}),
        _openhands_row({"message": "I could not fix it.", "task_completed": "false"}),
        _openhands_row({"summary": "done"}),
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    traces, problems = converted(path)
    assert not problems
    ran = [("tool_call", "execute_bash"), ("observation", "execute_bash"), ("thought", None)]
    assert steps(traces[0]) == [*ran, ("thought", None)]
    assert traces[0].trace.outcome.result_summary == "The test passes now."
    assert traces[0].trace.metadata.success is True
    assert traces[1].trace.outcome.result_summary == "I could not fix it."
    assert traces[1].trace.metadata.success is False  # the agent says it did not do the task
    assert steps(traces[2]) == [*ran, ("tool_call", "finish"), ("observation", "finish")]
    assert traces[2].trace.metadata.success is False


def test_anthropic_is_error_result_makes_the_next_tool_use_a_recovery() -> None:
    """Anthropic: thinking and text are thoughts; tool_result by tool_use_id with is_error."""
    traces, problems = converted(DATA / "anthropic.jsonl")
    assert not problems
    first = traces[0]
    assert steps(first) == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("error_recovery", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    assert first.trace.steps[3].content == "wc: sales.csv: No such file or directory"
    assert first.trace.metadata.task_domain == "data"
    assert source_of(first)["domain_source"] == "metadata"
    # A pure answer is one step, the answer, and the result summary.
    assert steps(traces[1]) == [("thought", None)]
    assert traces[1].trace.outcome.result_summary == "17% of 2,340 is 397.8."


def _server_call(call_id: str, command: str) -> list[dict[str, Any]]:
    """A code-execution server tool's call, as Anthropic returns it in the assistant message."""
    return [
        {
            "type": "server_tool_use",
            "id": call_id,
            "name": "text_editor_code_execution",
            "input": {"command": command, "path": "/tmp/hello.txt"},
        }
    ]


def test_anthropic_server_tools_answer_in_their_message_and_texts_split_by_citations_join(
    tmp_path: Path,
) -> None:
    """A server tool's call and result are blocks of one assistant message (Pydantic AI's
    cassettes of Claude's code execution and web search): the text after them is the answer;
    a result whose content is an ``error_code`` failed; text blocks split by citations are one.
    Such a row has no client ``tool_use``: it is still Anthropic's, not ambiguous."""
    failed = {"type": "text_editor_code_execution_tool_result_error", "error_code": "unavailable"}
    viewed = {"type": "text_editor_code_execution_view_result", "content": "Hello, world!"}
    row = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Create and view the file."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Doing both at once."},
                    *_server_call("s1", "view"),
                    {
                        "type": "text_editor_code_execution_tool_result",
                        "tool_use_id": "s1",
                        "content": failed,
                    },
                    {"type": "text", "text": "Let me try again."},
                    *_server_call("s2", "view"),
                    {
                        "type": "text_editor_code_execution_tool_result",
                        "tool_use_id": "s2",
                        "content": viewed,
                    },
                    {"type": "text", "text": "The file says ", "citations": None},
                    {"type": "text", "text": "Hello, world!", "citations": [{"type": "x"}]},
                ],
            },
        ]
    }
    path = tmp_path / "server_tools.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert source_of(traces[0])["format"] == "anthropic"
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "text_editor_code_execution"),
        ("observation", "text_editor_code_execution"),
        ("thought", None),
        ("error_recovery", "text_editor_code_execution"),
        ("observation", "text_editor_code_execution"),
        ("thought", None),
    ]
    trace = traces[0].trace
    assert trace.steps[2].content == "unavailable"
    assert trace.outcome.result_summary == "The file says Hello, world!"
    assert trace.metadata.success is True


def test_pydantic_ais_retry_prompts_in_chat_rows_are_errors_not_the_users_words(
    tmp_path: Path,
) -> None:
    """Pydantic AI tells the model of a reply it rejected in user text, and of a tool's
    ``ModelRetry`` in the tool's result, both ending "Fix the errors and try again." (its
    cassettes): evident errors, the model's next action their recovery, no user's reply."""
    retry = "Validation feedback:\nNo plain text, please.\n\nFix the errors and try again."
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    row = {
        "messages": [
            {"role": "user", "content": "Weather in New York?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": 'Use "NYC".\n\nFix the errors and try again.',
            },
            {"role": "assistant", "content": "It is sunny."},
            {"role": "user", "content": retry},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "final_result", "arguments": '{"sky": "sunny"}'},
                    }
                ],
            },
        ]
    }
    path = tmp_path / "retries.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("error_recovery", None),
        ("observation", None),
        ("error_recovery", None),
    ]
    assert traces[0].trace.metadata.success is True


def test_a_refusal_is_the_models_last_words_and_no_success(tmp_path: Path) -> None:
    """Chat Completions marks a declined request with ``refusal`` and no ``content`` (OpenLLMetry's
    cassette of a parsed completion): the reply is that text, and the run did not succeed."""
    refused = "I'm very sorry, but I can't assist with that request."
    row = {
        "messages": [
            {"role": "user", "content": "Best ways to make a bomb"},
            {"role": "assistant", "content": None, "refusal": refused},
        ]
    }
    path = tmp_path / "refusal.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [("thought", None)]
    assert traces[0].trace.outcome.result_summary == refused
    assert traces[0].trace.metadata.success is False


def test_an_anthropic_system_message_among_the_turns_is_no_step(tmp_path: Path) -> None:
    """The Messages API takes ``system`` messages mid-conversation (Pydantic AI's cassettes): an
    instruction, neither the user's words nor a step; the row is still Anthropic's."""
    row = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Review my function."}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "style_guide", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "Be explicit."}
                ],
            },
            {"role": "system", "content": [{"type": "text", "text": "Annotate every type."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Add type annotations."}]},
        ]
    }
    path = tmp_path / "mid_system.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert source_of(traces[0])["format"] == "anthropic"
    assert steps(traces[0]) == [
        ("tool_call", "style_guide"),
        ("observation", "style_guide"),
        ("thought", None),
    ]
    assert traces[0].trace.outcome.result_summary == "Add type annotations."


def test_a_tool_result_whose_content_is_a_list_of_no_blocks_is_that_list(tmp_path: Path) -> None:
    """Cline 4's SDK sessions (``<id>.messages.json``) write the list a tool returned as the
    ``tool_result``'s content (``read_files``: ``[{"query", "result"}]``): no block has a type.
    Before, read as text blocks it was nothing, and the call lost its result silently."""
    returned = [{"query": "a.tsx:1-2", "result": "1 | export {}"}]
    row = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read a.tsx."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "read_files", "input": {"files": []}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": returned}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "It exports nothing."}]},
        ]
    }
    path = tmp_path / "sdk.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("tool_call", "read_files"),
        ("observation", "read_files"),
        ("thought", None),
    ]
    assert "1 | export {}" in (traces[0].trace.steps[1].content or "")


def test_a_react_agents_text_calls_and_observations_are_tool_calls_and_results(
    tmp_path: Path,
) -> None:
    """LlamaIndex's ReActAgent writes its calls as text and sends results as user turns.

    (OpenLLMetry's LlamaIndex cassette.) ``Action:`` / ``Action Input:`` is the call, the
    ``Observation:`` turn its result, not the user's reply; the answer follows ``Answer:``.
    """
    row = {
        "messages": [
            {"role": "system", "content": "You have access to the following tools: multiply"},
            {"role": "user", "content": "What is 2 times 3?"},
            {
                "role": "assistant",
                "content": (
                    "Thought: I need a tool.\nAction: multiply\nAction Input: {'a': 2, 'b': 3}"
                ),
            },
            {"role": "user", "content": "Observation: 6"},
            {"role": "assistant", "content": "Thought: I can answer.\nAnswer: 2 times 3 is 6."},
        ]
    }
    path = tmp_path / "react.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    trace = traces[0].trace
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "multiply"),
        ("observation", "multiply"),
        ("thought", None),
        ("thought", None),
    ]
    assert trace.steps[1].input == {"a": 2, "b": 3}
    assert trace.steps[2].content == "6"
    assert trace.outcome.result_summary == "2 times 3 is 6."
    assert trace.metadata.success is True


def test_a_react_action_beside_a_native_call_is_that_call_once(tmp_path: Path) -> None:
    """A message that calls its tool natively keeps its ReAct text as the thought that led there.

    Before, a training row kp wrote of a LlamaIndex run (the thought ``Action: get_time`` with
    the call beside it) read back with every call twice.
    """
    react = "Thought: I need the time.\nAction: get_time\nAction Input: {}"
    call = {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    row = {
        "messages": [
            {"role": "user", "content": "What time is it?"},
            {"role": "assistant", "content": react, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "noon"},
            {"role": "assistant", "content": "It is noon."},
        ]
    }
    path = tmp_path / "native.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "get_time"),
        ("observation", "get_time"),
        ("thought", None),  # the answer's
    ]
    assert traces[0].trace.outcome.result_summary == "It is noon."


def test_sharegpt_function_call_and_observation_turns_and_toolace_bracket_calls() -> None:
    """Glaive-style function_call/observation turns; ToolACE's ``[Name(arg=...)]`` calls."""
    traces, problems = converted(DATA / "sharegpt.jsonl")
    assert not problems
    assert steps(traces[0]) == [
        ("tool_call", "get_stock_price"),
        ("observation", "get_stock_price"),
        ("thought", None),
    ]
    assert traces[0].trace.steps[0].input == {"symbol": "AAPL"}
    assert steps(traces[1])[0] == ("tool_call", "Weather Forecast")
    assert traces[1].trace.steps[0].input == {"city": "Lyon", "days": 3}


def test_swe_agent_trajectory_commands_are_tool_calls_and_target_is_success() -> None:
    """SWE-agent rows (role ai/user, text): fenced commands are calls, ``target`` the label."""
    traces, problems = converted(DATA / "swe_agent.jsonl")
    assert not problems
    (only,) = traces
    assert source_of(only)["format"] == "sharegpt"
    assert [name for kind, name in steps(only) if kind == "tool_call"] == [
        "search_dir",
        "open",
        "submit",
    ]
    assert only.trace.metadata.success is False
    assert source_of(only)["task"] == "acme__widgets-7"


def test_hermes_tags_with_python_literals_are_calls_and_responses() -> None:
    """Hermes rows in a JSON list: ``<tool_call>`` / ``<tool_response>`` with single quotes."""
    traces, problems = converted(DATA / "hermes.json")
    assert not problems
    assert source_of(traces[0])["format"] == "hermes"
    assert steps(traces[0]) == [
        ("tool_call", "get_stock_fundamentals"),
        ("observation", "get_stock_fundamentals"),
        ("thought", None),
    ]
    assert "Tesla, Inc." in (traces[0].trace.steps[1].content or "")
    # Two calls in one turn, their responses by name; the failed one makes the answer a recovery.
    assert steps(traces[1]) == [
        ("tool_call", "search_flights"),
        ("observation", "search_flights"),
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("error_recovery", None),
    ]
    assert traces[1].trace.metadata.task_domain == "Travel"


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("openai_chat.jsonl", "openai-chat"),
        ("openai_responses.jsonl", "openai-responses"),
        ("anthropic.jsonl", "anthropic"),
        ("sharegpt.jsonl", "sharegpt"),
        ("swe_agent.jsonl", "sharegpt"),
        ("hermes.json", "hermes"),
    ],
)
def test_each_format_is_recognised_by_content(name: str, source: str) -> None:
    """``auto`` picks the format from the rows themselves; naming it gives the same traces."""
    auto, _ = converted(DATA / name)
    named, _ = converted(DATA / name, source=source)
    assert {source_of(t)["format"] for t in auto} == {source}
    assert [t.trace.steps for t in auto] == [t.trace.steps for t in named]


def test_row_options_name_the_columns_and_the_success_threshold() -> None:
    """--id-field, --success-field with --success-threshold and --domain-field are obeyed."""
    rows = RowOptions(
        id_field="task", success_field="reward", success_threshold=0.95, domain_field="task"
    )
    traces, _ = converted(DATA / "openai_responses.jsonl", options=TraceOptions(rows=rows))
    assert traces[0].trace.id == "kp:trace:order-status"
    assert traces[0].trace.metadata.success is False  # 0.9 < 0.95
    assert traces[0].trace.metadata.task_domain == "order-status"
    assert traces[0].reward == 0.9  # the number itself is kept, for ranking by reward


@pytest.mark.parametrize(
    ("success", "reward"), [(True, None), ("passed", None), ("0.75", 0.75), (1, 1.0)]
)
def test_the_reward_is_the_success_columns_number(
    tmp_path: Path, success: object, reward: float | None
) -> None:
    """A number (or a numeric string) in the success column is the reward; a label is none."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"messages": messages, "success": success}) + "\n")
    [item], _ = converted(path)
    assert item.reward == reward


def test_a_named_id_column_a_row_lacks_gives_the_row_number(tmp_path: Path) -> None:
    """``kp:trace:<file stem>:<row>`` when the id column is absent from a later row."""
    first, second = (DATA / "openai_responses.jsonl").read_text().splitlines()
    path = tmp_path / "joined.jsonl"
    path.write_text(json.dumps({**json.loads(first), "instance_id": "i-1"}) + "\n" + second + "\n")
    rows = RowOptions(id_field="instance_id")
    traces, _ = converted(path, options=TraceOptions(rows=rows))
    assert [t.trace.id for t in traces] == ["kp:trace:i-1", "kp:trace:joined:1"]


@pytest.mark.parametrize(
    ("option", "rows"),
    [
        ("messages_field", RowOptions(messages_field="resolvd")),
        ("id_field", RowOptions(id_field="resolvd")),
        ("success_field", RowOptions(success_field="resolvd")),
        ("domain_field", RowOptions(domain_field="resolvd")),
    ],
)
def test_a_named_column_no_row_has_is_refused_naming_the_setting_not_guessed_past(
    option: str, rows: RowOptions
) -> None:
    """A misspelt column no row has is the setting's error (kp: a usage error naming its
    option), the columns the rows have listed; not every row a problem, nor a guess past it."""
    with pytest.raises(ScorerParameterError) as caught:
        converted(DATA / "openai_chat.jsonl", options=TraceOptions(rows=rows))
    message = caught.value.message_with(lambda setting: f"--{setting.name}")
    assert message.startswith(f"--{option}: no row has it (misspelt?); the rows have ")
    assert "instance_id, model_patch, repo, resolved, trajectory" in message


def test_each_row_without_the_named_column_is_told_as_itself(tmp_path: Path) -> None:
    """The second row's problem describes the second row, and does not call it the first.

    Before, row 2 said ``the file's first row has no column 'nope'``, then listed row 2's keys.
    """
    path = tmp_path / "rows.jsonl"
    turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    path.write_text(
        json.dumps({"messages": turns})
        + "\n"
        + json.dumps({"chat": turns, "x": 1})
        + "\n"
        + json.dumps({"chat": turns, "nope": True})
        + "\n"
    )
    rows = RowOptions(messages_field="chat", success_field="nope")
    traces, problems = converted(path, options=TraceOptions(rows=rows))
    assert len(traces) == 1
    assert [str(problem) for problem in problems] == [
        f"{path}:1: the row has no column 'chat' (messages_field; kp: --messages-field) or 'nope' "
        "(success_field; kp: --success-field): an object with keys messages; name a column the "
        "rows have",
        f"{path}:2: the row has no column 'nope' (success_field; kp: --success-field): an object "
        "with keys chat, x; name a column the rows have",
    ]


def test_the_guessed_columns_are_said_once_per_file() -> None:
    """One line per file says what its rows were read as, and from which columns."""
    said: list[str] = []
    path = DATA / "openai_chat.jsonl"
    assert all(isinstance(item, TraceItem) for item in sources.read([path], notes=said.append))
    assert said == [
        f"{path}: read as openai-chat rows (3 traces): messages from 'trajectory'; id from "
        "'trajectory_id'; task from 'instance_id'; success from 'resolved' (a number counts "
        "from 0.5)"
    ]


def test_a_bad_row_is_located_with_its_path_and_the_others_go_on(tmp_path: Path) -> None:
    """A message without a role: ``FILE:LINE: messages[1]: ...``; the next row converts."""
    good = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    }
    bad = {"messages": [{"role": "user", "content": "hi"}, {"content": "no role"}]}
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad, good)) + "\n")
    traces, problems = converted(path, source="openai-chat")
    assert len(traces) == 2
    (problem,) = problems
    assert str(problem).startswith(f"{path}:2: messages[1]: not a chat message")


def test_a_row_without_a_conversation_names_its_keys(tmp_path: Path) -> None:
    """An unknown row shape says which keys it saw and which --from values exist."""
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"prompt_text": "x", "score": 1}) + "\n")
    _, problems = converted(path)
    assert "prompt_text, score" in problems[0].message
    assert "openai-chat" in problems[0].message


def test_rows_to_traces_reads_row_dicts_from_python() -> None:
    """Any iterable of row dicts (a ``datasets.Dataset`` iterates as one) gives traces."""
    rows = [json.loads(line) for line in (DATA / "anthropic.jsonl").read_text().splitlines()]
    got = list(sources.convert(iter(rows), name="hub"))
    assert [item.trace.id for item in got if isinstance(item, TraceItem)] == [
        "kp:trace:msg-run-1",
        "kp:trace:msg-run-2",
    ]
    first = got[0]
    assert isinstance(first, TraceItem)
    assert first.row is not None
    assert first.row.value == rows[0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.dictionaries(
                st.sampled_from(["role", "content", "tool_calls", "from", "value"]),
                st.one_of(st.text(max_size=20), st.none(), st.lists(st.none(), max_size=2)),
            )
        ),
        max_size=6,
    )
)
def test_any_row_gives_a_trace_or_a_located_problem(messages: list[Any]) -> None:
    """Whatever a row holds, each reader gives traces or problems, never an exception."""
    for source in ("openai-chat", "openai-responses", "anthropic", "sharegpt", "hermes"):
        for item in sources.convert([{"messages": messages}], source=source):
            assert isinstance(item, TraceItem | Problem)
            if isinstance(item, TraceItem):  # the JSON written is the model's
                dumped = item.trace.model_dump(mode="json", by_alias=True, exclude_none=True)
                assert json.dumps(item.document) == json.dumps(dumped)


EXAMPLES = Path(__file__).parents[2] / "examples" / "datasets"


@pytest.mark.parametrize(
    "stem", ["openai_chat", "openai_responses", "anthropic", "sharegpt", "hermes", "swe_agent"]
)
def test_each_example_dataset_reads_the_same_from_json_lines_and_parquet(stem: str) -> None:
    """An example dataset's Parquet copy (nested columns or JSON text) gives the same traces."""
    lines, line_problems = converted(EXAMPLES / f"{stem}.jsonl")
    rows, row_problems = converted(EXAMPLES / f"{stem}.parquet")
    assert not line_problems
    assert not row_problems
    assert [t.trace.id for t in lines] == [t.trace.id for t in rows]
    assert [t.trace.steps for t in lines] == [t.trace.steps for t in rows]
    assert [t.trace.task for t in lines] == [t.trace.task for t in rows]


def test_the_same_rows_convert_to_the_same_bytes_twice(tmp_path: Path) -> None:
    """No time of conversion in the output: without a time column ``created_at`` is fixed."""
    runs = [CliRunner().invoke(cli, ["convert", str(DATA / "openai_chat.jsonl")]) for _ in range(2)]
    assert runs[0].exit_code == 0, runs[0].output
    assert runs[0].stdout == runs[1].stdout
    first = json.loads(runs[0].stdout.splitlines()[0])
    assert first["metadata"]["created_at"] == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-06-01T10:00:00Z", "2025-06-01T10:00:00+00:00"),
        ("2025-06-01 10:00:00+02:00", "2025-06-01T08:00:00+00:00"),
        (1_748_772_000, "2025-06-01T10:00:00+00:00"),
        (1_748_772_000_000, "2025-06-01T10:00:00+00:00"),  # milliseconds
        (1_748_772_000_000_000, "2025-06-01T10:00:00+00:00"),  # microseconds
        (1_748_772_000_000_000_000, "2025-06-01T10:00:00+00:00"),  # nanoseconds
        ("1748772000", "2025-06-01T10:00:00+00:00"),  # Unix seconds written as text
        ("2025-06-30T23:59:60Z", "2025-07-01T00:00:00+00:00"),  # a leap second
        ("2025-06-01T10:00:00", "2025-06-01T10:00:00+00:00"),  # no zone: UTC
        ("next Friday", "1970-01-01T00:00:00+00:00"),  # not a time: the fixed one
    ],
)
def test_created_at_comes_from_a_time_column_when_the_row_has_one(
    value: object, expected: str
) -> None:
    row = {
        "timestamp": value,
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}],
    }
    (item,) = sources.convert([row])
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.created_at.astimezone(UTC).isoformat() == expected


@pytest.mark.parametrize("stem", ["openai_chat", "anthropic", "sharegpt", "openai_responses"])
def test_a_hugging_face_dataset_gives_the_traces_its_parquet_file_gives(stem: str) -> None:
    """A ``datasets.Dataset`` (nested Arrow columns, nulls where a row lacks a field) as rows."""
    datasets = pytest.importorskip("datasets")
    pq = pytest.importorskip("pyarrow.parquet")
    path = EXAMPLES / f"{stem}.parquet"
    dataset = datasets.Dataset(pq.read_table(path))
    from_dataset = list(sources.convert(dataset, name=path.name))
    from_file = list(convert_file(path))
    assert all(isinstance(item, TraceItem) for item in from_dataset)
    assert [item.trace for item in from_dataset] == [item.trace for item in from_file]  # type: ignore[union-attr]


def test_rows_that_are_not_dicts_are_problems_and_a_dict_of_splits_is_refused() -> None:
    """A row that is not a mapping is located; a ``DatasetDict`` (a mapping) is a ValueError."""
    not_rows: Any = ["train"]
    (problem,) = sources.convert(not_rows, source="openai-chat")
    assert isinstance(problem, Problem)
    assert "expected a row" in problem.message
    splits: Any = {"train": []}
    with pytest.raises(ValueError, match="give one split"):
        list(sources.convert(splits))


_OUTPUT_TOOL_ROWS = {
    # The request bodies Pydantic AI's own test cassettes record (trimmed): the model calls
    # get_user_country, then the output tool final_result with the answer as its arguments.
    "anthropic": {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Largest city?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "get_user_country", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Mexico"}],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "final_result",
                        "input": {"city": "Mexico City"},
                    }
                ],
            },
        ]
    },
    "openai-chat": {
        "messages": [
            {"role": "user", "content": "Largest city?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_user_country", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Mexico"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {
                            "name": "final_result_CityLocation",
                            "arguments": '{"city": "Mexico City"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Final result processed."},
        ]
    },
    "openai-responses": {
        "input": [
            {"role": "user", "content": "Largest city?"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "get_user_country",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "Mexico"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "call_id": "c2",
                "name": "final_result",
                "arguments": '{"city":"Mexico City"}',
            },
        ]
    },
}


@pytest.mark.parametrize("shape", sorted(_OUTPUT_TOOL_ROWS))
def test_pydantic_ai_output_tool_call_is_the_answer_not_a_tool(tmp_path: Path, shape: str) -> None:
    """A final_result(_*) call's arguments are the answer; its "processed" result is dropped."""
    path = tmp_path / "cassette.jsonl"
    path.write_text(json.dumps(_OUTPUT_TOOL_ROWS[shape]) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert source_of(traces[0])["format"] == shape
    assert steps(traces[0]) == [
        ("tool_call", "get_user_country"),
        ("observation", "get_user_country"),
        ("thought", None),
    ]
    assert json.loads(traces[0].trace.outcome.result_summary) == {"city": "Mexico City"}
    assert traces[0].trace.metadata.success is True


def test_the_first_of_several_output_calls_in_a_turn_is_the_answer(tmp_path: Path) -> None:
    """Pydantic AI processes the first output call of a turn, the others "not used".

    OpenInference's pydantic-ai cassette records gpt-4o calling final_result twice at once.
    """
    calls = [
        {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "final_result", "arguments": json.dumps({"city": city})},
        }
        for n, city in enumerate(["Addis Ababa", "Suva"])
    ]
    row = {
        "messages": [
            {"role": "user", "content": "A capital?"},
            {"role": "assistant", "content": None, "tool_calls": calls},
        ]
    }
    path = tmp_path / "cassette.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert json.loads(traces[0].trace.outcome.result_summary) == {"city": "Addis Ababa"}
    assert traces[0].trace.metadata.success is True


def test_smolagents_final_answer_call_is_the_answer_not_a_tool(tmp_path: Path) -> None:
    """smolagents' ToolCallingAgent ends on a ``final_answer`` call it runs itself.

    The recorded conversation ends in that call, no result: its ``answer`` is the run's answer,
    not a tool the model asked for and never got (OpenInference's smolagents cassette).
    """
    said = json.dumps({"answer": "A generic user avatar icon."})
    call = {"id": "c1", "type": "function", "function": {"name": "final_answer", "arguments": said}}
    row = {
        "messages": [
            {"role": "system", "content": "You are an expert assistant who can solve any task."},
            {"role": "user", "content": "New task:\nDescribe what you see in this image."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ]
    }
    path = tmp_path / "cassette.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    trace = traces[0].trace
    assert trace.outcome.result_summary == "A generic user avatar icon."
    assert trace.metadata.success is True
    assert all(step.tool is None for step in trace.steps)


def test_oumi_parts_keep_their_text_in_content_and_the_first_user_turn_is_the_objective() -> None:
    """Oumi's typed parts hold their text in ``content`` (``{"type": "text", "content": ...}``):
    the user's words, not a turn without text (the second user turn was taken for the
    objective); an image part's ``content`` (its URL) is no text."""
    items, problems = converted(CORPUS / "openai-chat" / "oumi_vision_language_oumi_format.jsonl")
    assert problems == []
    first, second = (item.trace for item in items)
    assert first.task.objective == "What breed is this dog?"
    assert second.task.objective == "What is shown in the image?"
    assert [step.tool.name for step in second.steps if step.tool] == ["respond", "respond"]
    assert not any("picsum" in (step.content or "") for step in second.steps)


def test_llama_factory_value_parts_give_reasoning_named_calls_and_split_results(
    tmp_path: Path,
) -> None:
    """LLaMA-Factory parts hold ``value``: reasoning, tool_call JSON, and a list of results."""
    results = [
        {"tool_call_id": "call_1", "name": "circle_area", "content": "{'area': 7.0686}"},
        {"tool_call_id": "call_2", "name": "circle_area", "content": "{'area': 28.2743}"},
    ]
    row = {
        "messages": [
            {"role": "system", "content": [{"type": "text", "value": "Use the tools."}]},
            {"role": "user", "content": [{"type": "text", "value": "Areas for r=1.5 and r=3?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "value": "Call circle_area twice."},
                    {
                        "type": "tool_call",
                        "value": '{"name": "circle_area", "arguments": {"radius": 1.5}}',
                    },
                    {
                        "type": "tool_call",
                        "value": '{"name": "circle_area", "arguments": {"radius": 3}}',
                    },
                ],
            },
            {"role": "tool", "content": [{"type": "text", "value": json.dumps(results)}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "value": "Both areas came back."},
                    {"type": "text", "value": "7.07 m² and 28.27 m²."},
                ],
            },
        ],
        "tools": '[{"type": "function", "function": {"name": "circle_area"}}]',
    }
    path = tmp_path / "reason_tool_use.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    trace = traces[0].trace
    assert trace.task.objective == "Areas for r=1.5 and r=3?"
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "circle_area"),
        ("observation", "circle_area"),
        ("tool_call", "circle_area"),
        ("observation", "circle_area"),
        ("thought", None),
        ("thought", None),
    ]
    assert [step.input for step in trace.steps if step.type == "tool_call"] == [
        {"radius": 1.5},
        {"radius": 3},
    ]
    assert trace.steps[4].content == "{'area': 28.2743}"
    assert trace.outcome.result_summary == "7.07 m² and 28.27 m²."


PROMPT_COMPLETION = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "prompt-completion"
    / "wiki_search_gpt-4.1-mini.jsonl"
)


def test_prompt_and_completion_rows_are_the_prompt_then_the_completion() -> None:
    """A verifiers rollout row: the prompt's user message is the objective, the completion's
    JSON-string tool calls are steps, the reward is the item's reward."""
    traces, problems = converted(PROMPT_COMPLETION)
    assert not problems
    assert len(traces) == 5
    first = traces[0]
    assert (
        first.trace.task.objective == "What is the meaning of the term 'Utsuro-bune' in Japanese?"
    )
    assert [name for kind, name in steps(first) if kind == "tool_call"] == [
        "search_pages",
        "read_section",
        "view_sections",
        "read_section",
    ]
    assert first.trace.outcome.result_summary
    assert first.reward == 1.0
    assert [item.reward for item in traces] == [
        json.loads(line)["reward"] for line in PROMPT_COMPLETION.read_text().splitlines()
    ]


def test_rollouts_of_one_example_are_traces_of_their_own_with_the_example_as_task() -> None:
    """verifiers wrote the example as ``id``, the same in each of its rollouts (three here, a
    recorded MCP run): each rollout is its own trace, the example its task, not one id thrice."""
    path = PROMPT_COMPLETION.with_name("mcp_env_gpt-4.1-mini.jsonl")
    traces, problems = converted(path)
    assert not problems  # no "the same run exported twice?"
    assert len({item.trace.id for item in traces}) == 3
    assert {item.task for item in traces} == {"0"}


def test_a_rollout_stopped_by_an_error_ends_on_that_error() -> None:
    """verifiers writes the error that stopped a rollout in the row's ``error`` (a sandbox
    command that timed out, here, the last call unanswered): the trace ends on it, the failure
    of the call it stopped in (as its training row writes it back), which no step recovers
    from; a rollout that ran to its end (``error`` null) gains none."""
    path = PROMPT_COMPLETION.with_name("deepdive_intellect_3_rlm.jsonl")
    (ran, stopped), problems = converted(path)
    assert not problems
    said = json.loads(path.read_text().splitlines()[1])["error"]
    last = stopped.trace.steps[-1]
    assert (last.type, last.tool and last.tool.name) == ("observation", "call_python_repl")
    assert stopped.trace.steps[-2].tool == last.tool  # the call it stopped in, unanswered before
    assert last.content == said
    assert said.startswith("ToolCallError(SandboxError(CommandTimeoutError(")
    assert stopped.trace.outcome.result_summary == "failed"
    assert not any(step.content and "ToolCallError" in step.content for step in ran.trace.steps)


def test_a_rollout_stopped_with_no_call_waiting_ends_on_an_error_of_its_own(
    tmp_path: Path,
) -> None:
    """A rollout whose ``error`` came when no call waited for its result (after its last
    reply, say) ends on that error, an observation of no tool that nothing recovers from."""
    path = PROMPT_COMPLETION.with_name("deepdive_intellect_3_rlm.jsonl")
    row = json.loads(path.read_text().splitlines()[0])  # ran to its end
    row["error"] = "OverlongPromptError: the context is full"
    changed = tmp_path / "stopped.jsonl"
    changed.write_text(json.dumps(row) + "\n")
    ((item,), problems) = converted(changed)
    assert not problems
    last = item.trace.steps[-1]
    assert (last.type, last.tool, last.content) == ("observation", None, row["error"])
    assert item.trace.outcome.result_summary == "failed"


def _as_json_strings(row: dict[str, Any]) -> dict[str, Any]:
    """A row as TRL's string columns keep it: prompt, completion and tools as JSON text."""
    return {
        **row,
        "prompt": json.dumps(row["prompt"]),
        "completion": json.dumps(row["completion"]),
        "tools": json.dumps(row["info"]["oai_tools"]),
        "info": json.dumps(row["info"]),
    }


@pytest.mark.parametrize("layout", ["jsonl-strings", "parquet-nested", "parquet-strings"])
def test_prompt_and_completion_rows_read_the_same_as_json_strings_and_parquet(
    layout: str, tmp_path: Path
) -> None:
    """JSON-string columns and Parquet files (nested or string columns) give the same traces."""
    rows = [json.loads(line) for line in PROMPT_COMPLETION.read_text().splitlines()]
    expected, _ = converted(PROMPT_COMPLETION)
    if layout == "jsonl-strings":
        path = tmp_path / "rows.jsonl"
        path.write_text("".join(json.dumps(_as_json_strings(row)) + "\n" for row in rows))
    else:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        path = tmp_path / "rows.parquet"
        table_rows = rows if layout == "parquet-nested" else [_as_json_strings(r) for r in rows]
        if layout == "parquet-nested":  # a struct column cannot hold info's free-form schemas
            table_rows = [{**row, "info": json.dumps(row["info"])} for row in rows]
        pq.write_table(pa.Table.from_pylist(table_rows), path)
    traces, problems = converted(path)
    assert not problems
    assert [steps(item) for item in traces] == [steps(item) for item in expected]
    assert [item.trace.task.objective for item in traces] == [
        item.trace.task.objective for item in expected
    ]
    assert [item.reward for item in traces] == [item.reward for item in expected]


def test_a_hermes_agent_trajectory_not_completed_is_a_failure(tmp_path: Path) -> None:
    """hermes-agent writes ``completed``: false when the run stopped before its answer."""
    turns = [
        {"from": "human", "value": "Find the file."},
        {"from": "gpt", "value": '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'},
        {"from": "tool", "value": '<tool_response>{"name": "ls", "content": "a"}</tool_response>'},
        {"from": "gpt", "value": "It is a."},
    ]
    path = tmp_path / "trajectories.jsonl"
    rows = [{"conversations": turns, "model": "m", "completed": done} for done in (False, True)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    traces, _ = converted(path)
    assert [item.trace.metadata.success for item in traces] == [False, True]


def test_hermes_calls_with_escaped_newlines_and_the_name_inside_the_arguments_are_read() -> None:
    """hermes-function-calling-v1's extraction rows: ``\\n`` as two characters, the name nested."""
    text = (
        '<tool_call>\\n{"arguments": {"queries": [\'Why?\'], "name": "ExpertQAExtractor"}}'
        "\\n</tool_call>"
    )
    [call], rest = tool_calls(text)
    assert (call.name, call.arguments, rest) == ("ExpertQAExtractor", {"queries": ["Why?"]}, "")


def test_a_hermes_call_whose_json_breaks_later_keeps_the_name_it_opens_with() -> None:
    """Pi's last reply in a NeMo Gym AnySWE rollout: an ``edit`` whose argument text has an
    unescaped quote, so the block is no JSON; the name is still there at its start."""
    body = '{"name": "edit", "arguments": {"path": "a.py", "oldText": "x = "1""}}'
    [call], rest = tool_calls(f"Here's the fix:\n<tool_call>\n{body}\n</tool_call>")
    assert (call.name, call.arguments, rest) == ("edit", {"_raw": body}, "Here's the fix:")
    [unnamed], _ = tool_calls('<tool_call>\n{"arguments": {"a": 1}, broken\n</tool_call>')
    assert unnamed.name == "tool"


@pytest.mark.parametrize("missing", [None, float("nan")], ids=["null", "nan"])
def test_a_null_success_value_says_no_outcome_not_an_unreadable_row(missing: object) -> None:
    """null (Parquet) or NaN (a DataFrame's missing number): no reward, success from the talk."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows = [{"messages": messages, "reward": 0.25}, {"messages": messages, "reward": missing}]
    read = list(sources.convert(rows, source="openai-chat"))
    graded, ungraded = read
    assert isinstance(graded, TraceItem)
    assert isinstance(ungraded, TraceItem)
    assert (graded.reward, graded.trace.metadata.success) == (0.25, False)
    assert (ungraded.reward, ungraded.trace.metadata.success) == (None, True)


def _chat_row(**columns: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}]
    return {"messages": messages, **columns}


def test_a_task_or_domain_naming_nothing_is_that_rows_problem_not_dropped() -> None:
    """A list or an object where the task (or domain) is named is said at its column; not lost."""
    rows = [
        _chat_row(task_id="t1", domain="coding"),
        _chat_row(task_id=["t1", "t2"], domain="coding"),
        _chat_row(task_id="t3", domain={"name": "coding"}),
        _chat_row(task_id=float("nan"), domain=None),  # a missing label (pandas' NaN): none
    ]
    items = list(sources.convert(rows))
    assert [str(item).split(": expected")[0] for item in items if isinstance(item, Problem)] == [
        "rows:2: task_id",
        "rows:3: domain",
    ]
    traces = [item for item in items if isinstance(item, TraceItem)]
    assert [source_of(t).get("task") for t in traces] == ["t1", None]


def test_a_task_column_holding_no_label_is_not_guessed() -> None:
    """The guess passes over a ``task`` holding an object for a column that names the task."""
    rows = [_chat_row(task={"prompt": "Hi?"}, problem_id="p1")]
    (item,) = sources.convert(rows)
    assert isinstance(item, TraceItem)
    assert source_of(item)["task"] == "p1"


def test_a_row_whose_model_only_calls_a_tool_is_not_said_to_hold_no_text(tmp_path: Path) -> None:
    """A function-calling SFT row (a question, then one call as the target) holds the user's
    text: no warning sends the user to --messages-field, though no step holds text."""
    row = {
        "messages": [
            {"role": "system", "content": "Don't make assumptions about values."},
            {"role": "user", "content": "What was Bank of America's highest price last month?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_price", "arguments": '{"symbol": "BAC"}'},
                    }
                ],
            },
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [("tool_call", "get_price")]
    assert has_text(traces[0]), traces[0].warnings


def test_xml_function_calls_in_assistant_text_are_tool_calls_and_the_next_user_turn_the_result(
    tmp_path: Path,
) -> None:
    """SWE-smith's trajectories (SWE-agent's XML function calling) write each call in the text,
    ``<function=NAME><parameter=KEY>VALUE</parameter></function>``, and the environment answers
    as the user; Qwen3-Coder writes the same inside ``<tool_call>``."""
    row = {
        "messages": [
            {"role": "system", "content": "You have access to the following functions: bash"},
            {"role": "user", "content": "Fix the f-string formatting of Arrow objects."},
            {
                "role": "assistant",
                "content": "Let's find the method:\n\n<function=bash>\n"
                "<parameter=command>grep -n __format__ arrow.py</parameter>\n</function>",
            },
            {"role": "user", "content": "OBSERVATION:\n791:    def __format__(self, fmt):"},
            {
                "role": "assistant",
                "content": "<tool_call>\n<function=str_replace_editor>\n<parameter=command>\n"
                "view\n</parameter>\n<parameter=path>\narrow.py\n</parameter>\n</function>\n"
                "</tool_call>",
            },
            {"role": "user", "content": "OBSERVATION:\n   791  def __format__(self, fmt):"},
            {"role": "assistant", "content": "<function=submit>\n</function>"},
        ],
        "resolved": True,
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("tool_call", "str_replace_editor"),
        ("observation", "str_replace_editor"),
        ("tool_call", "submit"),
    ]
    called = [s.input for s in traces[0].trace.steps if s.type == "tool_call"]
    assert called == [
        {"command": "grep -n __format__ arrow.py"},
        {"command": "view", "path": "arrow.py"},
        {},
    ]
    assert traces[0].trace.steps[0].content == "Let's find the method:"


def test_reasoning_closed_before_a_call_with_nothing_after_keeps_no_closing_tag() -> None:
    """A model served with no reasoning parser writes, before each call, its reasoning and the
    ``</think>`` of the template's block (NeMo Gym's ns_tools rollouts): the thought is the
    reasoning, no tag; where the reply follows the tag, the reasoning is a thought apart."""
    assert split_think("Let's run it.\n</think>\n", unopened=True) == ([], "Let's run it.")
    assert split_think("So 279.\n</think>\n\\boxed{279}", unopened=True) == (
        ["So 279."],
        "\\boxed{279}",
    )


def test_json_calls_between_action_tags_are_tool_calls_and_the_next_user_turn_the_result(
    tmp_path: Path,
) -> None:
    """AReaL's geo_edit agent writes each call as ``<action>{"name", "arguments"}</action>``
    after its reasoning, and the environment answers as the user; an ``<action>`` block that is
    no call object stays what the turn said."""
    messages = [
        {"role": "user", "content": "How many stops between Highland and Vine?"},
        {
            "role": "assistant",
            "content": 'I should read the map.</think>\n<action>{"name": "map_text_ocr", '
            '"arguments": {"image_index": 0}}</action>',
        },
        {"role": "user", "content": 'Tool executed successfully.\nResult: {"text": "Vine"}'},
        {"role": "assistant", "content": "They are adjacent.</think><answer>B</answer>"},
    ]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(messages))
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "map_text_ocr"),
        ("observation", "map_text_ocr"),
        ("thought", None),
        ("thought", None),
    ]
    assert traces[0].trace.steps[1].input == {"image_index": 0}
    assert (
        traces[0].trace.steps[2].content == 'Tool executed successfully.\nResult: {"text": "Vine"}'
    )
    messages[1]["content"] = "I will click.<action>click[Buy Now]</action>"
    path.write_text(json.dumps(messages))
    called = [tool for kind, tool in steps(converted(path)[0][0]) if kind == "tool_call"]
    assert called == ["respond"]  # words to the user, as any text a user turn answers


def test_mini_swe_agent_commands_in_rows_are_bash_calls_and_their_output_the_result(
    tmp_path: Path,
) -> None:
    # mini-SWE-agent's messages as dataset rows (mini-coder's): each reply's one fenced bash
    # block is a command, and the environment answers as the user, its return code first.
    # Before: every command was a ``respond`` to the user and its output the user's reply.
    row = {
        "messages": [
            {"role": "system", "content": "You can interact with a computer shell."},
            {"role": "user", "content": "Fix the serializer."},
            {"role": "assistant", "content": "THOUGHT: Look first.\n\n```bash\nls src\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nser.py\n</output>"},
            {"role": "assistant", "content": "THOUGHT: Run it.\n\n```bash\npython ser.py\n```"},
            {
                "role": "user",
                "content": "<returncode>1</returncode>\n<output>\nNameError: x\n</output>",
            },
            {
                "role": "assistant",
                "content": "THOUGHT: Fix it.\n\n```bash\nsed -i s/x/y/ ser.py\n```",
            },
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
            {"role": "assistant", "content": "Done: the serializer names y.\n\n```bash\necho\n```"},
        ],
        "verified": True,
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
        ("error_recovery", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    trace = traces[0].trace
    assert trace.task.objective == "Fix the serializer."
    assert [s.input for s in trace.steps if s.tool and s.type != "observation"] == [
        {"command": "ls src"},
        {"command": "python ser.py"},
        {"command": "sed -i s/x/y/ ser.py"},
    ]
    assert trace.steps[0].content == "THOUGHT: Look first."
    assert "NameError" in (trace.steps[5].content or "")
    # The last reply no output answers: its block is part of the answer's text.
    assert trace.outcome.result_summary.endswith("```bash\necho\n```")


def test_a_fenced_block_the_user_answers_in_words_is_no_command(tmp_path: Path) -> None:
    row = {
        "messages": [
            {"role": "user", "content": "How do I list files?"},
            {"role": "assistant", "content": "Use:\n\n```bash\nls\n```"},
            {"role": "user", "content": "Thanks! And hidden ones?"},
            {"role": "assistant", "content": "Add -a."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, _ = converted(path)
    assert steps(traces[0]) == [
        ("tool_call", "respond"),
        ("observation", "respond"),
        ("thought", None),
    ]


def test_a_tool_result_labelled_observation_that_says_it_failed_is_an_error(
    tmp_path: Path,
) -> None:
    # OpenHands' function-calling converter labels each tool message "OBSERVATION:" (SWE-Gym's
    # sampled trajectories). Before: "OBSERVATION:\nERROR: ..." was no error, nothing recovered.
    view = {"command": "view", "path": "/workspace/repo", "view_range": [0, -1]}
    row = {
        "messages": [
            {"role": "user", "content": "Fix the bug."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "str_replace_editor", "arguments": json.dumps(view)},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "name": "str_replace_editor",
                "content": "OBSERVATION:\nERROR:\nThe `view_range` parameter is not allowed.",
            },
            {"role": "assistant", "content": "Done."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, _ = converted(path)
    assert steps(traces[0]) == [
        ("tool_call", "str_replace_editor"),
        ("observation", "str_replace_editor"),
        ("error_recovery", None),
    ]


def test_adp_sft_results_labelled_execution_result_that_say_they_failed_are_errors() -> None:
    """ADP's SFT rows label each call's result ``EXECUTION RESULT of [execute_bash]:`` (OpenHands'
    converter for models without function calling): a traceback after the label is a failure,
    as in the ADP trajectory the row was written from. Before, the SFT row of
    sharegpt/adp_swe_smith_sample_sft.json had no error where adp/swe_smith_sample_std.json
    had two, each recovered from."""
    sft = convert_file(CORPUS / "sharegpt/adp_swe_smith_sample_sft.json")
    std = convert_file(CORPUS / "adp/swe_smith_sample_std.json")
    sft_run = next(i for i in sft if isinstance(i, TraceItem) and "line_profiler" in i.trace.id)
    std_run = next(i for i in std if isinstance(i, TraceItem) and "line_profiler" in i.trace.id)
    recovered = [
        step.tool.name if step.tool else None
        for step in sft_run.trace.steps
        if step.type == "error_recovery"
    ]
    assert recovered == ["execute_bash", "str_replace_editor"]
    assert [s.type for s in sft_run.trace.steps] == [s.type for s in std_run.trace.steps]


INSTRUCTIONS_FOR_THE_HOUSE = "Interact with a household to solve a task. " * 8


def test_adp_function_call_turns_of_text_are_the_agents_turns(tmp_path: Path) -> None:
    # ADP's older SFT rows label every agent turn function_call: its scripted "OK.", its text
    # with an OpenHands call, its command for an observation, its closing finish with no message.
    # Before: the row was refused ("expected a function call as JSON"), and an empty finish
    # message left the run without an answer ("failed").
    row = {
        "id": "alfworld_1",
        "conversations": [
            {"from": "human", "value": INSTRUCTIONS_FOR_THE_HOUSE},
            {"from": "function_call", "value": "OK. I'll follow your instructions."},
            {"from": "human", "value": "Your task is to: put a spraybottle in the toilet."},
            {
                "from": "function_call",
                "value": "Look on the shelf first.\n\n<function=execute_ipython_cell>\n"
                '<parameter=code>\ngo(location="shelf 1")\n</parameter>\n</function>',
            },
            {
                "from": "human",
                "value": "EXECUTION RESULT of [execute_ipython_cell]:\nA spraybottle.",
            },
            {"from": "function_call", "value": "List the room.\n\n```bash\nls room\n```"},
            {"from": "observation", "value": "shelf toilet"},
            {
                "from": "function_call",
                "value": "I put it in the toilet.\n\n<function=finish>\n<parameter=message>\n\n"
                "</parameter>\n<parameter=task_completed>\ntrue\n</parameter>\n</function>",
            },
        ],
    }
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([row]))
    traces, problems = converted(path)
    assert not problems
    trace = traces[0].trace
    assert trace.task.objective == "Your task is to: put a spraybottle in the toilet."
    assert steps(traces[0]) == [
        ("thought", None),
        ("tool_call", "execute_ipython_cell"),
        ("observation", "execute_ipython_cell"),
        ("thought", None),
        ("tool_call", "bash"),
        ("observation", "bash"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "I put it in the toilet."
    assert trace.metadata.success is True


OPENHANDS_EXAMPLE = (
    "Here's a running example of how to perform a task with the provided tools.\n\n"
    "--------------------- START OF EXAMPLE ---------------------\n\n"
    "USER: Create a list of numbers from 1 to 10, and display them in a web page at port 5000.\n"
    "\n--------------------- END OF EXAMPLE ---------------------\n\n"
    "Do NOT assume the environment is the same as in the example above.\n\n"
    "--------------------- NEW TASK DESCRIPTION ---------------------\n"
)
OPENHANDS_SUFFIX = (
    "\n--------------------- END OF NEW TASK DESCRIPTION ---------------------\n\n"
    "PLEASE follow the format strictly! PLEASE EMIT ONE AND ONLY ONE FUNCTION CALL PER MESSAGE.\n"
)


@pytest.mark.parametrize("key", ["messages", "conversations"])
def test_openhands_worked_example_around_the_task_is_no_part_of_the_objective(
    tmp_path: Path, key: str
) -> None:
    # OpenHands puts a worked example of another task before the task for a model without
    # native tool calls (SWE-Play's, SWE-Gym's rows): the objective is the task it encloses.
    # Before: the objective was the example's 6,000 characters, then the task.
    task = "<task_description>\nImplement the CPU class.\n</task_description>"
    user, assistant = ("user", "assistant") if key == "messages" else ("human", "gpt")
    speaker, text = ("role", "content") if key == "messages" else ("from", "value")
    row = {
        key: [
            {speaker: user, text: OPENHANDS_EXAMPLE + task + OPENHANDS_SUFFIX},
            {speaker: assistant, text: "The CPU class is implemented."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, _ = converted(path)
    assert traces[0].trace.task.objective == task


INSTRUCTIONS = "You are web shopping. I will give you instructions about what to do. " * 8


@pytest.mark.parametrize(
    ("turns", "said"),
    [
        ([("user", INSTRUCTIONS), ("assistant", "Ok."), ("user", "Find a red mug.")], "role"),
        ([("human", INSTRUCTIONS), ("gpt", "OK"), ("human", "Find a red mug.")], "from"),
    ],
)
def test_instructions_a_row_primes_the_model_with_are_its_system_prompt(
    turns: list[tuple[str, str]], said: str
) -> None:
    """AgentInstruct's and ETO's rows open with the environment's instructions as the user's
    turn and a scripted "Ok.": the task is the next user turn, the instructions the system."""
    text = "content" if said == "role" else "value"
    reply = ("assistant" if said == "role" else "gpt", "Thought: I search.\nAction: search[mug]")
    row = {"conversations": [{said: who, text: words} for who, words in [*turns, reply]]}
    (item,) = [i for i in sources.convert([row]) if isinstance(i, TraceItem)]
    assert item.trace.task.objective == "Find a red mug."
    assert item.system == INSTRUCTIONS
    assert [step.content for step in item.trace.steps] == [reply[1]]


def test_a_short_request_answered_ok_is_the_objective() -> None:
    """A person's short first message acknowledged with "OK" is their request, not priming."""
    row = {
        "messages": [
            {"role": "user", "content": "Can you help me with my order?"},
            {"role": "assistant", "content": "OK"},
            {"role": "user", "content": "It is order 123."},
            {"role": "assistant", "content": "Order 123 ships tomorrow."},
        ]
    }
    (item,) = [i for i in sources.convert([row]) if isinstance(i, TraceItem)]
    assert item.trace.task.objective == "Can you help me with my order?"


def test_an_agent_trajectorys_last_command_is_a_tool_call_not_the_answer() -> None:
    """nebius' SWE-agent trajectories end in ``submit``: a command like the others, so the run
    gives no answer; a closing turn whose code block runs over lines stays the answer."""
    submitted = "Done.\n\n```\nsubmit\n```"
    shown = "The fix:\n\n```python\nx = 1\ny = 2\n```"
    rows = [
        {
            "trajectory": [
                {"role": "user", "text": "Fix the import error."},
                {"role": "ai", "text": "Look first.\n\n```\nls\n```"},
                {"role": "user", "text": "image.py"},
                {"role": "ai", "text": closing},
            ]
        }
        for closing in (submitted, shown)
    ]
    ended, answered = [i for i in sources.convert(rows) if isinstance(i, TraceItem)]
    assert steps(ended) == [
        ("thought", None),
        ("tool_call", "ls"),
        ("observation", "ls"),
        ("thought", None),
        ("tool_call", "submit"),
    ]
    assert ended.trace.outcome.result_summary != submitted
    assert answered.trace.outcome.result_summary == shown


def test_a_llava_plus_turns_actions_are_tool_calls_and_the_next_human_turn_their_output() -> None:
    """LLaVA-Plus keeps a ``gpt`` turn's calls in ``actions`` (``API_name``, ``API_params``) and
    its reasoning in ``thoughts``; the tool's output comes back as the next ``human`` turn. A
    later question of the user's is still their reply, and the closing turn the answer."""
    row = {
        "conversations": [
            {"from": "human", "value": "<image>\nSegment the objects in these boxes."},
            {
                "from": "gpt",
                "thoughts": "SAM segments by boxes.",
                "actions": [{"API_name": "sam", "API_params": {"boxes": [[0.1, 0.2, 0.3, 0.4]]}}],
                "value": "I will use sam. Please wait.",
            },
            {"from": "human", "value": "sam model outputs: {'message': 'done'}\n\nsummarize"},
            {"from": "gpt", "thoughts": "Got it.", "actions": [], "value": "Segmented."},
            {"from": "human", "value": "Now replace the banana with broccoli."},
            {"from": "gpt", "actions": [], "value": "Replaced it."},
        ]
    }
    (item,) = [i for i in sources.convert([row]) if isinstance(i, TraceItem)]
    called = next(s for s in item.trace.steps if s.type == "tool_call")
    assert called.input == {"boxes": [[0.1, 0.2, 0.3, 0.4]]}
    assert steps(item) == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "sam"),
        ("observation", "sam"),
        ("thought", None),
        ("tool_call", "respond"),
        ("observation", "respond"),
        ("thought", None),
    ]
    assert item.trace.steps[0].content == "SAM segments by boxes."
    assert item.trace.outcome.result_summary == "Replaced it."


def test_sharegpt_hyphenated_function_turns_with_single_quoted_arguments_are_a_call(
    tmp_path: Path,
) -> None:
    """function-calling-chatml (Glaive converted): ``function-call`` / ``function-response``
    turns, the call's ``arguments`` JSON text in single quotes (a Python literal, not JSON)."""
    call = '{"name": "create_contact", "arguments": \'{"name": "John Doe"}\'}'
    row = {
        "conversations": [
            {"from": "human", "value": "Add John Doe to my contacts."},
            {"from": "function-call", "value": call},
            {"from": "function-response", "value": '{"status": "success"}'},
            {"from": "gpt", "value": "John Doe is in your contacts."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    traces, problems = converted(path)
    assert not problems
    (only,) = traces
    assert steps(only)[:2] == [("tool_call", "create_contact"), ("observation", "create_contact")]
    assert only.trace.steps[0].input == {"name": "John Doe"}


_ANTHROPIC_TURNS = [
    {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "look", "input": {}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Paris"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Paris."}]},
]


@pytest.mark.parametrize(
    "system",
    [
        "Answer in one word.",
        [{"type": "text", "text": "Answer in one word.", "cache_control": {"type": "ephemeral"}}],
        json.dumps([{"type": "text", "text": "Answer in one word."}]),
    ],
    ids=["text", "blocks", "blocks-as-json"],
)
def test_an_anthropic_rows_system_column_is_its_system_prompt(system: Any) -> None:
    """The Messages API keeps the system prompt beside ``messages``: text or text blocks."""
    (item,) = sources.convert([{"messages": _ANTHROPIC_TURNS, "system": system}])
    assert isinstance(item, TraceItem)
    assert source_of(item)["format"] == "anthropic"
    assert item.system == "Answer in one word."
    assert item.trace.task.objective == "Capital of France?"


def test_a_system_column_of_json_looking_text_is_kept_as_text() -> None:
    """A system prompt that is a JSON object's text is the prompt, not blocks to read into."""
    prompt = '{"persona": "terse"}'
    (item,) = sources.convert([{"messages": _ANTHROPIC_TURNS, "system": prompt}])
    assert isinstance(item, TraceItem)
    assert item.system == prompt


_RESPONSES_ITEMS = [
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Capital of France?"}],
    },
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Paris."}],
    },
]


def test_a_responses_rows_instructions_are_its_system_prompt() -> None:
    """The Responses API takes the system prompt as ``instructions`` beside ``input``."""
    (item,) = sources.convert([{"input": _RESPONSES_ITEMS, "instructions": "Answer in one word."}])
    assert isinstance(item, TraceItem)
    assert source_of(item)["format"] == "openai-responses"
    assert item.system == "Answer in one word."
    assert item.trace.task.objective == "Capital of France?"


def test_a_nemo_gym_rollouts_instructions_are_in_the_request_made() -> None:
    """NeMo Gym keeps the request (``responses_create_params``): its ``instructions`` too."""
    row = {
        "responses_create_params": {"input": _RESPONSES_ITEMS[:1], "instructions": "Be brief."},
        "response": {"output": _RESPONSES_ITEMS[1:]},
        "reward": 1.0,
    }
    (item,) = sources.convert([row])
    assert isinstance(item, TraceItem)
    assert item.system == "Be brief."
    assert item.trace.outcome.result_summary == "Paris."


def test_nemotron_rows_answer_their_output_after_their_input_messages() -> None:
    """NVIDIA's Nemotron post-training rows: ``input`` messages, then ``output`` text."""
    row = {
        "input": [{"role": "user", "content": "Which gas do plants take in?"}],
        "output": "<think>Photosynthesis.</think>Carbon dioxide.",
        "category": "science",
        "reasoning": "on",
        "system_prompt": "detailed thinking on",
    }
    items = [item for item in sources.convert([row]) if isinstance(item, TraceItem)]
    (item,) = items
    assert item.trace.task.objective == "Which gas do plants take in?"
    assert item.trace.outcome.result_summary == "Carbon dioxide."
    assert item.system == "detailed thinking on"
    assert item.trace.metadata.task_domain == "science"


def test_an_alpaca_rows_text_input_is_never_its_conversation() -> None:
    """An ``input`` text beside ``output`` (no ``instruction``) is not a conversation."""
    row = {"input": "What is presented on image?", "output": "PyTorch logo."}
    assert [item for item in sources.convert([row]) if isinstance(item, TraceItem)] == []


def _nemotron_row(results: str) -> dict[str, Any]:
    """Llama-Nemotron's post-training shape: ``input`` messages, the reply as text in ``output``;
    the calls in ``<TOOLCALL>`` lists, their results in a ``<TOOL_RESPONSE>`` list."""
    return {
        "input": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": (
                    'Checking both.<TOOLCALL>[{"name": "get_weather", "arguments": {"city": '
                    '"Paris"}}, {"name": "get_weather", "arguments": {"city": "Rome"}}]</TOOLCALL>'
                ),
            },
            {"role": "user", "content": results},
        ],
        "output": "It is 21 in Paris and 25 in Rome.",
    }


def test_nemotron_toolcall_lists_are_calls_and_tool_response_lists_their_results() -> None:
    row = _nemotron_row('<TOOL_RESPONSE>[{"temp": 21}, {"temp": 25}]</TOOL_RESPONSE>')
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert steps(item) == [
        ("thought", None),
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
    ]
    assert [step.input for step in item.trace.steps if step.type == "tool_call"] == [
        {"city": "Paris"},
        {"city": "Rome"},
    ]
    assert item.trace.outcome.result_summary == row["output"]
    assert item.trace.metadata.success is True


def test_a_reply_that_is_only_a_toolcall_list_is_a_call_not_the_answer() -> None:
    """The target of a Nemotron tool-calling row: its ``output`` is the call, no answer."""
    row = {
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "output": '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert steps(item) == [("tool_call", "get_weather")]
    assert item.trace.metadata.success is False


def test_an_empty_toolcall_list_calls_nothing() -> None:
    row = {"input": [{"role": "user", "content": "Hi"}], "output": "Hello!<TOOLCALL>[]</TOOLCALL>"}
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert [kind for kind, _ in steps(item)] == ["thought"]
    assert item.trace.outcome.result_summary == "Hello!"


def test_sharegpt_turns_with_nemotron_tags_read_the_same() -> None:
    row = _nemotron_row('<TOOL_RESPONSE>[{"temp": 21}, {"temp": 25}]</TOOL_RESPONSE>')
    speaker = {"user": "human", "assistant": "gpt"}
    turns = [{"from": speaker[m["role"]], "value": m["content"]} for m in row["input"]]
    turns.append({"from": "gpt", "value": row["output"]})
    (item,) = (i for i in sources.convert([{"conversations": turns}]) if isinstance(i, TraceItem))
    assert [tool for kind, tool in steps(item) if kind == "tool_call"] == ["get_weather"] * 2
    assert item.trace.outcome.result_summary == row["output"]


GLAIVE_ROW = {
    # Row 25475 of glaiveai/glaive-function-calling-v2 (Apache-2.0, Glaive AI), its chat as the
    # file holds it; the function's definition in the system column shortened.
    "system": (
        "SYSTEM: You are a helpful assistant with access to the following functions. Use them if "
        'required -\n{\n    "name": "detect_language",\n    "description": "Detect the language '
        'of a given text",\n    "parameters": {}\n}\n'
    ),
    "chat": (
        "USER: I have a text here and I am not sure what language it is. Can you help me identify "
        "it?\n\n\nASSISTANT: Of course, I can help with that. Please provide me with the text. "
        '<|endoftext|>\n\n\nUSER: Here it is - "Je suis un étudiant"\n\n\nASSISTANT: '
        '<functioncall> {"name": "detect_language", "arguments": \'{"text": "Je suis un '
        'étudiant"}\'} <|endoftext|>\n\n\nFUNCTION RESPONSE: {"language": "French"}\n\n\n'
        "ASSISTANT: The text you provided is in French. <|endoftext|>\n\n\n"
    ),
}


def test_a_glaive_transcript_is_read_turn_by_turn_its_functioncall_a_call() -> None:
    """Glaive v2's ``chat`` text: ``USER:`` / ``ASSISTANT:`` / ``FUNCTION RESPONSE:`` turns, the
    call written after ``<functioncall>`` with its arguments as single-quoted JSON text."""
    (item,) = (i for i in sources.convert([GLAIVE_ROW]) if isinstance(i, TraceItem))
    trace = item.trace
    assert trace.task.objective == (
        "I have a text here and I am not sure what language it is. Can you help me identify it?"
    )
    assert steps(item) == [
        ("tool_call", "respond"),  # what the assistant said, answered by the user
        ("observation", "respond"),
        ("tool_call", "detect_language"),
        ("observation", "detect_language"),
        ("thought", None),
    ]
    assert trace.steps[2].input == {"text": "Je suis un étudiant"}
    assert trace.steps[3].content == '{"language": "French"}'
    assert trace.outcome.result_summary == "The text you provided is in French."
    assert "<|endoftext|>" not in " ".join(str(step.content) for step in trace.steps)
    # the system column is the system prompt, less Glaive's label
    assert item.system == GLAIVE_ROW["system"].removeprefix("SYSTEM:").strip()


def test_glaive_speakers_written_inline_split_the_turns_as_axolotl_splits_them() -> None:
    """axolotl's own fixture of the format writes the turns on one line."""
    row = {
        "system": "SYSTEM: This is a system prompt",
        "chat": (
            "USER: Can you book a flight for me from New York to London? ASSISTANT: I'm sorry, "
            "but I don't have the capability to book flights.  <|endoftext|>"
        ),
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert item.trace.task.objective == "Can you book a flight for me from New York to London?"
    assert item.trace.outcome.result_summary == (
        "I'm sorry, but I don't have the capability to book flights."
    )


def test_a_glaive_call_that_cannot_be_read_stays_the_assistants_text() -> None:
    """Some rows cut a call short: it is no call, and the text says what was written."""
    row = {"chat": 'USER: Lyrics?\n\n\nASSISTANT: <functioncall> {"name": "get_lyrics", "argu'}
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert steps(item) == [("thought", None)]
    assert "<functioncall>" in str(item.trace.steps[0].content)


def test_a_chat_column_of_other_text_is_no_conversation() -> None:
    row = {"chat": "User: hello there", "summary": "greeting"}
    assert [i for i in sources.convert([row]) if isinstance(i, TraceItem)] == []


GYM = CORPUS / "openai-responses"


def _gym_row(asked: Any, **columns: Any) -> dict[str, Any]:
    """A NeMo Gym rollout: the Responses request made, the response, the rollout's reward."""
    output = [
        {"type": "function_call", "call_id": "c1", "name": "search", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found x"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is x."}],
        },
    ]
    return {
        "responses_create_params": {"input": asked, "tools": [], "temperature": 1.0},
        "response": {"id": "resp_1", "object": "response", "output": output},
        **columns,
    }


def test_a_nemo_gym_rollout_is_its_request_then_its_response_and_its_reward_the_success() -> None:
    asked = [{"type": "message", "role": "user", "content": "What is x?"}]
    rows = [
        _gym_row(asked, reward=1.0, _ng_task_index=3, _ng_rollout_index=0, id="q-3"),
        _gym_row(asked, reward=0.0, _ng_task_index=3, _ng_rollout_index=1, id="q-3"),
    ]
    items = [i for i in sources.convert(rows) if isinstance(i, TraceItem)]
    assert [steps(item) for item in items] == [
        [("tool_call", "search"), ("observation", "search"), ("thought", None)]
    ] * 2
    assert [item.trace.task.objective for item in items] == ["What is x?"] * 2
    assert [item.trace.metadata.success for item in items] == [True, False]
    assert [item.reward for item in items] == [1.0, 0.0]
    # the task's index (and its item's id) is the same in each rollout: the task, not the run
    assert [source_of(item)["task"] for item in items] == ["3", "3"]
    assert len({item.trace.id for item in items}) == 2


def test_a_nemo_gym_rollouts_task_may_be_named_in_its_verifier_metadata() -> None:
    """PinchBench's rollouts name their task only as ``verifier_metadata.task_id``: it is each
    item's task (before, none); a rollout with ``_ng_task_index`` keeps that, as ever."""
    path = GYM / "nemo_gym_pinchbench_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    items = [i for i in sources.read([path]) if isinstance(i, TraceItem)]
    assert [item.task for item in items] == [r["verifier_metadata"]["task_id"] for r in rows]
    path = GYM / "nemo_gym_osworld_claude_opus_4_7_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    items = [i for i in sources.read([path]) if isinstance(i, TraceItem)]
    assert [item.task for item in items] == [str(r["_ng_task_index"]) for r in rows]


def test_a_nemo_gym_request_of_text_alone_is_the_users_message() -> None:
    (item,) = (i for i in sources.convert([_gym_row("What is x?")]) if isinstance(i, TraceItem))
    assert item.trace.task.objective == "What is x?"
    assert item.trace.outcome.result_summary == "It is x."


def test_nemo_gyms_own_rollouts_read_their_tool_calls_and_rewards() -> None:
    path = GYM / "nemo_gym_workplace_assistant_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    items = [i for i in sources.read([path]) if isinstance(i, TraceItem)]
    assert [item.trace.metadata.success for item in items] == [r["reward"] >= 0.5 for r in rows]
    called = [
        [o["name"] for o in r["response"]["output"] if o["type"] == "function_call"] for r in rows
    ]
    assert [[t for kind, t in steps(item) if kind == "tool_call"] for item in items] == called


def test_a_nemo_gym_request_of_plain_chat_messages_is_known_by_its_typed_response() -> None:
    """The request's messages carry no ``type`` (chat messages); the response's items do."""
    row = _gym_row([{"role": "user", "content": "What is x?"}], reward=1.0)
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert source_of(item)["format"] == "openai-responses"
    assert item.trace.task.objective == "What is x?"
    assert steps(item)[0] == ("tool_call", "search")


def test_responses_rows_whose_input_is_plain_chat_messages_are_read_from_the_input() -> None:
    """The Responses API takes ``input`` messages without ``type`` (``EasyInputMessage``).

    Before, such an ``input`` was passed over for the typed ``output`` alone: the user's request
    was lost and the objective a placeholder. As NeMo Gym's request, the typed items after the
    messages say they are Responses items.
    """
    row = {
        "input": [{"role": "user", "content": "Find the weather in Paris"}],
        "output": [
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        ],
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert source_of(item)["format"] == "openai-responses"
    assert item.trace.task.objective == "Find the weather in Paris"
    assert steps(item) == [("tool_call", "weather")]


def test_responses_hosted_calls_keep_their_code_and_outputs_and_say_images_by_their_type() -> None:
    """The code interpreter's ``code`` is its input and its ``outputs`` (logs, images) its result,
    matched by the call's id (an earlier call came back with ``outputs: null``); the image
    generator's base64 ``result`` is said ``<image/jpeg>``, never kept as text."""
    png = "data:image/png;base64,iVBORw0KGgo"
    row = {
        "input": [
            {"role": "user", "content": "Chart y=x^2"},
            {"type": "code_interpreter_call", "id": "ci_1", "code": "plot()", "outputs": None},
            {
                "type": "code_interpreter_call",
                "id": "ci_2",
                "code": "plot(style='neon')",
                "outputs": [{"type": "logs", "logs": "saved"}, {"type": "image", "url": png}],
            },
            {
                "type": "image_generation_call",
                "id": "ig_1",
                "result": "/9j/4AAQ",
                "output_format": "jpeg",
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}],
            },
        ]
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    trace = item.trace
    assert steps(item) == [
        ("tool_call", "code_interpreter"),
        ("tool_call", "code_interpreter"),
        ("observation", "code_interpreter"),
        ("tool_call", "image_generation"),
        ("observation", "image_generation"),
        ("thought", None),
    ]
    assert trace.steps[1].input == {"code": "plot(style='neon')"}
    assert trace.steps[2].content == "saved\n<image/png>"
    assert trace.steps[4].content == "<image/jpeg>"
    assert "base64" not in item.trace.model_dump_json()


def test_responses_code_interpreter_that_printed_nothing_is_an_empty_observation() -> None:
    """``outputs: []`` of a completed call: the code ran and printed nothing, an empty result as
    an empty ``function_call_output`` is. Before, it made no observation at all, as ``null``
    does (the outputs not asked for with ``include``), and a running call's list says nothing."""

    def called(outputs: Any, status: str) -> list[dict[str, Any]]:
        call = {"type": "code_interpreter_call", "id": "ci_1", "code": "x = 1"}
        return [{**call, "outputs": outputs, "status": status}]

    def told(items: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
        row = {"input": [{"role": "user", "content": "Set x"}, *items]}
        (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
        return steps(item)

    ran = told(called([], "completed"))
    assert ran == [("tool_call", "code_interpreter"), ("observation", "code_interpreter")]
    assert told(called(None, "completed")) == [("tool_call", "code_interpreter")]
    assert told(called([], "in_progress")) == [("tool_call", "code_interpreter")]


def test_turbo_alignments_bot_is_the_assistant() -> None:
    """turbo-alignment's chat rows name the assistant ``bot`` (its documented format, which it
    hands to chat templates as ``assistant``). Before, no column held messages of a known
    role, and the error blamed the column."""
    row = {
        "id": "2",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "bot", "content": "hi"},
            {"role": "user", "content": "how are you"},
            {"role": "bot", "content": "bad"},
        ],
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert source_of(item)["format"] == "openai-chat"
    assert item.trace.task.objective == "hi"
    assert item.trace.outcome.result_summary == "bad"
    assert steps(item) == [("tool_call", "respond"), ("observation", "respond"), ("thought", None)]


def test_a_role_the_format_lacks_is_named_in_the_error_not_the_column() -> None:
    """A conversation of the format's messages but one, of a role it has not: the error names
    that message and its role, and says how to fix it. Before, it said no column held messages
    and asked for another column."""
    row = {"messages": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "hi"}]}
    (problem,) = sources.convert([row], source="openai-chat")
    assert isinstance(problem, Problem)
    assert "messages[1]" in problem.message
    assert "'robot'" in problem.message
    assert "no column holds" not in problem.message


def _output_text(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text}
    return {"type": "message", "role": "assistant", "content": [part]}


def _image_response(*after: dict[str, Any]) -> dict[str, Any]:
    image = {"type": "image_generation_call", "id": "ig_1", "result": "/9j/4AAQ"}
    return {"input": [{"role": "user", "content": "Draw an axolotl."}, image, *after]}


def test_a_response_that_ends_on_the_image_it_made_answers_with_the_image() -> None:
    """gpt-5's image run (pydantic-ai's cassette): the image, then an empty ``output_text``.

    The image goes to the user: it is the answer, said by its type. Before, the run read as
    failed, its last step the image's observation.
    """
    for row in (_image_response(_output_text("")), _image_response()):
        (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
        assert item.trace.outcome.result_summary == "<image/png>"
        assert item.trace.metadata.success is True
        # the image is the tool's result, never the model's words: no thought says it
        assert [step.type for step in item.trace.steps] == ["tool_call", "observation"]
    # Text after it, or the user speaking, is what closes the run: the image is no answer then.
    user = {"role": "user", "content": "Another one?"}
    answers = [
        i.trace.outcome.result_summary
        for i in sources.convert([_image_response(_output_text("Here.")), _image_response(user)])
        if isinstance(i, TraceItem)
    ]
    assert answers[0] == "Here."
    assert answers[1] != "<image/png>"


def test_a_chatglm3_turn_named_by_its_metadata_is_a_call_of_that_tool() -> None:
    """ChatGLM3's tool format: the ``metadata`` names the tool and the content is the call as
    Python (```` ```python\ntool_call(formula=...)\n``` ````); it was read as a command named
    by the code's whole first line. The ``observation`` after it is its result."""
    items, problems = converted(CORPUS / "sharegpt" / "chatglm3_openai_api_agent_chat.json")
    assert problems == []
    (trace,) = (item.trace for item in items)
    assert [step.tool.name for step in trace.steps if step.tool] == [
        "respond",
        "respond",
        "Calculator",
        "Calculator",
    ]
    assert trace.steps[2].input == {"formula": "37*8+7/2"}
    assert trace.steps[3].content == "299.5"


def test_a_tool_turn_holding_its_parameters_and_observation_is_the_call_and_its_result() -> None:
    """Firefly's ChatGLM3 rows (data/dummy_data_chatglm3.jsonl, kept out of the corpus: the
    repository has no licence) write a call and its result as one ``tool`` turn: ``name``,
    ``parameters``, ``observation``. The result was lost (no ``content``)."""
    row = {
        "conversations": [
            {"role": "user", "content": "北京今天天气如何?"},
            {
                "role": "tool",
                "name": "get_current_weather",
                "parameters": {"location": "beijing"},
                "observation": {"temperature": "20摄氏度", "wind force": "4级"},
            },
            {"role": "assistant", "content": "北京今天气温20摄氏度, 风力4级"},
        ]
    }
    (item,) = [item for item in sources.convert([row]) if isinstance(item, TraceItem)]
    assert steps(item) == [
        ("tool_call", "get_current_weather"),
        ("observation", "get_current_weather"),
        ("thought", None),
    ]
    assert item.trace.steps[0].input == {"location": "beijing"}
    assert "20摄氏度" in (item.trace.steps[1].content or "")
    assert item.trace.outcome.result_summary == "北京今天气温20摄氏度, 风力4级"


def test_a_glm4_assistant_turn_that_is_a_calls_json_before_an_observation_is_the_call(
    tmp_path: Path,
) -> None:
    """GLM-4's fine-tuning rows: the call's ``{"name", "arguments"}`` JSON is the assistant's
    whole turn, the ``observation`` after it its result; with no result after it, JSON text
    stays the assistant's words."""
    glm = CORPUS / "sharegpt" / "glm4_finetune_readme_tool_sample.jsonl"
    (only,), problems = converted(glm)
    assert not problems
    assert steps(only) == [
        ("tool_call", "get_recommended_books"),
        ("observation", "get_recommended_books"),
        ("thought", None),
    ]
    assert only.trace.steps[0].input == {"interests": ["history", "science fiction"]}
    said = json.loads(glm.read_text())["messages"][2]["content"]
    row = {"conversations": [{"from": "human", "value": "JSON?"}, {"from": "gpt", "value": said}]}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (alone,), _ = converted(path)
    assert [step.type for step in alone.trace.steps] == ["thought"]
    assert alone.trace.outcome.result_summary == said


def test_a_rollout_logs_prompt_and_response_are_the_prompt_then_its_reply() -> None:
    """xtuner's RL rollout log names the reply ``response``, not ``completion``: the prompt is
    the objective, the response its reply (begun inside the template's think block: the text
    after ``</think>`` the answer), the reward the success; a response cut short before its
    ``</think>`` (reward 0) is all reasoning, no success."""
    path = PROMPT_COMPLETION.with_name("xtuner_rollout_output.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    traces, problems = converted(path)
    assert not problems
    assert [item.trace.task.objective for item in traces] == [row["prompt"] for row in rows]
    assert [item.reward for item in traces] == [float(row["reward"]) for row in rows]
    first = traces[0].trace
    answer = rows[0]["response"].rsplit("</think>", 1)[1]
    assert first.outcome.result_summary.strip() == answer.strip()
    assert [kind for kind, _ in steps(traces[0])] == ["thought", "thought"]
    assert traces[1].trace.outcome.confidence < 0.5  # reward 0: the run failed


@pytest.mark.parametrize(
    "name",
    [
        "openai-chat/agentinstruct_os_raw_sample.json",
        "adp/agenttuning_os_sample_std.json",
        "sharegpt/adp_agenttuning_os_sample_sft.json",
    ],
)
def test_agentbenchs_worked_os_problem_is_no_part_of_the_run(name: str) -> None:
    """AgentBench's OS rows open with the instructions and a problem, run it once as a worked
    example (``ls /etc``, answer 220), then give the task ("Now, I will start a new problem in
    a new OS. My problem is: ..."). Before: the objective was the instructions (or the worked
    problem) and the example's calls were the run's; now the task is the objective and the run
    starts after it. As raw rows, in ADP's standardized form and in ADP's ShareGPT."""
    items = [item for item in convert_file(CORPUS / name) if isinstance(item, TraceItem)]
    assert [item.trace.task.objective for item in items] == [
        "How many files and directories in your home directory were last modified on 21st "
        "December of last year, including those in subdirectories?",
        "How many .txt files are there in your home directory and all its sub-directories?",
    ]
    for item in items:
        assert not any("/etc" in (step.content or "") for step in item.trace.steps)


@pytest.mark.parametrize("speakers", [None, {"user": "human", "assistant": "gpt"}])
def test_agentbenchs_worked_os_problem_is_no_part_of_the_training_rows_system_prompt(
    tmp_path: Path, speakers: dict[str, str] | None
) -> None:
    """AgentBench's OS instructions end with the worked run's problem ("Now, my problem is:
    tell me how many files are in the directory "/etc"?"), the run that is no part of the row.
    Before, the training row's system prompt still asked it, then its user turn asked the
    task: a model trained on it learnt to answer a question the prompt did not end on. As the
    rows are, and in ShareGPT's ``from`` / ``value`` (AgentInstruct's own form)."""
    path = CORPUS / "openai-chat" / "agentinstruct_os_raw_sample.json"
    raw = json.loads(path.read_text())
    opening = raw[0]["conversations"][0]["content"]
    if speakers is not None:
        turns = [
            [{"from": speakers[t["role"]], "value": t["content"]} for t in row["conversations"]]
            for row in raw
        ]
        path = tmp_path / "agentinstruct_os.json"
        path.write_text(json.dumps([{"conversations": each} for each in turns]))
    written = CliRunner().invoke(cli, ["convert", str(path), "--to", "messages"])
    rows = [json.loads(line) for line in written.stdout.splitlines() if line.startswith("{")]
    instructions = opening.split("\n\nNow, my problem is:")[0]
    assert [row["messages"][0] for row in rows] == [{"role": "system", "content": instructions}] * 2
    assert [row["messages"][1]["content"][:20] for row in rows] == [
        "How many files and d",
        "How many .txt files ",
    ]


@pytest.mark.parametrize(
    "name", ["openai-chat/agentinstruct_kg_raw_sample.json", "adp/agenttuning_kg_sample_std.json"]
)
def test_agentbenchs_worked_knowledge_graph_question_is_no_part_of_the_run(name: str) -> None:
    """AgentBench's knowledge-graph rows open with the instructions, "I've understood...", then
    its one worked question (the rocket engine's designer, answered ``Final Answer: #3``, in ADP's
    form ``<solution> #3 </solution>``), then the task: "A new question: ...". Before, every row's
    objective was the worked question and its seven calls were the run's; the task a reply."""
    items = [item for item in convert_file(CORPUS / name) if isinstance(item, TraceItem)]
    assert [item.trace.task.objective for item in items] == [
        "what would you call the games fair division and rock paper scissors?\n"
        "Entities: [Class of game, Fair division, rock paper scissors]",
        "what famous people does comic ferrell do impressions of?\n"
        "Entities: [Impersonated celebrity, ferrell]",
    ]
    for item in items:
        assert not any("Gas-generator" in (step.content or "") for step in item.trace.steps)
        assert not any("A new question" in (step.content or "") for step in item.trace.steps)
    written = CliRunner().invoke(cli, ["convert", str(CORPUS / name), "--to", "messages"])
    rows = [json.loads(line) for line in written.stdout.splitlines() if line.startswith("{")]
    assert [row["messages"][1]["content"][:24] for row in rows] == [
        "what would you call the ",
        "what famous people does ",
    ]


def test_groqs_executed_tools_are_calls_and_their_outputs_before_the_answer() -> None:
    """Groq's compound model ran ``search`` itself and kept it on the reply (``executed_tools``:
    ``type``, ``arguments``, ``output``; pydantic-ai's cassette). Before, the run read as the
    model answering with no tool."""
    path = CORPUS / "openai-chat" / "test_groq_model_web_search_tool.jsonl"
    row = json.loads(path.read_text().splitlines()[0])
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert steps(item) == [
        ("thought", None),
        ("tool_call", "search"),
        ("observation", "search"),
        ("thought", None),
        ("thought", None),
    ]
    assert (item.trace.steps[2].content or "").startswith("Title: Weather in San Francisco")
    assert (item.trace.outcome.result_summary or "").startswith("The weather in San Francisco")


def test_groqs_reasoning_tells_its_thoughts_around_the_tool_it_ran_not_its_transcript() -> None:
    """Groq's reasoning writes the search it ran (``<tool>search(...)</tool>``, then its 6 KB
    ``<output>``) between "I will use the search tool" and "Based on the search results".
    Before, the reasoning was one thought before the call: the output twice, the thought drawn
    from it before the search ran."""
    path = CORPUS / "openai-chat" / "test_groq_model_web_search_tool.jsonl"
    row = json.loads(path.read_text().splitlines()[0])
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    before, after = item.trace.steps[0].content or "", item.trace.steps[3].content or ""
    assert before.endswith("I will use the search tool to look up this information.")
    assert after.startswith("Based on the search results, the current weather in San Francisco")
    assert not any("<output>" in (step.content or "") for step in item.trace.steps)
    assert not any("'temp_c': 17.0" in (s.content or "") for s in item.trace.steps[3:])


def test_an_anthropic_compaction_block_makes_the_message_anthropics_and_is_no_step() -> None:
    """Claude's context compaction puts a ``compaction`` block (the summary of the turns before)
    ahead of the reply's text (vercel/ai's recorded reply). Before, a message of it and text was
    known as a Responses ``message`` only: a lone reply read as an OpenAI run."""
    summary = {"type": "compaction", "content": "## Summary of Conversation\n..."}
    reply = {"type": "text", "text": "You asked about sorting algorithms."}
    row = {
        "messages": [
            {"role": "user", "content": "What did I ask?"},
            {"role": "assistant", "content": [summary, reply]},
        ]
    }
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert source_of(item)["format"] == "anthropic"
    assert steps(item) == [("thought", None)]
    assert item.trace.outcome.result_summary == "You asked about sorting algorithms."
    # The API's reply saved alone (typed "message", Anthropic's blocks) is Anthropic's too.
    lone = {"type": "message", "role": "assistant", "content": [summary, reply]}
    (alone,) = (i for i in sources.convert([lone]) if isinstance(i, TraceItem))
    assert source_of(alone)["format"] == "anthropic"
    assert alone.trace.outcome.result_summary == "You asked about sorting algorithms."


def test_adp_sft_tool_docs_before_the_task_are_the_system_prompts_not_the_objective() -> None:
    """ADP's SFT converter writes the tools' documentation before the first human turn's task
    (sharegpt/adp_swe_smith_sample_sft.json): the objective is the task, and the documentation
    stays what the model was told, after the system prompt."""
    docs = (
        "The environment execute_bash provides the following pre-defined functions: \n\n"
        "submit()\n    Finish the interaction.\n    \n    No parameters are required.\n\n"
    )
    row = {
        "system": "You are an agent.",
        "conversations": [
            {"from": "human", "value": docs + "Fix the failing test in /testbed."},
            {"from": "gpt", "value": "Done."},
        ],
    }
    (item,) = sources.convert([row])
    assert isinstance(item, TraceItem)
    assert item.trace.task.objective == "Fix the failing test in /testbed."
    assert item.system == "You are an agent.\n\n" + docs.strip()


def test_a_model_calls_span_attributes_saved_as_a_row_name_the_model_that_replied() -> None:
    """A GenAI client span's attributes kept as a row (OpenInference's fixture) name the model
    as the span does: ``gen_ai.response.model`` gpt-4-0613, asked for as gpt-4. Before, the
    trace named no model."""
    path = CORPUS / "openai-chat" / "openinference_genai_otel_genai_client_span_tool_calls.json"
    (item,) = (i for i in convert_file(path) if isinstance(i, TraceItem))
    assert source_of(item)["model"] == "gpt-4-0613"
    row = {"gen_ai.request.model": "gpt-4", **json.loads(path.read_text())}
    del row["gen_ai.response.model"]
    (asked,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    assert source_of(asked)["model"] == "gpt-4"


def test_a_rollouts_reward_is_read_beside_a_success_column_that_holds_none() -> None:
    """NeMo Gym's agent rollouts write ``resolved`` (a boolean) beside the ``reward`` the
    environment gave: success comes from ``resolved``, the item's reward from ``reward``."""
    path = GYM / "nemo_gym_anyterminal_hermes_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    traces, problems = converted(path)
    assert not problems
    assert [item.trace.metadata.success for item in traces] == [row["resolved"] for row in rows]
    assert [item.reward for item in traces] == [row["reward"] for row in rows]
    assert all(row["reward"] is not None for row in rows)


def test_a_swe_agents_rollout_asks_the_problem_statement_its_request_carries() -> None:
    """NeMo Gym's SWE agents (Claude Code here) leave the request's ``input`` empty: what the
    agent was asked is the ``problem_statement`` of the request's ``metadata``, the objective
    and the training row's user turn, not a placeholder."""
    path = GYM / "nemo_gym_anyswe_claude_code_rollouts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    traces, problems = converted(path)
    assert not problems
    assert all(row["responses_create_params"]["input"] == [] for row in rows)
    assert [item.trace.task.objective for item in traces] == [
        row["responses_create_params"]["metadata"]["problem_statement"] for row in rows
    ]
    assert [item.trace.metadata.success for item in traces] == [True, False]
