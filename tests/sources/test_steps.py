"""The step rules every source shares: order, merging by call id, the error rule, bounds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.sources import StepBuilder, read
from knowledgepulse.sources._steps import (
    MAX_CONTENT_BYTES,
    MAX_OUTPUT_SUMMARY,
    as_input,
    bounded,
    name_key,
    summary,
)
from tests.paths import REPO
from tests.text_laws import CLUSTERED, assert_grapheme_prefix

CONFORMANCE = REPO / "tests" / "conformance" / "files"


def kinds(steps: list[dict[str, Any]]) -> list[str]:
    return [step["type"] for step in steps]


def test_a_failed_call_is_an_observation_and_the_next_call_the_recovery() -> None:
    """The failure is never typed error_recovery; the retry is, and keeps its tool."""
    builder = StepBuilder()
    builder.tool_result("search", arguments={"q": "x"}, error="Error: timed out", at=1.0)
    builder.thought("Let me try again with a shorter query.", at=2.0)
    builder.tool_result("search", arguments={"q": "x"}, output="3 hits", at=3.0)
    builder.answer("There are 3.")
    steps = builder.steps()
    assert kinds(steps) == [
        "tool_call",
        "observation",
        "thought",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert steps[1]["content"] == "Error: timed out"
    assert steps[3]["tool"] == {"name": "search"}
    assert [step["step_id"] for step in steps] == list(range(6))


def test_a_thought_told_after_a_call_and_before_its_result_comes_before_its_observation() -> None:
    """Text an agent wrote after its call, before the result came, keeps its place."""
    builder = StepBuilder()
    builder.thought("First I look.")
    builder.tool_request("ls", {"path": "."}, call_id="t1")
    builder.thought("Then I will write")
    builder.tool_result("ls", call_id="t1", output="a.py")
    builder.tool_request("ls", {"path": "src"}, call_id="t2")
    builder.tool_result("ls", call_id="t2", output="b.py")
    builder.thought("Said after the result.")
    steps = builder.steps()
    assert [(step["type"], step["content"]) for step in steps] == [
        ("thought", "First I look."),
        ("tool_call", 'ls {"path":"."}'),
        ("thought", "Then I will write"),
        ("observation", "a.py"),
        ("tool_call", 'ls {"path":"src"}'),
        ("observation", "b.py"),
        ("thought", "Said after the result."),
    ]


def test_a_terminal_error_gives_no_recovery() -> None:
    """An error with nothing after it leaves nothing typed error_recovery."""
    builder = StepBuilder()
    builder.thought("Fetch the page.")
    builder.tool_result("fetch", error="HTTP 500", at=1.0)
    assert kinds(builder.steps()) == ["thought", "tool_call", "observation"]


def test_with_no_later_tool_call_the_reply_after_the_error_is_the_recovery() -> None:
    """The research's Agents SDK run: bad JSON, then the model answers 'done' (spec rule 2)."""
    builder = StepBuilder()
    builder.thought("a_message")
    builder.tool_result("foo", arguments="bad_json", error="Error running tool")
    builder.answer("done")
    steps = builder.steps()
    assert kinds(steps) == ["thought", "tool_call", "observation", "error_recovery"]
    assert steps[3]["content"] == "done"
    assert "tool" not in steps[3]


def test_an_error_outside_any_tool_call_is_an_observation_then_recovered() -> None:
    """A parse error or rejected output (StepBuilder.error) follows the same rule."""
    builder = StepBuilder()
    builder.error("Could not parse the model output")
    builder.thought("Let me format it properly.")
    builder.tool_result("search", output="ok")
    assert kinds(builder.steps()) == ["observation", "thought", "error_recovery", "observation"]


def test_a_reply_that_fails_again_is_the_recovery_of_the_error_before_it() -> None:
    """mini-SWE-agent's format errors in a row: each reply is the model's try at recovering
    (it failed, so the next error follows it); the command that finally runs recovers the last."""
    builder = StepBuilder()
    builder.error("found 2 actions")
    builder.thought("Sorry, one action:")
    builder.error("found 3 actions")
    builder.thought("Again, one action:")
    builder.tool_result("bash", output="ok")
    assert kinds(builder.steps()) == [
        "observation",
        "error_recovery",
        "observation",
        "thought",
        "error_recovery",
        "observation",
    ]


