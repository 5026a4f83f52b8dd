"""LangSmith run files and run trees as ReasoningTraces: golden payloads, shapes, bad records."""

from __future__ import annotations

import ast
import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Problem
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import langchain as lc
from knowledgepulse.sources.langchain import _files as lc_files
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer
from tests.sources.helpers import CORPUS, convert_file, recognise, source_of
from tests.sources.weather import RETRY_SHAPE

DATA = Path(__file__).parent / "data" / "langchain"
EXAMPLE_RUNS = Path(__file__).parents[2] / "examples" / "integrations" / "langgraph" / "runs.json"


def converted(path: Path, **options: Any) -> list[TraceItem | Problem]:
    return list(convert_file(path, source="langsmith", options=TraceOptions(**options)))


def only_trace(path: Path, **options: Any) -> TraceItem:
    (item,) = converted(path, **options)
    assert isinstance(item, TraceItem), item
    return item


def shape(item: TraceItem) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in item.trace.steps]


def steps_of(item: TraceItem) -> list[dict[str, Any]]:
    return [step.model_dump(exclude_none=True) for step in item.trace.steps]


# Golden payloads (tests/sources/data/langchain/NOTICE.md)


def test_langsmith_reasoning_batch_is_one_answer_thought() -> None:
    """The LangSmith SDK's o1-mini post/patch batch: the answer is the one thought step."""
    raw = json.loads((DATA / "langsmith_py_wrap_openai_reasoning.json").read_text("utf-8"))
    answer = raw["patch"][0]["outputs"]["choices"][0]["message"]["content"]
    item = only_trace(DATA / "langsmith_py_wrap_openai_reasoning.json")
    trace = item.trace
    assert trace.id == "kp:trace:a8b34ded-ccd2-4fb7-bccb-9cd625066a14"
    assert steps_of(item) == [{"step_id": 0, "type": "thought", "content": answer}]
    assert trace.task.objective == raw["post"][0]["inputs"]["messages"][0]["content"]
    assert trace.outcome.result_summary == answer
    assert trace.metadata.success is True
    assert trace.metadata.agent_id == "ChatOpenAI"
    assert trace.metadata.framework == "langchain"
    assert trace.metadata.created_at.isoformat() == "2024-10-11T20:58:24.544431+00:00"
    assert (source_of(item)["domain_source"], source_of(item)["confidence_source"]) == (
        "default",
        "default",
    )
    assert trace.outcome.confidence == 0.8
    # Rule 1 of the score: a lone thought is worth 0.1, as the seeds intend.
    assert TraceValueScorer(embedder=None).score(trace).score == pytest.approx(0.1)


def test_langsmith_plain_batch_keeps_the_user_message_as_objective() -> None:
    """The gpt-4o-mini batch: objective "howdy", one thought with the reply."""
    item = only_trace(DATA / "langsmith_py_wrap_openai_.json")
    assert item.trace.task.objective == "howdy"
    assert steps_of(item) == [
        {"step_id": 0, "type": "thought", "content": "Howdy! How can I assist you today?"}
    ]


def test_tracer_nested_runs_on_error_gives_a_failed_call_and_no_recovery() -> None:
    """LangChain's own nested-error run: the tool's error is the observation; the run failed."""
    item = only_trace(DATA / "tracer_nested_runs_on_error.json")
    trace = item.trace
    assert trace.id == "kp:trace:7c0a4b0e-0000-4000-8000-000000000001"
    assert steps_of(item) == [
        {
            "step_id": 0,
            "type": "tool_call",
            "content": 'tool {"_raw":"test"}',
            "tool": {"name": "tool"},
            "input": {"_raw": "test"},
            "output_summary": "Exception('test')",
            "latency_ms": 0.0,
        },
        {
            "step_id": 1,
            "type": "observation",
            "content": "Exception('test')",
            "tool": {"name": "tool"},
            "output_summary": "Exception('test')",
        },
    ]
    assert trace.metadata.success is False
    assert trace.outcome.confidence == 0.2
    assert trace.task.objective == "chain"  # no user text: the root's name


def test_tracer_nested_run_gives_the_tool_and_its_output() -> None:
    """LangChain's nested run: a tool run with output "test" and empty model runs."""
    item = only_trace(DATA / "tracer_nested_run.json")
    assert shape(item) == [("tool_call", "tool"), ("observation", "tool")]
    assert item.trace.steps[1].content == "test"
    assert item.trace.metadata.success is True


# The example's LangGraph run, saved by the tracer (examples/integrations/langgraph/runs.json)


def example_run() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXAMPLE_RUNS.read_text("utf-8"))
    return loaded


def flatten(run: dict[str, Any]) -> list[dict[str, Any]]:
    flat: list[dict[str, Any]] = []
    stack = [run]
    while stack:
        current = stack.pop()
        stack.extend(current.get("child_runs") or [])
        flat.append({key: value for key, value in current.items() if key != "child_runs"})
    return flat


