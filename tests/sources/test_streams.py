"""Coding agents' headless output: ``codex exec --json`` and ``claude -p --output-format
stream-json`` (and Amp's, Qwen Code's and Cursor's CLI's, the same protocol), read as dialects of
the ``codex`` and ``claude-code`` sources.

The files are the conformance corpus's real ones (tests/conformance/files, origins and licences
in SOURCES.md there); variants change or add lines of the shape the real ones have, to reach a
rule they do not show (a failed command, a failed turn, an error result).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources import convert
from knowledgepulse.sources._invariants import check
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

CORPUS = Path(__file__).parents[1] / "conformance" / "files"
CODEX_LS = CORPUS / "codex" / "agentcmd_codex_exec_json_ls.jsonl"
CODEX_PATCH = CORPUS / "codex" / "agentcmd_codex_exec_json_file_change.jsonl"
CLAUDE_STREAM = CORPUS / "claude-code" / "gleam_sdk_claude_2.1.7_stream_json.jsonl"
AMP_ERROR = CORPUS / "claude-code" / "untether_amp_stream_error.jsonl"
QWEN_STREAM = CORPUS / "claude-code" / "maestro_qwen_code_0.15.6_stream_json.jsonl"
CURSOR_STREAM = CORPUS / "claude-code" / "cursor_hack_cursor_agent_direct-sleep.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def only(items: list[TraceItem | Problem]) -> TraceItem:
    """The one trace read, with no problem."""
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    return item


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def _item(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "item": item}


def _command(
    item_id: str, command: str, output: str, code: int | None, status: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "command_execution",
        "command": command,
        "aggregated_output": output,
        "exit_code": code,
        "status": status,
    }


# --- codex exec --json ------------------------------------------------------------------------


@pytest.mark.parametrize("path", [CODEX_LS, CODEX_PATCH])
def test_a_codex_exec_stream_is_recognised_as_codex_by_its_first_line(path: Path) -> None:
    """``thread.started`` (and any thread event) is the codex source's, and no other's."""
    assert recognise(lines(path)[0]) == "codex"
    assert recognise({"type": "turn.started"}) == "codex"
    assert recognise(lines(path)[2]) == "codex"  # a stream cut before its first lines


@pytest.mark.parametrize("odd", [["thread.started"], {}])
def test_a_codex_exec_first_line_whose_type_is_no_string_is_one_problem(odd: Any) -> None:
    """A first line whose ``type`` is a list or an object is no event: read by auto-detection,
    it is one problem and the lines after it are the trace; read as codex, a located problem
    (before: TypeError in recognising it, the whole file lost; found by
    bench/fuzz_loaders.py --structured)."""
    records = lines(CODEX_LS)
    records[0]["type"] = odd
    items = list(convert(records))
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    assert [problem.location.index for problem in problems] == [0]
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    assert kinds(item.trace)[1:3] == [("tool_call", "shell"), ("observation", "shell")]
    named = list(convert(records, source="codex"))
    assert isinstance(named[0], Problem)
    assert named[0].message.startswith("not a Codex rollout line")


@pytest.mark.parametrize("odd", [["completed"], {"state": "failed"}])
def test_a_codex_command_whose_status_is_no_string_is_told_by_its_exit_code(odd: Any) -> None:
    """A command item's ``status`` that is a list or an object says nothing: its exit code 0
    makes its output the result (before: TypeError; found by bench/fuzz_loaders.py
    --structured)."""
    records = lines(CODEX_LS)
    records[4]["item"]["status"] = odd
    trace = only(list(convert(records))).trace
    assert kinds(trace)[1:3] == [("tool_call", "shell"), ("observation", "shell")]
    assert "hello.txt" in (trace.steps[2].content or "")


def test_a_codex_exec_stream_is_one_trace_of_its_items_each_told_once() -> None:
    """The thread id is the trace's; a command's ``item.started`` and ``item.completed`` are one
    ``shell`` call; reasoning is a thought; the last agent message the answer; success."""
    item = only(convert_file(CODEX_LS))
    trace = item.trace
    assert trace.id == "kp:trace:019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa"
    assert kinds(trace) == [
        ("thought", None),
        ("tool_call", "shell"),
        ("observation", "shell"),
        ("thought", None),
        ("thought", None),
    ]
    assert trace.steps[1].input == {"command": "zsh -lc ls"}
    assert "hello.txt" in (trace.steps[2].content or "")
    assert trace.outcome.result_summary.startswith("Found 1 text file `hello.txt`")
    assert trace.metadata.success is True
    assert source_of(item)["format"] == "codex"


def test_the_codex_exec_objective_is_a_placeholder_that_says_where_the_prompt_is() -> None:
    """The stream holds no prompt: the placeholder, a warning naming the rollout file, and the
    invariant that flags a placeholder objective."""
    item = only(convert_file(CODEX_PATCH))
    assert item.trace.task.objective == "codex run"
    assert any("rollout" in warning and "prompt" in warning for warning in item.warnings)
    assert check(item.trace) == [
        "the objective is a placeholder ('codex run'), not the user's request"
    ]
    assert kinds(item.trace)[1:3] == [("tool_call", "apply_patch"), ("observation", "apply_patch")]


@pytest.mark.parametrize(
    ("code", "status"), [(1, "failed"), (127, "completed"), (None, "declined")]
)
def test_a_failed_codex_command_is_an_error_and_the_next_call_recovers(
    code: int | None, status: str
) -> None:
    """A non-zero exit code, or a ``failed`` / ``declined`` status, is an error; the next call is
    its error_recovery."""
    records = lines(CODEX_LS)[:2] + lines(CODEX_LS)[3:]  # the reasoning out: a call follows
    failed = _command("item_9", "bash -lc 'cat nope'", "cat: nope: No such file", code, status)
    records[2:2] = [
        _item("item.started", {**failed, "status": "in_progress"}),
        _item("item.completed", failed),
    ]
    trace = only(list(convert(records))).trace
    assert kinds(trace)[:4] == [
        ("tool_call", "shell"),
        ("observation", "shell"),
        ("error_recovery", "shell"),
        ("observation", "shell"),
    ]
    assert "No such file" in (trace.steps[1].content or "")


def test_item_updates_of_one_item_give_one_step_as_it_last_stood() -> None:
    """``item.updated`` lines (a todo list ticked off) are the same item: one call, its last
    items."""
    records = lines(CODEX_LS)
    plan = {"id": "item_7", "type": "todo_list", "items": [{"text": "ls", "completed": False}]}
    done = {**plan, "items": [{"text": "ls", "completed": True}]}
    records[3:3] = [
        _item("item.started", plan),
        _item("item.updated", done),
        _item("item.completed", done),
    ]
    trace = only(list(convert(records))).trace
    plans = [step for step in trace.steps if step.tool and step.tool.name == "update_plan"]
    assert len(plans) == 1
    assert plans[0].input == {"items": [{"text": "ls", "completed": True}]}


def test_a_failed_codex_turn_is_a_terminal_error_and_a_failed_run() -> None:
    """``turn.failed`` after the ``error`` line that says the same is one terminal error."""
    records = lines(CODEX_LS)[:5]
    message = "stream disconnected before completion"
    records += [
        {"type": "error", "message": message},
        {"type": "turn.failed", "error": {"message": message}},
    ]
    trace = only(list(convert(records))).trace
    assert trace.metadata.success is False
    errors = [step for step in trace.steps if step.content == message]
    assert len(errors) == 1
    assert trace.outcome.result_summary == "failed"


def test_an_mcp_call_and_its_error_and_an_unknown_item_are_told() -> None:
    """An MCP call is ``<server>__<tool>``; its ``error`` fails it; an item type kp does not
    know is left out with a warning naming it."""
    records = lines(CODEX_LS)
    mcp = {
        "id": "item_8",
        "type": "mcp_tool_call",
        "server": "docs",
        "tool": "search",
        "arguments": {"q": "x"},
        "error": {"message": "server offline"},
        "status": "failed",
    }
    records[3:3] = [
        _item("item.completed", mcp),
        _item("item.completed", {"id": "item_9", "type": "hologram"}),
    ]
    item = only(list(convert(records)))
    assert kinds(item.trace)[1:3] == [
        ("tool_call", "docs__search"),
        ("observation", "docs__search"),
    ]
    assert item.trace.steps[2].content == "server offline"
    assert any("hologram" in warning for warning in item.warnings)


CODEX_SPAWN = CORPUS / "codex" / "relay_codex_0.155_exec_json_spawn_agent.jsonl"


def test_codex_sub_agent_calls_are_calls_answered_by_the_agents_states() -> None:
    """``collab_tool_call`` (Codex 0.155's ``spawn_agent`` then ``wait``, recorded by relay) is a
    call of its ``tool``: the spawn's prompt, the wait's threads; each answered by the
    sub-agents' states, the wait's with the sub-agent's message (was: left out as unknown)."""
    item = only(convert_file(CODEX_SPAWN))
    trace = item.trace
    assert kinds(trace)[3:8] == [
        ("thought", None),
        ("tool_call", "spawn_agent"),
        ("observation", "spawn_agent"),
        ("tool_call", "wait"),
        ("observation", "wait"),
    ]
    assert trace.steps[4].input == {"prompt": "Reply with the single word PONG."}
    child = "01a0bb3b-9c37-79f3-82e2-02c7a1a20ea9"
    assert trace.steps[6].input == {"receiver_thread_ids": [child]}
    assert trace.steps[7].content == f"{child}: completed: LUNA-RESEARCHER PONG"
    assert trace.outcome.result_summary == "LUNA-RESEARCHER PONG"
    assert not any("does not know" in warning for warning in item.warnings)


@pytest.mark.parametrize(
    ("item_status", "agent"), [("failed", "running"), ("completed", "errored")]
)
def test_a_failed_codex_sub_agent_call_is_an_error_the_next_action_recovers(
    item_status: str, agent: str
) -> None:
    """A ``collab_tool_call`` that ``failed``, or whose sub-agent ``errored``, is an error."""
    records = lines(CODEX_SPAWN)
    waited = records[10]["item"]
    records[10] = _item(
        "item.completed",
        {**waited, "status": item_status, "agents_states": {"t1": {"status": agent}}},
    )
    trace = only(list(convert(records))).trace
    assert kinds(trace)[7:9] == [("observation", "wait"), ("error_recovery", None)]
    assert trace.steps[7].content == f"t1: {agent}"


# --- claude -p --output-format stream-json ----------------------------------------------------


def test_a_claude_stream_json_is_recognised_as_claude_code() -> None:
    """Its ``system`` ``init`` record, or a message record with a ``session_id``: claude-code."""
    records = lines(CLAUDE_STREAM)
    assert recognise(records[0]) == "claude-code"
    assert recognise(records[1]) == "claude-code"


AUTOCOMPACT = CORPUS / "claude-code" / "untether_claude_2.1.285_autocompact.jsonl"


def test_a_claude_stream_that_starts_with_a_rate_limit_notice_reads_as_without_it(
    tmp_path: Path,
) -> None:
    """Claude Code writes ``rate_limit_event`` records among the others (the real file's 4th
    line); a stream whose first line is one is still recognised, and the notice adds nothing."""
    records = lines(AUTOCOMPACT)
    notice = next(record for record in records if record["type"] == "rate_limit_event")
    rest = [record for record in records if record is not notice]
    first = tmp_path / "notice-first.jsonl"
    first.write_text("".join(json.dumps(record) + "\n" for record in [notice, *rest]))
    without = tmp_path / "without.jsonl"
    without.write_text("".join(json.dumps(record) + "\n" for record in rest))
    assert recognise(notice) == "claude-code"
    assert only(convert_file(first)).trace == only(convert_file(without)).trace


def test_a_claude_stream_json_is_one_trace_its_result_the_answer() -> None:
    """The session id is the trace's, the ``result`` text the answer, ``success`` the success;
    the prompt is in no record: the placeholder, with a warning."""
    item = only(convert_file(CLAUDE_STREAM))
    trace = item.trace
    assert trace.id == "kp:trace:1d1e46f9-35c7-4834-b529-846d5bb82288"
    assert trace.outcome.result_summary == "4"
    assert trace.metadata.success is True
    assert trace.task.objective == "claude-code run"
    assert any("stream-json" in warning for warning in item.warnings)
    assert source_of(item)["version"] == "2.1.7"


def _claude_turns(session: str) -> list[dict[str, Any]]:
    """A prompt replayed, a failed Bash call, a retry and its result, in stream-json's shape."""

    def record(
        kind: str, content: list[dict[str, Any]], parent: str | None = None
    ) -> dict[str, Any]:
        role = "assistant" if kind == "assistant" else "user"
        return {
            "type": kind,
            "message": {"role": role, "content": content},
            "parent_tool_use_id": parent,
            "session_id": session,
        }

    return [
        record("user", [{"type": "text", "text": "List the files"}]),
        record(
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "lss"}}],
        ),
        record(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "lss: not found",
                    "is_error": True,
                }
            ],
        ),
        record(
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}],
        ),
        record("user", [{"type": "tool_result", "tool_use_id": "t2", "content": "a.txt"}]),
        record("assistant", [{"type": "text", "text": "One file: a.txt"}]),
    ]


