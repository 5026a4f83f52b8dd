"""Letta agent files (``.af``): an agent exported with its message history.

The files are the conformance corpus's (tests/conformance/files/letta, origins and licences in
SOURCES.md there: agent files exported after real runs, from letta-ai/agent-file and the test
files of letta-ai/letta); a few are changed here to show one rule at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

LETTA = Path(__file__).parents[1] / "conformance" / "files" / "letta"
STAR = LETTA / "agent_file_composio_github_star_agent.af"
"""Letta 0.6.47: boot messages, a login, the request, one call, a heartbeat, the answer."""
SEARCH = LETTA / "letta_tests_max_messages.af"
"""Letta 0.10.0: three failed searches, each told to the user; then one that works."""
CLI = LETTA / "letta_tests_test_agent.af"
"""AgentFileSchema, a letta_v1_agent: approval requests, a denied call, text replies."""
GROUP = LETTA / "agent_file_lettabot_builder.af"
"""AgentFileSchema: an agent and its sleep-time agent."""
KNOWLEDGE = LETTA / "letta_tests_knowledge_base.af"
"""Letta 0.7.14: ends on the return of summarize_pinecone_results, its rules' terminal tool."""
WORKFLOW = LETTA / "agent_file_outreach_workflow_agent.af"
"""Letta 0.6.47, a workflow agent: retrieve, evaluate, then reject, a terminal tool; no words."""


def document(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value


def traces(path: Path) -> list[TraceItem]:
    items = convert_file(path)
    assert all(isinstance(item, TraceItem) for item in items), items
    return [item for item in items if isinstance(item, TraceItem)]


def written(tmp_path: Path, value: Any, name: str = "agent.af") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def test_both_versions_are_letta_files_not_chat_rows() -> None:
    for path in (STAR, SEARCH, CLI, GROUP):
        assert recognise(document(path)) == "letta", path
    assert recognise({"messages": document(STAR)["messages"]}) != "letta"


def test_a_json_string_of_an_agent_file_is_read_as_the_file(tmp_path: Path) -> None:
    """Some agent files hold their JSON as a JSON string (agent-file's examples since 1.0)."""
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(json.dumps(document(CLI))))
    (item,) = traces(path)
    assert item.trace.task.objective == "tell me about this repo"


def test_send_message_is_what_the_agent_says_and_letta_events_are_no_turns() -> None:
    """Boot messages, the login, the heartbeat are Letta's; send_message's words the answer."""
    (item,) = traces(STAR)
    trace = item.trace
    assert trace.task.objective == "please star this repo https://github.com/letta-ai/letta"
    tools = [s.tool.name for s in trace.steps if s.tool is not None and s.type == "tool_call"]
    assert tools == ["github_star_a_repository_for_the_authenticated_user"]
    assert trace.outcome.result_summary == "I've starred the repository for you! 🎉"
    assert trace.metadata.success is True
    words = " ".join(s.content or "" for s in trace.steps)
    assert "More human than human" not in words
    assert "heartbeat" not in words
    assert "Bootup sequence" not in words


def test_a_failed_return_is_an_error_and_what_the_agent_says_next_its_recovery() -> None:
    (item,) = traces(SEARCH)
    steps = item.trace.steps
    failed = [n for n, s in enumerate(steps) if (s.content or "").startswith("Error executing")]
    assert len(failed) == 3
    for n in failed:
        after = next(s for s in steps[n + 1 :] if s.type != "thought")
        assert after.type == "error_recovery"
        assert after.tool is not None
        assert after.tool.name == "respond"  # the agent told the user, through send_message
    assert item.trace.metadata.success is True


def test_a_v1_agents_text_is_its_reply_and_a_denied_call_an_error() -> None:
    (item,) = traces(CLI)
    steps = item.trace.steps
    denied = next(s for s in steps if "request to call tool denied" in (s.content or ""))
    assert denied.type == "observation"
    assert sum(s.type == "error_recovery" for s in steps) == 1
    said = [s.content or "" for s in steps if s.tool is not None and s.tool.name == "respond"]
    assert any("This is **Letta**" in text for text in said)
    # The export ends on three parallel calls with no return: no answer.
    assert item.trace.metadata.success is False


def test_each_agent_of_a_group_is_a_trace_the_sleeptime_one_naming_its_manager() -> None:
    main, sleeptime = traces(GROUP)
    assert main.trace.task.objective == "What do you know about me?"  # the reminder left out
    assert (main.trace.outcome.result_summary or "").startswith("Here's what I know about you")
    assert source_of(main).get("sleeptime_of") is None
    assert source_of(sleeptime)["sleeptime_of"] == "lettabot-builder"
    assert source_of(sleeptime)["agent_type"] == "sleeptime_agent"
    assert "Note: prior messages" not in sleeptime.trace.task.objective  # the summary is Letta's


def test_a_run_that_ends_on_its_terminal_tool_succeeds_without_an_answer(tmp_path: Path) -> None:
    """A tool the agent's rules end the run with (``exit_loop``) ends it as designed: a workflow
    agent says nothing to the user. Without that rule, a history ending on a return is cut."""
    for path in (WORKFLOW, KNOWLEDGE):
        (item,) = traces(path)
        assert item.trace.metadata.success is True, path
        assert item.trace.outcome.result_summary == "completed"
        assert item.trace.steps[-1].type == "observation"
    value = document(WORKFLOW)
    value["tool_rules"] = [r for r in value["tool_rules"] if r["type"] != "exit_loop"]
    (item,) = traces(written(tmp_path, value))
    assert item.trace.metadata.success is False
    value = document(WORKFLOW)  # the terminal tool failed: no success
    value["messages"][-1]["content"][0]["text"] = json.dumps({"status": "Failed", "message": "x"})
    (item,) = traces(written(tmp_path, value, "failed.af"))
    assert item.trace.metadata.success is False


def test_an_agent_exported_without_its_history_is_a_problem(tmp_path: Path) -> None:
    value = document(CLI)
    value["agents"][0]["messages"] = value["agents"][0]["messages"][:1]  # the system prompt
    (problem,) = convert_file(written(tmp_path, value))
    assert isinstance(problem, Problem)
    assert "holds no conversation" in problem.message


def test_an_agent_of_boot_messages_and_a_login_alone_holds_no_conversation(tmp_path: Path) -> None:
    """What a new MemGPT-style agent holds before anyone spoke to it (agent-file's examples)."""
    value = document(STAR)
    value["messages"] = value["messages"][:4]  # system, boot thought + quote, return, login
    (problem,) = convert_file(written(tmp_path, value))
    assert isinstance(problem, Problem)
    assert "holds no conversation" in problem.message


def test_a_message_that_is_none_is_a_problem_at_its_path(tmp_path: Path) -> None:
    value = document(CLI)
    value["agents"][0]["messages"][3] = "oops"
    (problem,) = convert_file(written(tmp_path, value))
    assert isinstance(problem, Problem)
    assert "agents[0].messages[3]" in str(problem)
    assert "not a Letta message" in problem.message