def test_a_call_of_the_failed_calls_own_turn_is_no_recovery() -> None:
    """Parallel siblings were asked for before the error was seen: the next turn's call
    recovers it (spec rule 2's "next action" is the agent's, after it saw the error)."""
    builder = StepBuilder()
    builder.tool_request("read", {"path": "a"}, call_id="1")
    builder.tool_request("bash", {"cmd": "ls"}, call_id="2")
    builder.tool_result("read", error="no such file", call_id="1")
    builder.tool_result("bash", output="a.txt", call_id="2")
    builder.thought("The file is a.txt.")
    builder.tool_request("read", {"path": "a.txt"}, call_id="3")
    builder.tool_result("read", output="hello", call_id="3")
    assert kinds(builder.steps()) == [
        "tool_call",
        "observation",
        "tool_call",
        "observation",
        "thought",
        "error_recovery",
        "observation",
    ]


def test_with_siblings_only_after_the_error_the_answer_recovers_it() -> None:
    """A failed call's siblings leave its error waiting: the reply after them recovers it."""
    builder = StepBuilder()
    builder.tool_request("a", call_id="1")
    builder.tool_request("b", call_id="2")
    builder.tool_result("a", error="boom", call_id="1")
    builder.tool_result("b", output="ok", call_id="2")
    builder.answer("b worked, a did not")
    assert kinds(builder.steps()) == [
        "tool_call",
        "observation",
        "tool_call",
        "observation",
        "error_recovery",
    ]


def test_a_tool_that_runs_an_agent_is_observed_after_the_steps_inside_it() -> None:
    """An agent called as a tool: its model and tool steps come before the tool's result."""
    builder = StepBuilder()
    builder.tool_request("ask", {"q": "Oslo?"}, call_id="o1", at=0.0)
    builder.tool_result("ask", output="Oslo: sunny", call_id="o1", at=1.0, latency_ms=5000)
    builder.tool_request("weather", {"city": "Oslo"}, call_id="i1", at=2.0)
    builder.tool_result("weather", output="sunny", call_id="i1", at=3.0, latency_ms=100)
    builder.thought("Oslo: sunny", at=4.0)
    builder.answer("Oslo is sunny.", at=7.0)
    steps = builder.steps()
    assert [(s["type"], s.get("tool", {}).get("name")) for s in steps] == [
        ("tool_call", "ask"),
        ("tool_call", "weather"),
        ("observation", "weather"),
        ("thought", None),
        ("observation", "ask"),
        ("thought", None),
    ]


def test_parallel_siblings_running_at_once_keep_each_observation_after_its_call() -> None:
    """Calls of one turn that overlap in time are siblings, not one inside the other."""
    builder = StepBuilder()
    builder.tool_request("a", call_id="1", at=0.0)
    builder.tool_request("b", call_id="2", at=0.0)
    builder.tool_result("a", output="A", call_id="1", at=1.0, latency_ms=3000)
    builder.tool_result("b", error="boom", call_id="2", at=1.5, latency_ms=1000)
    builder.tool_request("b", call_id="3", at=5.0)
    builder.tool_result("b", output="B", call_id="3", at=5.5, latency_ms=10)
    assert kinds(builder.steps()) == [
        "tool_call",
        "observation",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
    ]


def test_a_tool_failing_after_the_steps_inside_it_is_recovered_by_the_next_action() -> None:
    """The error is seen at the failed tool's end: a step inside it recovers nothing."""
    builder = StepBuilder()
    builder.tool_request("ask", call_id="o1", at=0.0)
    builder.tool_result("ask", error="agent gave up", call_id="o1", at=1.0, latency_ms=5000)
    builder.thought("Looking it up.", at=2.0)
    builder.tool_request("ask", call_id="o2", at=7.0)
    builder.tool_result("ask", output="done", call_id="o2", at=8.0, latency_ms=10)
    assert kinds(builder.steps()) == [
        "tool_call",
        "thought",
        "observation",
        "error_recovery",
        "observation",
    ]


