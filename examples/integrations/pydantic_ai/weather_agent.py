"""A Pydantic AI agent, run offline with a scripted model, scored with one line.

The model is a ``FunctionModel``: it thinks, calls ``get_weather`` (which fails once with
``ModelRetry``), calls it again, then answers. No network, no key.

    python examples/integrations/pydantic_ai/weather_agent.py            # print the scored trace
    python examples/integrations/pydantic_ai/weather_agent.py --save messages.json
    kp convert --from pydantic-ai messages.json                          # the same, from the file

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings]" "pydantic-ai-slim>=1.0"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import knowledgepulse as kp


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What a real model might answer at each turn of this run."""
    turn = sum(1 for message in messages if message.kind == "response")
    if turn == 0:
        return ModelResponse(
            parts=[
                ThinkingPart("The user wants today's weather in Paris; the tool knows it."),
                ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_1"),
            ]
        )
    if turn == 1:
        return ModelResponse(
            parts=[
                TextPart("The weather service timed out; trying once more."),
                ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_2"),
            ]
        )
    return ModelResponse(parts=[TextPart("It is sunny in Paris, 24 °C.")])


def build_agent() -> Agent[None, str]:
    """An agent with one tool that fails on its first call."""
    agent = Agent(FunctionModel(scripted_model), system_prompt="Answer weather questions.")
    calls = {"count": 0}

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        calls["count"] += 1
        if calls["count"] == 1:
            raise ModelRetry("the weather service timed out, try again")
        return f"sunny, 24 °C in {city}"

    return agent


def main() -> None:
    """Run the agent, score its trace, print it (and save the messages when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the run's messages JSON here")
    args = parser.parse_args()

    result = build_agent().run_sync("What is the weather in Paris today?")
    if args.save:
        args.save.write_bytes(ModelMessagesTypeAdapter.dump_json(result.all_messages(), indent=2))

    converted = kp.integrations.pydantic_ai.to_trace(result.all_messages(), domain="default")
    breakdown = kp.score_trace(converted.trace)
    print(
        json.dumps(
            converted.trace.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2
        )
    )
    print(f"score {breakdown.score:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
