"""A Pydantic AI agent traced with OpenTelemetry, captured and scored by knowledgepulse, offline.

The model is scripted (Pydantic AI's ``FunctionModel``): no network, no key. Its weather tool
fails once (``ModelRetry``), the model asks again, the tool answers, the model replies. Run::

    python examples/integrations/otel/pydantic_ai_agent.py

It prints the scored ``ReasoningTrace`` (JSON) and the score; the failed call is an observation
carrying the error and the retry is an ``error_recovery`` step.

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings,otel]" "pydantic-ai-slim>=1.0"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import knowledgepulse as kp

trace.set_tracer_provider(TracerProvider())  # your app's OTel setup, exporters and all
collector = kp.integrations.otel.install(domain="weather")  # the one line

attempts: list[str] = []


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Ask for the weather until the tool answers, then reply with it."""
    last = messages[-1].parts[-1]
    if last.part_kind == "tool-return" and last.outcome == "success":
        return ModelResponse(parts=[TextPart(f"It is {last.content} in Paris today.")])
    call = ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id=f"call_{len(messages)}")
    return ModelResponse(parts=[TextPart("I will ask the weather service."), call])


agent = Agent(FunctionModel(scripted_model), name="weather_agent")
Agent.instrument_all()  # Pydantic AI emits GenAI spans on the global tracer provider


@agent.tool_plain
def get_weather(city: str) -> str:
    """The weather in a city (the service is busy on the first try)."""
    attempts.append(city)
    if len(attempts) == 1:
        raise ModelRetry("the weather service is busy, try again")
    return "rainy, 14 °C"


if __name__ == "__main__":
    result = agent.run_sync("What is the weather in Paris?")
    captured = collector.captured[-1]
    print(captured.trace.model_dump_json(by_alias=True, exclude_none=True, indent=2))
    print(f"score {captured.breakdown.score:.3f}; answer: {result.output}")