def test_the_next_turns_request_recovers_even_told_right_after_the_last() -> None:
    """Requests of two turns split by a result are two turns, though no text came between."""
    builder = StepBuilder()
    builder.tool_request("a", call_id="1")
    builder.tool_result("a", error="boom", call_id="1")
    builder.tool_request("a", call_id="2")
    builder.tool_result("a", output="ok", call_id="2")
    assert kinds(builder.steps()) == ["tool_call", "observation", "error_recovery", "observation"]


def test_a_failure_told_again_later_keeps_the_recovery_asked_after_it() -> None:
    """A failed result each later model call is given again does not make the call that
    answered it look asked before it."""
    builder = StepBuilder()
    builder.tool_request("get", call_id="a")
    builder.tool_result("get", error="Error: no such city", call_id="a")
    builder.tool_request("get", call_id="b")
    builder.tool_result("get", error="Error: no such city", call_id="a")
    builder.tool_result("get", output="Paris", call_id="b")
    assert kinds(builder.steps()) == ["tool_call", "observation", "error_recovery", "observation"]


def test_requests_merge_with_executions_by_call_id_whatever_the_order() -> None:
    """A request and its execution are one tool_call; different ids never merge."""
    builder = StepBuilder()
    builder.tool_request("get", {"id": 1}, call_id="a", at=1.0)
    builder.tool_request("get", {"id": 2}, call_id="b", at=1.0)
    builder.tool_result("get", output="two", call_id="b", at=2.0, latency_ms=5)
    builder.tool_result("get", output="one", call_id="a", at=1.5, latency_ms=7)
    steps = builder.steps()
    assert kinds(steps) == ["tool_call", "observation", "tool_call", "observation"]
    assert [steps[0]["input"], steps[2]["input"]] == [{"id": 1}, {"id": 2}]
    assert [steps[1]["content"], steps[3]["content"]] == ["one", "two"]
    assert steps[0]["latency_ms"] == 7.0


def test_without_ids_requests_merge_by_name_in_order() -> None:
    """The first request of a name without an execution takes the next execution of that name."""
    builder = StepBuilder()
    builder.tool_request("lookup", {"n": 1})
    builder.tool_request("lookup", {"n": 2})
    builder.tool_result("lookup", output="first")
    builder.tool_result("lookup", output="second")
    steps = builder.steps()
    assert [(s["type"], s.get("input"), s["content"]) for s in steps] == [
        ("tool_call", {"n": 1}, 'lookup {"n":1}'),
        ("observation", None, "first"),
        ("tool_call", {"n": 2}, 'lookup {"n":2}'),
        ("observation", None, "second"),
    ]


def test_a_request_joined_by_name_names_the_call_for_the_results_told_later() -> None:
    """An execution told with no call id, then its request with one (joined by name): a result
    told later by that id is the same call's, not a call of its own."""
    builder = StepBuilder()
    builder.tool_result("search", output="from the tool span", at=2.0)
    builder.tool_request("search", {"q": "AI"}, call_id="call_1", at=1.0)
    builder.tool_result("search", output="as the next model call was given it", call_id="call_1")
    assert kinds(builder.steps()) == ["tool_call", "observation"]


def test_a_request_by_the_api_safe_name_joins_the_execution_by_the_tool_s_own_name() -> None:
    """crewAI offers a tool named with spaces as snake case: one call, named as the tool is."""
    builder = StepBuilder()
    builder.tool_request("Delegate_work_to_coworker", {"task": "score"}, call_id="c1", at=1.0)
    builder.tool_result("Delegate work to coworker", output="3 of 5", at=2.0, distinct=True)
    builder.tool_request("delegate_work_to_coworker", {"task": "again"}, call_id="c2", at=3.0)
    steps = builder.steps()
    assert [(s["type"], s.get("tool", {}).get("name")) for s in steps] == [
        ("tool_call", "Delegate work to coworker"),
        ("observation", "Delegate work to coworker"),
        ("tool_call", "delegate_work_to_coworker"),
    ]


