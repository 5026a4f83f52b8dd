"""Make MLflow Tracing exports: tool-calling agents traced by MLflow, each trace as MLflow dumps it.

Run by hand from the repository root (never by the test suite), in a virtual environment of its
own, with the cassettes laid out as ``replay_frameworks.py`` says::

    python3.11 -m venv /tmp/mlf
    /tmp/mlf/bin/pip install mlflow-skinny openai pyyaml sqlparse
    MLFLOW_ALLOW_FILE_STORE=true MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false \
        /tmp/mlf/bin/python tests/conformance/mlflow_traces.py CASSETTES

No public file under a licence holds an MLflow trace dump of an agent run (``SOURCES.md`` says
what was searched), so these runs make them. Each agent is the tool-calling loop MLflow's
tracing guide writes: an ``@mlflow.trace(span_type=SpanType.AGENT)`` function that calls the
OpenAI Chat Completions client (traced by ``mlflow.openai.autolog()``: a ``CHAT_MODEL`` span a
call, its messages and tools in ``mlflow.chat.*``) and runs the tools the model asks for, each an
``@mlflow.trace(span_type=SpanType.TOOL)`` function. The model replies are those public VCR
cassettes recorded, served in order through an ``httpx2.MockTransport`` (``replay_frameworks``'s
``transport``): no network. Each trace is then fetched as a user does, ``mlflow.get_trace(id)``,
and written with ``Trace.to_json()``; the stack traces of the exception events are cut to start at
``site-packages/`` or ``tests/conformance/`` (the making machine's folders are no data).

* ``openai_agent_google_model_retry.json``: one trace (``to_json()`` as it is): ``get_capital``
  raises on "France" (an ERROR tool span), the agent hands the error to the model, which asks for
  "La France", then answers.
* ``openai_agent_tool_raises.json``: one trace whose tool error is not caught: the run ends in the
  exception (trace state ERROR, the agent span ERROR).
* ``openai_agent_runs.jsonl``: JSON Lines, a trace a line: the two runs above and the temperature
  recording (one call, then the answer).

Run under MLflow 2 (``pip install "mlflow-skinny<3" "opentelemetry-sdk<1.34"``), the three runs
are written in MLflow 2's form as one JSON list, ``mlflow2_openai_agent_runs.json``. With
``--otlp`` after ``CASSETTES``, the retry run's spans are sent by MLflow's OTLP exporter to a
local endpoint instead, and written as OTLP JSON (``files/otlp/mlflow_*.json``).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay_frameworks import GOOGLE_RETRY, TEMPERATURE, transport  # type: ignore[import-not-found]

OUT = Path(__file__).parent / "files" / "mlflow"
ROOT = Path(__file__).parents[2]
STORE = Path("/tmp/mlflow-traces-runs")
"""The local file store the runs are kept in: a scratch folder, written ``/mlruns`` in the dumps."""

CAPITAL_TOOL = {
    "type": "function",
    "function": {
        "name": "get_capital",
        "description": "Get the capital of a country.",
        "parameters": {
            "type": "object",
            "properties": {"country": {"type": "string", "description": "The country name."}},
            "required": ["country"],
            "additionalProperties": False,
        },
    },
}
TEMPERATURE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_temperature",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def _client(cassette: Path) -> Any:
    import httpx2
    import openai

    http = httpx2.Client(transport=httpx2.MockTransport(transport(cassette)))
    return openai.OpenAI(api_key="replayed", http_client=http)


def _agent(
    client: Any,
    model: str,
    system: str,
    tools: list[dict[str, Any]],
    functions: dict[str, Callable[..., Any]],
    *,
    hand_back_errors: bool,
) -> Callable[[str], str]:
    """MLflow's tool-calling agent: ask the model, run the tools it asks for, until it answers."""
    import mlflow  # type: ignore[import-not-found]
    from mlflow.entities import SpanType  # type: ignore[import-not-found]

    @mlflow.trace(span_type=SpanType.AGENT)  # type: ignore[untyped-decorator]
    def run(question: str) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ]
        while True:
            reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
            message = reply.choices[0].message
            if not message.tool_calls:
                return str(message.content)
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                arguments = json.loads(call.function.arguments)
                try:
                    result = functions[call.function.name](**arguments)
                except ValueError as error:
                    if not hand_back_errors:
                        raise
                    result = f"Error: {error}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})

    return run  # type: ignore[no-any-return]


