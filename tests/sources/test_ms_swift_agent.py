"""ms-swift's agent rows: ``tool_call`` turns and their ``tool_response`` results.

The file is the conformance corpus's real one (tests/conformance/files/sharegpt, origin and
licence in SOURCES.md there): the rows ms-swift's Agent-support documentation gives.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse.sources import read
from knowledgepulse.trace import TraceItem

ROWS = (
    Path(__file__).parents[1]
    / "conformance"
    / "files"
    / "sharegpt"
    / "ms_swift_agent_support_examples.jsonl"
)


def test_tool_response_turns_are_the_results_of_the_tool_call_turns_before_them() -> None:
    # before: "messages[3]: not a ShareGPT turn" for each row, so no trace at all
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    items = [item for item in read([ROWS]) if isinstance(item, TraceItem)]
    assert len(items) == len(rows)
    first = items[0].trace
    assert [(s.type, s.tool.name if s.tool else None) for s in first.steps][:4] == [
        ("tool_call", "realtime_aqi"),
        ("observation", "realtime_aqi"),
        ("tool_call", "realtime_aqi"),
        ("observation", "realtime_aqi"),
    ]
    responses = [m["content"] for m in rows[0]["messages"] if m["role"] == "tool_response"]
    assert [s.content for s in first.steps if s.type == "observation"] == responses
    assert [s.input for s in first.steps if s.type == "tool_call"] == [
        {"city": "Beijing"},
        {"city": "Shanghai"},
    ]
    assert first.outcome.result_summary == rows[0]["messages"][-1]["content"]
    second = items[1].trace
    assert [s.type for s in second.steps][:3] == ["thought", "tool_call", "observation"]
    assert second.steps[2].content == rows[1]["messages"][3]["content"]