def test_example_run_file_converts_to_the_graph_steps() -> None:
    """The saved LangGraph run: the failed call, the recovery, the answer, in order."""
    item = only_trace(EXAMPLE_RUNS, domain="weather")
    assert shape(item) == RETRY_SHAPE
    trace = item.trace
    assert "unknown city 'Pariss'" in (trace.steps[2].content or "")
    assert trace.steps[4].input == {"city": "Paris"}
    assert trace.task.objective == "What is the weather in Paris today?"
    assert trace.outcome.result_summary == "It is sunny in Paris today, 21 °C."
    assert trace.metadata.framework == "langgraph"
    assert trace.id == f"kp:trace:{example_run()['trace_id']}"
    assert source_of(item)["domain_source"] == "argument"


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_flat_list_of_runs_in_any_order_gives_the_nested_trace(random: Any) -> None:
    """Runs listed flat (``client.list_runs``), shuffled, rebuild the same tree and trace."""
    run = example_run()
    flat = flatten(run)
    random.shuffle(flat)
    nested = lc.to_trace(run)
    rebuilt = lc.to_trace(flat)
    assert rebuilt.trace == nested.trace


def test_langsmith_js_patch_names_its_run_only_by_dotted_order(tmp_path: Path) -> None:
    """A LangSmith JS batch: the patch has no ``id``; its ``dotted_order`` ends with the run's."""
    run_id = "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e"
    order = f"20241013T070537170001Z{run_id}"
    messages = [{"role": "user", "content": "howdy"}]
    batch = {
        "post": [
            {
                "id": run_id,
                "name": "ChatOpenAI",
                "start_time": 1728803137170,
                "run_type": "llm",
                "inputs": {"model": "gpt-4o-mini", "messages": messages},
                "child_runs": [],
                "trace_id": run_id,
                "dotted_order": order,
            }
        ],
        "patch": [
            {
                "end_time": 1728803138285,
                "inputs": {"model": "gpt-4o-mini", "messages": messages},
                "outputs": {
                    "object": "chat.completion",
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "Howdy!"}}
                    ],
                },
                "dotted_order": order,
                "trace_id": run_id,
            }
        ],
    }
    path = tmp_path / "langsmith_js.json"
    path.write_text(json.dumps(batch), "utf-8")
    assert recognise(batch) == "langsmith"
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem), item
    trace = item.trace
    assert trace.id == f"kp:trace:{run_id}"
    assert trace.task.objective == "howdy"
    assert trace.outcome.result_summary == "Howdy!"
    assert trace.metadata.success is True


def _timed(as_millis: bool) -> dict[str, Any]:
    """The example run, its times to the millisecond: epoch numbers (the JS SDK's) or ISO text."""
    tree = example_run()
    stack = [tree]
    while stack:
        current = stack.pop()
        for key in ("start_time", "end_time"):
            if isinstance(current.get(key), str):
                millis = round(datetime.fromisoformat(current[key]).timestamp() * 1000)
                moment = datetime.fromtimestamp(millis / 1000, UTC).isoformat()
                current[key] = millis if as_millis else moment
        stack.extend(current.get("child_runs") or [])
    return tree


def test_langsmith_js_epoch_millisecond_times_give_the_runs_start_and_latencies() -> None:
    """The JS SDK's ``start_time`` / ``end_time`` numbers are times: the same trace as ISO text.

    Before, they were read as no time: ``created_at`` 1970 and no tool ``latency_ms``.
    """
    assert lc.to_trace(_timed(as_millis=True)).trace == lc.to_trace(_timed(as_millis=False)).trace
    path = CORPUS / "langsmith" / "langsmith_js_wrap_openai_default.json"
    started = json.loads(path.read_text("utf-8"))["post"][0]["start_time"]
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.created_at == datetime.fromtimestamp(started / 1000, UTC)


def test_post_and_patch_batches_give_the_nested_trace(tmp_path: Path) -> None:
    """Ingest batches: posts open runs, patches (here in a later line) add outputs and ends."""
    run = example_run()
    posts: list[dict[str, Any]] = []
    patches: list[dict[str, Any]] = []
    for one in flatten(run):
        later: dict[str, Any] = {
            key: one.pop(key) for key in ("outputs", "end_time", "error") if key in one
        }
        posts.append(one)
        patches.append({"id": one["id"], "trace_id": one["trace_id"], **later})
    path = tmp_path / "batches.jsonl"
    path.write_text(
        json.dumps({"post": posts}) + "\n" + json.dumps({"patch": patches}) + "\n", "utf-8"
    )
    item = only_trace(path)
    assert item.trace == lc.to_trace(run).trace
    assert item.location is not None
    assert item.location.line == 1


# Shapes and rules


def run(run_type: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"{name}-{run_type}", "name": name, "run_type": run_type, **fields}


def ai(content: Any = "", tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"content": content, "type": "ai"}
    if tool_calls:
        kwargs["tool_calls"] = [{**call, "type": "tool_call"} for call in tool_calls]
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": kwargs,
    }


def llm(name: str, message: dict[str, Any], at: str) -> dict[str, Any]:
    outputs = {"generations": [[{"text": "", "message": message}]], "llm_output": None}
    return run("llm", name, start_time=at, outputs=outputs)


