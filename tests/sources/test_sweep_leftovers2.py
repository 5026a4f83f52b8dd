"""Reading defects a sweep of the corpus left open, fixed by the formats' rules.

* jaeger-ui's flame graph fixture: a ``chat`` span's words, then a ``web_search`` and a
  retrieval, and no model call after them. Words that tools follow were said before acting (a
  thought); a run that ends on a tool's result has no final answer (LangSmith's runs alike).
* MarketDataGenie's ShareGPT rows answer two parallel calls in one fenced ``tool_response``
  block, one object a line, each naming its call: each line is its call's result, by name.
* A file whose first record says nothing of its form (an OpenHands evaluation row whose
  ``history`` is empty, a conversation of no message) was that row's "not a trace file this
  tool knows"; the source the next record decides now says what is wrong with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources import langchain as lc
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file
from tests.sources.test_langchain import ai, llm, run
from tests.sources.test_otel_dialects import span, steps

ASKED = "How do I send spans from Go to Jaeger?"
SAID = "Setting up OpenTelemetry with Jaeger involves three components."


def _chat(start: int, parent: Span) -> Span:
    """A GenAI ``chat`` span that asked ``ASKED`` and said ``SAID``, calling no tool."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": ASKED}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": SAID}]),
    }
    return span("chat", attributes, start=start, parent=parent)


def _search(start: int, parent: Span) -> Span:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "web_search",
        "gen_ai.tool.call.arguments": '{"query": "jaeger otlp"}',
        "gen_ai.tool.call.result": '{"results": ["Jaeger natively supports OTLP"]}',
    }
    return span("execute_tool", attributes, start=start, parent=parent)


def _agent() -> Span:
    return span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, start=0)


def test_words_tools_follow_are_a_thought_and_a_run_ending_on_a_tool_has_no_answer() -> None:
    root = _agent()
    retrieval = span(
        "retrieval",
        {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": '["Jaeger v2"]'},
        start=3,
        parent=root,
    )
    trace = to_trace([root, _chat(1, root), _search(2, root), retrieval]).trace
    assert steps(trace)[0] == ("thought", None, SAID)
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "tool_call",
        "observation",
    ]
    assert trace.outcome.result_summary == "completed"  # no answer: the run ended on a result


def test_words_no_tool_follows_are_the_answer() -> None:
    root = _agent()
    trace = to_trace([root, _search(1, root), _chat(2, root)]).trace
    assert trace.outcome.result_summary == SAID
    assert steps(trace)[-1] == ("thought", None, SAID)


def test_a_tool_the_model_call_runs_inside_ran_around_it_not_after() -> None:
    """An agent called as a tool: its tool span starts with the model call inside it."""
    root = _agent()
    delegate = span(
        "execute_tool",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_expert"},
        start=1,
        parent=root,
    )
    trace = to_trace([root, delegate, _chat(1, delegate)]).trace
    assert trace.outcome.result_summary == SAID


def test_a_langsmith_model_run_a_tool_ran_after_gave_no_answer() -> None:
    """The same rule in LangSmith's runs: the model's words, then a tool, and no model after."""
    tool = run(
        "tool",
        "search",
        start_time="2025-01-01T00:00:02Z",
        inputs={"q": "it"},
        outputs={"output": "found"},
    )
    tree = run(
        "chain",
        "agent",
        inputs={"messages": [["user", "find it"]]},
        child_runs=[llm("m1", ai("Let me look."), "2025-01-01T00:00:01Z"), tool],
    )
    item = lc.to_trace(tree)
    assert [step.type for step in item.trace.steps] == ["thought", "tool_call", "observation"]
    assert item.trace.outcome.result_summary == "completed"
    tree["child_runs"] = [tool, llm("m2", ai("Found it."), "2025-01-01T00:00:03Z")]
    assert lc.to_trace(tree).trace.outcome.result_summary == "Found it."


def _read(path: Path) -> list[TraceItem]:
    items = list(convert_file(path))
    assert not [item for item in items if isinstance(item, Problem)]
    return [item for item in items if isinstance(item, TraceItem)]


def _results(item: TraceItem) -> list[tuple[str | None, str]]:
    return [
        (step.tool.name if step.tool else None, step.content or "")
        for step in item.trace.steps
        if step.type == "observation"
    ]


def test_one_fenced_response_block_of_named_lines_answers_each_call_by_name() -> None:
    """Before: the whole block was the first call's result, the second call had none."""
    path = CORPUS / "conversation" / "marketdatagenie_hermes_fc_sharegpt_new_format.json"
    (item,) = _read(path)
    results = _results(item)
    assert [name for name, _ in results] == [
        "deploy_smart_contract",
        "execute_contract_automation",
    ]
    assert "0xbe9Acb19b4F920e9B5f8938fCb42559F2Ce13249" in results[0][1]
    assert "next_execution_date" not in results[0][1]
    assert "2023-03-31" in results[1][1]