def test_a_failed_claude_stream_tool_result_is_an_error_and_the_retry_recovers() -> None:
    """``is_error`` tool results are errors, the next call their error_recovery; a replayed
    prompt is the objective; partial ``stream_event`` records add nothing."""
    records = lines(CLAUDE_STREAM)
    session = records[0]["session_id"]
    partial = {"type": "stream_event", "event": {"type": "message_start"}, "session_id": session}
    records[1:2] = [partial, *_claude_turns(session)]
    records[-1] = {**records[-1], "result": "One file: a.txt"}
    trace = only(list(convert(records))).trace
    assert trace.task.objective == "List the files"
    assert [kind for kind, _ in kinds(trace)].count("error_recovery") == 1
    assert trace.outcome.result_summary == "One file: a.txt"
    assert check(trace) == []


@pytest.mark.parametrize(
    "result",
    [
        {"subtype": "error_max_turns", "is_error": False, "num_turns": 3},
        {"subtype": "error_during_execution", "is_error": True, "errors": ["Bash crashed"]},
        {"subtype": "success", "is_error": True, "result": "API Error: 529 Overloaded"},
    ],
)
def test_a_claude_stream_error_result_is_a_terminal_error_and_a_failed_run(
    result: dict[str, Any],
) -> None:
    """A result whose subtype is an ``error_*`` or whose ``is_error`` is set failed the run."""
    records = lines(CLAUDE_STREAM)
    records[-1] = {"type": "result", "session_id": records[0]["session_id"], **result}
    trace = only(list(convert(records))).trace
    assert trace.metadata.success is False
    assert trace.steps[-1].type == "observation"
    said = result.get("errors", [result.get("result")])[0]
    assert said is None or trace.steps[-1].content == said


