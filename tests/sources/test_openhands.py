"""OpenHands trajectories (a list of events) and evaluation rows (``output.jsonl``) as traces.

The files are the conformance corpus's real ones (tests/conformance/files/openhands, origins and
licence in SOURCES.md there): four replay fixtures of OpenHands' own tests and two rows of its
Multi-SWE-bench example output. A variant changes one part of a real file to reach a rule it does
not show. The facts files cover objectives, tools, answers and labels; these tests the rest.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources._registry import recognisers
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

OPENHANDS = Path(__file__).parents[1] / "conformance" / "files" / "openhands"
BASIC = OPENHANDS / "basic.json"
"""claude-3-5-sonnet writes a 2048 game with one ``str_replace_editor`` call, then finishes."""
GUI = OPENHANDS / "basic_gui_mode.json"
"""State changes first; a server still running after 30 s (exit code -1); a closing message."""
INTERACTIONS = OPENHANDS / "basic_interactions.json"
"""gpt-4o answers in messages, the user replies twice, then ``finish`` with no text."""
RENAME = OPENHANDS / "wrong_initial_state.json"
"""A view, an ``mv``, a view, ``finish``."""
ROWS = OPENHANDS / "multi_swe_bench_ponyc_output.jsonl"
"""Two Multi-SWE-bench rows: one ends in ``finish`` (``task_completed: false``), one in the row's
``error`` (maximum iterations)."""


def events(path: Path) -> list[Any]:
    loaded = json.loads(path.read_text())
    assert isinstance(loaded, list)
    return loaded


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()]


def traces_of(path: Path) -> list[TraceItem]:
    found = convert_file(path)
    assert [item for item in found if isinstance(item, Problem) and not item.warning] == []
    return [item for item in found if isinstance(item, TraceItem)]


def written(tmp_path: Path, value: Any, name: str = "run.json") -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(row) + "\n" for row in value))
    else:
        path.write_text(json.dumps(value, indent=1))
    return path


def tools(trace: ReasoningTrace) -> list[str]:
    return [
        step.tool.name
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery") and step.tool is not None
    ]


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_each_file_and_row_is_recognised_by_its_content_alone() -> None:
    """No ``--from``: the first event (a message, a state change) or a row tells OpenHands."""
    for path in (BASIC, GUI, INTERACTIONS, RENAME):
        assert recognise(events(path)[0]) == "openhands", path.name
        assert [source.name for source in recognisers(events(path)[0])] == ["openhands"]
    assert [source.name for source in recognisers(rows()[0])] == ["openhands"]


def test_no_other_corpus_file_is_taken_for_openhands() -> None:
    """The first record of every other format's corpus file is not an OpenHands event."""
    for path in sorted(OPENHANDS.parent.glob("*/*")):
        if path.parent.name == "openhands" or path.name.endswith(".facts.json"):
            continue
        if path.suffix not in (".json", ".jsonl"):
            continue
        text = path.read_text()
        try:
            loaded = json.loads(text)
        except ValueError:
            loaded = json.loads(next(line for line in text.splitlines() if line.strip()))
        first = loaded[0] if isinstance(loaded, list) and loaded else loaded
        assert "openhands" not in [source.name for source in recognisers(first)], path


def test_a_file_of_events_is_one_trace_objective_tools_and_answer_once() -> None:
    (item,) = traces_of(BASIC)
    trace = item.trace
    assert trace.id == "kp:trace:openhands:basic"
    assert trace.task.objective.startswith("Please create a simple 2048 game.")
    assert tools(trace) == ["str_replace_editor"]
    answer = trace.outcome.result_summary
    assert answer.startswith("I've created a simple implementation of the 2048 game")
    assert [step.content for step in trace.steps].count(answer) == 1
    assert trace.steps[-1].content == answer
    assert trace.metadata.success is True
    assert source_of(item)["format"] == "openhands"


