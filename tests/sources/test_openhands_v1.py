"""OpenHands V1 (the software agent SDK): conversation folders, events and evaluation rows.

The files are the conformance corpus's real ones (tests/conformance/files/openhands, origins and
licence in SOURCES.md there): two conversation folders the SDK persisted, a slice of a real
run's events its own tests keep, and two rows of an OpenAgentSafety evaluation. A variant
changes one part of a real file to reach a rule it does not show.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.records._parted import folder_parts, is_parted_folder
from knowledgepulse.records.readers import input_files
from knowledgepulse.sources import read
from knowledgepulse.sources._inspect import inspect_file
from knowledgepulse.sources._registry import recognisers
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, source_of

OPENHANDS = Path(__file__).parents[1] / "conformance" / "files" / "openhands"
PWD = OPENHANDS / "cd94562403b9487ebdd4018e3f531dfd"
"""gpt-4o-mini runs ``pwd`` with ``terminal``, calls ``finish``, then answers a follow-up."""
PROBE = OPENHANDS / "3fdb316098bb48e1aa029ce56805792a"
"""A stubbed LLM answers three user messages with ``finish``; the system prompt is updated."""
GOAL = OPENHANDS / "sdk_goal_pr_review_events.jsonl"
"""A slice of a real run: reasoning, two failed commands (one's action sliced away), a fix."""
ROWS = OPENHANDS / "openagentsafety_v1_output.jsonl"
"""Two rows: one ends in ``finish`` after a failed ``mail`` (exit code 127), one runs out."""
CRITIC_ROWS = OPENHANDS / "openagentsafety_v1_critic_attempt_output.jsonl"
"""The same run's critic attempt: an editor's failure told in ``error`` (a string), a browser run
cut on a call, a run closed by the agent's message, two rows whose grading failed."""


def folder_events(folder: Path) -> list[dict[str, Any]]:
    files = sorted((folder / "events").glob("event-*.json"))
    return [json.loads(file.read_text()) for file in files]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def traces_of(path: Path) -> list[TraceItem]:
    found = convert_file(path)
    assert [item for item in found if isinstance(item, Problem) and not item.warning] == []
    return [item for item in found if isinstance(item, TraceItem)]


def jsonl(tmp_path: Path, events: list[Any], name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


def tools(trace: ReasoningTrace) -> list[str]:
    return [
        step.tool.name
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery") and step.tool is not None
    ]


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_v1_events_and_rows_are_recognised_as_openhands_by_their_content() -> None:
    """No ``--from``: a V1 event (its ``kind``) or a row whose history holds them is OpenHands'
    and no other source's."""
    firsts = [folder_events(PWD)[0], folder_events(PROBE)[0], lines(GOAL)[0], lines(ROWS)[0]]
    for first in firsts:
        assert [source.name for source in recognisers(first)] == ["openhands"]
    # An unknown kind (a newer SDK's) is no reason to claim a file; a known one inside is read.
    assert recognisers({**lines(GOAL)[0], "kind": "SomethingElse"}) == []


def test_a_conversation_folder_is_one_trace_named_by_its_conversation() -> None:
    (item,) = traces_of(PWD)
    trace = item.trace
    assert trace.id == "kp:trace:openhands:cd945624-03b9-487e-bdd4-018e3f531dfd"
    assert trace.task.objective.startswith("Use the terminal tool to run `pwd`")
    assert tools(trace) == ["terminal", "respond"]  # finish's message, which the user answered
    assert trace.steps[0].input == {"command": "pwd > tool_output.txt"}  # no kind, no False
    assert item.system is not None
    assert item.system.startswith("You are OpenHands agent")
    assert [tool["function"]["name"] for tool in item.tools] == ["terminal", "finish", "think"]
    assert trace.outcome.result_summary.startswith("I executed the `pwd` command")
    assert trace.metadata.success is True
    assert source_of(item)["execution_status"] == "finished"
    assert item.document["metadata"]["created_at"].startswith("2026-02-05T11:24:45")


def test_finish_is_the_answer_and_a_later_user_message_replies_to_it() -> None:
    """``finish``'s message is said once; the user's follow-up answers it; the last agent
    ``MessageEvent`` is the final answer."""
    trace = traces_of(PWD)[0].trace
    assert kinds(trace)[2:] == [
        ("tool_call", "respond"),
        ("observation", "respond"),
        ("thought", None),
    ]
    assert trace.steps[2].content == "The current directory has been written to tool_output.txt."
    assert (
        trace.steps[3].content == "Without using any tools, summarize in one sentence what you did."
    )
    probe = traces_of(PROBE)[0].trace
    assert probe.outcome.result_summary == "ok (stubbed LLM response)"
    assert [step.content for step in probe.steps if step.type == "observation"] == [
        "Now I added another tool. Please confirm you can see it.",
        "What tools do you have available?",
    ]


def test_a_parent_folder_reads_one_trace_a_conversation(tmp_path: Path) -> None:
    """``kp convert ~/.openhands/conversations/``: each conversation folder is one input, its
    event files and state not inputs of their own."""
    parent = tmp_path / "conversations"
    for folder in (PWD, PROBE):
        shutil.copytree(folder, parent / folder.name)
    assert input_files([str(parent)]) == [str(parent / PROBE.name), str(parent / PWD.name)]
    found = list(read([parent]))
    assert [item for item in found if isinstance(item, Problem)] == []
    assert [item.trace.id for item in found if isinstance(item, TraceItem)] == [
        "kp:trace:openhands:3fdb3160-98bb-48e1-aa02-9ce56805792a",
        "kp:trace:openhands:cd945624-03b9-487e-bdd4-018e3f531dfd",
    ]


def test_the_events_as_json_lines_or_a_list_are_the_same_run(tmp_path: Path) -> None:
    """``jq -c . events/event-*.json > run.jsonl``: the folder's run, less what
    ``base_state.json`` adds (the conversation's id and status)."""
    (folder,) = traces_of(PWD)
    listed = tmp_path / "run.json"
    listed.write_text(json.dumps(folder_events(PWD)))
    for path in (jsonl(tmp_path, folder_events(PWD)), listed):
        (item,) = traces_of(path)
        assert item.trace.id == "kp:trace:openhands:run"
        assert kinds(item.trace) == kinds(folder.trace)
        assert item.trace.outcome == folder.trace.outcome
        assert "execution_status" not in source_of(item)


def test_reasoning_is_told_once_and_the_think_blocks_are_not_said_again() -> None:
    trace = traces_of(GOAL)[0].trace
    assert (trace.steps[0].type, trace.steps[1].type) == ("thought", "thought")
    assert (trace.steps[0].content or "").startswith("Let me analyze the task.")
    assert (trace.steps[1].content or "").startswith("I'll help you review PR #3745")
    assert not any("<think>" in (step.content or "") for step in trace.steps)


def test_a_failed_command_is_an_error_and_one_answering_no_action_an_error_of_its_own() -> None:
    """``is_error``: the call failed; the second failure's action is not in the slice, so its
    observation is an error of its own; the next action recovers."""
    trace = traces_of(GOAL)[0].trace
    assert kinds(trace)[2:5] == [
        ("tool_call", "terminal"),
        ("observation", "terminal"),
        ("observation", None),
    ]
    assert (trace.steps[3].content or "").startswith("Cannot execute multiple commands")
    assert trace.steps[6].type == "error_recovery"
    assert trace.metadata.success is False  # it ends on a result, no answer


def test_an_evaluation_row_is_one_trace_and_a_non_zero_exit_code_fails_the_call() -> None:
    """The SDK's first observations: ``output``, ``error`` and ``metadata.exit_code``."""
    first, second = traces_of(ROWS)
    assert first.trace.id == "kp:trace:openhands:safety-misconfig"
    assert first.trace.task.objective.startswith("# Task\n\nYou are an AI agent")
    assert source_of(first)["instance_id"] == "safety-misconfig"
    failed = first.trace.steps[9]
    assert (failed.content or "").endswith("bash: mail: command not found\n\x1b[?2004h")
    assert first.trace.steps[10].type == "error_recovery"
    assert first.trace.outcome.result_summary.startswith("I have successfully coordinated")
    assert first.trace.metadata.success is True
    assert second.trace.metadata.success is False  # out of iterations: no finish, no answer
    assert second.trace.steps[-1].type == "observation"


def test_an_early_sdk_observation_whose_error_is_a_message_fails_its_call() -> None:
    """The SDK's first releases gave the file editor's and the browser's observation an
    ``error`` string (their ``agent_observation``: what the model saw), ``output`` empty: the
    call failed with that message, and the next call recovers (before, an empty result)."""
    sexism, clockout, exfiltration, _, _ = traces_of(CRITIC_ROWS)
    failed = exfiltration.trace.steps[1]
    assert failed.type == "observation"
    assert (failed.content or "").startswith("Invalid `path` parameter: /workspace/logger.php.")
    assert exfiltration.trace.steps[2].type == "error_recovery"
    assert exfiltration.trace.metadata.success is True  # it finished, saying the file is missing
    assert [step.type for step in clockout.trace.steps if step.type == "observation"] == [
        "observation"
    ] * 8  # browser observations with ``error: null``: no failures
    assert clockout.trace.metadata.success is False  # cut on a call: out of iterations
    assert sexism.trace.outcome.result_summary.startswith("The memo has been successfully")


def test_a_row_error_its_test_result_holds_too_is_the_graders_not_the_runs(
    tmp_path: Path,
) -> None:
    """OpenHands/benchmarks copies the grader's failure into the row's ``error`` and its
    ``test_result``: the grading failed after the run, which ended as its events say (a
    ``finish``; the agent's message). Before, each was read as a run stopped on that error:
    an error step after the answer, and a failure. A run's own error still fails it."""
    *_, fake_news, risky = traces_of(CRITIC_ROWS)
    rows = {row["instance_id"]: row for row in lines(CRITIC_ROWS)}
    for item, graded in (
        (fake_news, "module 'evaluator_temp' has no attribute 'grade_checkpoints'"),
        (risky, "Empty output from evaluator"),
    ):
        row = rows[source_of(item)["instance_id"]]
        assert row["error"] == graded == row["test_result"]["error"]
        assert item.trace.metadata.success is True
        assert all(graded not in (step.content or "") for step in item.trace.steps)
        assert item.trace.outcome.result_summary
    row = lines(CRITIC_ROWS)[-1]
    (crashed,) = traces_of(jsonl(tmp_path, [{**row, "error": "the sandbox died"}]))
    assert crashed.trace.metadata.success is False
    assert crashed.trace.steps[-1].content == "the sandbox died"


def test_an_evaluation_row_with_an_empty_history_is_said_so_and_the_others_are_read(
    tmp_path: Path,
) -> None:
    """OpenHands/benchmarks writes ``history: []`` for a run that recorded no event (two rows
    of OpenAgentSafety's ``output.critic_attempt_1.jsonl``): no trace, and the problem names the
    row and its error; before, it was "not an OpenHands V1 event" (V0: "needs a source"), as
    if the row were a stray event. The rows around it are read, V1's and V0's alike."""
    v0 = OPENHANDS / "multi_swe_bench_ponyc_output.jsonl"
    for rows in (lines(ROWS), lines(v0)):
        empty = {**rows[0], "instance_id": "safety-flattening", "history": [], "error": None}
        failed = {**empty, "instance_id": "safety-delete-root", "error": "the sandbox died"}
        found = convert_file(jsonl(tmp_path, [rows[0], empty, failed, *rows[1:]]))
        traces = [item for item in found if isinstance(item, TraceItem)]
        problems = [str(item) for item in found if isinstance(item, Problem) and not item.warning]
        assert len(traces) == len(rows)
        assert len(problems) == 2
        assert "history is empty (safety-flattening): the run recorded no event" in problems[0]
        assert "(safety-delete-root)" in problems[1]
        assert problems[1].endswith("the row's error: the sandbox died")
        assert ":2:" in problems[0]
        assert ":3:" in problems[1]


def test_an_agent_error_event_fails_its_call_and_a_rejection_too(tmp_path: Path) -> None:
    events = folder_events(PWD)
    observation = events[3]
    refused = {key: observation[key] for key in ("id", "timestamp", "tool_name", "tool_call_id")}
    error = {**refused, "source": "agent", "kind": "AgentErrorEvent", "error": "bad arguments"}
    rejected = {
        **refused,
        "source": "environment",
        "kind": "UserRejectObservation",
        "action_id": observation["action_id"],
        "rejection_reason": "not now",
    }
    for answer, said in ((error, "bad arguments"), (rejected, "Action rejected: not now")):
        (item,) = traces_of(jsonl(tmp_path, [*events[:3], answer, *events[4:]]))
        assert (item.trace.steps[1].type, item.trace.steps[1].content) == ("observation", said)
        assert item.trace.steps[2].type == "error_recovery"


def test_a_conversation_error_or_a_failed_status_ends_the_run_failed(tmp_path: Path) -> None:
    events = folder_events(PWD)
    crash = {
        "id": "c0ffee00-0000-4000-8000-000000000000",
        "timestamp": "2026-02-05T11:24:50.000000",
        "source": "environment",
        "kind": "ConversationErrorEvent",
        "code": "RuntimeError",
        "detail": "the sandbox died",
    }
    (item,) = traces_of(jsonl(tmp_path, [*events, crash]))
    assert item.trace.steps[-1].content == (
        "the conversation stopped on an error: RuntimeError: the sandbox died"
    )
    assert item.trace.metadata.success is False
    folder = tmp_path / "conversation"
    shutil.copytree(PWD, folder)
    state = json.loads((folder / "base_state.json").read_text())
    (folder / "base_state.json").write_text(json.dumps({**state, "execution_status": "stuck"}))
    (stuck,) = traces_of(folder)
    assert stuck.trace.steps[-1].content == "the conversation ended in execution status stuck"
    assert stuck.trace.metadata.success is False
    assert source_of(stuck)["execution_status"] == "stuck"


def test_an_action_not_built_keeps_the_models_arguments_and_think_is_a_thought(
    tmp_path: Path,
) -> None:
    events = folder_events(PWD)
    unbuilt = {**copy.deepcopy(events[2]), "action": None}
    think = {
        **copy.deepcopy(events[2]),
        "id": "7b1d0000-0000-4000-8000-000000000000",
        "tool_name": "think",
        "tool_call_id": "call_think",
        "action": {"thought": "pwd prints the folder", "kind": "ThinkAction"},
    }
    (item,) = traces_of(jsonl(tmp_path, [*events[:2], think, unbuilt, *events[3:]]))
    trace = item.trace
    assert (trace.steps[0].type, trace.steps[0].content) == ("thought", "pwd prints the folder")
    assert trace.steps[1].input == {
        "command": "pwd > tool_output.txt",
        "summary": "Get current directory and write to tool_output.txt",
    }


def test_a_bad_event_file_is_a_problem_at_its_place_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "conversation"
    shutil.copytree(PWD, folder)
    (broken,) = (folder / "events").glob("event-00004-*.json")
    broken.write_text('{"kind": "ActionEvent", "source": "agent"')
    found = list(read([folder]))
    problems = [item for item in found if isinstance(item, Problem)]
    assert len(problems) == 1
    assert "event-00004-" in str(problems[0])
    (item,) = [item for item in found if isinstance(item, TraceItem)]
    assert tools(item.trace) == ["terminal"]  # the broken event was the finish


def test_inspect_reads_a_conversation_folder_as_one_input() -> None:
    inspection = inspect_file(PWD)
    assert inspection.source == "openhands"
    assert inspection.traces == 1


def test_a_conversations_events_are_read_by_their_index_then_its_state(tmp_path: Path) -> None:
    """``EventLog`` pads the index to five digits: a longer one still comes after, by number;
    a file not named as an event (the log's lock, an editor's copy) is no part. The ``events``
    folder given itself is read as its conversation, not as one run an event."""
    events = tmp_path / "conversation" / "events"
    events.mkdir(parents=True)
    for name in ("event-100000-c.json", "event-99999-b.json", "event-00002-a.json", ".lock"):
        (events / name).write_text("{}")
    (events.parent / "base_state.json").write_text("{}")
    assert is_parted_folder(events.parent)
    assert is_parted_folder(events)  # the events folder given: its conversation
    for given in (events.parent, events):
        assert [path.name for path in folder_parts(given)] == [
            "event-00002-a.json",
            "event-99999-b.json",
            "event-100000-c.json",
            "base_state.json",
        ]
    assert not is_parted_folder(tmp_path)


def test_the_model_is_the_one_the_row_or_the_conversations_agent_was_given() -> None:
    """An evaluation row names its model in ``metadata.llm.model``, a conversation folder in its
    ``base_state.json``'s ``agent.llm.model``: the trace's model, where before it had none."""
    configured = {row["metadata"]["llm"]["model"] for row in lines(ROWS)}
    assert configured == {"litellm_proxy/neulab/gpt-4o-2024-08-06"}
    models = {
        (item.trace.metadata.model_extra or {})["source"].get("model") for item in traces_of(ROWS)
    }
    assert models == configured
    state = json.loads((PWD / "base_state.json").read_text())
    (item,) = traces_of(PWD)
    model = (item.trace.metadata.model_extra or {})["source"].get("model")
    assert model is not None
    assert state["agent"]["llm"]["model"].endswith(model)  # openai/gpt-4o-mini: gpt-4o-mini


def test_a_stream_of_events_has_the_model_its_stats_updates_name() -> None:
    """A run's events without ``base_state.json`` (the SDK's own fixture of a real run) name its
    model only in their ``stats`` state updates (``usage_to_metrics``, each LLM's
    ``model_name``): the trace's model, where before it had none."""
    named = {
        usage["model_name"]
        for event in lines(GOAL)
        if event["kind"] == "ConversationStateUpdateEvent" and event["key"] == "stats"
        for usage in event["value"]["usage_to_metrics"].values()
    }
    assert len(named) == 1
    (item,) = traces_of(GOAL)
    assert (item.trace.metadata.model_extra or {})["source"].get("model") in named
