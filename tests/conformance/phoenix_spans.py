"""Make real Arize Phoenix span exports: agent runs traced into a local Phoenix server, exported.

Run by hand from the repository root (never by the test suite: it needs a Phoenix server), in a
virtual environment of its own::

    python3.11 -m venv /tmp/phx
    /tmp/phx/bin/pip install arize-phoenix openinference-instrumentation-pydantic-ai \
        pydantic-ai-slim openinference-instrumentation-smolagents smolagents
    PHOENIX_WORKING_DIR=/tmp/phxdata /tmp/phx/bin/phoenix serve &
    /tmp/phx/bin/python tests/conformance/phoenix_spans.py tests/conformance/files/phoenix CASSETTES

No public file holds the rows Phoenix's server makes from the spans it stored (``SOURCES.md``
says what was searched), so these runs make them. The models are scripted (Pydantic AI's
``FunctionModel``; smolagents' ``OpenAIModel`` over a transport that answers with scripted
Chat Completions replies): no network, and the frameworks run their own
loops, call the tools and are traced by OpenInference, whose spans go over OTLP/HTTP to the
server. Each project is then exported as a user does: ``phoenix.client.Client().spans
.get_spans_dataframe(project_identifier=...)``, saved with ``to_parquet`` and with
``to_json(orient="records", lines=True)``; the stack traces of the exception events are cut to
start at ``site-packages/`` (the making machine's folders are no data).

* ``pydantic_ai_runs``: three Pydantic AI runs, three traces in one file: two tools in turn; a
  tool that asks the model to retry (``ModelRetry``), then the call again; a tool that raises,
  which ends the run with the error.
* ``smolagents_tool_error``: a smolagents ``ToolCallingAgent`` whose first tool call raises
  (smolagents hands the error to the model), then a good call and ``final_answer``.
* ``openai_agents_google_model_retry``: the OpenAI Agents SDK, traced by
  ``openinference-instrumentation-openai-agents``, replaying a recording (``CASSETTES`` laid
  out as ``replay_frameworks.py`` says; add ``openai-agents`` and that instrumentor to the
  virtual environment): its tool raises on the first country, the model asks again.
* ``pydantic_ai_bedrock_structured_output``: Pydantic AI replaying a recording likewise: text
  where a typed output was asked for (the agent sends it back), then the output tool.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ENDPOINT = "http://localhost:6006"


def _provider(project: str) -> Any:
    """A tracer provider sending each span to the local Phoenix, under ``project``."""
    from openinference.semconv.resource import ResourceAttributes  # type: ignore[import-not-found]
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
        OTLPSpanExporter,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource({ResourceAttributes.PROJECT_NAME: project})
    provider = TracerProvider(resource=resource)
    return provider, SimpleSpanProcessor(OTLPSpanExporter(f"{ENDPOINT}/v1/traces"))


def pydantic_ai_runs() -> None:
    """Three Pydantic AI runs on a scripted model, traced as OpenInference spans."""
    from openinference.instrumentation.pydantic_ai import (  # type: ignore[import-not-found]
        OpenInferenceSpanProcessor,
    )
    from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    provider, exporter = _provider("kp-pydantic-ai")
    provider.add_span_processor(OpenInferenceSpanProcessor())  # before the export: it rewrites
    provider.add_span_processor(exporter)

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Each reply from what the model has been sent so far (the runs' scripts)."""
        parts = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
        ]
        asked = str(getattr(parts[0], "content", "")) if parts else ""
        returned = [part for part in parts if isinstance(part, ToolReturnPart)]
        if "Lisbon" in asked:
            if not returned:
                return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Lisbon"})])
            if len(returned) == 1:
                return ModelResponse(
                    parts=[
                        TextPart("It is 21 C in Lisbon; converting to Fahrenheit."),
                        ToolCallPart("celsius_to_fahrenheit", {"celsius": 21}),
                    ]
                )
            return ModelResponse(parts=[TextPart("It is 21 C (69.8 F) and sunny in Lisbon.")])
        if "order" in asked:
            if not returned:  # Pydantic AI 2 sends a retry as a failed tool return
                return ModelResponse(parts=[ToolCallPart("find_order", {"order_id": "A-17"})])
            if len(returned) == 1:
                return ModelResponse(parts=[ToolCallPart("find_order", {"order_id": "A17"})])
            return ModelResponse(parts=[TextPart("Order A17 shipped on 3 March.")])
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes/todo.txt"})])

    agent = Agent(
        FunctionModel(script, model_name="scripted"),
        instructions="You are a helpful assistant. Use the tools.",
    )
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"{city}: 21 C, sunny"

    @agent.tool_plain
    def celsius_to_fahrenheit(celsius: float) -> float:
        """Celsius as Fahrenheit."""
        return celsius * 9 / 5 + 32

    @agent.tool_plain
    def find_order(order_id: str) -> str:
        """An order's status by its id (letters then digits, no dash)."""
        if "-" in order_id:
            raise ModelRetry(f"Order ids have no dash: try {order_id.replace('-', '')}")
        return f"order {order_id}: shipped 2026-03-03"

    @agent.tool_plain
    def read_file(path: str) -> str:
        """A file's text."""
        raise PermissionError(f"permission denied: {path}")

    print(agent.run_sync("What is the weather in Lisbon, in Fahrenheit?").output)
    print(agent.run_sync("Where is my order A-17?").output)
    try:
        agent.run_sync("Summarise my notes in notes/todo.txt")
    except PermissionError as error:
        print("third run failed:", error)
    provider.shutdown()


