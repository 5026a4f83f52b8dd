"""browser-use saved agent histories (``AgentHistoryList.save_to_file``) as traces.

The files are the conformance corpus's (tests/conformance/files/browser-use, origins and
licences in SOURCES.md there: histories saved by real runs: browser-use's own example's and three
projects'); a variant changes or adds steps of one of them to reach a rule none shows (a task
kept in ``state_message`` and a follow-up, a run out of steps).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources._envelope import PLACEHOLDER_OBJECTIVE
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import one_trace, recognise

CORPUS = Path(__file__).parents[1] / "conformance" / "files" / "browser-use"
FIRST = CORPUS / "browser_use_own_draft_rerun_elon_musk.json"
"""browser-use's own example run of November 2024: single action and result objects."""
RECOVERED = CORPUS / "jakkaj_tools_bfcl_leaderboard.json"
"""Brain under ``current_state``; a failed click (a ``wait`` beside it never ran), recovered."""
INITIAL = CORPUS / "pentest_agent_juice_shop_sqli.json"
"""Step 0 of initial actions, then the model's steps; done with ``success: true``."""
CRASHED = CORPUS / "pentest_agent_navigation_timeout.json"
"""A failed initial navigation, then a step with no model output whose result is an error."""


def history(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def written(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "AgentHistory.json"
    path.write_text(json.dumps(document))
    return path


def kinds(item: TraceItem) -> list[str]:
    return [step.type for step in item.trace.steps]


def test_a_saved_history_is_recognised_and_a_history_of_messages_is_not() -> None:
    assert recognise(history(RECOVERED)) == "browser-use"
    assert recognise(history(INITIAL)) == "browser-use"
    assert recognise({"history": []}) is None
    a2a = {"history": [{"role": "user", "parts": [{"kind": "text", "text": "hi"}]}]}
    assert recognise(a2a) != "browser-use"


def test_a_failed_action_is_an_error_its_sibling_never_ran_and_the_next_step_recovers() -> None:
    trace = one_trace(RECOVERED).trace
    click = next(s for s in trace.steps if s.tool and s.tool.name == "click_element_by_index")
    failed = trace.steps[click.step_id + 1]
    assert failed.type == "observation"
    assert (failed.content or "").startswith("Failed to click element")
    # The wait asked for with the click never ran (no result): no call, and no recovery.
    assert trace.steps[click.step_id + 2].type == "thought"
    recovery = trace.steps[click.step_id + 3]
    assert (recovery.type, recovery.tool and recovery.tool.name) == ("error_recovery", "open_tab")
    assert recovery.input == {"url": "https://gorilla.cs.berkeley.edu/leaderboard.html"}
    assert kinds(one_trace(RECOVERED)).count("error_recovery") == 1


def test_done_is_the_answer_and_its_success_the_runs_not_a_tool() -> None:
    item = one_trace(RECOVERED)
    trace = item.trace
    assert trace.metadata.success is True
    assert trace.outcome.result_summary.startswith("Top 10 AI agents by tool/function-calling")
    assert all(step.tool is None or step.tool.name != "done" for step in trace.steps)
    assert trace.steps[-1].type == "thought"
    assert trace.steps[-1].content == trace.outcome.result_summary
    assert abs(trace.metadata.created_at.timestamp() - 1759555068.5598102) < 1e-3


def test_the_brain_is_one_thought_a_step_after_the_thinking() -> None:
    trace = one_trace(INITIAL).trace
    at = next(
        n
        for n, step in enumerate(trace.steps)
        if (step.content or "").startswith("The user wants me to go to the login page")
    )
    brain = trace.steps[at + 1]
    assert brain.type == "thought"
    assert [line.split(":")[0] for line in (brain.content or "").splitlines()] == [
        "Eval",
        "Memory",
        "Next goal",
    ]
    assert (brain.content or "").startswith("Eval: Successfully loaded the Juice Shop homepage.")
    click = trace.steps[at + 2]
    assert (click.type, click.tool and click.tool.name) == ("tool_call", "click_element_by_index")


def test_a_done_that_says_it_failed_keeps_its_answer_and_fails_the_run(tmp_path: Path) -> None:
    document = history(INITIAL)
    said = one_trace(INITIAL).trace.outcome.result_summary
    document["history"][-1]["result"][-1]["success"] = False  # the agent gave up, said so
    trace = one_trace(written(tmp_path, document)).trace
    assert trace.metadata.success is False
    assert trace.outcome.result_summary == said


def test_the_initial_actions_browser_use_ran_before_the_model_are_no_calls_of_the_models() -> None:
    """The ``Initial Actions`` step is browser-use's own (the Agent's ``initial_actions``, a
    placeholder brain): no call and no thought, said in a warning; the model's steps follow."""
    item = one_trace(INITIAL)
    trace = item.trace
    step_zero = history(INITIAL)["history"][0]
    assert step_zero["state"]["title"] == "Initial Actions"
    assert list(step_zero["model_output"]["action"][0]) == ["go_to_url"]
    assert kinds(item)[:3] == ["thought", "thought", "tool_call"]
    assert not any(step.tool and step.tool.name == "go_to_url" for step in trace.steps)
    assert not any("Starting agent" in (step.content or "") for step in trace.steps)
    assert any(
        "1 initial action browser-use ran before the model (go_to_url)" in w for w in item.warnings
    )
    # the page changed after the first click: browser-use's note is the second click's result
    notes = [s for s in trace.steps if (s.content or "").startswith("Page changed after action")]
    assert len(notes) == 2
    assert trace.metadata.success is True
    row = chat_row(trace)
    assert row["messages"][1]["role"] == "assistant"
    assert "tool_calls" not in row["messages"][1]
    assert "go_to_url" not in row["tools"]


def test_a_failed_initial_action_and_a_step_without_model_output_are_errors_of_the_run() -> None:
    """The initial navigation that timed out is an error the run met, outside any call of the
    model's; the step with no model output whose result is an error ends the run."""
    trace = one_trace(CRASHED).trace
    assert kinds(one_trace(CRASHED)) == ["observation", "observation"]
    assert all(step.tool is None for step in trace.steps)
    assert (trace.steps[0].content or "").startswith("Navigation failed:")
    assert trace.steps[1].content == "('cannot schedule new futures after shutdown', 502)"
    assert trace.metadata.success is False
    assert trace.outcome.result_summary == "failed"


def test_a_history_without_a_task_gets_the_placeholder_and_says_so() -> None:
    item = one_trace(INITIAL)
    assert item.trace.task.objective == "browser-use run"
    assert any(w.startswith(PLACEHOLDER_OBJECTIVE) for w in item.warnings)


def test_the_task_is_the_user_request_of_the_state_message_and_a_follow_up_a_user_turn(
    tmp_path: Path,
) -> None:
    document = history(INITIAL)
    steps = document["history"]
    steps[0]["state_message"] = (
        "<user_request>\nFill the form at ember-form.html with example data.\n</user_request>\n"
        "<agent_history>\n</agent_history>\n<browser_state>\n...\n</browser_state>"
    )
    steps[3]["state_message"] = (
        "<user_request>\n<initial_user_request>Fill the form at ember-form.html with example "
        "data.</initial_user_request>\n<follow_up_user_request> Then stop. "
        "</follow_up_user_request>\n</user_request>\n<agent_history>\n...\n</agent_history>"
    )
    steps[4]["state_message"] = steps[3]["state_message"]  # the same follow-up: one turn
    item = one_trace(written(tmp_path, document))
    assert item.trace.task.objective == "Fill the form at ember-form.html with example data."
    assert not any(w.startswith(PLACEHOLDER_OBJECTIVE) for w in item.warnings)
    turns = [s for s in item.trace.steps if s.tool is not None and s.tool.name == "respond"]
    assert [s.content for s in turns if s.type == "observation"] == ["Then stop."]


def test_the_first_releases_single_action_and_result_are_read(tmp_path: Path) -> None:
    document = history(RECOVERED)
    for step in document["history"]:
        step["model_output"]["action"] = step["model_output"]["action"][0]
        step["result"] = step["result"][0]
    item = one_trace(written(tmp_path, document))
    tools = [s.tool.name for s in item.trace.steps if s.tool and s.type != "observation"]
    assert tools == [
        "search_google",
        "open_tab",
        "click_element_by_index",
        "open_tab",
        "extract_content",
    ]
    assert item.trace.metadata.success is True


def test_a_done_recorded_before_browser_use_wrote_success_ended_the_run(tmp_path: Path) -> None:
    document = history(RECOVERED)
    del document["history"][-1]["result"][0]["success"]
    assert one_trace(written(tmp_path, document)).trace.metadata.success is True


def test_a_run_out_of_steps_ends_in_a_terminal_error(tmp_path: Path) -> None:
    document = history(INITIAL)
    steps = document["history"][:-1]  # no done
    steps.append(
        {
            "model_output": None,
            "result": [
                {"error": "Failed to complete task in maximum steps", "include_in_memory": True}
            ],
            "state": {"url": "", "title": "", "tabs": [], "interacted_element": []},
            "metadata": None,
        }
    )
    document["history"] = steps
    item = one_trace(written(tmp_path, document))
    assert item.trace.steps[-1].type == "observation"
    assert item.trace.steps[-1].content == "Failed to complete task in maximum steps"
    assert item.trace.metadata.success is False
    assert "error_recovery" not in kinds(item)


def test_a_history_item_that_is_no_step_is_left_out_with_a_warning(tmp_path: Path) -> None:
    document = copy.deepcopy(history(INITIAL))
    document["history"].insert(2, "not a step")
    item = one_trace(written(tmp_path, document))
    assert any("no step object" in warning for warning in item.warnings)
    assert item.trace.outcome.result_summary == one_trace(INITIAL).trace.outcome.result_summary


def test_browser_uses_own_first_release_history_reads_its_valuation_as_the_evaluation() -> None:
    trace = one_trace(FIRST).trace
    assert trace.steps[0].content == "Eval: Unknown\nNext goal: Search for 'elon musk' on Google."
    tools = [s.tool.name for s in trace.steps if s.tool and s.type == "tool_call"]
    assert tools == ["search_google", "click_element", "click_element"]
    assert trace.metadata.success is True
    assert trace.outcome.result_summary == (
        "The first search result for 'Elon Musk' on Wikipedia was clicked and opened successfully."
    )