def _traced_tools() -> dict[str, Callable[..., Any]]:
    import mlflow
    from mlflow.entities import SpanType

    @mlflow.trace(span_type=SpanType.TOOL)  # type: ignore[untyped-decorator]
    def get_capital(country: str) -> str:
        """The recording's tool: only "La France" is known (the model must ask again)."""
        if country == "La France":
            return "Paris"
        raise ValueError('The country is not supported. Use "La France" instead.')

    @mlflow.trace(span_type=SpanType.TOOL)  # type: ignore[untyped-decorator]
    def get_temperature(city: str) -> float:
        return 20.0

    return {"get_capital": get_capital, "get_temperature": get_temperature}


def _dumped(trace_id: str) -> str:
    """The trace as MLflow gives it back, its stack traces' folders cut."""
    import mlflow

    text = mlflow.get_trace(trace_id).to_json().replace(str(ROOT) + "/", "")
    text = text.replace(f"file://{STORE}/", "file:///mlruns/")  # the scratch store's folder
    return re.sub(r'[^"\s\\]*/site-packages/', "site-packages/", text)


def main(cassettes: Path) -> None:
    import mlflow

    mlflow.set_tracking_uri(f"file://{STORE}")
    mlflow.set_experiment("kp-mlflow-traces")
    mlflow.openai.autolog()
    tools = _traced_tools()
    dumps: list[str] = []

    retry = _agent(
        _client(cassettes / GOOGLE_RETRY),
        "gemini-2.5-pro",
        "You are a helpful chatbot.",
        [CAPITAL_TOOL],
        tools,
        hand_back_errors=True,
    )
    retry("What is the capital of France?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    raising = _agent(
        _client(cassettes / GOOGLE_RETRY),
        "gemini-2.5-pro",
        "You are a helpful chatbot.",
        [CAPITAL_TOOL],
        tools,
        hand_back_errors=False,
    )
    # The run ends in the tool's error, as an agent that does not catch it does.
    with contextlib.suppress(ValueError):
        raising("What is the capital of France?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    temperature = _agent(
        _client(cassettes / TEMPERATURE),
        "gpt-4.1-mini",
        "You are a helpful assistant.",
        [TEMPERATURE_TOOL],
        tools,
        hand_back_errors=True,
    )
    temperature("What is the temperature in Tokyo?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    OUT.mkdir(parents=True, exist_ok=True)
    if mlflow.__version__.startswith("2."):
        # MLflow 2's form (request_id, status, request_metadata; spans with context): the
        # three traces as one JSON list, as a user keeps a list of get_trace(...) dumps.
        listed = ",\n".join(dumps)
        (OUT / "mlflow2_openai_agent_runs.json").write_text(f"[\n{listed}\n]\n")
    else:
        (OUT / "openai_agent_google_model_retry.json").write_text(dumps[0] + "\n")
        (OUT / "openai_agent_tool_raises.json").write_text(dumps[1] + "\n")
        (OUT / "openai_agent_runs.jsonl").write_text("".join(dump + "\n" for dump in dumps))
    print(f"wrote {len(dumps)} traces to {OUT.relative_to(ROOT)}")


def _collector() -> tuple[str, list[dict[str, Any]]]:
    """A local OTLP/HTTP endpoint keeping each request it is sent, decoded, and its URL."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # type: ignore[import-not-found]
        ExportTraceServiceRequest,
    )

    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest.FromString(body)
            received.append(MessageToDict(request))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/v1/traces", received


def _hex_ids(document: dict[str, Any]) -> dict[str, Any]:
    """OTLP's JSON encoding: ids in hex, as a collector's file exporter writes them (protobuf's
    JSON mapping, ``MessageToDict``, writes bytes in base64)."""
    import base64

    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return document


def otlp_main(cassettes: Path, *, genai_semconv: bool = False, langgraph: bool = False) -> None:
    """The retry run again, its spans sent by MLflow's OTLP exporter to a local endpoint.

    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set, MLflow 3 sends its spans over OTLP/HTTP instead of
    to the tracking store; what it sent is written as the collector's file exporter writes OTLP
    JSON (``files/otlp/mlflow_openai_agent_google_model_retry.json``). With ``genai_semconv``
    (``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true``, MLflow 3.17's translator), the spans are sent in
    the GenAI semantic conventions instead of ``mlflow.*``: ``invoke_agent`` / ``chat`` /
    ``execute_tool`` operations, ``gen_ai.input.messages`` / ``gen_ai.output.messages``
    (``files/otlp/mlflow_genai_semconv_openai_agent_google_model_retry.json``). With
    ``langgraph``, the run is ``langgraph_main``'s, traced by ``mlflow.langchain.autolog()``
    (``files/otlp/mlflow_genai_semconv_langgraph_google_model_retry.json``).
    """
    import os

    endpoint, received = _collector()
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = endpoint
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    if genai_semconv:
        os.environ["MLFLOW_ENABLE_OTEL_GENAI_SEMCONV"] = "true"
    import mlflow

    if langgraph:
        mlflow.langchain.autolog()
        _langgraph(cassettes).invoke({"messages": [("user", "What is the capital of France?")]})
    else:
        mlflow.openai.autolog()
        retry = _agent(
            _client(cassettes / GOOGLE_RETRY),
            "gemini-2.5-pro",
            "You are a helpful chatbot.",
            [CAPITAL_TOOL],
            _traced_tools(),
            hand_back_errors=True,
        )
        retry("What is the capital of France?")
    mlflow.flush_trace_async_logging()
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if hasattr(provider, "force_flush"):
        provider.force_flush()
    from mlflow.tracing.provider import provider as mlflow_provider  # type: ignore[import-not-found]

    mlflow_provider.get().force_flush()  # MLflow's own provider: its batch processor sends now
    documents = [_hex_ids(document) for document in received]
    text = json.dumps(documents[0] if len(documents) == 1 else documents, indent=1)
    text = re.sub(r'[^"\s\\]*/site-packages/', "site-packages/", text.replace(str(ROOT) + "/", ""))
    prefix = "mlflow_genai_semconv_" if genai_semconv else "mlflow_"
    agent = "langgraph" if langgraph else "openai_agent"
    path = OUT.parent / "otlp" / f"{prefix}{agent}_google_model_retry.json"
    path.write_text(text + "\n")
    print(f"wrote {len(documents)} OTLP requests to {path.relative_to(ROOT)}")


def langgraph_main(cassettes: Path) -> None:
    """LangGraph's ReAct agent (``create_react_agent`` over ``langchain_openai.ChatOpenAI``)
    traced by ``mlflow.langchain.autolog()``, served the ``get_capital`` retry: MLflow's own
    spans of LangChain's callbacks (``LangGraph`` and its nodes ``CHAIN``, ``ChatOpenAI``
    ``CHAT_MODEL``, ``get_capital`` ``TOOL``), fetched and dumped as the other traces
    (``files/mlflow/langgraph_google_model_retry.json``)."""
    import mlflow

    mlflow.set_tracking_uri(f"file://{STORE}")
    mlflow.set_experiment("kp-mlflow-traces")
    mlflow.langchain.autolog()
    _langgraph(cassettes).invoke({"messages": [("user", "What is the capital of France?")]})
    path = OUT / "langgraph_google_model_retry.json"
    path.write_text(_dumped(str(mlflow.get_last_active_trace_id())) + "\n")
    print(f"wrote 1 trace to {path.relative_to(ROOT)}")


def _scrubbed(value: Any) -> Any:
    """Every text in a JSON value with the making machine's folders cut, as ``_dumped`` does."""
    if isinstance(value, str):
        text = value.replace(str(ROOT) + "/", "").replace(f"file://{STORE}/", "file:///mlruns/")
        return re.sub(r'[^"\s\\]*/site-packages/', "site-packages/", text)
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    if isinstance(value, dict):
        return {key: _scrubbed(item) for key, item in value.items()}
    return value


def search_main(cassettes: Path) -> None:
    """The retry and the temperature runs again, in an experiment of their own, then fetched as
    ``mlflow.search_traces()`` gives them: its dataframe (a row a trace: ``trace_id``, the whole
    trace as JSON text in ``trace``, ``request``, ``response``, ``spans``...) saved by pandas
    as JSON Lines of records (``files/mlflow/search_traces_records.jsonl``) and by its default,
    by columns (``files/mlflow/search_traces_columns.json``)."""
    import mlflow

    mlflow.set_tracking_uri(f"file://{STORE}")
    experiment = mlflow.set_experiment("kp-mlflow-search-traces")
    mlflow.openai.autolog()
    tools = _traced_tools()
    for cassette, model, system, tool, question in (
        (GOOGLE_RETRY, "gemini-2.5-pro", "You are a helpful chatbot.", CAPITAL_TOOL,
         "What is the capital of France?"),
        (TEMPERATURE, "gpt-4.1-mini", "You are a helpful assistant.", TEMPERATURE_TOOL,
         "What is the temperature in Tokyo?"),
    ):  # fmt: skip
        _agent(_client(cassettes / cassette), model, system, [tool], tools, hand_back_errors=True)(
            question
        )
    frame = mlflow.search_traces(experiment_ids=[experiment.experiment_id])
    lines = frame.to_json(orient="records", lines=True).splitlines()
    records = "".join(json.dumps(_scrubbed(json.loads(line))) + "\n" for line in lines)
    (OUT / "search_traces_records.jsonl").write_text(records)
    columns = _scrubbed(json.loads(frame.to_json()))
    (OUT / "search_traces_columns.json").write_text(json.dumps(columns, indent=1) + "\n")
    print(f"wrote {len(frame)} traces twice to {OUT.relative_to(ROOT)}/search_traces_*")


def agents_main(cassettes: Path) -> None:
    """The OpenAI Agents SDK's chatbot (``replay_frameworks.retrying_chatbot``: its
    ``get_capital`` raises on "France", the SDK hands the error text back to the model) traced
    by ``mlflow.openai.autolog()``, which sets MLflow's own processor of the SDK's traces: the
    SDK's agent, generation and function spans as MLflow spans
    (``files/mlflow/openai_agents_sdk_google_model_retry.json``)."""
    import asyncio

    import mlflow
    from agents import Runner
    from replay_frameworks import retrying_chatbot

    mlflow.set_tracking_uri(f"file://{STORE}")
    mlflow.set_experiment("kp-mlflow-traces")
    mlflow.openai.autolog()
    asyncio.run(Runner.run(retrying_chatbot(cassettes), "What is the capital of France?"))
    path = OUT / "openai_agents_sdk_google_model_retry.json"
    path.write_text(_dumped(str(mlflow.get_last_active_trace_id())) + "\n")
    print(f"wrote 1 trace to {path.relative_to(ROOT)}")


def pydantic_ai_main(cassettes: Path) -> None:
    """Pydantic AI's agent (``OpenAIChatModel``, served the ``get_capital`` retry: its tool
    raises ``ModelRetry`` on "France", which Pydantic AI hands back to the model as a retry
    prompt) traced by ``mlflow.pydantic_ai.autolog()`` (made on 4 December 2026 in an
    environment of its own: ``mlflow-skinny`` 3.x, ``pydantic-ai-slim[openai]``, ``httpx2``):
    ``files/mlflow/pydantic_ai_google_model_retry.json``."""
    import asyncio

    import httpx2
    import mlflow
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    mlflow.set_tracking_uri(f"file://{STORE}")
    mlflow.set_experiment("kp-mlflow-traces")
    mlflow.pydantic_ai.autolog()
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport(cassettes / GOOGLE_RETRY)))
    model = OpenAIChatModel(
        "gemini-2.5-pro", provider=OpenAIProvider(api_key="-", http_client=client)
    )
    agent: Agent[None, str] = Agent(model, system_prompt="You are a helpful chatbot.", retries=2)

    @agent.tool_plain
    async def get_capital(country: str) -> str:
        """Get the capital of a country.

        Args:
            country: The country name.
        """
        if country == "La France":
            return "Paris"
        raise ModelRetry('The country is not supported. Use "La France" instead.')

    asyncio.run(agent.run("What is the capital of France?"))
    path = OUT / "pydantic_ai_google_model_retry.json"
    path.write_text(_dumped(str(mlflow.get_last_active_trace_id())) + "\n")
    print(f"wrote 1 trace to {path.relative_to(ROOT)}")


