"""A NeMo Gym rollout whose request has no input: the response's output holds the whole run.

The file is the conformance corpus's real one (tests/conformance/files/openai-responses, origin
and licence in SOURCES.md there): NeMo Gym's GDPval agent keeps the system prompt, the task, the
model's messages and its calls in ``response.output`` and sends ``input: []``.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse.sources import convert, read
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import source_of

ROLLOUT = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "openai-responses"
    / "nemo_gym_gdpval_rollout.jsonl"
)


def test_a_request_with_no_input_is_read_from_the_responses_output() -> None:
    # before: "not a trace file this tool knows", the row refused
    row = json.loads(ROLLOUT.read_text())
    assert row["responses_create_params"]["input"] == []
    output = row["response"]["output"]
    (item,) = [item for item in read([ROLLOUT]) if isinstance(item, TraceItem)]
    trace = item.trace
    task = next(o["content"] for o in output if o.get("role") == "user")
    assert trace.task.objective.strip() == task.strip()
    assert item.system == output[0]["content"]
    called = [o["name"] for o in output if o["type"] == "function_call"]
    assert [s.tool.name for s in trace.steps if s.type == "tool_call" and s.tool] == called
    assert source_of(item)["model"] == row["response"]["model"]


TRANSITIONS = ROLLOUT.with_name("nemo_gym_aviary_transitions_rollouts.jsonl")
"""Aviary's rollouts: ``contains_transitions``, the output the conversation after each step."""


def test_a_reply_of_transitions_is_read_as_its_last_one_the_whole_run() -> None:
    # before: the rows were refused ("not a trace file this tool knows")
    rows = [json.loads(line) for line in TRANSITIONS.read_text().splitlines()]
    items = [item for item in read([TRANSITIONS]) if isinstance(item, TraceItem)]
    assert len(items) == len(rows)
    for row, item in zip(rows, items, strict=True):
        last = row["response"]["output"][-1]
        called = [o["name"] for o in last if o["type"] == "function_call"]
        steps = item.trace.steps
        assert [s.tool.name for s in steps if s.type == "tool_call" and s.tool] == called
        assert item.trace.task.objective == last[0]["content"]
        assert source_of(item)["task"] == str(row["task_idx"])  # before: no task


def test_a_last_transition_opening_with_the_requests_input_does_not_repeat_it() -> None:
    row = json.loads(TRANSITIONS.read_text().splitlines()[0])
    question = row["response"]["output"][0][0]
    row["responses_create_params"]["input"] = [question]  # the transitions open with it too
    (item,) = [item for item in convert([row]) if isinstance(item, TraceItem)]
    calls = [o for o in row["response"]["output"][-1] if o["type"] == "function_call"]
    assert len([s for s in item.trace.steps if s.type == "tool_call"]) == len(calls)
    assert item.trace.task.objective == question["content"]
    assert not [s for s in item.trace.steps if s.content == question["content"]]