def test_an_error_tool_message_fails_a_call_no_tool_run_recorded() -> None:
    """An unknown tool: only ToolNode's error ToolMessage says so; the next call recovers."""
    error = {
        "type": "tool",
        "content": "Error: nope is not a valid tool",
        "tool_call_id": "c1",
        "status": "error",
        "name": "nope",
    }
    tree = run(
        "chain",
        "LangGraph",
        inputs={"messages": [["user", "find it"]]},
        child_runs=[
            llm("m1", ai("", [{"name": "nope", "args": {}, "id": "c1"}]), "2025-01-01T00:00:01Z"),
            run("chain", "tools", start_time="2025-01-01T00:00:02Z", outputs={"messages": [error]}),
            llm(
                "m2",
                ai("", [{"name": "search", "args": {"q": "it"}, "id": "c2"}]),
                "2025-01-01T00:00:03Z",
            ),
            run(
                "tool",
                "search",
                start_time="2025-01-01T00:00:04Z",
                inputs={"q": "it"},
                outputs={"output": "found"},
                extra={"tool_call_id": "c2"},
            ),
            llm("m3", ai("Found it."), "2025-01-01T00:00:05Z"),
        ],
    )
    item = lc.to_trace(tree)
    assert shape(item) == [
        ("tool_call", "nope"),
        ("observation", "nope"),
        ("error_recovery", "search"),
        ("observation", "search"),
        ("thought", None),
    ]
    assert item.trace.steps[1].content == "Error: nope is not a valid tool"
    assert item.trace.task.objective == "find it"
    assert item.trace.outcome.result_summary == "Found it."


def test_a_root_whose_last_ai_message_asks_for_tools_gave_no_answer() -> None:
    """A run that stopped at a tool call: the text said with the call is no result."""
    asks = ai("I will look it up.", [{"name": "search", "args": {}, "id": "c1"}])
    tree = run(
        "chain",
        "LangGraph",
        inputs={"messages": [["user", "find it"]]},
        outputs={"messages": [["user", "find it"], asks]},
        child_runs=[llm("m1", asks, "2025-01-01T00:00:01Z")],
    )
    item = lc.to_trace(tree)
    assert shape(item) == [("thought", None), ("tool_call", "search")]
    assert item.trace.outcome.result_summary == "completed"


def test_reasoning_blocks_and_provider_reasoning_are_thoughts() -> None:
    """Standard ``reasoning`` blocks and ``additional_kwargs.reasoning_content`` are thoughts."""
    message = ai(
        [
            {"type": "reasoning", "reasoning": "Think first."},
            {"type": "text", "text": "The answer is 4."},
        ]
    )
    message["kwargs"]["additional_kwargs"] = {"reasoning_content": "Two plus two."}
    item = lc.to_trace(llm("model", message, "2025-01-01T00:00:00Z"))
    assert [(s.type, s.content) for s in item.trace.steps] == [
        ("thought", "Two plus two."),
        ("thought", "Think first."),
        ("thought", "The answer is 4."),
    ]
    assert item.trace.outcome.result_summary == "The answer is 4."


@pytest.mark.parametrize(
    "messages",
    [
        [
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "HumanMessage"],
                "kwargs": {"content": "Q?"},
            }
        ],
        [{"type": "human", "content": [{"type": "text", "text": "Q?"}]}],
        [["user", "Q?"]],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}],
        ["Q?"],
    ],
)
def test_objective_is_the_first_human_message_in_every_shape(messages: list[Any]) -> None:
    """Serialised, dumped, tuple, OpenAI-shaped and bare-string messages all give the task."""
    tree = run(
        "chain",
        "agent",
        inputs={"messages": messages},
        child_runs=[llm("m", ai("A."), "2025-01-01T00:00:00Z")],
    )
    assert lc.to_trace(tree).trace.task.objective == "Q?"


@pytest.mark.parametrize(
    ("messages", "asked"),
    [
        ([["user", "Q1?"], ["assistant", "A1."], ["user", "Q2?"]], "Q2?"),
        (
            [
                {"role": "user", "content": "Find it."},
                {"role": "assistant", "content": "", "tool_calls": []},
                {"role": "tool", "content": "found", "tool_call_id": "c"},
                {"role": "user", "content": "Now summarise."},
            ],
            "Now summarise.",
        ),
        ([["system", "Be brief."], ["user", "One"], ["user", "Two"]], "One"),
    ],
)
def test_a_graph_given_the_conversation_so_far_was_asked_its_newest_turn(
    messages: list[Any], asked: str
) -> None:
    """A graph run without a checkpointer gets the history and the next question: every later
    turn's objective was the conversation's first question."""
    tree = run(
        "chain",
        "agent",
        inputs={"messages": messages},
        child_runs=[llm("m", ai("A."), "2025-01-01T00:00:00Z")],
    )
    assert lc.to_trace(tree).trace.task.objective == asked


def test_domain_and_confidence_come_from_run_metadata() -> None:
    """``kp.task_domain`` and ``kp_confidence`` in the root's metadata; an argument wins."""
    tree = run(
        "chain",
        "agent",
        inputs={"input": "Q?"},
        extra={"metadata": {"kp.task_domain": "finance", "kp_confidence": 0.6}},
        outputs={"output": "A."},
    )
    item = lc.to_trace(tree)
    assert (item.trace.metadata.task_domain, source_of(item)["domain_source"]) == (
        "finance",
        "metadata",
    )
    assert (item.trace.outcome.confidence, source_of(item)["confidence_source"]) == (
        0.6,
        "metadata",
    )
    assert item.trace.task.objective == "Q?"
    assert [s.content for s in item.trace.steps] == ["A."]  # the output is the answer
    assert lc.to_trace(tree, domain="code").trace.metadata.task_domain == "code"