def test_a_qwen_code_error_result_says_why_in_its_error_object() -> None:
    """Qwen Code's failed ``result`` (Claude Code's protocol) says why in ``error.message``."""
    records = lines(QWEN_STREAM)
    records[-1] = {
        **records[-1],
        "subtype": "error_during_execution",
        "is_error": True,
        "error": {"type": "Error", "message": "Reached max session turns"},
    }
    del records[-1]["result"]
    trace = only(list(convert(records))).trace
    assert trace.metadata.success is False
    assert (trace.steps[-1].type, trace.steps[-1].content) == (
        "observation",
        "Reached max session turns",
    )


def test_an_amp_stream_error_result_says_why_in_its_error_text() -> None:
    """Amp's failed ``result`` has an empty ``result`` and its reason in ``error``."""
    trace = only(convert_file(AMP_ERROR)).trace
    assert trace.metadata.success is False
    assert [(step.type, step.content) for step in trace.steps] == [
        ("observation", "Authentication failed")
    ]


@pytest.mark.parametrize(
    "flag",
    [
        {"error": "authentication_failed", "is_api_error_message": True},
        {"error": "unknown"},  # Claude Code 2.1.4's overloaded API (a real run's, unlicensed)
    ],
)
def test_a_claude_stream_api_error_message_is_the_runs_one_error(flag: dict[str, Any]) -> None:
    """An expired login, as Claude Code 2.x streams it: a ``<synthetic>`` assistant message with
    its ``error``, then an ``is_error`` result saying the same: one error, no answer (before,
    the message was the answer, then a thought beside the result's error)."""
    records = lines(CLAUDE_STREAM)
    said = "Failed to authenticate: OAuth session expired and could not be refreshed"
    message = {
        "model": "<synthetic>",
        "role": "assistant",
        "content": [{"type": "text", "text": said}],
    }
    records[1] = {**records[1], "message": message, **flag}
    records[-1] = {**records[-1], "subtype": "success", "is_error": True, "result": said}
    trace = only(list(convert(records))).trace
    assert trace.metadata.success is False
    assert [(step.type, step.content) for step in trace.steps] == [("observation", said)]