def _hermes_row(tmp_path: Path, results: str, *, asked: str = "Weather in Paris and Oslo?") -> Path:
    calls = "".join(
        f'<tool_call>\n{{"name": "{name}", "arguments": {{"city": "{city}"}}}}\n</tool_call>\n'
        for name, city in (("weather", "Paris"), ("time", "Oslo"))
    )
    row = {
        "conversations": [
            {"from": "human", "value": asked},
            {"from": "gpt", "value": calls},
            {"from": "tool", "value": results},
            {"from": "gpt", "value": "Sunny in Paris; it is noon in Oslo."},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


_LINES = '{"name": "time", "content": "noon"}\n{"name": "weather", "content": "sunny"}'


def test_a_tagged_response_block_of_named_lines_answers_each_call_by_name(tmp_path: Path) -> None:
    """The same rule in Hermes' tags: each line names its call, and is paired with it."""
    (item,) = _read(_hermes_row(tmp_path, f"<tool_response>\n{_LINES}\n</tool_response>"))
    assert _results(item) == [("weather", "sunny"), ("time", "noon")]


def test_a_fenced_block_among_other_words_is_no_result(tmp_path: Path) -> None:
    """Only a turn of fenced blocks alone is results: words around one quote it."""
    quoted = f"Here is what came back:\n```tool_response\n{_LINES}\n```\nThanks."
    (item,) = _read(_hermes_row(tmp_path, quoted))
    assert _results(item) == [("weather", quoted)]


def _problems_and_traces(path: Path) -> tuple[list[str], list[TraceItem]]:
    items = list(sources.read([path]))
    problems = [str(item) for item in items if isinstance(item, Problem) and not item.warning]
    return problems, [item for item in items if isinstance(item, TraceItem)]


def _jsonl(tmp_path: Path, rows: list[Any], name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_an_openhands_file_whose_first_row_has_an_empty_history_says_so(tmp_path: Path) -> None:
    """Before: row 1 was "not a trace file this tool knows" (the rest read as OpenHands')."""
    rows = CORPUS / "openhands" / "openagentsafety_v1_output.jsonl"
    read = [json.loads(line) for line in rows.read_text().splitlines()]
    empty = {**read[0], "instance_id": "safety-flattening", "history": [], "error": "it died"}
    problems, traces = _problems_and_traces(_jsonl(tmp_path, [empty, *read]))
    assert len(traces) == len(read)
    assert len(problems) == 1
    assert (
        ":1: an OpenHands evaluation row whose history is empty (safety-flattening)"
        in (problems[0])
    )
    assert problems[0].endswith("the row's error: it died")


def test_chat_rows_whose_first_conversation_is_empty_say_so(tmp_path: Path) -> None:
    """openai-chat's and ShareGPT's rows alike: the empty row is its column's, not unknown."""
    said: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (
            {"messages": []},
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ]
            },
        ),
        (
            {"conversations": []},
            {
                "conversations": [
                    {"from": "human", "value": "hi"},
                    {"from": "gpt", "value": "hello"},
                ]
            },
        ),
    ]
    for empty, full in said:
        problems, traces = _problems_and_traces(_jsonl(tmp_path, [empty, full]))
        column = next(iter(empty))
        assert [trace.trace.outcome.result_summary for trace in traces] == ["hello"]
        assert problems == [
            f"{tmp_path / 'rows.jsonl'}:1: column {column!r} holds no message: an object with "
            f"keys {column}; a conversation of no message is no trace"
        ]


def test_a_stray_first_line_is_said_by_the_source_alone_and_costs_the_session_nothing(
    tmp_path: Path,
) -> None:
    """Each held record is given to the source alone: Gemini CLI reads a JSON Lines session by
    its header, which the stray line before it must not stand in for."""
    session = CORPUS / "gemini-cli" / "gemini_cli_0.61.0_missing_file.jsonl"
    path = tmp_path / "session.jsonl"
    path.write_text('{"hello": "world"}\n' + session.read_text())
    problems, traces = _problems_and_traces(path)
    (alone,) = _problems_and_traces(session)[1]
    assert [item.trace for item in traces] == [alone.trace]
    assert len(problems) == 1
    assert ":1: not a Gemini CLI session: an object with keys hello" in problems[0]


def test_records_no_source_knows_stay_unknown_when_none_decides() -> None:
    problems = list(sources.convert([{"hello": "world"}, {"history": []}]))
    assert [
        str(problem).split(": not a trace file this tool knows")[0] for problem in problems
    ] == [
        "rows:1",
        "rows:2",
    ]