def test_a_python_repr_tool_input_is_read_as_an_object() -> None:
    """LangChain writes ``str(dict)`` as a tool's input; it is read as the arguments."""
    tree = run("tool", "calc", inputs={"input": "{'a': 1, 'b': [2]}"}, outputs={"output": 3})
    assert lc.to_trace(tree).trace.steps[0].input == {"a": 1, "b": [2]}


def test_the_traceback_is_cut_from_a_tool_error() -> None:
    """A tool run's error keeps the exception, not the Python traceback after it."""
    tree = run(
        "tool",
        "calc",
        inputs={"x": 1},
        error="ValueError('bad')Traceback (most recent call last):\n  File \"x.py\"",
    )
    assert lc.to_trace(tree).trace.steps[1].content == "ValueError('bad')"


def test_to_trace_takes_json_text_and_rejects_several_roots() -> None:
    """JSON text is read; a value with two root runs is refused with a clear message."""
    tree = run("tool", "calc", inputs={"x": 1}, outputs={"output": 2})
    assert lc.to_trace(json.dumps(tree)).trace.steps[0].tool is not None
    other: dict[str, Any] = {**copy.deepcopy(tree), "id": "other"}
    with pytest.raises(ConversionError, match="expected one root run, found 2"):
        lc.to_trace([tree, other])
    with pytest.raises(ConversionError, match="not a LangChain or LangSmith run"):
        lc.to_trace(42)


# Bad input: located problems, the rest goes on


def test_bad_records_are_located_and_the_others_convert(tmp_path: Path) -> None:
    """An unreadable line, a non-run, a bad child list and an empty trace; two traces still come."""
    good = run("tool", "calc", inputs={"x": 1}, outputs={"output": 2})
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({"run_type": "chain", "id": "r2", "child_runs": [7, good | {"id": "g2"}]}),
        json.dumps({"run_type": "chain", "id": "r3", "child_runs": {"a": 1}}),
        json.dumps({"patch": [{"id": "nobody", "outputs": {}}]}),
        json.dumps(run("chain", "empty")),
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    items = converted(path)
    traces = [item for item in items if isinstance(item, TraceItem)]
    problems = [str(item) for item in items if isinstance(item, Problem)]
    assert [t.trace.id for t in traces] == ["kp:trace:calc-tool", "kp:trace:r2"]
    assert len(problems) == 6, problems  # line 4 is also a trace with no step
    assert problems[0].startswith(f"{path}:2: ")
    assert any(p.startswith(f"{path}:3: child_runs[0]: not a LangSmith run") for p in problems)
    assert any(p.startswith(f"{path}:4: child_runs: expected a list of runs") for p in problems)
    assert any(p.startswith(f"{path}:5: patch[0]: a patch for run 'nobody'") for p in problems)
    assert any(p.startswith(f"{path}:6: ") and "holds no step" in p for p in problems)


def test_a_run_whose_parent_is_missing_is_its_own_trace_with_a_warning() -> None:
    """An orphan (its parent not exported) still converts, and says why it stands alone."""
    orphan = run("tool", "calc", parent_run_id="gone", inputs={"x": 1}, outputs={"output": 2})
    (item,) = [i for i in lc_records([orphan]) if isinstance(i, TraceItem)]
    assert any("parent run gone is not in the file" in note for note in item.warnings)


def test_runs_linked_in_a_cycle_are_reported() -> None:
    """Two runs each naming the other as parent form no tree; they are reported, not looped."""
    first = run("tool", "a", parent_run_id="b-tool", outputs={"output": 1})
    second = run("tool", "b", parent_run_id="a-tool", outputs={"output": 1})
    items = lc_records([first, second])
    assert all(isinstance(item, Problem) for item in items)
    assert "cycle" in str(items[0])


def lc_records(runs: list[dict[str, Any]]) -> list[TraceItem | Problem]:
    from knowledgepulse.records import Location, Record

    records = [Record(Location("runs.json", index=i), value) for i, value in enumerate(runs)]
    return list(lc_files.convert_records(records, TraceOptions()))


# Recognising the shape


def test_recognises_runs_lists_and_batches_only() -> None:
    """Runs, lists of runs and post/patch batches are LangSmith; other sources' shapes are not."""
    assert lc_files.recognises(example_run())
    assert lc_files.recognises(flatten(example_run()))
    assert lc_files.recognises(
        json.loads((DATA / "langsmith_py_wrap_openai_.json").read_text("utf-8"))
    )
    others: list[Any] = [
        {"resourceSpans": []},
        {"object": "trace.span", "id": "span_1", "span_data": {}},
        {"name": "chat", "context": {"trace_id": "0x1"}, "kind": "SpanKind.CLIENT"},
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
        {"step_number": 1, "model_output": "x"},
        {"post": "nope"},
        [],
        "text",
    ]
    for other in others:
        assert not lc_files.recognises(other), other


def test_auto_recognises_every_langsmith_file() -> None:
    """``--from auto`` picks langsmith for the golden files and the example's run."""
    for path in [*sorted(DATA.glob("*.json")), EXAMPLE_RUNS]:
        first = json.loads(path.read_text("utf-8"))
        assert recognise(first) == "langsmith", path