def test_names_that_differ_in_more_than_case_and_punctuation_never_join() -> None:
    """Only the letters and digits, casefolded, decide: another tool stays another call."""
    assert name_key("Delegate work to coworker") == name_key("delegate_work_to_coworker")
    assert name_key("get-weather") != name_key("get_weather_v2")
    assert name_key("?") == "?"
    builder = StepBuilder()
    builder.tool_request("get_weather", {})
    builder.tool_result("get_weather_v2", output="sunny")
    assert kinds(builder.steps()) == ["tool_call", "tool_call", "observation"]


def test_a_request_that_never_ran_is_still_a_tool_call() -> None:
    """Hosted tools run on the provider's side: the step is kept, with no observation."""
    builder = StepBuilder()
    builder.tool_request("web_search", {"query": "otel"}, call_id="ws_1")
    assert kinds(builder.steps()) == ["tool_call"]


def test_events_with_no_time_stay_after_the_event_told_before_them() -> None:
    """Timed events sort; an untimed one rides with its predecessor."""
    builder = StepBuilder()
    builder.thought("second", at=2.0)
    builder.thought("second, continued")
    builder.thought("first", at=1.0)
    assert [s["content"] for s in builder.steps()] == ["first", "second", "second, continued"]


@given(st.permutations(list(range(6))))
def test_timed_events_give_the_same_steps_in_any_telling_order(order: list[int]) -> None:
    """Order comes from the start times, not from the order a reader walks its spans."""
    events = [
        ("thought", "plan", 0.0),
        ("request", "a", 1.0),
        ("result", "a", 1.1),
        ("request", "b", 2.0),
        ("result", "b", 2.1),
        ("thought", "done", 3.0),
    ]

    def build(sequence: list[int]) -> list[dict[str, Any]]:
        builder = StepBuilder()
        for index in sequence:
            kind, name, at = events[index]
            if kind == "thought":
                builder.thought(name, at=at)
            elif kind == "request":
                builder.tool_request("t", {"k": name}, call_id=name, at=at)
            else:
                builder.tool_result(
                    "t", output=name, error="failed" * (name == "a"), at=at, call_id=name
                )
        return builder.steps()

    assert build(order) == build(list(range(6)))


def test_bounds_cut_content_to_8_kb_and_summaries_to_500_characters() -> None:
    """Long outputs are cut on a character boundary and marked."""
    builder = StepBuilder()
    builder.tool_result("read", output="é" * 10_000)
    tool_call, observation = builder.steps()
    assert len(observation["content"].encode()) <= MAX_CONTENT_BYTES
    assert observation["content"].endswith("…")
    assert len(tool_call["output_summary"]) == MAX_OUTPUT_SUMMARY


@given(st.text(), st.integers(min_value=4, max_value=200))
def test_bounded_never_exceeds_its_bytes_and_keeps_short_text(text: str, limit: int) -> None:
    """Cut text fits; text that fits is untouched."""
    cut = bounded(text, limit)
    if len(text.encode("utf-8", "surrogatepass")) <= limit:
        assert cut == text
    else:
        assert len(cut.encode("utf-8", "surrogatepass")) <= limit


@given(st.text(), st.integers(min_value=2, max_value=50))
def test_summary_never_exceeds_its_characters(text: str, limit: int) -> None:
    """A summary is the text itself or a marked prefix of it."""
    cut = summary(text, limit)
    assert len(cut) <= limit
    assert cut == text or (cut.endswith("…") and text.startswith(cut[:-1]))


@given(CLUSTERED, st.integers(min_value=4, max_value=120))
def test_a_bounded_text_keeps_whole_graphemes_and_lone_surrogates(text: str, limit: int) -> None:
    """Text with no space to cut at (Chinese, an emoji run) is cut between graphemes, and
    what is kept is the text's own prefix, a lone surrogate in it too."""
    head = bounded(text, limit).removesuffix("…")
    assert_grapheme_prefix(head, text)


@given(CLUSTERED, st.integers(min_value=2, max_value=40))
def test_a_summary_keeps_whole_graphemes(text: str, limit: int) -> None:
    """A summary cut in an emoji sequence or before an accent keeps the cluster out whole."""
    assert_grapheme_prefix(summary(text, limit).removesuffix("…"), text)