def test_a_claude_stream_sub_agents_turns_are_a_trace_of_their_own() -> None:
    """Records with a ``parent_tool_use_id`` are the ``Task`` sub-agent's: its own trace."""
    records = lines(CLAUDE_STREAM)
    session = records[0]["session_id"]
    sub = [{**record, "parent_tool_use_id": "toolu_task"} for record in _claude_turns(session)]
    records[2:2] = sub
    traces = [item.trace for item in convert(records) if isinstance(item, TraceItem)]
    assert [trace.id for trace in traces] == [
        f"kp:trace:{session}",
        f"kp:trace:{session}/task-toolu_task",
    ]
    assert traces[1].task.objective == "List the files"
    assert traces[0].outcome.result_summary == "4"


CODEX_RESUME = CORPUS / "codex" / "untether_codex_0.157_resume.jsonl"
CODEX_SEARCH = CORPUS / "codex" / "untether_codex_0.157_web_search.jsonl"
CODEX_REFUSED = CORPUS / "codex" / "untether_codex_turn_failed.jsonl"


def test_a_resumed_codex_thread_is_one_trace_of_its_turns() -> None:
    """``codex exec resume`` writes ``thread.started`` of the same thread again: one trace, the
    last turn's message the answer (before, three traces of one id)."""
    trace = only(convert_file(CODEX_RESUME)).trace
    assert [step.content for step in trace.steps] == ["Hi!", "Hi again!", "Hi once more!"]
    assert trace.outcome.result_summary == "Hi once more!"