def test_the_call_is_named_and_given_the_arguments_as_the_model_wrote_them() -> None:
    """``str_replace_editor`` (``function_name``) for a ``read``, with the arguments of the call
    the response the action keeps holds (``command: view``), not OpenHands' ``start``/``end``."""
    (item,) = traces_of(RENAME)
    trace = item.trace
    assert tools(trace) == ["str_replace_editor", "execute_bash", "str_replace_editor"]
    assert trace.steps[1].input == {"command": "view", "path": "/workspace"}
    call = trace.steps[4]
    assert call.input == {
        "command": "mv /workspace/game_2048.py /workspace/2048.py",
        "is_input": "false",
    }
    assert trace.steps[3].type == "thought"  # the action's args.thought, before its call
    assert (trace.steps[3].content or "").startswith("Great, I found the file.")


def test_a_created_files_text_is_the_calls_argument_as_the_model_wrote_it() -> None:
    """The ``edit`` action of a ``create`` keeps neither the command nor the file's text in its
    ``args`` (``content: ""``, defaults ``start``/``end``): the call is the model's, whose
    response the action keeps, so the text the model wrote is not lost."""
    (event,) = [event for event in events(BASIC) if event.get("action") == "edit"]
    (written,) = event["tool_call_metadata"]["model_response"]["choices"][0]["message"][
        "tool_calls"
    ]
    arguments = json.loads(written["function"]["arguments"])
    assert event["args"]["content"] == ""
    assert "file_text" not in event["args"]
    (item,) = traces_of(BASIC)
    (call,) = [step for step in item.trace.steps if step.type == "tool_call"]
    assert call.input == arguments
    assert arguments["command"] == "create"
    assert arguments["file_text"].startswith("import random")


def test_state_changes_and_null_observations_are_no_steps_and_exit_code_minus_one_fails() -> None:
    """OpenHands says ``success: false`` for a command still running when it stopped waiting:
    an error, and the agent's closing message (the answer) is its recovery."""
    (item,) = traces_of(GUI)
    trace = item.trace
    assert tools(trace) == [
        "execute_bash",
        "str_replace_editor",
        "str_replace_editor",
        "execute_bash",
    ]
    failed = [step for step in trace.steps if step.type == "observation"][-1]
    assert (failed.content or "").startswith("Serving HTTP on 0.0.0.0 port 8000")
    assert trace.steps[-1].type == "error_recovery"
    assert trace.outcome.result_summary.startswith("I've created a complete Vue.js todo")
    assert trace.metadata.success is True  # it ended on the agent's answer, awaiting the user
    assert source_of(item)["agent_state"] == "awaiting_user_input"


def test_later_user_messages_are_turns_answering_what_the_agent_said() -> None:
    (item,) = traces_of(INTERACTIONS)
    trace = item.trace
    assert trace.task.objective == "what's 1+1?"
    assert kinds(trace) == [
        ("tool_call", "respond"),
        ("observation", "respond"),
        ("tool_call", "respond"),
        ("observation", "respond"),
    ]
    assert trace.steps[0].content == "1 + 1 equals 2."
    assert trace.steps[3].content == "Finish please"
    assert trace.metadata.success is True  # it finished; the finish said nothing more


def test_an_evaluation_row_is_one_trace_named_by_its_instance() -> None:
    items = traces_of(ROWS)
    assert [item.trace.id for item in items] == [
        "kp:trace:openhands:ponylang__ponyc-4593",
        "kp:trace:openhands:ponylang__ponyc-4588",
    ]
    first = items[0]
    assert first.trace.task.objective.startswith("<uploaded_files>\n/workspace/ponylang__ponyc")
    assert first.system is not None
    assert first.system.startswith("You are OpenHands agent")
    assert [tool["function"]["name"] for tool in first.tools][:2] == [
        "execute_bash",
        "think",
    ]
    assert source_of(first)["instance_id"] == "ponylang__ponyc-4593"


def test_a_non_zero_exit_code_is_an_error_the_next_call_recovers_from() -> None:
    trace = traces_of(ROWS)[0].trace
    failed = trace.steps[5]
    assert (failed.type, failed.content) == (
        "observation",
        "ls: cannot access 'src/lib': No such file or directory",
    )
    assert trace.steps[7].type == "error_recovery"
    assert trace.steps[7].input == {"command": "ls src"}


def test_an_error_observation_answering_no_action_is_an_error_of_its_own() -> None:
    """A tool call OpenHands could not read leaves only an ``error`` observation, no cause."""
    trace = traces_of(ROWS)[0].trace
    (error,) = [
        n for n, step in enumerate(trace.steps) if step.type == "observation" and step.tool is None
    ]
    assert (trace.steps[error].content or "").startswith(
        "Parameter 'command' is expected to be one of"
    )
    assert trace.steps[error + 1].type == "thought"
    assert trace.steps[error + 2].type == "error_recovery"