def _langgraph(cassettes: Path) -> Any:
    """LangGraph's ReAct agent over ``ChatOpenAI``, served the ``get_capital`` retry; the tool
    raises ``ToolException`` on "France", whose text ``ToolNode`` hands back to the model."""
    import httpx2
    from langchain_core.tools import ToolException, tool
    from langchain_openai import ChatOpenAI  # type: ignore[import-not-found]
    from langgraph.prebuilt import create_react_agent
    from replay_frameworks import _capital

    @tool("get_capital")
    def get_capital(country: str) -> str:
        """Get the capital of a country.

        Args:
            country: The country name.
        """
        return str(_capital(country, ToolException))

    get_capital.handle_tool_error = True  # the error text goes back to the model
    client = httpx2.Client(transport=httpx2.MockTransport(transport(cassettes / GOOGLE_RETRY)))
    llm = ChatOpenAI(model="gemini-2.5-pro", api_key="-", http_client=client)
    return create_react_agent(llm, [get_capital], prompt="You are a helpful chatbot.")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    if sys.argv[2:] == ["--otlp"]:
        otlp_main(Path(sys.argv[1]))
    elif sys.argv[2:] == ["--genai-semconv"]:
        otlp_main(Path(sys.argv[1]), genai_semconv=True)
    elif sys.argv[2:] == ["--langgraph-genai-semconv"]:
        otlp_main(Path(sys.argv[1]), genai_semconv=True, langgraph=True)
    elif sys.argv[2:] == ["--agents-sdk"]:
        agents_main(Path(sys.argv[1]))
    elif sys.argv[2:] == ["--search-traces"]:
        search_main(Path(sys.argv[1]))
    elif sys.argv[2:] == ["--langgraph"]:
        langgraph_main(Path(sys.argv[1]))
    elif sys.argv[2:] == ["--pydantic-ai"]:
        pydantic_ai_main(Path(sys.argv[1]))
    else:
        main(Path(sys.argv[1]))