def test_a_codex_web_search_gives_its_query_and_results() -> None:
    """Codex 0.157 fills a search's query at its end and lists its ``results``."""
    trace = only(convert_file(CODEX_SEARCH)).trace
    assert kinds(trace)[:2] == [("tool_call", "web_search"), ("observation", "web_search")]
    assert trace.steps[0].input == {"query": "codex-cli latest version npm GitHub"}
    assert "npmjs" in (trace.steps[1].content or "")


def test_a_codex_run_refused_before_its_thread_started_is_a_failed_trace() -> None:
    """A stream of only ``error`` and ``turn.failed`` lines is recognised, each error once."""
    assert recognise(lines(CODEX_REFUSED)[0]) == "codex"
    trace = only(convert_file(CODEX_REFUSED)).trace
    assert [step.type for step in trace.steps] == ["observation", "observation"]
    assert trace.metadata.success is False


def test_a_codex_turn_failed_on_an_api_error_says_the_apis_message() -> None:
    """Codex passes the model API's failed response body on as the error's message: each error
    says the body's ``error.message``, the words a person reads, not the whole JSON body, and
    the ``turn.failed`` repeating its ``error`` line is still one error."""
    records = lines(CODEX_REFUSED)
    said = [
        json.loads(record["error"]["message"])["error"]["message"]
        for record in records
        if record["type"] == "turn.failed"
    ]
    trace = only(convert_file(CODEX_REFUSED)).trace
    assert [step.content for step in trace.steps] == said


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ('{"message": "Rate limit reached", "status": 429}', "Rate limit reached"),
        ('{"error": {"code": "x"}, "status": 500}', '{"error": {"code": "x"}, "status": 500}'),
        ("stream disconnected before completion", "stream disconnected before completion"),
    ],
)
def test_a_codex_turn_failed_message_is_the_bodys_or_as_it_is(message: str, said: str) -> None:
    """A body with only a top-level ``message`` says it; one with no message, or plain text,
    stays as it is (nothing of the error lost)."""
    records = [{"type": "turn.failed", "error": {"message": message}}]
    trace = only(list(convert(records, source="codex"))).trace
    assert [step.content for step in trace.steps] == [said]


def test_the_claude_agent_sdk_messages_as_one_json_list_read_the_same(tmp_path: Path) -> None:
    """A JSON list of the stream's messages (claude-code-action's execution file) gives the same
    trace as the JSON Lines stream."""
    listed = tmp_path / "execution.json"
    listed.write_text(json.dumps(lines(CLAUDE_STREAM)))
    assert only(convert_file(listed)).trace == only(convert_file(CLAUDE_STREAM)).trace


@given(st.lists(st.sampled_from(["started", "updated"]), max_size=3), st.data())
def test_earlier_states_of_codex_items_never_add_steps(
    states: list[str], data: st.DataObject
) -> None:
    """Any item.started / item.updated lines before an item's item.completed leave the trace as
    the completed lines alone make it (a law of the stream)."""
    records = [r for r in lines(CODEX_LS) if r["type"] != "item.started"]
    items = [n for n, r in enumerate(records) if r["type"] == "item.completed"]
    at = data.draw(st.sampled_from(items))
    earlier = [
        _item(f"item.{state}", {**records[at]["item"], "status": "in_progress"}) for state in states
    ]
    expected = only(list(convert(records))).trace
    assert only(list(convert(records[:at] + earlier + records[at:]))).trace == expected


