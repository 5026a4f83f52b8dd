"""OpenAgents' ``tbench`` dialect of ATIF (``schema_version: 1.4``): read as the run it records."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.sources import convert
from knowledgepulse.sources._sessions.atif import recognises
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

TBENCH = CORPUS / "atif" / "openagents_tbench_claude_code_regex_log.json"


def only(items: list[Any]) -> TraceItem:
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def test_a_tbench_trajectory_gives_its_calls_failures_recoveries_answer_and_label() -> None:
    """Results written as system steps before the agent step listing their calls join those
    calls by id; a failed result is the call's error and the next call its recovery; the last
    message, said after its calls, is the answer; ``extra.success`` is the label."""
    document = json.loads(TBENCH.read_text())
    trace = only(convert_file(TBENCH)).trace  # recognised by its content
    calls = [step for step in trace.steps if step.type in ("tool_call", "error_recovery")]
    assert [(step.type, step.tool.name) for step in calls if step.tool] == [
        ("tool_call", "Write"),
        ("error_recovery", "Bash"),
        ("tool_call", "Bash"),
        ("error_recovery", "Bash"),
        ("tool_call", "Write"),
    ]
    assert calls[0].input == document["steps"][6]["tool_calls"][0]["arguments"]
    assert "EACCES: permission denied" in (trace.steps[2].content or "")
    assert trace.outcome.result_summary == document["steps"][-1]["message"]
    assert trace.metadata.success is document["extra"]["success"]
    model = (trace.metadata.model_extra or {})["source"].get("model")
    assert model == document["agent"]["model"]  # tbench's name for the agent's model_name


def test_a_bare_version_is_atif_only_with_its_agent_and_steps() -> None:
    steps = [{"step_id": 1, "source": "user", "message": "hi"}]
    assert recognises({"schema_version": "1.4", "agent": {"name": "x"}, "steps": steps})
    assert not recognises({"schema_version": "1.4", "steps": steps})
    assert not recognises({"schema_version": "2.0", "agent": {"name": "x"}, "steps": steps})


def tbench(failures: list[bool]) -> dict[str, Any]:
    """A ``tbench`` trajectory: one call a turn, each result a system step before the agent
    step that lists every call; ``failures[n]``: whether the n-th call failed."""
    results = [
        {
            "step_id": 2 + number,
            "timestamp": f"2025-12-11T22:19:{10 + number:02d}.000Z",
            "source": "system",
            "message": f"Tool result for toolu_{number}",
            "observation": {
                "type": "tool_result",
                "content": "denied" if failed else "ok",
                "result": {"success": False, "error": "denied"}
                if failed
                else {"success": True, "output": "ok"},
            },
        }
        for number, failed in enumerate(failures)
    ]
    calls = [
        {"id": f"toolu_{number}", "name": "Bash", "arguments": {"command": f"echo {number}"}}
        for number in range(len(failures))
    ]
    agent = {
        "step_id": 2 + len(failures),
        "timestamp": "2025-12-11T22:19:59.000Z",
        "source": "agent",
        "message": "Done.",
        "tool_calls": calls,
    }
    user = {"step_id": 1, "timestamp": "2025-12-11T22:19:00.000Z", "source": "user"}
    return {
        "schema_version": "1.4",
        "session_id": "tbench-1",
        "agent": {"name": "claude-code", "version": "2.0.58"},
        "steps": [{**user, "message": "Say hi"}, *results, agent],
    }


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_each_failed_call_but_the_last_is_recovered_by_the_call_after_it(
    failures: list[bool],
) -> None:
    """Calls answered one after another are turns: a failure is recovered by the next call, as
    the run went; the answer after the last call recovers a failure of that one."""
    trace = only(list(convert([tbench(failures)], source="atif"))).trace
    recoveries = [
        step.tool.name for step in trace.steps if step.type == "error_recovery" and step.tool
    ]
    assert len(recoveries) == sum(failures[:-1])
    assert trace.outcome.result_summary == "Done."
    errors = [
        step for step in trace.steps if step.type == "observation" and step.content == "denied"
    ]
    assert len(errors) == sum(failures)


QA_RUNNER = CORPUS / "atif" / "openagents_qa_runner_login_trace.json"


def test_the_qa_runners_verdict_is_the_runs_label() -> None:
    """OpenAgents' qa-runner ends on a ``done`` call and gives its verdict only in
    ``final_metrics.extra``: ``PASS`` is a success, where before the run, ending on a call and
    not an answer, read as failed; ``FAIL`` a failure."""
    document = json.loads(QA_RUNNER.read_text())
    assert document["final_metrics"]["extra"]["verdict"] == "PASS"
    assert only(convert_file(QA_RUNNER)).trace.metadata.success is True
    document["final_metrics"]["extra"]["verdict"] = "FAIL"
    assert only(list(convert([document], source="atif"))).trace.metadata.success is False
