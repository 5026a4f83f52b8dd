"""Responses items whose reasoning is listed after the call it made (NeMo Gym's rollouts).

The file is the conformance corpus's real one (tests/conformance/files/openai-responses, origin
and licence in SOURCES.md there): a vLLM-served Nemotron's reply lists its ``function_call``
before the ``reasoning`` that chose it, and the call's output comes after both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse import sources
from knowledgepulse.trace import ReasoningTrace, TraceItem

ROLLOUTS = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "openai-responses"
    / "nemo_gym_conversational_tool_use_rollouts.jsonl"
)


def first_rollout() -> dict[str, Any]:
    row = json.loads(ROLLOUTS.read_text().splitlines()[0])
    assert isinstance(row, dict)
    return row


def trace_of(row: dict[str, Any]) -> ReasoningTrace:
    (item,) = (i for i in sources.convert([row]) if isinstance(i, TraceItem))
    return item.trace


def test_reasoning_listed_after_a_call_awaiting_its_output_is_told_before_the_call() -> None:
    # before: the call, its output, then "... Let me do that first." as if thought after it
    row = first_rollout()
    kinds = [item["type"] for item in row["response"]["output"]]
    assert kinds[:3] == ["function_call", "reasoning", "function_call_output"]
    trace = trace_of(row)
    steps = [(step.type, (step.content or "")[:40]) for step in trace.steps]
    assert [kind for kind, _ in steps] == [
        "thought",
        "tool_call",
        "observation",
        "thought",
        "thought",
    ]
    assert steps[0][1].startswith("I need to help this user with two")
    # the reasoning after the output saw it: it stays after
    assert steps[3][1].startswith("I can see that the ASL interpreter")


def test_reasoning_after_a_calls_output_stays_after_the_call() -> None:
    row = first_rollout()
    output = row["response"]["output"]
    call, reasoning, result = output[:3]
    row["response"]["output"] = [call, result, reasoning, *output[3:]]
    steps = [step.type for step in trace_of(row).steps]
    assert steps[:3] == ["tool_call", "observation", "thought"]


SWE_ROLLOUTS = ROLLOUTS.with_name("nemo_gym_mini_swe_agent_rollouts.jsonl")
"""Qwen3 served without a reasoning parser: its ``<think>`` blocks are in the messages' text."""


def test_think_blocks_in_an_assistant_messages_text_are_thoughts_without_their_tags() -> None:
    # before: "<think>\nOkay, ...</think>" was one thought, tags and all, and the text after
    # the block ("I need to determine how type hints...") was in the same thought
    rows = [json.loads(line) for line in SWE_ROLLOUTS.read_text().splitlines()]
    written = [
        part["text"]
        for row in rows
        for item in row["response"]["output"]
        if item["type"] == "message"
        for part in item["content"]
    ]
    assert all(text.startswith("<think>") for text in written)
    thoughts = [
        step.content or "" for row in rows for step in trace_of(row).steps if step.type == "thought"
    ]
    assert not [t for t in thoughts if "<think>" in t or "</think>" in t]
    after = next(t.split("</think>")[1].strip() for t in written if t.split("</think>")[1].strip())
    assert after.startswith("I need to determine how type hints are implemented")
    # the text after the block is a thought of its own (a long thought is kept cut)
    assert [t for t in thoughts if t.startswith(after[:80])]
