"""A smolagents ToolCallingAgent, run offline with a scripted model, scored with one line.

The model is a ``Model`` subclass answering from a script: it calls ``get_weather`` (which raises
on its first call), calls it again, then gives the final answer. No network, no key.

    python examples/integrations/smolagents/weather_agent.py             # print the scored trace
    python examples/integrations/smolagents/weather_agent.py --save steps.json
    kp convert --from smolagents steps.json                              # the same, from the file

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings]" "smolagents>=1.20"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from smolagents import Model, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)

import knowledgepulse as kp

SCRIPT = [
    ("I will ask the weather tool about Paris.", "get_weather", {"city": "Paris"}),
    ("The weather service timed out; trying once more.", "get_weather", {"city": "Paris"}),
    (None, "final_answer", {"answer": "It is sunny in Paris, 24 °C."}),
]


class ScriptedModel(Model):  # type: ignore[misc]
    """A model that answers each turn from SCRIPT with one tool call."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        self.turn = 0

    def generate(self, messages: Any, stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        """The next scripted answer."""
        text, name, arguments = SCRIPT[self.turn]
        self.turn += 1
        call = ChatMessageToolCall(
            id=f"call_{self.turn}",
            type="function",
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content=text, tool_calls=[call])


CALLS = {"count": 0}


@tool  # type: ignore[untyped-decorator]
def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: the city's name.
    """
    CALLS["count"] += 1
    if CALLS["count"] == 1:
        raise RuntimeError("the weather service timed out")
    return f"sunny, 24 °C in {city}"


def main() -> None:
    """Run the agent, score its trace, print it (and save the steps when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the run's steps (JSON) here")
    args = parser.parse_args()

    agent = ToolCallingAgent(tools=[get_weather], model=ScriptedModel(), verbosity_level=-1)
    result = agent.run("What is the weather in Paris today?", return_full_result=True)
    if args.save:
        steps = agent.memory.get_succinct_steps()  # without the prompts sent to the model
        args.save.write_text(json.dumps(steps, indent=2, ensure_ascii=False, default=str) + "\n")

    converted = kp.integrations.smolagents.to_trace(result, domain="default")
    breakdown = kp.score_trace(converted.trace)
    print(
        json.dumps(
            converted.trace.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2
        )
    )
    print(f"score {breakdown.score:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
