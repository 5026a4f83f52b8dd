"""Training rows in chat form: TRL's shape, and read back (``--from auto``) as the same trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.records._parted import is_parted_folder
from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources import convert, read
from knowledgepulse.trace.models import ReasoningTrace
from tests.builders import trace_json
from tests.paths import CORPORA, REPO

TRACES = REPO / "examples" / "traces" / "traces.jsonl"
CORPUS_FILES = sorted(CORPORA.glob("*.jsonl"))
ROLES = {"system", "user", "assistant", "tool"}


def traces_of(path: Path) -> list[ReasoningTrace]:
    """The file's valid traces."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(ReasoningTrace.model_validate(json.loads(line)))
        except ValueError:
            continue
    return found


def read_back(row: dict[str, Any]) -> ReasoningTrace:
    """The row as ``--from auto`` reads it (a broken law of conversion is a warning, not a loss)."""
    items = list(convert([json.loads(json.dumps(row))]))
    assert [i for i in items if isinstance(i, Problem) and not i.warning] == []
    (item,) = [i for i in items if not isinstance(i, Problem)]
    return item.trace


def tool_names(trace: ReasoningTrace) -> list[str]:
    return [
        step.tool.name
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery") and step.tool is not None
    ]


def observations(trace: ReasoningTrace) -> list[str]:
    """The text of each observation that answers a call (those a chat row can hold), in the
    order of the calls: a chat row answers a call before the next turn, so the result of a
    tool inside which an agent ran (observed after that agent's steps) moves up to its call."""
    kept = chat_steps(trace)
    answers = [step for step in kept if step.type == "observation"]
    if not nested(trace):
        return [step.content or "" for step in answers]
    ordered = []
    for step in kept:
        if step.type in ("tool_call", "error_recovery") and step.tool is not None:
            name = step.tool.name
            found = next((a for a in answers if a.tool is None or a.tool.name == name), None)
            if found is not None:
                answers.remove(found)
                ordered.append(found.content or "")
    return ordered + [step.content or "" for step in answers]


def nested(trace: ReasoningTrace) -> bool:
    """Whether an observation comes after steps that ran inside its tool (not after a call)."""
    tools = ("tool_call", "error_recovery", "observation")
    return any(
        step.type == "observation"
        and step.tool is not None
        and (before.type not in tools or before.tool is None)
        for before, step in zip(trace.steps, trace.steps[1:], strict=False)
    )


def step_kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    """Each step's type and tool: what complexity and tool diversity count."""
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def thoughts(trace: ReasoningTrace) -> list[str]:
    """The text of each thought step (the answer among them only where the trace had it so)."""
    return [step.content or "" for step in trace.steps if step.type == "thought"]


def chat_steps(trace: ReasoningTrace) -> list[Any]:
    """The steps less the observations no call waits for (they become user turns)."""
    kept, waiting = [], 0
    for step in trace.steps:
        if step.type in ("tool_call", "error_recovery") and step.tool is not None:
            waiting += 1
        elif step.type == "observation":
            if not waiting:
                continue
            waiting -= 1
        kept.append(step)
    return kept


def unrecovered_errors(trace: ReasoningTrace) -> bool:
    """Whether an observation no call waits for is followed by an action that is no recovery."""
    kept = {id(step) for step in chat_steps(trace)}
    steps = list(trace.steps)
    for index, step in enumerate(steps):
        if step.type == "observation" and id(step) not in kept:
            after = [s for s in steps[index + 1 :] if s.type != "observation"]
            if after and after[0].type != "error_recovery":
                return True
    return False


def assert_same_trace(trace: ReasoningTrace, back: ReasoningTrace) -> None:
    assert thoughts(back) == thoughts(trace)
    assert_same_outcome(trace, back)


