"""A real LangGraph agent with a scripted chat model, traced live, offline."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

import knowledgepulse as kp
from knowledgepulse.errors import MissingDependencyError
from knowledgepulse.integrations import langchain as lc
from knowledgepulse.integrations._collector import Collector
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer
from tests.integrations.loops import run_fresh
from tests.sources.helpers import convert_file
from tests.sources.weather import RETRY_SHAPE, step_shape

EXAMPLE = Path(__file__).parents[2] / "examples" / "integrations" / "langgraph" / "weather_agent.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("langgraph_weather_agent", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE_MODULE = load_example()


def invoke(config: dict[str, Any] | None = None) -> dict[str, Any]:
    graph = EXAMPLE_MODULE.build_graph()
    result: dict[str, Any] = graph.invoke(
        {"messages": [("user", EXAMPLE_MODULE.TASK)]}, config=config or {}
    )
    return result


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=None)


def test_a_langgraph_agent_with_a_failing_tool_gives_a_scored_trace() -> None:
    """One line (a callback) turns the run into a trace: failure, recovery, answer, score."""
    tracer = lc.tracer(domain="weather", scorer=scorer())
    result = invoke({"callbacks": [tracer]})
    assert result["messages"][-1].content == "It is sunny in Paris today, 21 °C."
    (captured,) = tracer.captured
    trace = captured.trace
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.steps[0].content == (
        "The user wants today's weather in Paris; the weather tool knows it."
    )
    assert trace.steps[1].input == {"city": "Pariss"}
    assert "ValueError" in (trace.steps[2].content or "")
    assert trace.steps[4].input == {"city": "Paris"}
    assert trace.steps[5].content == "sunny, 21 °C"
    assert trace.task.objective == EXAMPLE_MODULE.TASK
    assert trace.outcome.result_summary == "It is sunny in Paris today, 21 °C."
    assert trace.metadata.success is True
    assert trace.metadata.framework == "langgraph"
    assert trace.metadata.task_domain == "weather"
    assert trace.metadata.quality_score == captured.breakdown.score > 0.1
    assert tracer.last_run is not None
    assert trace.id == f"kp:trace:{tracer.last_run['trace_id']}"
    assert trace.steps[1].latency_ms is not None


def test_the_saved_run_reads_back_to_the_same_trace(tmp_path: Path) -> None:
    """The tracer's run, saved as LangSmith JSON and converted from the file, gives its trace."""
    tracer = lc.tracer(scorer=scorer())
    invoke({"callbacks": [tracer]})
    path = tmp_path / "run.json"
    path.write_text(json.dumps(tracer.last_run), "utf-8")
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    live = tracer.captured[0].trace
    assert item.trace.steps == live.steps
    assert item.trace.id == live.id
    assert item.trace.task == live.task


