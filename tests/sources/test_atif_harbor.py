"""Harbor's ATIF trajectories of coding agents: a user step holds what the agent sent the model.

The file is the conformance corpus's (tests/conformance/files/atif, origin and licence in
SOURCES.md there); a variant changes one part of it to reach a rule it does not show.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources import convert
from knowledgepulse.sources._sessions.atif import to_atif
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

NO_FUNCTION_CALLING = CORPUS / "atif" / "harbor_openhands_no_function_calling.json"
"""OpenHands 1.1.0 without native function calling: its worked example around the task, its
calls written into its messages (``<function=execute_bash>``, ``<function=finish>``)."""
TASK = 'Create a file called hello.txt with "Hello, world!" as the content.'


def only(items: list[Any]) -> TraceItem:
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def test_openhands_worked_example_around_the_task_is_no_part_of_the_objective() -> None:
    """Before: the objective was the example's opening ("Here's a running example of how to
    perform a task..."), 6 KB of another task; now it is the task between the banners."""
    trace = only(convert_file(NO_FUNCTION_CALLING)).trace
    assert trace.task.objective == TASK
    assert [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool] == [
        "execute_bash"
    ]
    answer = "Task complete. Created /app/hello.txt with 'Hello, world!'"
    assert trace.outcome.result_summary == answer
    assert trace.metadata.success is True


def test_a_later_user_step_is_the_users_words_less_what_the_agent_added() -> None:
    """A user step after the first is the user's turn: Claude Code's system reminders in it
    (Harbor keeps them as the agent sent them) are no words of the user's."""
    document: dict[str, Any] = copy.deepcopy(json.loads(NO_FUNCTION_CALLING.read_text()))
    document["steps"].append(
        {
            "step_id": len(document["steps"]) + 1,
            "source": "user",
            "message": "<system-reminder>The file changed.</system-reminder>\nNow delete it.",
        }
    )
    trace = only(list(convert([document], source="atif"))).trace
    assert trace.task.objective == TASK
    said = [step.content for step in trace.steps if step.type == "observation"]
    assert said[-1] == "Now delete it."


HARBOR_CLAUDE = CORPUS / "atif" / "harbor_0.26_claude_code_2.1.39_sibling_error.json"
"""Harbor 0.26's conversion of a Claude Code sub-agent whose two calls fail together."""
HARBOR_CODEX = CORPUS / "atif" / "harbor_0.26_codex_0.39_ide_context.json"
"""Harbor 0.26's conversion of a Codex rollout: its environment context a user step."""
HARBOR_INTERRUPTED = CORPUS / "atif" / "harbor_0.26_claude_code_2.1.38_interrupted.json"
"""Harbor 0.26's conversion of a Claude Code session the user interrupted."""


def test_a_result_harbor_flags_as_a_claude_code_error_is_the_calls_error() -> None:
    """Before: the failed ``Bash`` and ``Read`` read as plain observations, no error, no
    recovery; now ``extra.tool_result_is_error`` makes each its call's error, and the model's
    next call after them (its fixed ``Bash``) the recovery."""
    trace = only(convert_file(HARBOR_CLAUDE)).trace
    recoveries = [step for step in trace.steps if step.type == "error_recovery"]
    assert [step.tool.name for step in recoveries if step.tool] == ["Bash"]
    before = trace.steps[: trace.steps.index(recoveries[0])]
    said = [step.content or "" for step in before if step.type == "observation"]
    assert "Sibling tool call errored" in said[-2] + said[-1]


def test_what_codex_wrote_in_the_users_name_is_no_objective() -> None:
    """Before: the objective was Codex's ``<environment_context>`` block and the request a
    ``respond`` turn; now the request is the objective, less the IDE's context around it."""
    trace = only(convert_file(HARBOR_CODEX)).trace
    assert trace.task.objective.startswith("幫我檢查一下 go.mod")
    assert "<environment_context>" not in trace.task.objective
    assert "My request for Codex" not in trace.task.objective
    assert not [step for step in trace.steps if step.tool and step.tool.name == "respond"]


def test_claude_codes_interruption_note_is_no_turn_of_the_user() -> None:
    """Before: ``[Request interrupted by user for tool use]`` was the user's reply (a
    ``respond`` observation); now it is no step, and the run, stopped, did not succeed."""
    trace = only(convert_file(HARBOR_INTERRUPTED)).trace
    assert not [step for step in trace.steps if step.tool and step.tool.name == "respond"]
    assert trace.metadata.success is False