def assert_same_outcome(trace: ReasoningTrace, back: ReasoningTrace) -> None:
    assert back.id == trace.id
    assert back.task.objective == trace.task.objective
    assert tool_names(back) == tool_names(trace)
    assert observations(back) == observations(trace)
    assert back.outcome.result_summary == trace.outcome.result_summary
    assert back.outcome.confidence == trace.outcome.confidence
    assert back.metadata.privacy_level == trace.metadata.privacy_level
    assert back.metadata.success == trace.metadata.success
    assert back.metadata.task_domain == trace.metadata.task_domain
    assert back.metadata.created_at == trace.metadata.created_at


def assert_trl_shape(row: dict[str, Any]) -> None:
    """The shape TRL's tool-calling docs give: roles, string arguments, answered call ids."""
    called: set[str] = set()
    for message in row["messages"]:
        assert message["role"] in ROLES
        assert isinstance(message.get("content"), str | None)
        for call in message.get("tool_calls") or []:
            assert message["role"] == "assistant"
            assert call["type"] == "function"
            assert isinstance(call["function"]["name"], str)
            assert isinstance(call["function"]["arguments"], str)
            # Chat templates parse the string to render the call: it must be a JSON object.
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
            called.add(call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in called
    # A run that gave no answer ends in its last call (an assistant turn), that call's result,
    # or the user's reply to the agent (a user turn after the objective's).
    users = [n for n, message in enumerate(row["messages"]) if message["role"] == "user"]
    assert row["messages"][-1]["role"] in ("assistant", "tool") or users[1:][-1:] == [
        len(row["messages"]) - 1
    ]
    tools = json.loads(row["tools"])
    assert all(tool["type"] == "function" and tool["function"]["name"] for tool in tools)


def test_a_trace_becomes_user_assistant_and_tool_turns_matched_by_call_id() -> None:
    """The objective is the user's turn, a call an assistant tool_call, its result a tool turn."""
    trace = ReasoningTrace.model_validate(
        trace_json(
            step_list=[
                {"step_id": 0, "type": "thought", "content": "look it up"},
                {
                    "step_id": 1,
                    "type": "tool_call",
                    "tool": {"name": "search"},
                    "input": {"q": "Oslo", "n": 3},
                },
                {"step_id": 2, "type": "observation", "content": "3 flights"},
            ]
        )
    )
    row = chat_row(trace, system="You book flights.")
    assert row["messages"] == [
        {"role": "system", "content": "You book flights."},
        {"role": "user", "content": trace.task.objective},
        {
            "role": "assistant",
            "content": "look it up",
            "tool_calls": [
                {
                    "id": "call00000",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q": "Oslo", "n": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call00000", "name": "search", "content": "3 flights"},
        {"role": "assistant", "content": "done"},
    ]
    assert json.loads(row["tools"]) == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                },
            },
        }
    ]
    assert row["id"] == "test-1"


def test_a_run_without_an_answer_gets_no_made_up_answer_turn() -> None:
    """A function-calling row whose target is a call ends in that call, as its source did: the
    summary kp gives a run without an answer ("failed") is no assistant turn to train on."""
    row = {
        "messages": [
            {"role": "user", "content": "What was Goldman Sachs' highest price today?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_price", "arguments": '{"symbol": "GS"}'},
                    }
                ],
            },
        ]
    }
    (item,) = [i for i in convert([row]) if not isinstance(i, Problem)]
    written = chat_row(item.trace)
    assert [m["role"] for m in written["messages"]] == ["user", "assistant"]
    assert written["messages"][-1]["tool_calls"][0]["function"]["name"] == "get_price"
    assert_same_outcome(item.trace, read_back(written))


def test_an_error_met_outside_a_tool_reads_back_as_that_error() -> None:
    """A run that failed before any reply (mini-SWE-agent's first model call raising) is one
    error: written as the environment's user turn, it reads back as the same trace."""
    document = trace_json(
        step_list=[
            {
                "step_id": 0,
                "type": "observation",
                "content": "the run ended with exit status 'InternalServerError'",
            }
        ],
        success=False,
    )
    document["outcome"]["result_summary"] = "failed"
    trace = ReasoningTrace.model_validate(document)
    back = read_back(chat_row(trace))
    assert step_kinds(back) == [("observation", None)]
    assert back.steps[0].content == trace.steps[0].content
    assert_same_outcome(trace, back)