@pytest.mark.parametrize("cut", [bounded, summary])
def test_a_token_the_limit_splits_is_dropped_whole(cut: Callable[[str, int], str]) -> None:
    """A secret straddling the limit leaves no part of itself, which no rule would recognise."""
    token = "ghp_" + "TESTONLY" * 4 + "abcd"
    for start in range(10, 50):
        text = "x" * (start - 1) + f" {token}, then more"
        head = cut(text, 40).removesuffix("…")
        assert head in (text[:start], "x" * len(head))  # before the token, or inside the x's


def test_inputs_are_json_objects_else_raw() -> None:
    """Arguments parse when they are a JSON object; anything else is kept under _raw."""
    assert as_input('{"a": 1}') == {"a": 1}
    assert as_input("[1, 2]") == {"_raw": "[1, 2]"}
    assert as_input("not json") == {"_raw": "not json"}
    assert as_input(None) is None
    assert as_input(["x"]) == {"_raw": '["x"]'}


def test_arguments_json_encoded_twice_are_the_object_they_hold() -> None:
    """A JSON string holding an object's JSON text (json.dumps applied twice, as the third row
    of OpenAI's cookbook drone_training.jsonl has it) is that object; a JSON string of other
    text stays raw."""
    doubled = '"{\\"location\\": \\"current\\"}"'
    assert as_input(doubled) == {"location": "current"}
    assert as_input('"{not json"') == {"_raw": '"{not json"'}
    assert as_input('"hello"') == {"_raw": '"hello"'}
    rows = (CONFORMANCE / "openai-chat" / "openai_cookbook_drone_training.jsonl").read_text()
    third = json.loads(rows.splitlines()[2])["messages"][2]["tool_calls"][0]["function"]
    assert as_input(third["arguments"]) == {"location": "current"}


def test_a_python_dicts_repr_is_read_as_the_arguments_it_shows() -> None:
    """LangChain's ``str(dict)`` tool input is the call's arguments; code is never run."""
    assert as_input("{'query': 'x', 'n': 2, 'ok': True}") == {"query": "x", "n": 2, "ok": True}
    assert as_input("{'a': __import__('os')}") == {"_raw": "{'a': __import__('os')}"}
    assert as_input("{1: 'a'}") == {"_raw": "{1: 'a'}"}
    assert as_input("{'a': 1e999}") == {"_raw": "{'a': 1e999}"}  # no JSON number


@pytest.mark.parametrize(
    ("path", "tool", "arguments"),
    [
        ("langfuse/langgraph-python-2025-08-22.json", "Web-Search", {"query": "example"}),
        (
            "otlp/agent_prism_langchain_tavily_agent.json",
            "tavily_search",
            {"query": "latest AI trends 2024", "time_range": "year", "topic": "general"},
        ),
    ],
)
def test_langchain_tool_inputs_in_exported_spans_are_json_objects(
    path: str, tool: str, arguments: dict[str, Any]
) -> None:
    """Langfuse's and OpenInference's LangChain spans give each call its arguments, not text."""
    (item,) = [i for i in read([CONFORMANCE / path]) if not isinstance(i, Problem)]
    calls = [step for step in item.trace.steps if step.tool and step.type == "tool_call"]
    assert calls
    assert all("_raw" not in (step.input or {}) for step in calls)
    first = next(step for step in calls if step.tool and step.tool.name == tool)
    assert first.input == arguments


def test_blank_thoughts_and_answers_add_no_step() -> None:
    """Whitespace is not a thought."""
    builder = StepBuilder()
    builder.thought("  \n")
    builder.answer("")
    assert builder.steps() == []
    assert not builder.saw_text


class _Scanning(StepBuilder):
    """The matching rule as spec/integrations.md states it: a scan of every earlier tool event."""

    def _matching(
        self, name: str, call_id: str | None, *, flag: str, distinct: bool = False
    ) -> Any:
        tools = [(event, event.tool) for event in self._events if event.tool is not None]
        for event, tool in reversed(tools):  # the latest call of the id
            if call_id is not None and tool.call_id == call_id:
                if not getattr(tool, flag) or (flag == "executed" and not distinct):
                    return event
                break  # a request, or a distinct execution, reusing the id: a new call
        for event, tool in tools:
            differs = tool.call_id is not None and call_id is not None
            if name_key(tool.name) == name_key(name) and not getattr(tool, flag) and not differs:
                return event
        if not name and call_id is None and flag == "executed":  # a result naming no call
            return next((e for e, t in tools if t.requested and not t.executed), None)
        return None