def test_a_retriever_run_is_a_tool_call_with_its_documents() -> None:
    """Retriever runs are tool executions; the documents' text is the observation."""
    docs = [
        {"page_content": "Paris is in France.", "metadata": {}, "type": "Document"},
        {"page_content": "It has 2M people.", "metadata": {}, "type": "Document"},
    ]
    tree = run("retriever", "wiki", inputs={"query": "Paris"}, outputs={"documents": docs})
    item = lc.to_trace(tree)
    assert shape(item) == [("tool_call", "wiki"), ("observation", "wiki")]
    assert item.trace.steps[0].input == {"query": "Paris"}
    assert item.trace.steps[1].content == "Paris is in France.\n\nIt has 2M people."


def test_an_invalid_tool_call_is_a_failed_call_and_the_next_recovers() -> None:
    """A tool call whose arguments could not be parsed fails; the next call is the recovery."""
    bad = ai("")
    bad["kwargs"]["invalid_tool_calls"] = [
        {
            "name": "calc",
            "args": "{1+",
            "id": "c1",
            "error": "bad JSON",
            "type": "invalid_tool_call",
        }
    ]
    tree = run(
        "chain",
        "agent",
        inputs={"input": "add"},
        child_runs=[
            llm("m1", bad, "2025-01-01T00:00:01Z"),
            llm(
                "m2",
                ai("", [{"name": "calc", "args": {"x": 1}, "id": "c2"}]),
                "2025-01-01T00:00:02Z",
            ),
        ],
    )
    item = lc.to_trace(tree)
    assert shape(item) == [
        ("tool_call", "calc"),
        ("observation", "calc"),
        ("error_recovery", "calc"),
    ]
    assert item.trace.steps[1].content == "invalid tool call: bad JSON"
    assert item.trace.steps[0].input == {"_raw": "{1+"}


def test_openai_shaped_tool_calls_are_merged_with_their_tool_runs_by_id() -> None:
    """A wrapped OpenAI client's ``choices[0].message.tool_calls`` meet the tool run by call id."""
    choice = {
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                }
            ],
        }
    }
    tree = run(
        "chain",
        "agent",
        inputs={"question": "x?"},
        child_runs=[
            run(
                "llm",
                "ChatOpenAI",
                start_time="2025-01-01T00:00:01Z",
                outputs={"choices": [choice]},
            ),
            run(
                "tool",
                "lookup",
                start_time="2025-01-01T00:00:02Z",
                end_time="2025-01-01T00:00:02.250Z",
                inputs={"q": "x"},
                outputs={
                    "output": {"type": "tool", "content": "found x", "tool_call_id": "call_9"}
                },
            ),
        ],
    )
    item = lc.to_trace(tree)
    assert shape(item) == [("tool_call", "lookup"), ("observation", "lookup")]
    assert item.trace.steps[0].latency_ms == pytest.approx(250.0)
    assert item.trace.steps[1].content == "found x"
    assert item.trace.task.objective == "x?"


def test_a_failed_model_call_makes_the_next_tool_call_a_recovery() -> None:
    """A model run's own error is evident; the next tool call recovers from it."""
    tree = run(
        "chain",
        "agent",
        inputs={"input": "go"},
        child_runs=[
            run("llm", "m1", start_time="2025-01-01T00:00:01Z", error="RateLimitError('slow')"),
            llm("m2", ai("", [{"name": "calc", "args": {}, "id": "c"}]), "2025-01-01T00:00:02Z"),
        ],
    )
    item = lc.to_trace(tree)
    assert shape(item) == [("observation", None), ("error_recovery", "calc")]
    assert item.trace.steps[0].content == "m1: RateLimitError('slow')"


def test_a_trace_past_the_run_limit_is_cut_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs past ``MAX_RUNS_PER_TRACE`` are left out, with a warning on the trace."""
    from knowledgepulse.sources.langchain import _runs

    monkeypatch.setattr(_runs, "MAX_RUNS_PER_TRACE", 3)
    children = [run("tool", f"t{i}", outputs={"output": i}) for i in range(5)]
    item = lc.to_trace(run("chain", "agent", child_runs=children))
    assert [step.tool.name for step in item.trace.steps if step.tool] == ["t0", "t0", "t1", "t1"]
    assert item.warnings == ("only the first 3 runs were read",)


def test_domain_and_confidence_arguments_reach_every_file_trace() -> None:
    """``--domain``/``--confidence`` (TraceOptions) win over the defaults."""
    item = only_trace(DATA / "tracer_nested_run.json", domain="code", confidence=0.5)
    assert item.trace.metadata.task_domain == "code"
    assert (item.trace.outcome.confidence, source_of(item)["confidence_source"]) == (
        0.5,
        "argument",
    )


# The SDK's own batches of agent runs (tests/conformance/langsmith_runs.py)


@pytest.mark.parametrize("name", ["langgraph_google_model_retry", "traceable_google_model_retry"])
def test_an_agent_s_posted_runs_give_its_tools_its_error_and_the_recovery(name: str) -> None:
    """What the LangSmith SDK posts of a LangGraph agent (a tool run whose output is the
    ``ToolMessage`` with ``status`` "error") and of a ``@traceable`` loop (a tool run with an
    ``error``): the failed call's text observed, the next call its recovery, the answer once."""
    item = only_trace(CORPUS / "langsmith" / f"{name}.json")
    assert item.trace.task.objective == "What is the capital of France?"
    assert shape(item) == [
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
    ]
    assert "La France" in str(item.trace.steps[1].content)
    assert item.trace.outcome.result_summary == "The capital of France is Paris."
    assert item.trace.metadata.success is True