def test_a_run_ended_by_an_error_gets_no_made_up_answer_turn() -> None:
    """A run that stopped at an error met outside a tool (mini-SWE-agent's model call raising)
    gave no answer: the row ends in that error, not in an assistant turn saying "failed"."""
    document = trace_json(
        step_list=[
            {"step_id": 0, "type": "thought", "content": "let me look"},
            {"step_id": 1, "type": "observation", "content": "InternalServerError"},
        ],
        success=False,
    )
    document["outcome"]["result_summary"] = "failed"
    trace = ReasoningTrace.model_validate(document)
    row = chat_row(trace)
    assert row["messages"][-1] == {"role": "user", "content": "InternalServerError"}
    assert "failed" not in [m.get("content") for m in row["messages"]]
    assert_same_outcome(trace, read_back(row))


def test_a_tool_schema_the_trace_keeps_is_the_tools_column() -> None:
    """A step's tool.input_schema is written as the tool's parameters, not the keys seen."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    trace = ReasoningTrace.model_validate(
        trace_json(
            step_list=[
                {
                    "step_id": 0,
                    "type": "tool_call",
                    "tool": {"name": "search", "input_schema": schema},
                    "input": {"q": "x", "extra": 1},
                }
            ]
        )
    )
    assert json.loads(chat_row(trace)["tools"])[0]["function"]["parameters"] == schema


def test_a_call_whose_input_was_no_json_object_has_json_object_arguments() -> None:
    """A call kept as text (SWE-agent's ``open chall.py``, a Python dict's repr) is written as
    the JSON object its step holds, listed in its tool's schema, and reads back the same."""
    trace = ReasoningTrace.model_validate(
        trace_json(
            step_list=[
                {
                    "step_id": 0,
                    "type": "tool_call",
                    "tool": {"name": "open"},
                    "input": {"_raw": "chall.py"},
                },
                {"step_id": 1, "type": "observation", "tool": {"name": "open"}, "content": "ok"},
            ]
        )
    )
    row = chat_row(trace)
    (call,) = row["messages"][1]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"_raw": "chall.py"}
    parameters = json.loads(row["tools"])[0]["function"]["parameters"]
    assert parameters["properties"] == {"_raw": {"type": "string"}}
    assert read_back(row).steps[0].input == {"_raw": "chall.py"}


def test_an_observation_answers_the_call_just_before_it() -> None:
    """A call with no result waits unanswered; the next observation answers the later call."""
    trace = ReasoningTrace.model_validate(
        trace_json(
            step_list=[
                {"step_id": 0, "type": "tool_call", "tool": {"name": "edit"}},
                {"step_id": 1, "type": "tool_call", "tool": {"name": "test"}},
                {"step_id": 2, "type": "observation", "content": "passed"},
            ]
        )
    )
    tool_turn = chat_row(trace)["messages"][-2]
    assert (tool_turn["name"], tool_turn["tool_call_id"]) == ("test", "call00001")


def test_the_outcome_and_privacy_level_read_back_and_the_answer_stays_out_of_the_steps() -> None:
    """Confidence, privacy level and a summary that was no step come back from the kp_ columns."""
    document = trace_json(
        step_list=[{"step_id": 0, "type": "tool_call", "tool": {"name": "search"}}],
        confidence=0.95,
    )
    document["metadata"]["privacy_level"] = "aggregated"
    trace = ReasoningTrace.model_validate(document)
    back = read_back(chat_row(trace))
    assert [step.type for step in back.steps] == ["tool_call"]
    assert (back.outcome.result_summary, back.outcome.confidence) == ("done", 0.95)
    assert back.metadata.privacy_level == "aggregated"


def test_every_example_trace_reads_back_the_same() -> None:
    """Each trace of examples/traces: same objective, tools, observations and answer."""
    traces = traces_of(TRACES)
    assert traces
    for trace in traces:
        row = chat_row(trace)
        assert_trl_shape(row)
        assert_same_trace(trace, read_back(row))


