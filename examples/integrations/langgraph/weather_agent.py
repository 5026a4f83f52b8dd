"""A LangGraph agent, run offline with a scripted chat model, scored with one line.

The graph is the usual ReAct loop (a model node, a ``ToolNode``, ``tools_condition``). The model
is LangChain's ``FakeMessagesListChatModel``: it calls ``get_weather`` with a misspelt city (the
tool raises; ``ToolNode`` hands the model the error), calls it again, then answers. No network,
no key.

    python examples/integrations/langgraph/weather_agent.py               # print the scored trace
    python examples/integrations/langgraph/weather_agent.py --save runs.json
    kp convert --from langsmith runs.json                                  # the same, from the file

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings,langchain]" "langgraph>=0.5"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import knowledgepulse as kp

TASK = "What is the weather in Paris today?"


def scripted_replies() -> list[BaseMessage]:
    """What a real model might answer at each turn of this run."""
    return [
        AIMessage(
            content="The user wants today's weather in Paris; the weather tool knows it.",
            tool_calls=[{"name": "get_weather", "args": {"city": "Pariss"}, "id": "call_1"}],
        ),
        AIMessage(
            content="I misspelt the city; retrying with 'Paris'.",
            tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_2"}],
        ),
        AIMessage(content="It is sunny in Paris today, 21 °C."),
    ]


def build_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """A ReAct graph over a scripted model and a tool that fails on an unknown city."""
    model = FakeMessagesListChatModel(responses=scripted_replies())

    @tool
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        if city != "Paris":
            raise ValueError(f"unknown city {city!r}")
        return "sunny, 21 °C"

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([get_weather], handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def main(argv: list[str] | None = None) -> int:
    """Run the agent once, print its scored trace, and optionally save its runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="also write the LangSmith-style run JSON here")
    args = parser.parse_args(argv)

    tracer = kp.integrations.langchain.tracer(domain="weather")
    build_graph().invoke({"messages": [("user", TASK)]}, config={"callbacks": [tracer]})

    captured = tracer.captured[-1]
    print(captured.trace.model_dump_json(by_alias=True, exclude_none=True, indent=2))
    print(f"score {captured.breakdown.score:.4f}", file=sys.stderr)
    if args.save:
        # The finished run, as LangSmith keeps it (child_runs nested): `kp convert` reads it.
        run = tracer.last_run
        args.save.write_text(json.dumps(run, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