def test_a_traceable_run_that_ends_in_its_tool_s_error_fails_with_that_error_once() -> None:
    item = only_trace(CORPUS / "langsmith" / "traceable_tool_raises.json")
    assert item.trace.task.objective == "What is the capital of France?"
    assert shape(item) == [("tool_call", "get_capital"), ("observation", "get_capital")]
    assert item.trace.metadata.success is False


def test_the_agents_sdk_s_runs_read_their_responses_items() -> None:
    """LangSmith's ``OpenAIAgentsTracingProcessor`` records the Agents SDK's Responses calls as
    they are: inputs ``{"input": [items], "instructions": ...}``, outputs ``{"output": [items]}``.
    The first user item is the objective, ``instructions`` the system prompt, a ``function_call``
    item a call (a handoff's, ``transfer_to_<agent>``, that no tool run runs) and the last
    ``message`` item the answer. Before, the handoff's file gave no trace ("no step") and the
    agent-as-tool's took the instructions as its objective and "completed" as its answer."""
    item = only_trace(CORPUS / "langsmith" / "openai_agents_handoff.json")
    assert item.trace.task.objective == "What is 2 + 2?"
    assert shape(item) == [("tool_call", "transfer_to_handoff_agent"), ("thought", None)]
    assert item.trace.outcome.result_summary == "2 + 2 = 4"
    item = only_trace(CORPUS / "langsmith" / "openai_agents_agent_as_tool.json")
    assert item.trace.task.objective == "What is 2 + 2?"
    assert shape(item) == [
        ("tool_call", "tool_agent"),
        ("thought", None),  # the inner agent's reply, inside the tool's run
        ("observation", "tool_agent"),
        ("thought", None),
    ]
    assert item.trace.steps[0].input == {"input": "2 + 2"}
    assert item.trace.outcome.result_summary == "2 + 2 equals 4."


def test_the_agents_sdk_s_langsmith_runs_name_the_agents_sdk_as_their_framework() -> None:
    """The runs LangSmith's ``OpenAIAgentsTracingProcessor`` posts say ``ls_integration:
    openai-agents-sdk``: the Agents SDK ran them, as the SDK's own spans of the same run say
    (``openai-agents``). Before, their framework was "langchain", which never ran."""
    for path in sorted((CORPUS / "langsmith").glob("openai_agents_*[!s].json")):
        posted = [run for batch in json.loads(path.read_text()) for run in batch["post"]]
        (root,) = [run for run in posted if not run.get("parent_run_id")]
        assert root["extra"]["metadata"]["ls_integration"] == "openai-agents-sdk", path.name
        assert only_trace(path).trace.metadata.framework == "openai-agents", path.name
    same_run = CORPUS / "openai-agents" / "responses_thinking_with_tool_calls.jsonl"
    (item,) = convert_file(same_run)
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.framework == "openai-agents"


def test_a_wrapped_anthropic_reply_s_thinking_is_read_from_the_request_that_sends_it_back() -> None:
    """``wrap_anthropic`` records a reply as its text and tool calls, without its thinking;
    the next request sends the reply back whole, the thinking beside the same ``tool_use`` id.
    That thinking is the reply's reasoning, before its text and call, as MLflow's trace of the
    same run has it. Before, the LangSmith run lost it."""
    path = CORPUS / "langsmith" / "traceable_anthropic_tool_with_thinking.json"
    posted = [run for batch in json.loads(path.read_text()) for run in batch["post"]]
    first, second = sorted(
        (run for run in posted if run["run_type"] == "llm"), key=lambda run: run["start_time"]
    )
    assert "thinking" not in json.dumps(first["outputs"])
    (sent_back,) = [m for m in second["inputs"]["messages"] if m["role"] == "assistant"]
    (thinking,) = [block["thinking"] for block in sent_back["content"] if "thinking" in block]
    item = only_trace(path)
    assert shape(item)[:3] == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "get_user_country"),
    ]
    assert item.trace.steps[0].content == thinking
    assert item.trace.steps[1].content == first["outputs"]["content"]
    mlflow = CORPUS / "mlflow" / "anthropic_tool_with_thinking.json"
    (same_run,) = convert_file(mlflow)
    assert isinstance(same_run, TraceItem)
    assert [step.content for step in same_run.trace.steps] == [
        step.content for step in item.trace.steps
    ]


def test_a_graph_paused_by_interrupt_and_resumed_gives_two_traces() -> None:
    """LangGraph's ``interrupt()`` in a tool, then ``Command(resume=...)``, as the SDK's
    ``LangChainTracer`` posts them: the paused run (its tool's run ends in ``GraphInterrupt``)
    is no success and no failure, the call has no observation; the resumed run is a trace of
    its own, its objective the user's words its model was sent, not the ``Command``."""
    paused, resumed = (
        item
        for item in converted(CORPUS / "langsmith" / "langgraph_interrupt_then_resumed.json")
        if isinstance(item, TraceItem)
    )
    assert paused.trace.task.objective == "What is the temperature in Tokyo?"
    assert shape(paused) == [("tool_call", "get_temperature")]
    assert paused.trace.metadata.success is False
    assert any("interrupted" in warning for warning in paused.warnings)
    assert resumed.trace.task.objective == "What is the temperature in Tokyo?"
    assert shape(resumed) == [
        ("tool_call", "get_temperature"),
        ("observation", "get_temperature"),
        ("thought", None),
    ]
    assert resumed.trace.metadata.success is True