def test_a_redacting_tracer_keeps_its_last_run_redacted_too(tmp_path: Path) -> None:
    """``redact=True``: the run a user saves holds no secret, and reads back to the trace kept."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    tracer = lc.tracer(scorer=scorer(), redact=True)
    graph = EXAMPLE_MODULE.build_graph()
    task = f"{EXAMPLE_MODULE.TASK} My token is {secret}."
    result = graph.invoke({"messages": [("user", task)]}, config={"callbacks": [tracer]})
    assert secret in result["messages"][0].content  # the agent's own state is left as it was
    saved = json.dumps(tracer.last_run)
    assert secret not in saved
    assert "[REDACTED:" in saved
    path = tmp_path / "run.json"
    path.write_text(saved, "utf-8")
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert item.trace.task == tracer.traces[0].task
    assert item.trace.steps == tracer.traces[0].steps


def test_the_metadata_keys_set_domain_and_confidence() -> None:
    """``config={"metadata": {"kp.task_domain": ..., "kp.confidence": ...}}`` is read."""
    tracer = lc.tracer(scorer=scorer())
    invoke({"callbacks": [tracer], "metadata": {"kp.task_domain": "code", "kp.confidence": 0.9}})
    trace = tracer.traces[0]
    assert trace.metadata.task_domain == "code"
    assert trace.outcome.confidence == 0.9


def test_a_run_that_raises_is_a_failed_trace_and_the_error_reaches_the_caller() -> None:
    """Without handle_tool_errors the graph raises; the trace is kept with success false."""
    tracer = lc.tracer(scorer=scorer())
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[{"name": "get_weather", "args": {"city": "Pariss"}, "id": "c1"}],
            )
        ]
    )
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        raise ValueError(f"unknown city {city!r}")

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([get_weather], handle_tool_errors=False))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    compiled: Any = graph.compile()
    with pytest.raises(ValueError, match="unknown city"):
        compiled.invoke({"messages": [("user", "Weather?")]}, {"callbacks": [tracer]})
    (trace,) = tracer.traces
    assert step_shape(trace) == [("tool_call", "get_weather"), ("observation", "get_weather")]
    assert trace.metadata.success is False
    assert trace.outcome.confidence == 0.2


def test_a_graph_stopped_by_its_recursion_limit_ends_in_that_error() -> None:
    """GraphRecursionError reaches the caller; the trace's last step says why the run failed."""
    from langchain_core.tools import tool
    from langgraph.errors import GraphRecursionError
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    call = {"name": "get_time", "args": {"city": "Oslo"}}
    model = FakeMessagesListChatModel(
        responses=[AIMessage(content="", tool_calls=[{**call, "id": f"c{n}"}]) for n in range(9)]
    )

    @tool
    def get_time(city: str) -> str:
        """The time in a city."""
        return f"noon in {city}"

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([get_time]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    compiled: Any = graph.compile()
    tracer = lc.tracer(scorer=scorer())
    with pytest.raises(GraphRecursionError):
        compiled.invoke(
            {"messages": [("user", "Time?")]}, {"callbacks": [tracer], "recursion_limit": 5}
        )
    (trace,) = tracer.traces
    last = trace.steps[-1]
    assert last.type == "observation"
    assert last.tool is None
    assert "GraphRecursionError" in (last.content or "")
    assert [step.type for step in trace.steps].count("error_recovery") == 0
    assert trace.metadata.success is False


def test_a_graph_stopped_by_its_recursion_limit_after_a_tool_failed_still_says_why() -> None:
    """The tool's failure, retried, is not why the run stopped: the last step is the limit's."""
    from langgraph.errors import GraphRecursionError

    tracer = lc.tracer(scorer=scorer())
    with pytest.raises(GraphRecursionError):
        invoke({"callbacks": [tracer], "recursion_limit": 4})  # the answer's turn is the 5th
    (trace,) = tracer.traces
    assert step_shape(trace)[:-1] == RETRY_SHAPE[:-1]
    last = trace.steps[-1]
    assert (last.type, last.tool) == ("observation", None)
    assert "GraphRecursionError" in (last.content or "")
    assert trace.metadata.success is False


def test_a_tool_error_that_ends_the_graph_is_told_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool error ToolNode does not handle stops the graph: the tool's step tells it, once."""
    from langgraph.prebuilt import ToolNode

    def raising(tools: list[Any], **_: Any) -> ToolNode:
        return ToolNode(tools, handle_tool_errors=False)

    monkeypatch.setattr(EXAMPLE_MODULE, "ToolNode", raising)
    graph = EXAMPLE_MODULE.build_graph()
    tracer = lc.tracer(scorer=scorer())
    with pytest.raises(ValueError, match="unknown city"):
        graph.invoke({"messages": [("user", EXAMPLE_MODULE.TASK)]}, {"callbacks": [tracer]})
    (trace,) = tracer.traces
    assert step_shape(trace) == RETRY_SHAPE[:3]
    assert trace.metadata.success is False


def test_async_runs_are_traced_too() -> None:
    """``ainvoke`` gives the same steps (the tracer runs inline, in order)."""
    tracer = lc.tracer(scorer=scorer())
    graph = EXAMPLE_MODULE.build_graph()
    coroutine = graph.ainvoke(
        {"messages": [("user", EXAMPLE_MODULE.TASK)]}, config={"callbacks": [tracer]}
    )
    asyncio.run(coroutine)
    assert step_shape(tracer.traces[0]) == RETRY_SHAPE


def test_activate_traces_runs_in_its_context_without_callbacks() -> None:
    """``activate`` (what ``kp.capture`` uses) needs no ``callbacks=``; outside, nothing."""
    collector = Collector(scorer=scorer())
    with lc.activate(collector):
        invoke()
    assert len(collector.captured) == 1
    assert step_shape(collector.traces[0]) == RETRY_SHAPE
    invoke()
    assert len(collector.captured) == 1


def test_kp_capture_records_a_langgraph_run_through_this_hook() -> None:
    """``with kp.capture()`` around a plain ``invoke`` gives the graph's scored trace."""
    from knowledgepulse.integrations.capture import capture

    with capture(domain="weather", scorer=scorer()) as captured:
        invoke()
    (trace,) = captured.traces
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.metadata.task_domain == "weather"


def test_an_agent_called_as_a_tool_is_observed_after_its_own_steps() -> None:
    """A tool that invokes another graph: its result comes after the steps of that graph."""
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    def react(replies: list[AIMessage], tools: list[Any]) -> Any:
        model = FakeMessagesListChatModel(responses=replies)
        graph = StateGraph(MessagesState)
        graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        return graph.compile()

    @tool
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        return f"sunny in {city}"

    call = {"name": "get_weather", "args": {"city": "Oslo"}, "id": "i1"}
    inner = react([AIMessage("", tool_calls=[call]), AIMessage("Oslo: sunny")], [get_weather])

    @tool
    def researcher(question: str) -> str:
        """Ask the research agent."""
        return str(inner.invoke({"messages": [("user", question)]})["messages"][-1].content)

    ask = {"name": "researcher", "args": {"question": "Oslo?"}, "id": "o1"}
    outer = react([AIMessage("", tool_calls=[ask]), AIMessage("Oslo is sunny.")], [researcher])
    with kp.capture(scorer=scorer()) as cap:
        result = outer.invoke({"messages": [("user", "Ask the researcher about Oslo")]})
    (trace,) = cap.traces
    told = [(step.type, step.tool.name if step.tool else None) for step in trace.steps]
    assert told == [
        ("tool_call", "researcher"),
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
        ("observation", "researcher"),
        ("thought", None),
    ]
    assert trace.steps[4].content == result["messages"][2].content  # the researcher's reply
    assert trace.outcome.result_summary == result["messages"][-1].content


def test_a_stream_yielded_from_a_decorated_generator_is_one_trace() -> None:
    """The hooks are on only while a step runs: the stream's later runs still join its trace."""
    graph = EXAMPLE_MODULE.build_graph()

    @kp.capture(scorer=scorer())
    def chunks() -> Iterator[dict[str, Any]]:
        yield from graph.stream({"messages": [("user", EXAMPLE_MODULE.TASK)]})

    updates = list(chunks())
    (trace,) = chunks.kp_capture.traces  # type: ignore[attr-defined]
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.task.objective == EXAMPLE_MODULE.TASK
    assert trace.outcome.result_summary == updates[-1]["agent"]["messages"][-1].content


def test_an_astream_yielded_from_a_decorated_async_generator_is_one_trace() -> None:
    """As for a generator: one run, one trace, whatever the steps the consumer takes."""
    graph = EXAMPLE_MODULE.build_graph()

    @kp.capture(scorer=scorer())
    async def chunks() -> AsyncIterator[dict[str, Any]]:
        async for update in graph.astream({"messages": [("user", EXAMPLE_MODULE.TASK)]}):
            yield update

    async def consume() -> list[dict[str, Any]]:
        return [update async for update in chunks()]

    updates = run_fresh(consume())
    (trace,) = chunks.kp_capture.traces  # type: ignore[attr-defined]
    assert step_shape(trace) == RETRY_SHAPE
    assert trace.outcome.result_summary == updates[-1]["agent"]["messages"][-1].content


def test_a_run_interrupted_for_a_human_is_no_failed_tool_and_no_answer() -> None:
    """``interrupt()`` in a tool pauses the graph: no error, no recovery, no answer, no success."""
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import Command, interrupt

    from knowledgepulse.sources.langchain._runs import INTERRUPTED, PAUSED

    @tool
    def book(city: str) -> str:
        """Book a trip, once a person approves it."""
        return f"booked {city}" if interrupt(f"Book {city}?") == "yes" else "not booked"

    call = {"name": "book", "args": {"city": "Paris"}, "id": "c1"}
    replies = [AIMessage("I will book it.", tool_calls=[call]), AIMessage("Booked.")]
    model = FakeMessagesListChatModel(responses=replies)
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([book]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app: Any = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    with kp.capture(scorer=scorer()) as cap:
        paused = app.invoke({"messages": [("user", "Book me a trip to Paris")]}, config)
        resumed = app.invoke(Command(resume="yes"), config)
    assert paused["__interrupt__"][0].value == "Book Paris?"
    first, second = cap.captured
    told = [(step.type, step.tool.name if step.tool else None) for step in first.trace.steps]
    assert told == [("thought", None), ("tool_call", "book")]
    assert first.trace.metadata.success is False
    assert first.trace.outcome.result_summary == PAUSED
    assert INTERRUPTED in first.item.warnings
    assert second.trace.outcome.result_summary == resumed["messages"][-1].content
    assert second.trace.metadata.success is True


def test_a_capture_entered_again_inside_itself_keeps_each_run_once() -> None:
    """A decorated function calling another of the same capture, or ``with cap`` around one."""
    from knowledgepulse.integrations.capture import capture

    cap = capture(scorer=scorer())

    @cap
    def inner() -> dict[str, Any]:
        return invoke()

    @cap
    def outer() -> dict[str, Any]:
        return inner()

    outer()
    with cap:
        inner()
    with cap, cap:
        invoke()
    assert len(cap.traces) == 3
    assert len({trace.id for trace in cap.traces}) == 3
    invoke()  # every session closed: the hook is off again
    assert len(cap.traces) == 3


def test_a_run_in_a_thread_pool_is_named_when_nothing_is_caught(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A pool thread does not inherit the context: the warning says so and how to pass it."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    from knowledgepulse.integrations.capture import capture

    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        with capture(scorer=scorer()) as lost, ThreadPoolExecutor(1) as pool:
            pool.submit(invoke).result()
        with capture(scorer=scorer()) as kept, ThreadPoolExecutor(1) as pool:
            pool.submit(contextvars.copy_context().run, invoke).result()
    assert lost.traces == []
    assert "ThreadPoolExecutor" in caplog.text
    assert "contextvars.copy_context().run" in caplog.text
    assert len(kept.traces) == 1


def test_nested_activations_give_each_collector_the_run() -> None:
    """An inner activation keeps the outer one: both collectors get the trace once."""
    outer, inner = Collector(scorer=scorer()), Collector(scorer=scorer())
    with lc.activate(outer), lc.activate(inner):
        invoke()
    assert len(outer.captured) == len(inner.captured) == 1


def test_an_on_trace_that_raises_never_breaks_the_run(caplog: pytest.LogCaptureFixture) -> None:
    """A failing ``on_trace`` is logged; the agent's result comes back as usual."""

    def broken(_: ScoredItem) -> None:
        raise RuntimeError("boom")

    tracer = lc.tracer(scorer=scorer(), on_trace=broken)
    with caplog.at_level(logging.ERROR, logger="knowledgepulse.integrations"):
        result = invoke({"callbacks": [tracer]})
    assert result["messages"][-1].content.startswith("It is sunny")
    assert "on_trace raised" in caplog.text
    assert len(tracer.captured) == 1


def nothing(_: int) -> None:
    return None


def test_a_conversion_failure_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A run with nothing in it cannot be a trace: logged, and the runnable still returns."""
    from langchain_core.runnables import RunnableLambda

    tracer = lc.tracer(scorer=scorer())
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        assert RunnableLambda(nothing).invoke(1, {"callbacks": [tracer]}) is None
    assert tracer.captured == []
    (record,) = caplog.records
    assert "could not capture a trace: the trace holds no step" in record.getMessage()
    assert record.levelno == logging.WARNING
    assert record.exc_info is None  # an expected outcome, said in one line: no traceback


def test_a_root_run_left_open_too_long_is_dropped() -> None:
    """A run that never ended (a crashed worker) is let go when a later trace starts."""
    from uuid import uuid4

    from knowledgepulse.integrations.langchain._live import KPTracer

    tracer = KPTracer(scorer=scorer(), max_trace_age_s=0)  # every older open trace is stale
    tracer.on_chain_start({}, {"input": "never ends"}, run_id=uuid4())
    assert len(tracer.run_map) == 1
    invoke({"callbacks": [tracer]})
    assert tracer.run_map == {}
    assert step_shape(tracer.traces[0]) == RETRY_SHAPE


def test_a_tool_error_message_alone_fails_an_unknown_tool_call() -> None:
    """A call to a tool the graph lacks: ToolNode's error message is the evident error."""
    tracer = lc.tracer(scorer=scorer())
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(content="", tool_calls=[{"name": "wether", "args": {}, "id": "c1"}]),
            AIMessage(content="Sorry, I cannot tell."),
        ]
    )
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return "sunny"

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([get_weather]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    compiled: Any = graph.compile()
    compiled.invoke({"messages": [("user", "Weather?")]}, {"callbacks": [tracer]})
    trace = tracer.traces[0]
    # The reply after the error is its recovery (spec rule 2: no later tool call).
    assert step_shape(trace) == [
        ("tool_call", "wether"),
        ("observation", "wether"),
        ("error_recovery", None),
    ]
    assert "wether" in (trace.steps[1].content or "")


class ScriptedToolModel(FakeMessagesListChatModel):
    """The scripted model, accepting tools as a prebuilt agent binds them."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_a_prebuilt_agent_s_sends_are_saved_as_json_without_the_state_s_repr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``Send`` (the graph state, per tool call) is its node and args as JSON, not its repr.

    A LangChain message's repr costs some 300 times its JSON; written per step, the state's
    reprs made a long run's tracing many times slower than the run.
    """
    import warnings

    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent
    from langgraph.types import Send

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"found {query}"

    replies = [
        AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": "a"}, "id": "c1"}]),
        AIMessage(content="Found a."),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # moved to langchain.agents in LangGraph 1.0
        graph: Any = create_react_agent(ScriptedToolModel(responses=replies), [lookup])
    reprs: list[str] = []
    original = Send.__repr__

    def counted(self: Send) -> str:
        reprs.append(self.node)
        return original(self)

    monkeypatch.setattr(Send, "__repr__", counted)
    tracer = lc.tracer(scorer=scorer())
    graph.invoke({"messages": [("user", "Find a")]}, {"callbacks": [tracer]})
    assert reprs == []
    assert tracer.last_run is not None
    sends = [
        output
        for run in runs_of(tracer.last_run)
        for output in as_list(run.get("outputs"))
        if isinstance(output, dict) and output.get("lg_name") == "Send"
    ]
    assert [send["node"] for send in sends] == ["tools"]
    # LangGraph's payload: the tool call with the state, or (prebuilt 0.5, 0.6.5) a list of calls.
    payload = sends[0]["args"]
    calls = payload if isinstance(payload, list) else [payload["tool_call"]]
    assert [call["args"] for call in calls] == [{"query": "a"}]
    assert step_shape(tracer.traces[0]) == [
        ("tool_call", "lookup"),
        ("observation", "lookup"),
        ("thought", None),
    ]
    assert tracer.traces[0].outcome.result_summary == "Found a."


def test_a_run_is_dumped_as_pydantic_dumps_it_each_message_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dump equals each run's pydantic JSON; a message in several runs is one shared dict.

    Every LangGraph node and model run keeps the state so far: dumped again at each, a long
    run's dump grew with the square of its steps.
    """
    from pydantic_core import to_jsonable_python

    from knowledgepulse.integrations.langchain import _live
    from knowledgepulse.sources.langchain import _files

    runs: list[Any] = []
    real_dump = _files.dump_run

    def kept(run: Any, **settings: Any) -> dict[str, Any]:
        runs.append(run)
        return real_dump(run, **settings)

    monkeypatch.setattr(_live, "dump_run", kept)
    tracer = lc.tracer(scorer=scorer())
    invoke({"callbacks": [tracer]})
    assert tracer.last_run is not None
    expected = [
        {**to_jsonable_python(run, fallback=_files._unknown), "child_runs": None}
        for run in live_runs(runs[0])
    ]
    for run in expected:
        run.pop("serialized", None)
    dumped = runs_of(tracer.last_run)
    assert sorted(json.dumps({**run, "child_runs": None}) for run in dumped) == sorted(
        json.dumps(run) for run in expected
    )
    question = [
        message
        for run in dumped
        for message in as_list(run.get("inputs", {}).get("messages"))
        if isinstance(message, dict) and message.get("content") == EXAMPLE_MODULE.TASK
    ]
    assert len(question) > 2
    assert all(message is question[0] for message in question)


def live_runs(run: Any) -> list[Any]:
    """A LangChain run and every run under it."""
    found, stack = [], [run]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.child_runs)
    return found


def runs_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """A dumped run and every run under it."""
    found, stack = [], [run]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current["child_runs"])
    return found


def as_list(value: Any) -> list[Any]:
    """A conditional edge's outputs: ``{"output": [...]}`` or the list itself."""
    if isinstance(value, dict) and "output" in value:
        value = value["output"]
    return value if isinstance(value, list) else [value]


def test_the_example_prints_a_scored_trace_and_saves_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``examples/integrations/langgraph/weather_agent.py`` runs offline and saves a file."""
    path = tmp_path / "runs.json"
    assert EXAMPLE_MODULE.main(["--save", str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [step["type"] for step in printed["steps"]] == [kind for kind, _ in RETRY_SHAPE]
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    assert item.trace.id == printed["id"]


def test_a_missing_langchain_core_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without langchain-core, ``tracer()`` names the extra to install."""
    monkeypatch.setitem(sys.modules, "langchain_core.tracers.base", None)
    with pytest.raises(MissingDependencyError, match=r"pip install -e \"\.\[langchain\]\""):
        lc.tracer()


def test_the_package_reaches_the_module_without_an_import_line() -> None:
    """``kp.integrations.langchain`` is the module these tests use."""
    assert kp.integrations.langchain is lc
