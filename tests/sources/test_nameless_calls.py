"""A call with no tool name: read from a source with a warning, and back from the row kp wrote."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from knowledgepulse.records import Problem
from knowledgepulse.runs.convert import convert_files
from knowledgepulse.sources import read
from knowledgepulse.trace import TraceItem
from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))
from json_mutations import Edit, apply, dump, load_seed

ATIF = REPO / "tests" / "conformance" / "files" / "atif"
TRAJECTORY = ATIF / "openagents_tbench_claude_code_regex_log.json"


def test_a_row_kp_wrote_of_a_trace_with_a_nameless_call_reads_back(tmp_path: Path) -> None:
    """A trajectory whose call's step is lost (its observation read as a nameless call, with a
    warning) goes ``--to messages`` and reads back as its one trace (before: refused, lost)."""
    seed = load_seed(TRAJECTORY)
    assert seed is not None
    document = apply(seed.document, Edit(("steps", 8), "set", 1.5))
    source = tmp_path / TRAJECTORY.name
    source.write_bytes(dump(document, seed.form) or b"")
    (trace,) = [item.trace for item in read([str(source)]) if isinstance(item, TraceItem)]
    rows = tmp_path / "rows.jsonl"
    assert convert_files([str(source)], rows, to="messages", source="atif").traces == 1
    back = list(read([str(rows)], source="openai-chat"))
    assert [item for item in back if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in back if isinstance(item, TraceItem)]
    assert [step.type for step in item.trace.steps] == [step.type for step in trace.steps]
    warnings = [str(item) for item in back if isinstance(item, Problem)]
    assert any("call a tool with no real name" in warning for warning in warnings)


def test_a_row_of_anothers_with_a_nameless_call_is_refused_at_its_path(tmp_path: Path) -> None:
    """Only kp's own rows keep a nameless call: another dataset's is a broken row."""
    call = {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}
    row = {
        "messages": [
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "4"},
            {"role": "assistant", "content": "4"},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    problems = [
        item for item in read([str(path)], source="openai-chat") if isinstance(item, Problem)
    ]
    assert [problem.message for problem in problems if not problem.warning] == [
        "expected a tool name, found an empty string"
    ]
    assert "messages[1].tool_calls[0].function.name" in str(problems[0])