def test_an_output_guardrail_that_tripped_fails_the_agents_sdk_s_langsmith_run() -> None:
    """LangSmith's Agents SDK processor records a tripped output guardrail as the agent's
    ``chain`` run error (``str()`` of the SDK's ``{"message", "data"}``) and the guardrail as a
    ``tool`` run marked ``middleware``; the root has no error and outputs the rejected answer.
    Before, the run succeeded with that answer and the guardrail was a tool call."""
    item = only_trace(CORPUS / "langsmith" / "openai_agents_output_guardrail.json")
    assert shape(item) == [
        ("tool_call", "get_temperature"),
        ("observation", "get_temperature"),
        ("thought", None),  # the answer the guardrail rejected
        ("observation", None),
    ]
    assert item.trace.metadata.success is False


def test_a_chain_run_s_error_is_read_as_the_file_has_it() -> None:
    """``openai_agents_output_guardrail.json``: the agent run (named ``assistant``) errs with
    ``{'message': 'Guardrail tripwire triggered', ...}``. Before, the error read
    ``assistant: Guardrail tripwire triggered``: the run's name, like a speaker's, before it."""
    path = CORPUS / "langsmith" / "openai_agents_output_guardrail.json"
    (run,) = (run for run in json.loads(path.read_text())[0]["post"] if run.get("error"))
    said = ast.literal_eval(run["error"])["message"]
    item = only_trace(path)
    assert item.trace.steps[-1].content == said
    assert item.trace.outcome.result_summary == said


def test_the_agents_sdk_s_tool_error_reads_as_its_own_spans_say_it() -> None:
    """A failed call's ``tool`` run error, ``str()`` of the SDK's ``{"message", "data"}``, is
    the text its exported span gives: the message and the data's error, not a dict's repr."""
    item = only_trace(CORPUS / "langsmith" / "openai_agents_responses_model_retry.json")
    failed = item.trace.steps[1]
    assert (failed.type, failed.tool.name if failed.tool else None) == (
        "observation",
        "get_location",
    )
    assert str(failed.content).startswith("Error running tool (non-fatal): ")
    assert "{'message'" not in str(failed.content)


def test_a_chain_s_error_that_a_later_step_follows_is_recovered() -> None:
    """A chain's own error below the root (a fallback's failed first try) that the run went on
    past is an error and a recovery, not the run's end."""
    tree = run("chain", "agent", inputs={"input": "Hi"}, start_time="2026-01-01T00:00:00Z")
    failed = run("chain", "first", error="boom", start_time="2026-01-01T00:00:01Z")
    failed["end_time"] = "2026-01-01T00:00:02Z"
    answer = llm("model", ai("Hello"), "2026-01-01T00:00:03Z")
    tree["child_runs"] = [failed, answer]
    item = lc.to_trace(tree)
    assert [step.type for step in item.trace.steps] == ["observation", "error_recovery"]
    assert item.trace.metadata.success is True


def test_instructions_are_never_the_objective() -> None:
    tree = run("chain", "Agent workflow", inputs={"instructions": "You are helpful.", "x": "Hi"})
    tree["child_runs"] = [run("llm", "model", outputs={"output": "Hello"})]
    assert lc.to_trace(tree).trace.task.objective == "Hi"


def test_pages_of_the_runs_query_read_as_the_runs_they_list(tmp_path: Path) -> None:
    """``POST /runs/query`` (what ``client.list_runs`` pages through, and what one fetches with
    curl) answers ``{"runs": [...], "cursors": {...}}``: its runs, flat and linked by
    ``parent_run_id``, are the same trace as the batches that posted them, however paged.
    Before, such a page was no file kp knew."""
    posted = CORPUS / "langsmith" / "langgraph_google_model_retry.json"
    runs = [run for batch in json.loads(posted.read_text("utf-8")) for run in batch["post"]]
    page = tmp_path / "runs_query.json"
    page.write_text(json.dumps({"runs": runs, "cursors": {"next": None}}), "utf-8")
    assert recognise(json.loads(page.read_text("utf-8"))) == "langsmith"
    pages = tmp_path / "runs_query_pages.jsonl"
    pages.write_text(
        "".join(
            json.dumps({"runs": part, "cursors": {"next": None}}) + "\n"
            for part in (runs[:9], runs[9:])
        ),
        "utf-8",
    )
    expected = only_trace(posted).trace
    assert only_trace(page).trace == expected
    assert only_trace(pages).trace == expected


def test_a_runs_page_whose_run_is_none_is_located_and_the_rest_is_read(tmp_path: Path) -> None:
    page = tmp_path / "page.json"
    runs = [run("chain", "agent", inputs={"input": "Hi"}, outputs={"output": "Hello"}), 7]
    page.write_text(json.dumps({"runs": runs}), "utf-8")
    items = converted(page)
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert problem.path == "runs[1]"
    assert "not a LangSmith run" in problem.message
    (trace,) = [item for item in items if isinstance(item, TraceItem)]
    assert trace.trace.task.objective == "Hi"