def test_a_claude_stream_of_several_turns_and_a_compaction_is_one_trace() -> None:
    """A stream-json session of four turns (an ``init`` and a ``result`` each): one trace, the
    last result's text the answer; the ``isSynthetic`` compaction summary is no user's words."""
    item = only(convert_file(CORPUS / "claude-code" / "untether_claude_2.1.285_autocompact.jsonl"))
    trace = item.trace
    assert trace.task.objective == "claude-code run"
    assert [name for kind, name in kinds(trace) if kind == "tool_call"] == ["Read"] * 3
    assert trace.outcome.result_summary == "OK."
    assert not any("continued from a previous" in (step.content or "") for step in trace.steps)


def test_claude_output_format_json_alone_is_a_trace_of_its_answer(tmp_path: Path) -> None:
    """``claude -p --output-format json`` writes only the ``result``: its text is the answer."""
    result = lines(CLAUDE_STREAM)[-1]
    single = tmp_path / "result.json"
    single.write_text(json.dumps(result))
    trace = only(convert_file(single)).trace
    assert [step.content for step in trace.steps] == ["4"]
    assert trace.outcome.result_summary == "4"
    assert trace.metadata.success is True


def test_a_codex_error_item_is_a_notice_left_out_with_a_warning() -> None:
    """An ``error`` item is Codex's non-fatal notice (a config warning): no step, no error whose
    next action would be a recovery, and a warning quoting it."""
    records = lines(CODEX_LS)
    notice = {"id": "item_5", "type": "error", "message": "Model metadata for `x` not found"}
    records[2:2] = [_item("item.completed", notice)]
    item = only(list(convert(records)))
    assert item.trace == only(convert_file(CODEX_LS)).trace.model_copy(update={"id": item.trace.id})
    assert any("Model metadata" in warning for warning in item.warnings)


@pytest.mark.parametrize(
    "path",
    [CODEX_PATCH, CLAUDE_STREAM, CORPUS / "openai-agents" / "input_guardrail_tripwire.jsonl"],
    ids=["codex-exec", "claude-stream-json", "openai-agents-guardrail"],
)
def test_a_placeholder_objective_its_source_explains_is_said_once(path: Path) -> None:
    """The source's warning says why the objective is a placeholder and where the prompt is:
    the law that flags a placeholder would only say it again, with less."""
    said = [
        found.message
        for found in sources.read(path)
        if isinstance(found, Problem) and "placeholder" in found.message
    ]
    assert len(said) == 1, said
    assert "placeholder (" not in said[0]  # the source's words, not the law's


@pytest.mark.parametrize(
    ("path", "cli"),
    [
        (CLAUDE_STREAM, "claude-code"),
        (QWEN_STREAM, "qwen-code"),
        (AMP_ERROR, "amp"),
        (CORPUS / "claude-code" / "untether_amp_stream_success.jsonl", "amp"),
        (CURSOR_STREAM, "cursor-cli"),
        (CORPUS / "claude-code" / "takopi_cursor_stream_error.jsonl", "cursor-cli"),
    ],
)
def test_a_stream_names_the_cli_that_printed_it(path: Path, cli: str) -> None:
    """Five CLIs print Claude Code's stream-json: each run names its own as agent and framework
    (Amp's and Cursor's were called claude-code)."""
    trace = only(convert_file(path)).trace
    assert (trace.metadata.agent_id, trace.metadata.framework) == (cli, cli)


def test_an_old_claude_stream_with_no_version_is_still_claude_code() -> None:
    """Claude Code before ``claude_code_version`` wrote its ``init`` with tools and a UUID."""
    records = [
        {key: value for key, value in record.items() if key != "claude_code_version"}
        for record in lines(CLAUDE_STREAM)
    ]
    item = only(list(sources.convert(records, source="claude-code")))
    assert item.trace.metadata.agent_id == "claude-code"