@pytest.mark.parametrize("corpus", CORPUS_FILES, ids=lambda path: path.stem)
def test_corpus_traces_read_back_the_same(corpus: Path) -> None:
    """Every trace of each corpus: the same steps, one by one, and the same outcome."""
    for trace in traces_of(corpus):
        row = chat_row(trace)
        assert_trl_shape(row)
        back = read_back(row)
        assert_same_trace(trace, back)
        assert step_kinds(back) == step_kinds(trace)


def call_texts(trace: ReasoningTrace) -> list[str]:
    """Each call's step text where it is more than the call (it does not start with its name)."""
    return [
        step.content or ""
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery")
        and step.tool is not None
        and not (step.content or "").strip().startswith(step.tool.name)
    ]


@pytest.mark.parametrize("corpus", CORPUS_FILES, ids=lambda path: path.stem)
def test_what_an_agent_says_with_a_call_is_in_the_row_and_reads_back(corpus: Path) -> None:
    """tau-bench's respond calls carry the agent's message: a trainer sees it, as content.

    Read back, each is its call's text again (not a thought), and the steps stay the same.
    """
    said = 0
    for trace in traces_of(corpus):
        row = chat_row(trace)
        contents = [message.get("content") for message in row["messages"]]
        assert all(text in contents for text in call_texts(trace))
        back = read_back(row)
        assert call_texts(back) == call_texts(trace)
        assert step_kinds(back) == step_kinds(trace)
        said += len(call_texts(trace))
    assert said > 0 or "reflexion" in corpus.stem  # tau-bench's respond calls say something


WORDS = st.text(alphabet="abcdefghij klmnop.,", min_size=1, max_size=20).filter(
    lambda text: text.strip() == text and text[0].isalpha()
)


@st.composite
def generated_traces(draw: st.DrawFn) -> ReasoningTrace:
    """A trace of thoughts, named tool calls with inputs, and observations after calls."""
    step_list: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        kind = draw(st.sampled_from(["thought", "tool_call", "error_recovery"]))
        step: dict[str, Any] = {"step_id": len(step_list), "type": kind}
        if kind == "thought":
            step["content"] = draw(WORDS)
        else:
            step["tool"] = {"name": draw(st.sampled_from(["search", "edit", "run"]))}
            step["input"] = draw(st.dictionaries(st.sampled_from("abc"), WORDS, max_size=2))
        step_list.append(step)
        if kind != "thought" and draw(st.booleans()):
            step_list.append(
                {"step_id": len(step_list), "type": "observation", "content": draw(WORDS)}
            )
    document = trace_json(
        step_list=step_list,
        objective=draw(WORDS),
        success=draw(st.booleans()),
    )
    document["outcome"]["result_summary"] = draw(WORDS)
    return ReasoningTrace.model_validate(document)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_traces())
def test_generated_traces_read_back_the_same(trace: ReasoningTrace) -> None:
    """For any trace of thoughts, calls and their results, the row reads back the same."""
    row = chat_row(trace)
    assert_trl_shape(row)
    assert_same_trace(trace, read_back(row))


CONFORMANCE = sorted(
    path
    for path in (REPO / "tests" / "conformance" / "files").rglob("*")
    # A conversation folder (OpenHands V1) is one input, not its files each.
    if is_parted_folder(path)
    or (
        path.is_file()
        and not path.name.endswith((".facts.json", ".md"))
        and not any(is_parted_folder(folder) for folder in path.parents[:2])
    )
)