@pytest.mark.parametrize("name", ["traceable_google_model_retry", "langgraph_google_model_retry"])
def test_the_sdk_s_opentelemetry_mode_reads_as_its_runs(name: str) -> None:
    """With ``LANGSMITH_OTEL_ENABLED`` the SDK sends each run as a span (``langsmith.span.kind``,
    ``gen_ai.prompt`` / ``gen_ai.completion`` its inputs and outputs as JSON): the same trace as
    the runs it posts. Before, ``gen_ai.prompt`` was read as OpenLIT's text: LangGraph's
    objective was the graph's name, the tools had no arguments and no results, calls with no
    name appeared, and the answer was "completed"."""
    (item,) = convert_file(CORPUS / "otlp" / f"langsmith_otel_{name}.json")
    assert isinstance(item, TraceItem)
    (posted,) = convert_file(CORPUS / "langsmith" / f"{name}.json")
    assert isinstance(posted, TraceItem)
    assert item.trace.task.objective == posted.trace.task.objective
    assert shape(item) == shape(posted)
    tools = [step for step in item.trace.steps if step.tool]
    assert [step.input for step in tools if step.type != "observation"] == [
        {"country": "France"},
        {"country": "La France"},
    ]
    assert tools[-1].content == "Paris"
    assert item.trace.outcome.result_summary == posted.trace.outcome.result_summary


def _structured_tree(*, ran_after: bool = False) -> dict[str, Any]:
    """A LangGraph prebuilt agent given a ``response_format``: a tool, the text reply, then
    ``generate_structured_response``'s model call forced into one call of the schema."""
    asked = ai("", [{"name": "get_weather", "args": {"city": "sf"}, "id": "c1"}])
    reply = ai("It's always sunny in sf.")
    structured = {"conditions": "sunny"}
    extract = ai("", [{"name": "WeatherResponse", "args": structured, "id": "c2"}])
    children = [
        llm("agent", asked, "2025-01-01T00:00:01Z"),
        run(
            "tool",
            "get_weather",
            start_time="2025-01-01T00:00:02Z",
            inputs={"city": "sf"},
            outputs={"output": "It's always sunny in sf"},
            extra={"tool_call_id": "c1"},
        ),
        llm("agent", reply, "2025-01-01T00:00:03Z"),
        run(
            "chain",
            "generate_structured_response",
            start_time="2025-01-01T00:00:04Z",
            child_runs=[
                {
                    **llm("ChatOpenAI", extract, "2025-01-01T00:00:04Z"),
                    "inputs": {"messages": [[["user", "weather in sf?"], reply]]},
                }
            ],
        ),
    ]
    if ran_after:  # the same call, run by a tool after it: a call like any other
        children.append(
            run(
                "tool",
                "WeatherResponse",
                start_time="2025-01-01T00:00:05Z",
                inputs=structured,
                outputs={"output": "ok"},
                extra={"tool_call_id": "c2"},
            )
        )
    return run(
        "chain",
        "LangGraph",
        inputs={"messages": [["user", "weather in sf?"]]},
        outputs={
            "messages": [["user", "weather in sf?"], asked, reply],
            "structured_response": structured,
        },
        child_runs=children,
    )


def test_langgraphs_structured_response_call_is_the_answer_as_the_span_reader_reads_it() -> None:
    """``generate_structured_response``'s forced call, after the agent's text reply, is the
    structured output: the answer (its arguments), no tool call that never ran; the text reply
    stays a thought. The rule is the span reader's (``_structured.is_structured_extraction``)."""
    item = lc.to_trace(_structured_tree())
    assert shape(item) == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
        ("thought", None),
    ]
    assert item.trace.steps[2].content == "It's always sunny in sf."
    assert json.loads(item.trace.outcome.result_summary or "") == {"conditions": "sunny"}
    assert item.trace.steps[-1].content == item.trace.outcome.result_summary


def test_a_forced_call_that_a_tool_then_runs_stays_a_call() -> None:
    item = lc.to_trace(_structured_tree(ran_after=True))
    assert ("tool_call", "WeatherResponse") in shape(item)
    assert item.trace.outcome.result_summary == "It's always sunny in sf."


def test_a_model_run_names_the_model_that_replied_not_the_alias_asked_for() -> None:
    """LangChain's ``ls_model_name`` is the alias the app asked for (``gpt-4.1-mini``); the
    reply's ``llm_output.model_name`` the version that ran: the trace's model."""
    path = CORPUS / "langsmith" / "langgraph_subgraph.json"
    runs = [run for run in _runs_in(json.loads(path.read_text())) if run.get("run_type") == "llm"]
    asked = {run["extra"]["metadata"]["ls_model_name"] for run in runs}
    replied = {run["outputs"]["llm_output"]["model_name"] for run in runs}
    assert (asked, replied) == ({"gpt-4.1-mini"}, {"gpt-4.1-mini-2025-04-14"})
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert source_of(item)["model"] == "gpt-4.1-mini-2025-04-14"


def _runs_in(value: Any) -> list[dict[str, Any]]:
    """Every run of a LangSmith export, its children's too, whatever its shape."""
    if isinstance(value, list):
        return [run for item in value for run in _runs_in(item)]
    if not isinstance(value, dict):
        return []
    nested = [
        run for key in ("child_runs", "runs", "post", "patch") for run in _runs_in(value.get(key))
    ]
    return ([value] if "run_type" in value else []) + nested