def test_the_file_editors_error_output_is_a_failed_call() -> None:
    trace = traces_of(ROWS)[0].trace
    refused = [
        step
        for step in trace.steps
        if step.type == "observation" and (step.content or "").startswith("ERROR:")
    ]
    assert refused
    for step in refused:
        after = trace.steps[step.step_id + 1 :]
        following = next(s for s in after if s.type != "thought")
        assert following.type == "error_recovery"


def test_finish_gives_the_final_thought_once_and_task_completed_false_fails() -> None:
    trace = traces_of(ROWS)[0].trace
    answer = trace.outcome.result_summary
    assert answer.startswith("Unable to make necessary changes to the file")
    assert [step.content for step in trace.steps].count(answer) == 1
    assert (trace.steps[-2].content or "").startswith(
        "It seems that I am unable to make"
    )  # its thought
    assert trace.metadata.success is False


def test_a_rows_error_ends_the_run_failed() -> None:
    trace = traces_of(ROWS)[1].trace
    last = trace.steps[-1]
    assert (last.type, last.tool) == ("observation", None)
    assert (last.content or "").startswith("RuntimeError: Agent reached maximum iteration")
    assert trace.metadata.success is False


def test_the_evaluations_verdict_is_the_outcome_where_the_row_has_one(tmp_path: Path) -> None:
    """``test_result.report.resolved`` says it, whatever the run's end said."""
    changed = copy.deepcopy(rows())
    changed[0]["test_result"]["report"] = {"resolved": True}
    changed[1]["test_result"]["report"] = {"resolved": False}
    items = traces_of(written(tmp_path, changed, "output.jsonl"))
    assert [item.trace.metadata.success for item in items] == [True, False]


def test_an_action_without_tool_call_metadata_is_named_by_openhands_tool(tmp_path: Path) -> None:
    """Without ``tool_call_metadata`` (a model without native tool calls), a ``run`` is a call
    of ``execute_bash``, an MCP call of its own tool, with its own arguments."""
    changed = events(RENAME)
    for event in changed:
        event.pop("tool_call_metadata", None)
    mcp = {
        "id": 100,
        "timestamp": "2025-01-27T23:17:01.000000",
        "source": "agent",
        "message": "",
        "action": "call_tool_mcp",
        "args": {"name": "fetch", "arguments": {"url": "https://example.com"}, "thought": ""},
    }
    changed.insert(-1, mcp)
    (item,) = traces_of(written(tmp_path, changed))
    assert tools(item.trace) == [
        "str_replace_editor",
        "execute_bash",
        "str_replace_editor",
        "fetch",
    ]
    assert item.trace.steps[-2].input == {"url": "https://example.com"}


def test_reject_ends_the_run_failed_with_the_agents_reason(tmp_path: Path) -> None:
    changed = events(RENAME)
    changed[-1] = {
        "id": 9,
        "timestamp": "2025-01-27T23:17:02.182015",
        "source": "agent",
        "message": "Task is rejected by the agent.",
        "action": "reject",
        "args": {"outputs": {"reason": "the file is not mine to rename"}, "thought": ""},
    }
    (item,) = traces_of(written(tmp_path, changed))
    assert item.trace.steps[-1].content == (
        "the agent rejected the task: the file is not mine to rename"
    )
    assert item.trace.metadata.success is False


def test_a_bad_event_is_a_problem_at_its_place_and_the_rest_is_read(tmp_path: Path) -> None:
    """An entry that is no object, or an action without ``args``: a problem naming the file and
    the entry's line; the trace is still made of the others."""
    changed: list[Any] = events(RENAME)
    changed.insert(2, "not an event")
    broken = changed[6]  # the second view of /workspace
    del broken["args"]
    found = convert_file(written(tmp_path, changed))
    problems = [item for item in found if isinstance(item, Problem)]
    assert len(problems) == 2
    assert all("run.json" in str(problem) for problem in problems)
    assert "not an OpenHands event: a string" in problems[0].message
    assert "an OpenHands action needs its args" in problems[1].message
    assert problems[0].location.line is not None or problems[0].location.index == 2
    (item,) = [item for item in found if isinstance(item, TraceItem)]
    # The broken view's observation still names its call (tool_call_metadata): a call of it.
    assert tools(item.trace) == ["str_replace_editor", "execute_bash", "str_replace_editor"]