_TOOL_EVENTS = st.lists(
    st.tuples(
        st.booleans(),  # a request, else an execution
        st.sampled_from(["search", "fetch", "", "Fetch"]),
        st.sampled_from([None, "c1", "c2", "c3"]),
        st.sampled_from([None, 1.0, 2.0, 3.0]),
    ),
    max_size=12,
)


@given(_TOOL_EVENTS)
@example([(False, "search", "c1", None), (False, "fetch", "c1", None), (True, "fetch", None, None)])
def test_indexed_matching_merges_tool_events_as_a_scan_of_every_earlier_one(
    events: list[tuple[bool, str, str | None, float | None]],
) -> None:
    """Requests and results merge by call id (a reused id: a new call), else by name in order."""
    builders = StepBuilder(), _Scanning()
    for builder in builders:
        for number, (request, name, call_id, at) in enumerate(events):
            if request:
                builder.tool_request(name, {"n": number}, call_id=call_id, at=at)
            else:
                builder.tool_result(name, output=f"out {number}", call_id=call_id, at=at)
    indexed, scanned = builders
    assert indexed.steps() == scanned.steps()


def test_tool_spans_sharing_a_call_id_are_distinct_calls_each_joining_its_request() -> None:
    """Two requests and two tool spans reusing one call id: two calls, each with its result."""
    builder = StepBuilder()
    for number in (1, 2):
        builder.tool_request("list_dashboards", {"n": number}, call_id="call_1", at=number)
        builder.tool_result(
            "list_dashboards", output=f"out {number}", call_id="call_1", distinct=True
        )
        builder.tool_result("list_dashboards", output=f"out {number}", call_id="call_1")
    assert [
        (step["type"], step.get("input"), step.get("output_summary"))
        for step in builder.steps()
        if step["type"] == "tool_call"
    ] == [("tool_call", {"n": 1}, "out 1"), ("tool_call", {"n": 2}, "out 2")]


def test_tool_spans_sharing_a_call_id_with_no_request_are_still_distinct_calls() -> None:
    """Spans alone (no model call recorded its request): one step per span, not one merged."""
    builder = StepBuilder()
    for number in (1, 2, 3):
        builder.tool_result("search", output=f"out {number}", call_id="c", at=number, distinct=True)
    assert [step["output_summary"] for step in builder.steps() if step["type"] == "tool_call"] == [
        "out 1",
        "out 2",
        "out 3",
    ]


def test_a_result_naming_neither_tool_nor_call_answers_the_oldest_call_still_waiting() -> None:
    """Results without a name or a call id (Koog's tool messages) join the calls in order."""
    builder = StepBuilder()
    builder.tool_request("hello", {}, call_id="c1")
    builder.tool_request("bye", {}, call_id="c2")
    builder.tool_result("", output="Hello!")
    builder.tool_result("", output="Bye!")
    assert [(step["type"], step["tool"]["name"]) for step in builder.steps()] == [
        ("tool_call", "hello"),
        ("observation", "hello"),
        ("tool_call", "bye"),
        ("observation", "bye"),
    ]


def test_timed_calls_asked_by_one_model_call_recover_nothing_of_each_other() -> None:
    """Spans: the model call at 1.0 asks for both; the first fails at 1.1, the second starts at
    1.2 but was asked at 1.0, before the failure; the next model call's reply recovers."""
    builder = StepBuilder()
    builder.tool_request("get", call_id="a", at=1.0)
    builder.tool_request("get", call_id="b", at=1.0)
    builder.tool_result("get", error="Error: no such city", call_id="a", at=1.1)
    builder.tool_result("get", output="Paris", call_id="b", at=1.2)
    builder.thought("One city was not found.", at=2.0)
    assert kinds(builder.steps()) == [
        "tool_call",
        "observation",
        "tool_call",
        "observation",
        "error_recovery",
    ]
