"""A long LangGraph run traced live: milliseconds per step untraced, traced before and now.

    python bench/bench_capture.py                 # 200 tool calls, medians of 3 runs
    python bench/bench_capture.py --steps 400 --repeats 5

The graph is LangGraph's prebuilt ReAct agent over a scripted chat model (offline, no key) that
calls a tool ``--steps`` times, then answers; its conditional edge returns a ``Send`` carrying
the whole state for each tool call. Each repeat runs the graph untraced, under LangChain's own
tracer machinery alone (a ``BaseTracer`` that keeps chat inputs, as ours and LangSmith's do, and
persists nothing: the floor of any LangChain tracer), traced with runs dumped as before (each
run whole by pydantic, a ``Send`` as its ``str()``), and traced as now (a ``Send``'s node and
args as JSON, each object in the runs' inputs and outputs dumped once); medians and ratios come
from one process, so a busy machine slows all four alike. A "step" is one model turn with its
tool call. Both traced runs must give the same trace.

Why: a ``Send``'s repr is the whole state's, and a LangChain message's repr costs some 300 times
its JSON (``Serializable`` compares each field with its default, and pydantic 2.14 inspects the
default factory's signature each time). The same check makes LangChain's own ``dumpd`` of every
chat model's input messages the floor's cost. And LangSmith's run format gives every run the
state so far (some 50 MB of JSON for 200 steps), the same messages dumped again at each step.

Measured on the 2-core development machine (2026-11-29, load 3 to 4), 200 steps, medians of
3 in one run: untraced 6.09 ms/step; LangChain floor 24.65 (4.0x); before 107.89 (17.7x);
now 35.18 (5.8x); before / now 3.07x. Run to run the ratio moved with the load (other runs of
the Send fix alone: 1.35x to 2.74x); our share over the floor went from 83 to 10.5 ms/step.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langchain_core.tracers.base import BaseTracer
from langgraph.prebuilt import create_react_agent
from pydantic_core import to_jsonable_python

from knowledgepulse.integrations import langchain as lc
from knowledgepulse.sources.langchain import _files
from knowledgepulse.value import TraceValueScorer


class ScriptedModel(FakeMessagesListChatModel):
    """The scripted replies, accepting tools as the prebuilt agent binds them."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def replies(steps: int) -> list[BaseMessage]:
    calls = [
        AIMessage(
            content=f"Step {number}: the next record to look up.",
            tool_calls=[
                {"name": "lookup", "args": {"query": f"record {number}"}, "id": f"c{number}"}
            ],
        )
        for number in range(steps)
    ]
    return [*calls, AIMessage(content=f"All {steps} records looked up.")]


def graph(steps: int) -> Any:
    @tool
    def lookup(query: str) -> str:
        """Look a record up."""
        return f"{query}: found, three fields, last changed yesterday."

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # moved to langchain.agents in LangGraph 1.0
        return create_react_agent(ScriptedModel(responses=replies(steps)), [lookup])


def timed_run(steps: int, tracer: Any) -> float:
    config: dict[str, Any] = {"recursion_limit": 4 * steps + 10}
    if tracer is not None:
        config["callbacks"] = [tracer]
    compiled = graph(steps)
    start = time.perf_counter()
    compiled.invoke({"messages": [("user", "Look up every record.")]}, config)
    return time.perf_counter() - start


class TracerFloor(BaseTracer):
    """LangChain's tracer bookkeeping with chat inputs kept, persisting nothing."""

    run_inline = True

    def __init__(self) -> None:
        super().__init__(_schema_format="original+chat")

    def _persist_run(self, run: Any) -> None:
        return None


def old_dump(run: Any, memo: dict[int, Any]) -> dict[str, Any]:
    """A run as ``dump_run`` dumped each before: the whole of it by pydantic, unknowns by str()."""
    dumped: dict[str, Any] = to_jsonable_python(run, fallback=str)
    return dumped


def traced(steps: int, *, before: bool) -> tuple[float, Any]:
    """Seconds of a traced run, with ``dump_run`` as it was ``before`` or as now; its trace."""
    now = _files._dumped
    if before:
        _files._dumped = old_dump
    try:
        tracer = lc.tracer(scorer=TraceValueScorer(embedder=None))
        seconds = timed_run(steps, tracer)
    finally:
        _files._dumped = now
    trace = tracer.traces[0]
    return seconds, trace.model_dump(exclude={"id"}, mode="json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    untraced: list[float] = []
    floor: list[float] = []
    before: list[float] = []
    now: list[float] = []
    for _ in range(args.repeats):
        untraced.append(timed_run(args.steps, None))
        floor.append(timed_run(args.steps, TracerFloor()))
        seconds, old_trace = traced(args.steps, before=True)
        before.append(seconds)
        seconds, new_trace = traced(args.steps, before=False)
        now.append(seconds)
        if strip_times(old_trace) != strip_times(new_trace):
            raise SystemExit("the two traced runs gave different traces")
    plain = statistics.median(untraced)
    for label, seconds in (
        ("untraced", plain),
        ("LangChain floor", statistics.median(floor)),
        ("traced, before", statistics.median(before)),
        ("traced, now", statistics.median(now)),
    ):
        print(
            f"{label:16} {seconds * 1000 / args.steps:8.2f} ms/step  "
            f"{seconds / plain:5.1f}x untraced"
        )
    print(f"before / now: {statistics.median(before) / statistics.median(now):.2f}x")


def strip_times(value: Any) -> Any:
    """A trace's data without its clock readings (each run has its own)."""
    if isinstance(value, dict):
        return {
            key: strip_times(item)
            for key, item in value.items()
            if key not in {"timestamp", "created_at", "latency_ms", "trace_id"}
        }
    if isinstance(value, list):
        return [strip_times(item) for item in value]
    return value


if __name__ == "__main__":
    main()