@pytest.mark.parametrize("path", CONFORMANCE, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_conformance_files_read_back_the_same(path: Path) -> None:
    """Traces of every source survive the round trip: outcome, tools, observations, steps.

    The steps one by one where every observation answers a call (see :func:`chat_steps`).
    """
    for item in read([path]):
        if isinstance(item, Problem):
            continue
        row = chat_row(item.trace)
        assert_trl_shape(row)
        back = read_back(row)
        assert_same_outcome(item.trace, back)
        if not unrecovered_errors(item.trace) and not nested(item.trace):
            # An observation no call waits for is a user turn, read back as an error that the
            # next action recovers from: one the source ended the run on (out of steps) reads
            # back recovered by the answer. A row answers each call at once, so a nested
            # tool's result moves up to its call.
            assert step_kinds(back) == step_kinds(item.trace)


def replies(trace: ReasoningTrace) -> list[str]:
    """The user's replies a trace keeps: the observations of ``respond``."""
    return [
        step.content or ""
        for step in trace.steps
        if step.type == "observation" and step.tool is not None and step.tool.name == "respond"
    ]


@pytest.mark.parametrize("corpus", CORPUS_FILES, ids=lambda path: path.stem)
def test_the_users_replies_are_user_turns_of_the_row_and_read_back_as_replies(
    corpus: Path,
) -> None:
    """tau-bench's user speaks through respond's observations: in the row each is a user turn
    after the agent's message (no respond call), and reads back as the same reply."""
    spoken = 0
    for trace in traces_of(corpus):
        row = chat_row(trace)
        users = [m["content"] for m in row["messages"] if m["role"] == "user"]
        assert users == [trace.task.objective, *replies(trace)]
        back = read_back(row)
        assert replies(back) == replies(trace)
        assert step_kinds(back) == step_kinds(trace)
        spoken += len(replies(trace))
    assert spoken > 0 or "reflexion" in corpus.stem  # tau-bench's users answer the agent


def test_an_error_met_outside_a_tool_reads_back_as_an_error_not_a_reply() -> None:
    """A parse error after the agent's text is a user turn the row marks (kp_error_turns): read
    back, it is the error again and the next action its recovery, not a reply to respond."""
    document = trace_json(
        step_list=[
            {"step_id": 0, "type": "thought", "content": "I will run it"},
            {"step_id": 1, "type": "observation", "content": "Error: no command found"},
            {"step_id": 2, "type": "error_recovery", "tool": {"name": "bash"}, "input": {}},
        ],
    )
    trace = ReasoningTrace.model_validate(document)
    row = chat_row(trace)
    assert row["kp_error_turns"] == [0]
    assert step_kinds(read_back(row)) == step_kinds(trace)


def test_a_recovery_from_an_error_met_outside_a_tool_is_not_the_earlier_calls() -> None:
    """A call's result, a thought, then a format error and the action recovering from it: the
    recovery is the error's, so the call is not marked failed and the thought stays a thought
    (mini-SWE-agent, Pydantic AI on Bedrock); before, the thought read back as a recovery."""
    document = trace_json(
        step_list=[
            {"step_id": 0, "type": "tool_call", "content": "bash ls", "tool": {"name": "bash"}},
            {"step_id": 1, "type": "observation", "content": "a.py", "tool": {"name": "bash"}},
            {"step_id": 2, "type": "thought", "content": "two actions at once"},
            {"step_id": 3, "type": "observation", "content": "Error: give one action"},
            {"step_id": 4, "type": "error_recovery", "content": "bash", "tool": {"name": "bash"}},
            {"step_id": 5, "type": "observation", "content": "a.py", "tool": {"name": "bash"}},
        ],
    )
    trace = ReasoningTrace.model_validate(document)
    row = chat_row(trace)
    assert row["kp_failed_calls"] == []
    assert row["kp_error_turns"] == [0]
    assert step_kinds(read_back(row)) == step_kinds(trace)


def test_an_answer_that_recovers_from_a_failed_call_is_written_once() -> None:
    """The reply after a failed call is its ``error_recovery`` and the answer: one last turn, and
    the call marked failed, so that it reads back as the same recovery."""
    row = {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: city not found"},
            {"role": "assistant", "content": "Paris was not found."},
        ]
    }
    (item,) = list(convert([row]))
    trace = item.trace  # type: ignore[union-attr]
    assert [step.type for step in trace.steps][-1] == "error_recovery"
    written = chat_row(trace)
    said = [m.get("content") for m in written["messages"] if m["role"] == "assistant"]
    assert said.count("Paris was not found.") == 1
    assert written["kp_failed_calls"] == ["call00000"]
    again = read_back(written)
    assert [step.type for step in again.steps] == [step.type for step in trace.steps]
    assert again.outcome.result_summary == "Paris was not found."