def smolagents_run() -> None:
    """A smolagents ToolCallingAgent whose first tool call fails, on a scripted OpenAI model.

    smolagents' own ``OpenAIModel`` (so that OpenInference traces its model calls too) is given
    an OpenAI client whose transport answers each Chat Completions request with the next
    scripted reply: no network.
    """
    import httpx2
    from openinference.instrumentation.smolagents import (  # type: ignore[import-not-found]
        SmolagentsInstrumentor,
    )
    from smolagents import OpenAIModel, ToolCallingAgent, tool

    provider, exporter = _provider("kp-smolagents")
    provider.add_span_processor(exporter)
    SmolagentsInstrumentor().instrument(tracer_provider=provider)

    @tool  # type: ignore[untyped-decorator]
    def convert_currency(amount: float, currency: str) -> str:
        """Converts an amount of euros into another currency.

        Args:
            amount: the amount in euros.
            currency: the ISO code of the currency to convert to.
        """
        rates = {"USD": 1.08, "GBP": 0.85}
        if currency not in rates:
            raise ValueError(f"unknown currency {currency!r}; known: {', '.join(rates)}")
        return f"{amount * rates[currency]:.2f} {currency}"

    calls = iter(
        [
            (
                "I will convert the amount.",
                "convert_currency",
                {"amount": 120, "currency": "dollars"},
            ),
            (
                "The currency needs its ISO code.",
                "convert_currency",
                {"amount": 120, "currency": "USD"},
            ),
            ("", "final_answer", {"answer": "120 euros are 129.60 US dollars."}),
        ]
    )

    def answer(request: Any) -> Any:
        """The next scripted reply, as the Chat Completions API writes one."""
        text, name, arguments = next(calls)
        call = {
            "id": f"call_{name}_{len(request.content)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        message = {"role": "assistant", "content": text or None, "tool_calls": [call]}
        body = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
        return httpx2.Response(200, json=body)

    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    model = OpenAIModel("gpt-4o-mini", api_key="-", client_kwargs={"http_client": client})
    agent = ToolCallingAgent(tools=[convert_currency], model=model, max_steps=5)
    print(agent.run("How much is 120 euros in US dollars?"))
    SmolagentsInstrumentor().uninstrument()
    provider.shutdown()


def openai_agents_run(cassettes: Path) -> None:
    """The Agents SDK's retry of ``get_capital`` (a recording of pydantic-ai's: the tool raises on
    "France", the model asks again with "La France"), traced by OpenInference into Phoenix.

    The recorded Gemini replies are served as Chat Completions replies to the SDK's own OpenAI
    client (``replay_frameworks.transport``): no network. The SDK's default processor (which
    would send its traces to OpenAI) is removed first; OpenInference's is the only one.
    """
    import agents
    from agents import Runner
    from openinference.instrumentation.openai_agents import (  # type: ignore[import-not-found]
        OpenAIAgentsInstrumentor,
    )
    from replay_frameworks import retrying_chatbot  # type: ignore[import-not-found]

    provider, exporter = _provider("kp-openai-agents")
    provider.add_span_processor(exporter)
    agents.set_trace_processors([])
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    chatbot = retrying_chatbot(cassettes)
    print(asyncio.run(Runner.run(chatbot, "What is the capital of France?")).final_output)
    OpenAIAgentsInstrumentor().uninstrument()
    provider.shutdown()


def pydantic_ai_replayed_run(cassettes: Path) -> None:
    """pydantic-ai's Bedrock structured-output recording (amazon.nova-micro: a ``temperature``
    call, then text where the typed output was asked for, which the agent rejects, then the
    output tool) through Pydantic AI, its spans given OpenInference's attributes, into Phoenix.
    """
    import httpx2
    from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from replay_frameworks import (
        BEDROCK_OUTPUT,
        temperature_agent,
        transport,
    )

    provider, exporter = _provider("kp-pydantic-ai-replayed")
    provider.add_span_processor(OpenInferenceSpanProcessor())  # before the export: it rewrites
    provider.add_span_processor(exporter)
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    client = httpx2.AsyncClient(
        transport=httpx2.MockTransport(transport(cassettes / BEDROCK_OUTPUT))
    )
    model = OpenAIChatModel(
        "us.amazon.nova-micro-v1:0", provider=OpenAIProvider(api_key="-", http_client=client)
    )
    agent = temperature_agent(model)
    print(agent.run_sync("What was the temperature in London 1st January 2022?").output)
    provider.shutdown()


def export(project: str, target: Path) -> None:
    """A project's spans as a user exports them: the client's dataframe, Parquet and JSON Lines."""
    from phoenix.client import Client  # type: ignore[import-not-found]

    frame = Client(base_url=ENDPOINT).spans.get_spans_dataframe(project_identifier=project)
    frame["events"] = frame["events"].map(_without_home)
    frame.to_parquet(target.with_suffix(".parquet"))
    frame.to_json(target.with_suffix(".jsonl"), orient="records", lines=True)
    print(f"{project}: {len(frame)} spans -> {target}.{{parquet,jsonl}}")


_HOMES = (
    (re.compile(r'File "[^"]*/site-packages/'), 'File "site-packages/'),
    (re.compile(r'File "[^"]*/(lib/python3\.\d+/)'), r'File "\1'),
    (re.compile(r'File "[^"]*/(tests/conformance/)'), r'File "\1'),
)
"""Where the making machine kept Python, the virtual environment and this repository."""


def _without_home(events: Any) -> Any:
    """A span's events with the stack traces' paths cut to start at ``site-packages/``,
    ``lib/python3.N/`` or ``tests/conformance/`` (the making machine's folders are no data)."""
    for event in events:
        attributes = event.get("attributes") or {}
        trace = attributes.get("exception.stacktrace")
        if isinstance(trace, str):
            for pattern, replacement in _HOMES:
                trace = pattern.sub(replacement, trace)
            attributes["exception.stacktrace"] = trace
    return events


def main(folder: Path, cassettes: Path) -> None:
    """Trace the runs, let the server store them, export each project."""
    pydantic_ai_runs()
    smolagents_run()
    openai_agents_run(cassettes)
    pydantic_ai_replayed_run(cassettes)
    time.sleep(3)  # the server writes spans to its database in batches
    export("kp-pydantic-ai", folder / "pydantic_ai_runs")
    export("kp-smolagents", folder / "smolagents_tool_error")
    export("kp-openai-agents", folder / "openai_agents_google_model_retry")
    export("kp-pydantic-ai-replayed", folder / "pydantic_ai_bedrock_structured_output")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