def test_a_bad_history_entry_is_a_problem_at_its_json_path(tmp_path: Path) -> None:
    changed = copy.deepcopy(rows())
    changed[0]["history"][5] = ["not", "an", "event"]
    changed[1]["history"][3]["source"] = "robot"
    found = convert_file(written(tmp_path, changed, "output.jsonl"))
    problems = [item for item in found if isinstance(item, Problem)]
    assert [problem.path for problem in problems] == ["history[5]", "history[3]"]
    assert "the rest of the run is read" in problems[0].message
    assert "output.jsonl:1" in str(problems[0])
    assert "output.jsonl:2" in str(problems[1])
    assert "a source of user, agent or environment" in problems[1].message
    assert len([item for item in found if isinstance(item, TraceItem)]) == 2


def test_the_guis_export_wraps_the_same_events_in_trajectory(tmp_path: Path) -> None:
    """OpenHands' trajectory route (the GUI's export) answers ``{"trajectory": [...]}``."""
    exported = written(tmp_path, {"trajectory": events(RENAME)}, "export.json")
    (item,) = traces_of(exported)
    (plain,) = traces_of(RENAME)
    assert recognise({"trajectory": events(RENAME)}) == "openhands"
    assert [step.content for step in item.trace.steps] == [
        step.content for step in plain.trace.steps
    ]
    assert item.trace.metadata.success is True


def test_an_agent_in_error_state_ends_the_run_failed_its_last_message_no_answer(
    tmp_path: Path,
) -> None:
    changed = events(GUI)
    changed.append(
        {
            "id": 18,
            "timestamp": "2025-01-20T20:30:40.000000",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "error", "reason": "RuntimeError: the runtime died"},
        }
    )
    (item,) = traces_of(written(tmp_path, changed))
    trace = item.trace
    assert (
        trace.steps[-1].content == "the agent stopped on an error: RuntimeError: the runtime died"
    )
    assert trace.steps[-2].content is not None
    assert trace.steps[-2].content.startswith("I've created a complete Vue.js todo")
    assert trace.metadata.success is False
    assert source_of(item)["agent_state"] == "error"


RESOLVER = OPENHANDS / "resolver_mock_output_memory_events.jsonl"
"""Two rows of OpenHands' resolver (2024), their events kept as memory: flattened, no ids."""


def test_a_resolver_rows_flattened_events_are_read_as_the_events_they_were() -> None:
    """Before, the rows were no trace file kp knew: their events have no id, source or cause,
    and keep the action's arguments beside its kind. The first message is the task, each
    observation answers the action before it, ``finish``'s thought is the answer."""
    first, second = (item.trace for item in traces_of(RESOLVER))
    assert first.task.objective.startswith("Please fix the following issue")
    assert kinds(first)[1:6] == [
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
        ("thought", None),
        ("tool_call", "execute_ipython_cell"),
        ("observation", "execute_ipython_cell"),
    ]
    assert first.steps[2].content == "\r\nroot@bcd3959393a1:/workspace # "
    assert (first.outcome.result_summary or "").startswith("The MIT License has been success")
    assert [first.metadata.success, second.metadata.success] == [True, True]
    assert len(tools(second)) == 21


def test_a_flattened_message_after_the_agent_acted_is_the_agents(tmp_path: Path) -> None:
    """A memory keeps no source: a message is the user's only before any other action."""
    history = [
        {"action": "message", "content": "fix it"},
        {"action": "run", "command": "ls", "thought": "look"},
        {"observation": "run", "content": "a.py", "exit_code": 0, "command": "ls"},
        {"action": "message", "content": "Done: a.py is fixed."},
    ]
    row = {"instruction": "fix it", "history": history}
    (item,) = traces_of(written(tmp_path, [row], name="output.jsonl"))
    assert item.trace.task.objective == "fix it"
    assert kinds(item.trace) == [
        ("thought", None),
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
        ("thought", None),
    ]
    assert item.trace.outcome.result_summary == "Done: a.py is fixed."