def test_a_run_ending_in_the_users_reply_does_not_say_its_answer_again_after_it() -> None:
    """tau2's agent confirms the booking and the simulated user closes with ``###STOP###``: the
    row ends in that reply, the agent's message before it named as the answer (kp_answer_turn),
    and reads back as the same trace. Before, the row said the answer again after the reply."""
    path = REPO / "tests" / "conformance" / "files" / "tau2" / "hotel_calle.json"
    traces = [item.trace for item in read([path]) if not isinstance(item, Problem)]
    assert len(traces) == 3
    for trace in traces:
        row = chat_row(trace)
        last, before = row["messages"][-1], row["messages"][-2]
        assert last["role"] == "user"
        assert last["content"] == trace.steps[-1].content  # the user's closing reply
        assert row["kp_answer_turn"] == len(row["messages"]) - 2
        assert before == {"role": "assistant", "content": trace.outcome.result_summary}
        back = read_back(row)
        assert_same_trace(trace, back)
        assert step_kinds(back) == step_kinds(trace)


GUARDRAIL_TRIPS = [
    "openai-agents/langsmith_sdk_output_guardrail.jsonl",
    "openai-agents/input_guardrail_tripwire.jsonl",
    "langsmith/openai_agents_output_guardrail.json",
]


@pytest.mark.parametrize("name", GUARDRAIL_TRIPS)
def test_a_run_ended_by_an_error_that_is_its_outcome_does_not_say_it_as_the_agent(
    name: str,
) -> None:
    """An Agents SDK guardrail's tripwire ends the run, its text the outcome: the row ends in
    that error's user turn, named as the answer (kp_answer_turn), and reads back as the same
    trace. Before, an assistant turn said the tripwire's text after it, as the model's."""
    path = REPO / "tests" / "conformance" / "files" / name
    (trace,) = [item.trace for item in read([path]) if not isinstance(item, Problem)]
    row = chat_row(trace)
    last = len(row["messages"]) - 1
    assert row["messages"][last] == {"role": "user", "content": trace.outcome.result_summary}
    assert row["kp_error_turns"] == [0]
    assert row["kp_answer_turn"] == last
    back = read_back(row)
    assert_same_trace(trace, back)
    assert step_kinds(back) == step_kinds(trace)


IMAGE_RUN = "pydantic_ai_responses_image_generation_jpeg.jsonl"
"""gpt-5's run that made an image of an axolotl and closed with an empty ``output_text``."""


def test_a_run_whose_answer_is_the_image_it_made_ends_in_that_result_not_the_models_text() -> None:
    """gpt-5 made an image and said nothing after it: the image (``<image/jpeg>``) is the answer,
    shown to the user, no text of the model's. The row ends in the image's tool turn, named as
    the answer (kp_answer_turn), and reads back as the same trace. Before, an assistant turn said
    ``<image/jpeg>``, teaching the model to write that as its reply."""
    path = REPO / "tests" / "conformance" / "files" / "openai-responses" / IMAGE_RUN
    (trace,) = [item.trace for item in read([path]) if not isinstance(item, Problem)]
    assert trace.outcome.result_summary == "<image/jpeg>"
    row = chat_row(trace)
    last = len(row["messages"]) - 1
    assert row["messages"][last]["role"] == "tool"
    assert row["messages"][last]["content"] == "<image/jpeg>"
    assert [m for m in row["messages"] if m["role"] == "assistant" and m.get("content")] == []
    assert row["kp_answer_turn"] == last
    back = read_back(row)
    assert_same_trace(trace, back)
    assert step_kinds(back) == step_kinds(trace)


