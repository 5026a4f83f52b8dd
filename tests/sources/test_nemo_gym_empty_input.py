"""A NeMo Gym rollout whose request has no input: the response's output holds the whole run.

The file is the conformance corpus's real one (tests/conformance/files/openai-responses, origin
and licence in SOURCES.md there): NeMo Gym's GDPval agent keeps the system prompt, the task, the
model's messages and its calls in ``response.output`` and sends ``input: []``.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse.sources import read
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
