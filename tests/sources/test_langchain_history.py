"""A LangChain chat history saved as JSON reads as the conversation it is.

The files are written by langchain-core itself (``messages_to_dict``, as its chat histories
store messages, and ``dumpd``): a tool call, a tool that raised (LangGraph's ``ToolNode`` marks
its message ``status="error"``), the retry and the answer, with the model the reply names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.sources import read
from knowledgepulse.trace import TraceItem

messages_module = pytest.importorskip("langchain_core.messages")
load_module = pytest.importorskip("langchain_core.load")


def _history() -> list[Any]:
    m = messages_module
    return [
        m.SystemMessage("You look up the weather."),
        m.HumanMessage("Is it raining in Paris?"),
        m.AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Pariss"}, "id": "c1"}]),
        m.ToolMessage(
            "Error: KeyError('Pariss')\n Please fix your mistakes.",
            tool_call_id="c1",
            status="error",
        ),
        m.AIMessage(
            "Let me fix the city.",
            tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c2"}],
        ),
        m.ToolMessage("light rain, 12 C", tool_call_id="c2"),
        m.AIMessage(
            "Yes: light rain, 12 C.", response_metadata={"model_name": "gpt-4o-mini-2024-07-18"}
        ),
    ]


def _dumps() -> dict[str, list[Any]]:
    history = _history()
    return {
        "messages_to_dict": messages_module.messages_to_dict(history),
        "dumpd": [load_module.dumpd(message) for message in history],
    }


@pytest.mark.parametrize("shape", ["messages_to_dict", "dumpd"])
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_saved_history_is_one_run_with_its_calls_failure_and_answer(
    tmp_path: Path, shape: str, suffix: str
) -> None:
    dumped = _dumps()[shape]
    path = tmp_path / f"history{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(dumped))
    else:
        path.write_text("".join(json.dumps(message) + "\n" for message in dumped))

    (item,) = list(read(str(path)))  # auto: recognised from the content, no source named

    assert isinstance(item, TraceItem)
    trace = item.trace
    assert trace.task.objective == "Is it raining in Paris?"
    calls = [step for step in trace.steps if step.tool and step.type != "observation"]
    assert [(call.type, call.tool.name if call.tool else None, call.input) for call in calls] == [
        ("tool_call", "weather", {"city": "Pariss"}),
        ("error_recovery", "weather", {"city": "Paris"}),  # the call after the failed one
    ]
    assert trace.outcome.result_summary == "Yes: light rain, 12 C."
    assert trace.metadata.success is True
    source = (trace.metadata.model_extra or {})["source"]
    assert source["model"] == "gpt-4o-mini-2024-07-18"  # the reply's own
    assert trace.metadata.framework == "langchain"  # not the chat format it is read as


def test_a_tool_message_marked_failed_fails_its_call_whatever_its_text(tmp_path: Path) -> None:
    m = messages_module
    history = [
        m.HumanMessage("Book a table for two."),
        m.AIMessage("", tool_calls=[{"name": "book", "args": {"time": "20:00"}, "id": "c1"}]),
        m.ToolMessage("no table at 8", tool_call_id="c1", status="error"),
        m.AIMessage("", tool_calls=[{"name": "book", "args": {"time": "21:00"}, "id": "c2"}]),
        m.ToolMessage("booked for 9", tool_call_id="c2"),
        m.AIMessage("Booked for 9 pm."),
    ]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages_module.messages_to_dict(history)))

    (item,) = list(read(str(path)))

    assert isinstance(item, TraceItem)
    # Its words say no failure: the status does, so the next call is the recovery.
    kinds = [step.type for step in item.trace.steps if step.type != "observation"]
    assert kinds == ["tool_call", "error_recovery", "thought"]


def test_a_chat_conversation_beside_keeps_its_own_framework(tmp_path: Path) -> None:
    """Only LangChain's dumps name LangChain: plain Chat Completions messages name their format."""
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])
    )

    (item,) = list(read(str(path)))

    assert isinstance(item, TraceItem)
    assert item.trace.metadata.framework == "openai"