ABANDONED_RUN = "gemini-cli/aim_control_pro_run4_abandoned.json"
"""A Gemini CLI session left after a thought: no answer, its outcome the summary ``failed``."""


def test_a_run_that_stops_on_a_thought_with_no_answer_gets_no_made_up_failed_turn() -> None:
    """The session ends on the model's thought and gave no answer: the row ends in that thought,
    kp_answer_turn saying no turn holds the answer (-1), and reads back as the same trace, the
    thought a step and the outcome ``failed``. Before, a last assistant turn said ``failed``,
    teaching the model to say it."""
    path = REPO / "tests" / "conformance" / "files" / ABANDONED_RUN
    (trace,) = [item.trace for item in read([path]) if not isinstance(item, Problem)]
    assert (trace.outcome.result_summary, trace.steps[-1].type) == ("failed", "thought")
    row = chat_row(trace)
    assert row["messages"][-1] == {"role": "assistant", "content": trace.steps[-1].content}
    assert row["kp_answer_turn"] == -1
    back = read_back(row)
    assert_same_trace(trace, back)
    assert step_kinds(back) == step_kinds(trace)


def test_a_failed_model_call_that_was_retried_is_no_turn_and_reads_back_as_the_error() -> None:
    """A rate-limited model call, then the retry's answer: the model never saw the 429, so the
    row is the request and the answer, the error kept beside them (kp_unseen_errors), and it
    reads back as the same trace, the error and its recovery. Before, the error was a user
    turn the model was taught to answer."""
    path = (
        REPO
        / "tests"
        / "conformance"
        / "files"
        / "otlp"
        / "agentevals_hand_failed_inference_then_retry.json"
    )
    (trace,) = [item.trace for item in read([path]) if not isinstance(item, Problem)]
    row = chat_row(trace)
    assert row["messages"] == [
        {"role": "user", "content": trace.task.objective},
        {"role": "assistant", "content": trace.outcome.result_summary},
    ]
    assert row["kp_error_turns"] == []
    assert row["kp_unseen_errors"] == [{"before": 1, "content": trace.steps[0].content}]
    back = read_back(row)
    assert_same_trace(trace, back)
    assert (
        step_kinds(back) == step_kinds(trace) == [("observation", None), ("error_recovery", None)]
    )


def test_the_error_turns_after_a_failed_model_call_left_out_read_back_as_errors() -> None:
    """A failed model call left out of the row before a parse error that is a user turn: read
    back, the two are errors in their places, each recovered, and the user's reply no error."""
    document = trace_json(
        step_list=[
            {"step_id": 0, "type": "observation", "content": "model call failed: overloaded"},
            {"step_id": 1, "type": "error_recovery", "tool": {"name": "bash"}, "input": {}},
            {"step_id": 2, "type": "observation", "content": "a.py", "tool": {"name": "bash"}},
            {"step_id": 3, "type": "tool_call", "content": "ask", "tool": {"name": "respond"}},
            {"step_id": 4, "type": "observation", "content": "go on", "tool": {"name": "respond"}},
            {"step_id": 5, "type": "observation", "content": "Error: no command found"},
            {"step_id": 6, "type": "error_recovery", "tool": {"name": "bash"}, "input": {}},
            {"step_id": 7, "type": "observation", "content": "b.py", "tool": {"name": "bash"}},
        ],
    )
    trace = ReasoningTrace.model_validate(document)
    row = chat_row(trace)
    assert "model call failed: overloaded" not in [m.get("content") for m in row["messages"]]
    assert row["kp_unseen_errors"] == [{"before": 1, "content": "model call failed: overloaded"}]
    assert row["kp_error_turns"] == [1]  # the parse error, after the user's reply
    back = read_back(row)
    assert step_kinds(back) == step_kinds(trace)
    assert [step.content for step in back.steps if step.type == "observation"] == [
        step.content for step in trace.steps if step.type == "observation"
    ]
