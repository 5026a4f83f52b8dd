"""Function-calling datasets' rows found in the sweep of unseen files: calls written as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources._chat._text import split_think
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file


def _traces(path: Path) -> list[TraceItem]:
    items = list(convert_file(path))
    assert not [item for item in items if isinstance(item, Problem)]
    return [item for item in items if isinstance(item, TraceItem)]


def _steps(item: TraceItem) -> list[tuple[str, str | None]]:
    return [(s.type, s.tool.name if s.tool else None) for s in item.trace.steps]


# hermes-agent's trajectory of Qwen served without a reasoning parser: the agent writes the
# (empty) reasoning the server parsed as a block, then the model's text, which began inside the
# block the chat template opened and so closes it again (the shape of NeuraReport-V2's
# trajectory_samples.jsonl, a repository with no licence: not in the corpus).
_QWEN_REPLY = (
    "<think>\n</think>\nThe user said hi. I should greet them.\n</think>\n\nHello! Upload a PDF."
)


def test_a_reply_closing_the_templates_block_after_hermes_agents_own_block_is_reasoning(
    tmp_path: Path,
) -> None:
    """Before: the answer was "The user said hi... </think> Hello!", reasoning and a stray tag in
    it; now the text before the stray ``</think>`` is a thought and the answer what follows."""
    row = {
        "conversations": [
            {"from": "system", "value": "You are a function calling AI model. <tools>[]</tools>"},
            {"from": "human", "value": "hi"},
            {
                "from": "gpt",
                "value": "<think>\nI should look.\n</think>\n<tool_call>\n"
                '{"name": "session_get_state", "arguments": {}}\n</tool_call>',
            },
            {
                "from": "tool",
                "value": '<tool_response>\n{"name": "session_get_state", '
                '"content": {"state": "empty"}}\n</tool_response>',
            },
            {"from": "gpt", "value": _QWEN_REPLY},
        ],
        "completed": True,
    }
    path = tmp_path / "trajectory_samples.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (item,) = _traces(path)
    assert _steps(item) == [
        ("thought", None),
        ("tool_call", "session_get_state"),
        ("observation", "session_get_state"),
        ("thought", None),
        ("thought", None),
    ]
    assert item.trace.steps[-2].content == "The user said hi. I should greet them."
    assert (item.trace.outcome.result_summary or "").strip() == "Hello! Upload a PDF."


def test_split_think_reads_a_stray_close_after_the_blocks_only_where_a_block_may_be_unopened() -> (
    None
):
    assert split_think(_QWEN_REPLY, unopened=True) == (
        ["The user said hi. I should greet them."],
        "Hello! Upload a PDF.",  # the line breaks after the tag are its writer's, not the reply's
    )
    # hermes-agent's trajectories: ``<think>\n{reasoning}\n</think>\n{content}``.
    assert split_think("<think>\nLook first.\n</think>\nDone.") == (["Look first."], "Done.")
    assert split_think("Sure. <think>x</think>\n  Done.") == (["x"], "Sure. \n  Done.")
    # A message that keeps its reasoning apart: its text is the reply, the stray tag in it.
    thoughts, text = split_think(_QWEN_REPLY)
    assert thoughts == []
    assert "</think>" in text
    # A reply that ends on the stray tag has no answer after it: nothing is moved.
    assert split_think("<think>a</think>b</think>", unopened=True) == (["a"], "b</think>")


def test_a_gpt_turn_that_is_the_apis_tool_calls_list_calls_those_tools() -> None:
    """MarketDataGenie's hermes-function-calling ShareGPT rows keep the Chat Completions
    ``tool_calls`` list as the ``gpt`` turn's whole text, each ``tool`` turn after it a result.
    Before: the list was a thought and each result a call of a tool named ``tool`` (warned);
    now each listed call is a call of its ``function.name``, answered in order."""
    path = CORPUS / "sharegpt" / "marketdatagenie_hermes_fc_sharegpt_example.json"
    first, second = _traces(path)
    assert _steps(first) == [
        ("tool_call", "get_current_weather"),
        ("observation", "get_current_weather"),
        ("tool_call", "get_n_day_weather_forecast"),
        ("observation", "get_n_day_weather_forecast"),
        ("thought", None),
    ]
    assert first.trace.steps[0].input == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert _steps(second)[:2] == [
        ("tool_call", "search_duckduckgo"),
        ("observation", "search_duckduckgo"),
    ]


def test_fenced_call_objects_are_calls_of_the_tools_they_name() -> None:
    """MarketDataGenie's newer rows fence each call, ```` ```tool_call\\n{'arguments': '...',
    'name': ...}``` ````. Before: one call named ``{'arguments':`` (the block's first word, as
    an SWE-agent command's); now a call of each named tool, with its arguments."""
    path = CORPUS / "conversation" / "marketdatagenie_hermes_fc_sharegpt_new_format.json"
    (item,) = _traces(path)
    assert [name for kind, name in _steps(item) if kind == "tool_call"] == [
        "deploy_smart_contract",
        "execute_contract_automation",
    ]
    assert item.trace.steps[0].input == {
        "contract_id": "SC-123456",
        "asset_type": "Corporate Bond",
        "maturity_date": "2023-12-31",
        "interest_rate": "5%",
        "payment_schedule": "Quarterly",
    }
    assert (item.trace.outcome.result_summary or "").startswith("The deployment and automation")


def _chat_row(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"messages": messages}) + "\n")
    return path


def _rates(call_id: str, base: str) -> dict[str, Any]:
    arguments = json.dumps({"base": base})
    function = {"name": "rates", "arguments": arguments}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "function": function}],
    }


def test_an_action_line_with_its_observation_written_after_it_is_no_call(tmp_path: Path) -> None:
    """The system prompt names a Goal / Action / Observation / Reflection framework; a reply
    written after the call ran records ``Action: rates = functions.rates(...)`` with the
    ``Observation:`` it saw, then the answer. Before (MarketDataGenie's example, its scratch pad
    not yet read as reasoning): a second call of ``rates`` whose result was the user's next
    request; now the reply is what the agent said (``respond``) and the request its reply."""
    recorded = (
        "Goal: fetch the rates.\nAction: rates = functions.rates(base='GBP')\n"
        "Observation: USD 1.27\nReflection: done.\n\nOne pound is 1.27 dollars."
    )
    path = _chat_row(
        tmp_path,
        [
            {
                "role": "system",
                "content": "Use Goal -> Action -> Observation -> Reflection.\n"
                "The Action is a Python call, e.g. Action: r = functions.rates(base='EUR')",
            },
            {"role": "user", "content": "Rates with GBP as the base?"},
            _rates("call_1", "GBP"),
            {"role": "tool", "tool_call_id": "call_1", "content": "{'USD': 1.27}"},
            {"role": "assistant", "content": recorded},
            {"role": "user", "content": "And with USD as the base?"},
            _rates("call_2", "USD"),
            {"role": "tool", "tool_call_id": "call_2", "content": "{'GBP': 0.79}"},
            {"role": "assistant", "content": "One dollar is 0.79 pounds."},
        ],
    )
    (item,) = _traces(path)
    assert [name for kind, name in _steps(item) if kind == "tool_call"] == [
        "rates",
        "respond",
        "rates",
    ]
    assert [s.content for s in item.trace.steps if s.tool and s.tool.name == "respond"][1] == (
        "And with USD as the base?"
    )
    assert item.trace.outcome.result_summary == "One dollar is 0.79 pounds."


def test_hermes_scratch_pad_is_reasoning_not_the_answer() -> None:
    """Hermes' function-calling prompt has the model plan in a ``<scratch_pad>`` (Goal, Actions,
    Observation, Reflection) before its calls or its reply (MarketDataGenie's multi-turn
    example). Before: each reply, scratch pad and all, was the answer; now the pad is a thought
    and the answer the text after it."""
    path = CORPUS / "openai-chat" / "marketdatagenie_hermes_fc_v2_api_calls_task_id_0.json"
    (item,) = _traces(path)
    assert [name for kind, name in _steps(item) if kind == "tool_call"] == [
        "rates",
        "respond",
        "rates",
    ]
    answer = (item.trace.outcome.result_summary or "").strip()
    assert answer.startswith("The live currency conversion rates with 'USD' as the base")
    assert "<scratch_pad>" not in answer
    assert (item.trace.steps[0].content or "").startswith("Goal: Fetch live currency conversion")
