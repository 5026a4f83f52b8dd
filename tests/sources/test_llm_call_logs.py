"""Logs of one LLM call: the request's ``messages``, then the ``response`` object it got.

LiteLLM's call logs (as OpenHands' SDK writes them: ``messages``, ``tools``, ``kwargs``,
``response``, ``cost``) hold the model's reply in ``response.choices[0].message``, not among the
messages: the log of a run's last call holds the whole run only with it, its ``finish`` call
the answer. Read without it, the run ended on a tool's result, unanswered, a failure.
"""

from __future__ import annotations

import json
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import convert, read
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS

SONNET = CORPUS / "openai-chat" / "openhands_sdk_llm_log_claude_sonnet_4_finish.json"
DEEPSEEK = CORPUS / "openai-chat" / "openhands_sdk_llm_log_deepseek_nonfncall_finish.json"


def only_trace(rows: list[Any]) -> TraceItem:
    items = list(convert(rows, source="auto"))
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    (item,) = (item for item in items if isinstance(item, TraceItem))
    return item


def test_the_logged_response_is_the_last_turn_and_its_finish_the_answer() -> None:
    row = json.loads(SONNET.read_text())
    (item,) = (item for item in read([SONNET]) if isinstance(item, TraceItem))
    finish = row["response"]["choices"][0]["message"]["tool_calls"][0]["function"]
    assert finish["name"] == "finish"
    assert item.trace.outcome is not None
    assert item.trace.outcome.result_summary == json.loads(finish["arguments"])["message"]
    assert item.trace.metadata.success is True
    calls = [step.tool.name for step in item.trace.steps if step.type == "tool_call" and step.tool]
    said = [
        call["function"]["name"]
        for message in row["messages"]
        for call in message.get("tool_calls") or []
    ]
    assert calls == said  # the finish call is the answer, no tool call of its own


def test_a_model_without_native_calls_logged_as_text_ends_in_the_response_too() -> None:
    """The messages as sent (calls written as ``<function=...>`` text), then the response."""
    (item,) = (item for item in read([DEEPSEEK]) if isinstance(item, TraceItem))
    assert item.trace.task.objective.startswith("Hello! Can you create a new Python file")
    assert item.trace.outcome is not None
    assert item.trace.outcome.result_summary.startswith("The hello.py file already exists")
    assert item.trace.metadata.success is True


def test_the_logged_response_names_the_runs_model() -> None:
    """The log names no model of its own: its ``response`` says which model replied."""
    for path in (SONNET, DEEPSEEK):
        (item,) = (item for item in read([path]) if isinstance(item, TraceItem))
        replied = json.loads(path.read_text())["response"]["model"]
        source = (item.trace.metadata.model_extra or {})["source"]
        assert source["model"] == replied, path.name


def test_a_response_without_choices_or_a_text_response_is_no_turn() -> None:
    """Only a Chat Completions response object is the reply: an alpaca row's ``response`` text
    stays its reply to the ``query``; a response of another shape adds nothing."""
    asked = [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}]
    other = only_trace([{"messages": asked, "response": {"output": "x"}}])
    assert other.trace.outcome is not None
    assert other.trace.outcome.result_summary == "Hello."
    alpaca = only_trace([{"query": "Name a colour.", "response": "Blue."}])
    assert alpaca.trace.outcome is not None
    assert alpaca.trace.outcome.result_summary == "Blue."
    logged = only_trace(
        [
            {
                "messages": asked[:1],
                "response": {"choices": [{"message": {"role": "assistant", "content": "Hey."}}]},
            }
        ]
    )
    assert logged.trace.outcome is not None
    assert logged.trace.outcome.result_summary == "Hey."