def test_terminus_2s_prompt_around_the_task_and_its_handoff_are_no_part_of_the_objective() -> None:
    """Before: the objective was Terminus 2's whole prompt ("You are an AI assistant tasked with
    solving command-line tasks...", the task near its end), and in a run handed on after a
    summary its handoff ("You are picking up work from a previous AI agent...") was joined to
    it; now it is the task the prompt's ``Task Description:`` gives."""
    for name in ("harbor_terminus2_timeout.json", "harbor_terminus2_continuation_cont1.json"):
        trace = only(convert_file(CORPUS / "atif" / name)).trace
        assert trace.task.objective == TASK, name
        assert not any("picking up work" in (step.content or "") for step in trace.steps)


def test_a_trajectory_terminus_2s_handoff_opens_has_the_task_it_names_as_objective() -> None:
    """Terminus 2's summarisation subagent that asks the questions opens on the hand-off alone
    (``**Original Task:** ...``, the summary, the screen). Before: no objective, the placeholder
    "terminus-2-summarization-questions run" stood in, and the training row's user turn said so;
    now it is the task the hand-off names, as its sibling answering the questions has."""
    trace = only(convert_file(CORPUS / "atif" / "harbor_terminus2_sub_questions.json")).trace
    assert trace.task.objective == TASK
    assert chat_row(trace)["messages"][0] == {"role": "user", "content": TASK}


def test_the_model_that_ran_a_trajectory_is_kept_and_written_back() -> None:
    """The model Harbor names (``agent.model_name``, each agent step's ``model_name``) is the
    trace's ``metadata.source.model``; ``kp convert --to atif`` writes it back as the agent's."""
    document = json.loads(HARBOR_CLAUDE.read_text())
    trace = only(list(convert([document], source="atif"))).trace
    model = (trace.metadata.model_extra or {})["source"]["model"]
    assert model == document["agent"]["model_name"] == "claude-haiku-4-5-20251001"
    written = to_atif(trace)
    assert written["agent"]["model_name"] == model
    back = only(list(convert([written], source="atif"))).trace
    assert (back.metadata.model_extra or {})["source"]["model"] == model


def test_a_result_without_content_still_answers_its_call() -> None:
    """A result that names its call but holds no content (``get_news`` here) is an empty
    observation: the tool gave back nothing. Before, the call had no result at all, and its
    training row an assistant ``tool_calls`` entry no ``tool`` turn answered, mid-conversation,
    which chat APIs and trainers refuse."""
    trace = only(convert_file(CORPUS / "atif" / "parallel_tools_mixed_results.json")).trace
    (news,) = [
        i
        for i, step in enumerate(trace.steps)
        if step.type == "tool_call" and step.tool and step.tool.name == "get_news"
    ]
    after = trace.steps[news + 1]
    assert (after.type, after.content) == ("observation", "")
    messages = chat_row(trace)["messages"]
    called = [call["id"] for m in messages for call in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(answered) == sorted(called)


def test_terminus_2s_confirmed_task_completion_ends_the_run_as_its_answer() -> None:
    """Before: the run ended on its second ``mark_task_complete``, a tool call, with no answer,
    and read as failed, as the run that timed out does; now the call that confirms is the run's
    end, its step's message the answer, and the run succeeded. The first call, which Terminus
    answered by asking whether the agent was sure, stays a call with that result."""
    confirmed = only(convert_file(CORPUS / "atif" / "harbor_terminus2_summarization.json")).trace
    assert confirmed.metadata.success is True
    assert confirmed.outcome.result_summary == (
        "Analysis: Yes, confirming task completion.\nPlan: Final confirmation."
    )
    completions = [s for s in confirmed.steps if s.tool and s.tool.name == "mark_task_complete"]
    assert [step.type for step in completions] == ["tool_call", "observation"]
    assert "Are you sure" in (completions[1].content or "")
    timed_out = only(convert_file(CORPUS / "atif" / "harbor_terminus2_timeout.json")).trace
    assert timed_out.metadata.success is False


def test_a_confirmed_completion_ends_the_run_in_either_dialects_call_names() -> None:
    """A trajectory naming its calls ``name`` (OpenAgents' tbench dialect), not
    ``function_name``, reads as the same run: the confirming step's call left out there too."""

    def renamed(value: Any) -> Any:
        if isinstance(value, dict):
            return {("name" if k == "function_name" else k): renamed(v) for k, v in value.items()}
        return [renamed(v) for v in value] if isinstance(value, list) else value

    document = json.loads((CORPUS / "atif" / "harbor_terminus2_summarization.json").read_text())
    (harbor,) = [i for i in convert([document], source="atif") if isinstance(i, TraceItem)]
    (tbench,) = [i for i in convert([renamed(document)], source="atif") if isinstance(i, TraceItem)]
    assert tbench.trace == harbor.trace