def test_a_cursor_stream_reads_its_thinking_calls_and_last_text() -> None:
    """Cursor's ``thinking`` deltas are one thought, its ``tool_call`` pairs calls and results;
    its ``result`` runs the texts together, so the answer is the last one."""
    trace = only(convert_file(CURSOR_STREAM)).trace
    assert [(step.type, step.tool.name if step.tool else None) for step in trace.steps] == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "shell"),
        ("observation", "shell"),
        ("tool_call", "shell"),
        ("observation", "shell"),
        ("thought", None),
    ]
    assert (trace.steps[0].content or "").startswith("**Planning sequential commands**")
    assert trace.steps[2].input is not None
    assert trace.steps[2].input["command"] == "sleep 5"
    # what Cursor adds to the args (the call's id, its parse of the command, its run settings)
    # is no argument the model gave: before, a training row's call carried a parse tree
    args = next(record for record in lines(CURSOR_STREAM) if record["type"] == "tool_call")
    assert "parsingResult" in args["tool_call"]["shellToolCall"]["args"]
    assert set(trace.steps[2].input) == {"command", "workingDirectory", "timeout", "isBackground"}
    assert trace.outcome.result_summary == (
        "Both commands have finished running: first `sleep 5`, then `sleep 3`, with no other "
        "actions taken."
    )
    assert trace.metadata.success is True


@pytest.mark.parametrize(
    "name",
    [
        "cursor_hack_cursor_agent_direct-sleep.jsonl",  # thinking pieces stamped first
        "cursor_hack_cursor_agent_subagent-sleep.jsonl",  # only its tool_call records stamped
    ],
)
def test_a_cursor_run_is_dated_by_its_first_stamped_record(name: str) -> None:
    """Cursor stamps its records with ``timestamp_ms`` (none with an ISO ``timestamp``): the run
    starts at the first; before, every Cursor run was dated 1970-01-01."""
    path = CORPUS / "claude-code" / name
    first = next(record["timestamp_ms"] for record in lines(path) if "timestamp_ms" in record)
    trace = only(convert_file(path)).trace
    assert trace.metadata.created_at.timestamp() * 1000 == pytest.approx(first)
    assert trace.metadata.created_at.year == 2026


@pytest.mark.parametrize(
    ("result", "said"),
    [
        ({"success": {"command": "false", "exitCode": 1, "stdout": "", "stderr": "boom"}}, "boom"),
        ({"error": {"errorMessage": "File not found"}}, "File not found"),
        ({"rejected": {}}, "rejected"),
    ],
)
def test_a_failed_cursor_call_is_an_error_the_next_action_recovers(
    result: dict[str, Any], said: str
) -> None:
    records = lines(CURSOR_STREAM)
    completed = next(r for r in records if r.get("subtype") == "completed" and "tool_call" in r)
    completed["tool_call"]["shellToolCall"]["result"] = result
    trace = only(list(convert(records))).trace
    kinds = [step.type for step in trace.steps]
    assert kinds[2:5] == ["tool_call", "observation", "error_recovery"]
    assert trace.steps[3].content == said


def test_a_cursor_call_of_another_tool_names_itself() -> None:
    records = lines(CURSOR_STREAM)
    for record in records:
        if record.get("type") == "tool_call":
            call = {"name": "mcp_search", "arguments": '{"q": "sleep"}'}
            if record["subtype"] == "completed":
                call["result"] = {"success": {"content": "found"}}  # type: ignore[assignment]
            record["tool_call"] = {"function": call}
    trace = only(list(convert(records))).trace
    assert trace.steps[2].tool is not None
    assert trace.steps[2].tool.name == "mcp_search"
    assert trace.steps[2].input == {"q": "sleep"}
    assert trace.steps[3].content == "found"


def test_cursors_partial_output_pieces_are_left_out_for_the_whole_texts() -> None:
    """``--stream-partial-output`` streams each text in pieces (``timestamp_ms``, no
    ``model_call_id``) before the whole: the trace reads as it does without the pieces."""
    records = lines(CURSOR_STREAM)
    with_pieces: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") == "assistant":
            text = record["message"]["content"][0]["text"]
            for piece in (text[:10], text[10:]):
                content = [{"type": "text", "text": piece}]
                with_pieces.append(
                    {
                        "type": "assistant",
                        "message": {"role": "assistant", "content": content},
                        "session_id": record["session_id"],
                        "timestamp_ms": 1774846267524,
                    }
                )
        with_pieces.append(record)
    as_streamed = only(list(convert(with_pieces))).trace
    assert as_streamed.steps == only(list(convert(records))).trace.steps
    assert as_streamed.outcome == only(list(convert(records))).trace.outcome