def _paired_row() -> dict[str, Any]:
    """A row as OpenHands' SWE-bench example output of 2024 keeps it
    (``evaluation/benchmarks/swe_bench/examples/example_agent_output.jsonl``, its first row,
    sphinx-doc__sphinx-8721, the texts shortened): ``history`` of ``[action, observation]``
    pairs without id, source or cause, a command's exit code in its ``extras``, and the verdict
    in ``test_result.result.resolved`` (1 or 0)."""
    thought = "It seems there was an error in the edit command I issued."

    def ran(command: str, thought: str, output: str, code: int) -> list[dict[str, Any]]:
        return [
            {
                "action": "run",
                "args": {"command": command, "background": False, "thought": thought},
                "message": f"Running command: {command}",
            },
            {
                "observation": "run",
                "content": output,
                "extras": {"command_id": -1, "command": command, "exit_code": code},
                "message": f"Command `{command}` executed with exit code {code}.",
            },
        ]

    return {
        "instance_id": "sphinx-doc__sphinx-8721",
        "instruction": "Please fix the following issue for the repository in /workspace/s.\n"
        "# Problem Statement\nviewcode creates pages for epub even if "
        "`viewcode_enable_epub=False` on `make html epub`",
        "git_patch": "diff --git a/sphinx/ext/viewcode.py b/sphinx/ext/viewcode.py",
        "metadata": {"agent_class": "CodeActAgent", "model_name": "gpt-4-1106-preview"},
        "history": [
            ran("search_dir x /w", "First, I will search.", "Found 5 matches", 0),
            ran("edit /w/viewcode.py 160:178", "I will edit.", "-bash: syntax error", 127),
            ran("edit 160:178 <<EOF", thought, "File updated.", 0),
            [
                {"action": "finish", "args": {"outputs": {}, "thought": ""}, "message": "Done"},
                {"observation": "null", "content": "", "extras": {}, "message": "No observation"},
            ],
        ],
        "test_result": {"result": {"test_errored": 0, "test_timeout": 0, "resolved": 0}},
    }


def test_a_2024_rows_action_observation_pairs_are_read_as_their_events(tmp_path: Path) -> None:
    """Each pair's observation answers its action; exit code 127 fails the call, the next
    action recovers; ``resolved: 0`` is the verdict, whatever ``finish`` said."""
    row = _paired_row()
    path = written(tmp_path, [row], "output.jsonl")
    assert recognise(row) == "openhands"
    (item,) = traces_of(path)
    trace = item.trace
    assert trace.id == "kp:trace:openhands:sphinx-doc__sphinx-8721"
    assert trace.task.objective == row["instruction"]
    assert tools(trace) == ["execute_bash"] * 3
    recovery = [step for step in trace.steps if step.type == "error_recovery"]
    assert [step.input for step in recovery] == [{"command": "edit 160:178 <<EOF"}]
    assert "-bash: syntax error" in [step.content for step in trace.steps]
    assert trace.metadata.success is False
    row["test_result"]["result"]["resolved"] = 1
    (resolved,) = traces_of(written(tmp_path, [row], "resolved.jsonl"))
    assert resolved.trace.metadata.success is True


def source_model(trace: ReasoningTrace) -> Any:
    return (trace.metadata.model_extra or {})["source"].get("model")


def test_the_model_is_the_one_the_responses_name_else_the_rows_llm_config(tmp_path: Path) -> None:
    """Each action keeps the LiteLLM response that asked for it, which names its model; the row
    names the model it configured (``metadata.llm_config.model``). Before, no trace had one."""
    first = rows()[0]
    replied = {
        event["tool_call_metadata"]["model_response"]["model"]
        for event in first["history"]
        if "tool_call_metadata" in event
    }
    assert replied == {"meta-llama/llama-4-maverick"}
    assert source_model(traces_of(ROWS)[0].trace) == "meta-llama/llama-4-maverick"
    for event in first["history"]:
        event.get("tool_call_metadata", {}).pop("model_response", None)
    (trace,) = traces_of(written(tmp_path, [first], "output.jsonl"))
    assert source_model(trace.trace) == first["metadata"]["llm_config"]["model"]
