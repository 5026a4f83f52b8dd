"""Observability tools' exports: Langfuse, Arize Phoenix, Jaeger, Tempo, OTel JS spans.

The fixtures in data/<tool>/ are small files in each tool's documented export shape (see the
SOURCES.md beside them); each is a run with a failed tool call and its retry, or a plain answer.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.cli.main import cli
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._envelope import PLACEHOLDER, PLACEHOLDER_OBJECTIVE
from knowledgepulse.sources._registry import detect, get_source, source_names
from knowledgepulse.sources.otel.spans import dotted
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import CORPUS, convert_file, langfuse_fetched, recognise, source_of

DATA = Path(__file__).parent / "data"
EXPORTS = ("langfuse", "phoenix", "jaeger", "otel-js", "mlflow")


def steps(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def only(path: Path, source: str = "auto") -> TraceItem:
    items = list(convert_file(path, source=source))
    assert [item for item in items if isinstance(item, Problem)] == []
    (trace,) = items
    assert isinstance(trace, TraceItem)
    return trace


def answers(trace: ReasoningTrace) -> int:
    summary = trace.outcome.result_summary
    return sum(
        step.type in ("thought", "error_recovery") and step.content == summary
        for step in trace.steps
    )


RETRY = [
    ("tool_call", "get_weather"),
    ("observation", "get_weather"),
    ("error_recovery", "get_weather"),
    ("observation", "get_weather"),
    ("thought", None),
]


@pytest.mark.parametrize(
    ("path", "source", "trace_id", "objective", "answer", "tool"),
    [
        (
            "langfuse/weather_agent_export.json",
            "langfuse",
            "5b4c0a7e9d2f4e1c8a3b6d0f1e2c3a4b",
            "What is the weather in Paris?",
            "It is sunny in Paris, 24 °C.",
            "get_weather",
        ),
        (
            "phoenix/spans_dataframe.jsonl",
            "phoenix",
            "6e0c63257de34c92bf9efcd03927272e",
            "What's the weather in Boston?",
            "It is 65°F and cloudy in Boston.",
            "get_weather",
        ),
        (
            "jaeger/genai_agent_trace.json",
            "jaeger",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "Convert 100 USD to EUR.",
            "100 USD is 92.40 EUR.",
            "convert_currency",
        ),
        (
            "otel_js/ai_sdk_generate_text.json",
            "otel-js",
            "d4cda95b652f4a1592b449d5929fda1b",
            "What is the weather in San Francisco?",
            "It is 72°F and sunny in San Francisco.",
            "weather",
        ),
    ],
)
def test_an_export_with_a_failed_tool_and_its_retry_converts_faithfully(  # noqa: PLR0917
    path: str, source: str, trace_id: str, objective: str, answer: str, tool: str
) -> None:
    """Tools in order, the error's next call an error_recovery, the objective, one answer once."""
    converted = only(DATA / path)
    trace = converted.trace
    assert source_of(converted)["format"] == source
    assert trace.id == f"kp:trace:{trace_id}"
    shape = [(kind, tool if name else None) for kind, name in steps(trace)]
    assert shape[-len(RETRY) :] == [(kind, tool if name else None) for kind, name in RETRY]
    assert trace.task.objective == objective
    assert trace.outcome.result_summary == answer
    assert answers(trace) == 1  # the answer is repeated at two or three span levels
    assert trace.metadata.success is True


def test_langfuse_export_keeps_the_generation_text_latency_and_trace_metadata() -> None:
    trace = only(DATA / "langfuse" / "weather_agent_export.json").trace
    assert trace.steps[0].type == "thought"
    assert trace.steps[0].content == "I'll look up the weather in Paris."
    assert trace.steps[2].content == "the weather service timed out"  # the statusMessage
    assert trace.steps[1].latency_ms == 2000.0
    assert trace.steps[1].input == {"city": "Paris"}
    assert trace.metadata.task_domain == "weather"  # kp.task_domain in the trace's metadata
    assert trace.metadata.agent_id == "weather_agent"


def test_langfuse_api_page_reads_otel_attributes_in_metadata_and_plain_generations() -> None:
    """OpenInference attributes in metadata.attributes (an object or JSON text) say the steps."""
    items = list(convert_file(DATA / "langfuse" / "api_traces_page.json"))
    first, second = items
    assert isinstance(first, TraceItem)
    assert isinstance(second, TraceItem)
    assert steps(first.trace) == [
        ("tool_call", "search"),
        ("observation", "search"),
        ("thought", None),
    ]
    assert first.trace.task.objective == "Find the population of Lyon."
    assert first.trace.metadata.agent_id == "researcher"
    assert first.trace.metadata.framework == "openinference.instrumentation.openai_agents"
    assert steps(second.trace) == [("thought", None)]
    assert second.trace.outcome.result_summary == "Hi!"


def _observation(trace_id: str, oid: str, kind: str, start: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": oid,
        "traceId": trace_id,
        "type": kind,
        "name": fields.pop("name", kind.lower()),
        "startTime": f"2025-01-01T00:00:{start:02d}.000Z",
        "endTime": f"2025-01-01T00:00:{start:02d}.500Z",
        "parentObservationId": None,
        **fields,
    }


def test_langfuse_observations_page_groups_by_trace_and_a_span_named_as_a_tool_is_one(
    tmp_path: Path,
) -> None:
    """GET /api/public/observations pages, spread over lines: a SPAN that ran a tool is a tool."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    page1 = {
        "data": [
            _observation(
                "t1",
                "g1",
                "GENERATION",
                1,
                output={"role": "assistant", "tool_calls": [call]},
                input=[{"role": "user", "content": "Look it up."}],
            ),
            _observation("t2", "x1", "GENERATION", 1, output="Alone.", input="Hello?"),
        ]
    }
    page2 = {
        "data": [
            _observation("t1", "s1", "SPAN", 2, name="lookup", input={"q": 1}, output="found"),
            _observation("t1", "g2", "GENERATION", 3, output="Found it."),
        ]
    }
    path = tmp_path / "observations.jsonl"
    path.write_text(json.dumps(page1) + "\n" + json.dumps(page2) + "\n")
    one, two = list(convert_file(path))
    assert isinstance(one, TraceItem)
    assert isinstance(two, TraceItem)
    assert steps(one.trace) == [
        ("tool_call", "lookup"),
        ("observation", "lookup"),
        ("thought", None),
    ]
    assert one.trace.task.objective == "Look it up."
    assert two.trace.task.objective == "Hello?"
    assert two.trace.outcome.result_summary == "Alone."


@pytest.mark.parametrize(
    "name",
    [
        "langgraph-python-2025-08-22.json",
        "crewai-2025-07-11.json",
        "koog-2025-08-26.json",
    ],
)
def test_langfuse_observations_without_their_trace_read_as_the_export_with_it(
    tmp_path: Path, name: str
) -> None:
    """A page of a trace's observations (no trace object) gives the UI export's trace.

    Langfuse takes a trace's input and output from its root observation: a lone root SPAN (the
    app's run, ``LangGraph``) says the request, not the first model call's first user text
    (``Be helpful!``, a prompt the app sends before the user's words).
    """
    export = json.loads((CORPUS / "langfuse" / name).read_text())
    page = tmp_path / "observations.json"
    page.write_text(json.dumps({"data": export["observations"], "meta": {"page": 1}}))
    assert _same_trace(only(page).trace) == _same_trace(only(CORPUS / "langfuse" / name).trace)


@pytest.mark.parametrize(
    "name", ["langgraph-python-2025-08-22.json", "pydantic-ai-tools-2025-12-04.json"]
)
def test_langfuse_observations_page_reads_as_the_export_rows_of_the_same_observations(
    tmp_path: Path, name: str
) -> None:
    """Fetched from the API or the blob storage export, the same observations give one trace.

    Both take the trace's input and output from its root observation, as Langfuse does: the
    app's function's return value (Pydantic AI's joke with its evaluation) is the answer.
    """
    observations = json.loads((CORPUS / "langfuse" / name).read_text())["observations"]
    page = tmp_path / "observations.json"
    page.write_text(langfuse_fetched(observations, "page"))
    rows = tmp_path / "observations.jsonl"
    rows.write_text(langfuse_fetched(observations, "rows"))
    assert _same_trace(only(page).trace) == _same_trace(only(rows).trace)


def test_langfuse_export_rows_of_several_roots_give_the_run_no_root_s_output(
    tmp_path: Path,
) -> None:
    """Rows of a client that traced only its model calls: each generation a root of its own.

    None of them stands for the run (an API page of the same observations says so too): the
    answer is the last reply, not the first root's words before its first tool call.
    """
    name = "anthropic-messages-api-2026-03-25.json"
    observations = json.loads((CORPUS / "langfuse" / name).read_text())["observations"]
    rows = tmp_path / "observations.jsonl"
    rows.write_text(langfuse_fetched(observations, "rows"))
    trace = only(rows).trace
    assert trace.outcome.result_summary.startswith("Here's an overview of the repository:")
    assert trace.task.objective == "Can you help me with the code in this repository?"
    assert [name for _, name in steps(trace) if name] == ["Read"] * 8
    assert _same_trace(trace) == _same_trace(only(CORPUS / "langfuse" / name).trace)


@pytest.mark.parametrize("lines", [False, True])
def test_langfuse_observations_table_export_reads_as_the_trace_export(
    tmp_path: Path, lines: bool
) -> None:
    """The UI's batch export of the observations table: the API's observations one by one.

    JSON is an array of them, JSON Lines one a line, each with its trace's context and scores
    beside it (``traceName``, ``traceTags``, ``userId``, ``scores``, ``comments``); kp said
    "not a trace file this tool knows" of every row.
    """
    name = "langgraph-python-2025-08-22.json"
    observations = json.loads((CORPUS / "langfuse" / name).read_text())["observations"]
    context: dict[str, Any] = {"traceName": "LangGraph", "traceTags": [], "userId": None}
    rows = [{**item, **context, "scores": {}, "comments": []} for item in observations]
    table = tmp_path / ("observations.jsonl" if lines else "observations.json")
    table.write_text("\n".join(map(json.dumps, rows)) if lines else json.dumps(rows))
    assert all(recognise(row) == "langfuse" for row in rows)
    assert _same_trace(only(table).trace) == _same_trace(only(CORPUS / "langfuse" / name).trace)


ENRICHED = DATA / "langfuse" / "observations_v2.parquet"
"""The JSON fixtures' traces as Langfuse's enriched observations export (make_observations_v2)."""


def _same_trace(trace: ReasoningTrace) -> tuple[Any, ...]:
    """What a trace says, less when kp read it."""
    return (
        trace.task.objective,
        [(step.type, step.tool.name if step.tool else None, step.content) for step in trace.steps],
        [(step.input, step.latency_ms) for step in trace.steps],
        trace.outcome.result_summary,
        trace.metadata.success,
        trace.metadata.task_domain,
    )


def _json_traces() -> dict[str, ReasoningTrace]:
    found = [
        item.trace
        for name in ("weather_agent_export.json", "api_traces_page.json")
        for item in convert_file(DATA / "langfuse" / name)
        if isinstance(item, TraceItem)
    ]
    return {trace.id: trace for trace in found}


def test_langfuse_enriched_parquet_rows_read_as_the_json_exports_of_their_traces() -> None:
    """One trace per trace_id, whatever the rows' order: the same trace the JSON exports give."""
    first = next(item for item in read_records(ENRICHED) if isinstance(item, Record))
    assert recognise(first.value) == "langfuse"
    items = convert_file(ENRICHED)
    assert [item for item in items if isinstance(item, Problem)] == []
    traces = [item.trace for item in items if isinstance(item, TraceItem)]
    expected = _json_traces()
    assert len(traces) == 2
    for trace in traces:
        assert _same_trace(trace) == _same_trace(expected[trace.id])


def test_langfuse_export_rows_in_json_lines_with_zoneless_utc_times_read_the_same(
    tmp_path: Path,
) -> None:
    """The text export's rows: times "YYYY-MM-DD HH:MM:SS.ffffff" in UTC, metadata an object."""
    rows = [item.value for item in read_records(ENRICHED) if isinstance(item, Record)]
    lines = []
    for row in rows:
        times = {
            k: v.strftime("%Y-%m-%d %H:%M:%S.%f")
            for k, v in row.items()
            if k.endswith(("_time", "_at")) and v
        }
        lines.append(
            json.dumps(
                {
                    **row,
                    **times,
                    "metadata": dict(row["metadata"]),
                    "total_cost": 0,
                    "cost_details": {},
                    "usage_details": dict(row["usage_details"]),
                    "tool_definitions": {},
                },
                default=str,
            )
        )
    path = tmp_path / "observations_v2.jsonl"
    path.write_text("\n".join(lines) + "\n")
    parquet = {
        item.trace.id: item.trace for item in convert_file(ENRICHED) if isinstance(item, TraceItem)
    }
    traces = [item.trace for item in convert_file(path) if isinstance(item, TraceItem)]
    assert sorted(trace.id for trace in traces) == sorted(parquet)
    for trace in traces:
        assert _same_trace(trace) == _same_trace(parquet[trace.id])
        assert trace.metadata.created_at == parquet[trace.id].metadata.created_at


def test_langfuse_root_error_fails_the_trace_and_ids_only_are_a_located_problem(
    tmp_path: Path,
) -> None:
    failed = {
        "trace": {
            "id": "f1",
            "timestamp": "2025-01-01T00:00:00Z",
            "input": "Do it.",
            "output": None,
        },
        "observations": [
            _observation("f1", "a", "GENERATION", 1, output="Trying."),
            _observation("f1", "b", "AGENT", 0, level="ERROR", statusMessage="budget exceeded"),
        ],
    }
    ids_only = {"id": "f2", "timestamp": "2025-01-01T00:00:00Z", "observations": ["a", "b"]}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps([failed, ids_only]))
    items = list(convert_file(path))
    converted = [item for item in items if isinstance(item, TraceItem)]
    problems = [item for item in items if isinstance(item, Problem)]
    assert [item.trace.metadata.success for item in converted] == [False]
    (problem,) = problems
    assert str(problem).startswith(
        f"{path}[1]: observations: the trace lists its observations by id"
    )


def test_phoenix_rows_as_parquet_gives_them_with_datetimes_and_nested_attributes() -> None:
    """The same spans as row dicts with datetime values and a nested attributes column."""
    text = (DATA / "phoenix" / "spans_dataframe.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    nested_rows = []
    for row in rows:
        flat = {key: value for key, value in row.items() if not key.startswith("attributes.")}
        for key in ("start_time", "end_time"):
            flat[key] = datetime.fromtimestamp(row[key] / 1000, UTC)
        attributes: dict[str, Any] = {}
        for key, value in row.items():
            if key.startswith("attributes.") and value is not None:
                node = attributes
                *parents, last = key.removeprefix("attributes.").split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[last] = value
        flat["attributes"] = attributes
        nested_rows.append(flat)
    records = [Record(Location("spans.parquet", None, n), row) for n, row in enumerate(nested_rows)]
    (converted,) = get_source("phoenix").convert(records, TraceOptions())
    assert isinstance(converted, TraceItem)
    assert converted.trace == only(DATA / "phoenix" / "spans_dataframe.jsonl").trace


def test_tempo_batches_with_instrumentation_library_spans_read_as_otlp() -> None:
    converted = only(DATA / "tempo" / "trace_by_id.json")
    assert source_of(converted)["format"] == "otlp"
    assert converted.trace.id == "kp:trace:5b8efff798038103d269b633813fc60c"  # base64 decoded
    assert steps(converted.trace) == [
        ("tool_call", "send_reset_link"),
        ("observation", "send_reset_link"),
        ("thought", None),
    ]
    assert converted.trace.task.objective == "Reset my password."
    assert converted.trace.metadata.framework == "opentelemetry.instrumentation.anthropic"


def test_otel_js_console_exporter_objects_and_stringified_spans_read_the_same(
    tmp_path: Path,
) -> None:
    spans = json.loads((DATA / "otel_js" / "ai_sdk_generate_text.json").read_text())
    console = []
    for span in spans:
        seconds, nanos = span["startTime"]
        end_seconds, end_nanos = span["endTime"]
        start_us = seconds * 1_000_000 + nanos // 1000
        console.append(
            {
                "resource": span["resource"],
                "instrumentationScope": {"name": "ai", "version": "4.3.16"},
                "traceId": span["spanContext"]["traceId"],
                "parentId": span.get("parentSpanId"),
                "name": span["name"],
                "id": span["spanContext"]["spanId"],
                "kind": 0,
                "timestamp": start_us,
                "duration": end_seconds * 1_000_000 + end_nanos // 1000 - start_us,
                "attributes": span["attributes"],
                "status": span["status"],
                "events": span["events"],
                "links": [],
            }
        )
    stringified = [
        {
            **{k: v for k, v in span.items() if k != "spanContext"},
            "_spanContext": span["spanContext"],
        }
        for span in spans
    ]
    expected = only(DATA / "otel_js" / "ai_sdk_generate_text.json").trace
    for name, shape in (("console.json", console), ("stringified.json", stringified)):
        path = tmp_path / name
        path.write_text(json.dumps(shape))
        assert only(path).trace == expected


def test_copilot_cli_flat_span_lines_read_as_the_same_spans_in_readable_span_form(
    tmp_path: Path,
) -> None:
    """GitHub Copilot CLI's file exporter writes each span flat (``traceId``, ``spanId`` and
    HrTime times at the top, ``{"type": "span"}``) with ``{"type": "metric"}`` lines between:
    the real file is read by its content, its metric line is no problem, and its spans give the
    trace they give as ``ReadableSpan`` objects."""
    path = CORPUS / "otel-js" / "copilot_cli_1.0.83_create_issues_otel.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    items = list(convert_file(path))
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    found = [item for item in items if isinstance(item, TraceItem)]
    assert [source_of(item)["format"] for item in found] == ["otel-js"]
    traces = [item.trace for item in found]
    tools = [step.tool.name for step in traces[0].steps if step.tool is not None]
    assert tools == ["skill", "view", "powershell", "apply_patch"]
    readable = [
        {
            **{k: v for k, v in line.items() if k not in ("type", "traceId", "spanId")},
            "spanContext": {"traceId": line["traceId"], "spanId": line["spanId"]},
        }
        for line in lines
        if line["type"] == "span"
    ]
    again = tmp_path / "readable.json"
    again.write_text(json.dumps(readable))
    assert only(again).trace == traces[0]


def test_copilot_cli_s_unrecorded_prompt_is_the_placeholder_with_a_warning_saying_why() -> None:
    """Copilot CLI's spans record no prompt (its ``github.copilot.user.message`` event holds
    ids only): the objective is the source's placeholder, and a warning says so. Before, it was
    the root span's name, ``invoke_agent``: an operation, no one's words, and no warning."""
    path = CORPUS / "otel-js" / "copilot_cli_1.0.83_create_issues_otel.jsonl"
    (item,) = (item for item in convert_file(path) if isinstance(item, TraceItem))
    names = {json.loads(line).get("name") for line in path.read_text().splitlines()}
    assert item.trace.task.objective not in names
    assert PLACEHOLDER.match(item.trace.task.objective)
    assert any(PLACEHOLDER_OBJECTIVE in warning for warning in item.warnings)


def test_copilot_cli_s_skill_call_is_given_the_skill_its_span_names() -> None:
    """Copilot CLI writes a call's parameters as ``github.copilot.tool.parameters.<name>``
    attributes (its ``execute_tool skill`` span: ``skill_name``), no
    ``gen_ai.tool.call.arguments``. Before, the skill call had no arguments."""
    path = CORPUS / "otel-js" / "copilot_cli_1.0.83_create_issues_otel.jsonl"
    spans = [json.loads(line) for line in path.read_text().splitlines()]
    (skill,) = (span for span in spans if span.get("name") == "execute_tool skill")
    named = skill["attributes"]["github.copilot.tool.parameters.skill_name"]
    (item,) = (item for item in convert_file(path) if isinstance(item, TraceItem))
    (call,) = (step for step in item.trace.steps if step.tool and step.tool.name == "skill")
    assert call.input == {"skill_name": named}


def test_an_ai_sdk_generate_object_model_span_alone_answers_with_its_object(
    tmp_path: Path,
) -> None:
    """A lone ``ai.generateObject.doGenerate`` span (as the AI SDK's tests export it) answers."""
    recipe = '{"name":"Scrambled Eggs","steps":["Crack the eggs."]}'
    span: dict[str, Any] = {
        "name": "ai.generateObject.doGenerate",
        "spanContext": {
            "traceId": "8f60802815d6e97da2dbc4708a8e5c7b",
            "spanId": "bf098ec12458e605",
        },
        "parentSpanId": None,
        "startTime": [1770131997, 0],
        "endTime": [1770131999, 0],
        "status": {"code": 0},
        "events": [],
        "resource": {"attributes": {}},
        "attributes": {
            "ai.operationId": "ai.generateObject.doGenerate",
            "ai.prompt.messages": json.dumps(
                [{"role": "user", "content": [{"type": "text", "text": "A recipe, please."}]}]
            ),
            "ai.response.finishReason": "stop",
            "ai.response.object": recipe,
        },
    }
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([span]))
    trace = only(path).trace
    assert trace.task.objective == "A recipe, please."
    assert steps(trace) == [("thought", None)]
    assert trace.outcome.result_summary == recipe


def test_ai_sdk_tools_of_a_langfuse_export_are_the_rows_with_their_input_schema() -> None:
    """The AI SDK 5's ``ai.prompt.tools`` name each tool's schema ``inputSchema``: a training
    row lists the tools it offered, described and with their required arguments."""
    item = only(CORPUS / "langfuse" / "vercel-aisdk-2025-11-17.json")
    (tool,) = [tool["function"] for tool in item.tools]
    assert tool["name"] == "getWeather"
    assert tool["description"] == "Get the weather in a location"
    assert tool["parameters"]["required"] == ["location"]


def test_ai_sdk_model_steps_alone_name_their_function_as_their_call_does() -> None:
    """``ai.telemetry.functionId`` names the agent whether the file holds the call's span
    (``ai.generateText``) or only its model steps (``ai.generateText.doGenerate``)."""
    for name in ("ai-generateText", "ai-generateText-doGenerate"):
        found = convert_file(CORPUS / "otel-js" / f"{name}.json")
        agents = [item.trace.metadata.agent_id for item in found if isinstance(item, TraceItem)]
        assert agents == ["test-generate-text", "test-generate-text-messages"], name


def test_jaeger_bad_span_is_located_and_the_trace_still_converts(tmp_path: Path) -> None:
    document = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())
    document["data"][0]["spans"].append({"traceID": "", "spanID": "x"})
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(document))
    items = list(convert_file(path))
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert str(problem) == (
        f"{path}:1: data[0].spans[6].traceID: expected a 32-digit hex id, found ''"
    )
    assert sum(isinstance(item, TraceItem) for item in items) == 1


def _jaeger_failed_tool(tmp_path: Path, code: str | int | None) -> TraceItem:
    """The Jaeger sample, its failed tool call told only by ``otel.status_code`` = ``code``."""
    document = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())
    span = document["data"][0]["spans"][2]
    told_elsewhere = ("error", "error.type", "otel.status_code")  # and the exception event
    span["tags"] = [tag for tag in span["tags"] if tag["key"] not in told_elsewhere]
    span["logs"] = []
    if code is not None:
        kind = "int64" if isinstance(code, int) else "string"
        span["tags"].append({"key": "otel.status_code", "type": kind, "value": code})
    path = tmp_path / f"jaeger-{code}.json"
    path.write_text(json.dumps(document))
    return only(path, "jaeger")


@pytest.mark.parametrize("code", ["STATUS_CODE_ERROR", "StatusCode.ERROR", "2", 2])
def test_a_jaeger_span_is_an_error_by_any_spelling_of_the_error_status(
    tmp_path: Path, code: str | int
) -> None:
    """``otel.status_code`` is read by the OTLP reader's rule: ``STATUS_CODE_ERROR`` is an error
    as ``ERROR`` is (before: only ``ERROR``, and the failed call read as a success)."""
    failed = _jaeger_failed_tool(tmp_path, code).trace
    assert failed.steps == _jaeger_failed_tool(tmp_path, "ERROR").trace.steps
    assert failed.steps != _jaeger_failed_tool(tmp_path, None).trace.steps
    assert "error_recovery" in [step.type for step in failed.steps]


def test_an_exception_on_a_jaeger_span_whose_status_is_ok_is_no_error(tmp_path: Path) -> None:
    """``otel.status_code`` OK is final, as the OTLP reader takes it: an exception event the
    span recorded before it ended OK (a cancelled stream) did not fail the call."""
    document = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())
    span = document["data"][0]["spans"][2]  # the failed tool call, with its exception event
    assert any(log.get("fields") for log in span["logs"])
    span["tags"] = [tag for tag in span["tags"] if tag["key"] not in ("error", "error.type")]
    status = next(tag for tag in span["tags"] if tag["key"] == "otel.status_code")
    status["value"] = "OK"
    path = tmp_path / "jaeger-ok.json"
    path.write_text(json.dumps(document))
    steps_read = only(path, "jaeger").trace.steps
    assert steps_read == _jaeger_failed_tool(tmp_path, None).trace.steps
    assert "error_recovery" not in [step.type for step in steps_read]


def test_console_exporter_output_saved_as_jsonl_is_read_by_its_content() -> None:
    """Pretty-printed spans in a .jsonl file: one trace, no 'invalid JSON' line."""
    path = DATA / "otel" / "console_exporter_pretty.jsonl"
    records = list(read_records(path))
    assert [type(item).__name__ for item in records] == ["Record", "Record"]
    converted = only(path)
    assert converted.trace.id == "kp:trace:3f1e5c9a2b7d4e8f9a0b1c2d3e4f5a6b"
    assert steps(converted.trace) == [("thought", None)]  # the answer, told once
    assert converted.trace.task.objective == "How many r's are in strawberry?"


def test_a_jsonl_line_with_a_syntax_error_stays_a_jsonl_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": tru}\n{"b": 1}\n')
    items = list(read_records(path))
    assert str(items[0]).startswith(f"{path}:1: invalid JSON")
    assert isinstance(items[1], Record)
    assert items[1].value == {"b": 1}


def test_kp_convert_says_what_each_file_was_read_as() -> None:
    files = [
        str(DATA / "langfuse" / "api_traces_page.json"),
        str(DATA / "jaeger" / "genai_agent_trace.json"),
    ]
    result = CliRunner().invoke(cli, ["convert", *files])
    assert result.exit_code == 0, result.output
    assert f"{files[0]}: read as langfuse (2 traces)" in result.stderr
    assert f"{files[1]}: read as jaeger (1 trace)" in result.stderr


def test_an_unknown_shape_names_its_keys_and_every_source(tmp_path: Path) -> None:
    path = tmp_path / "mystery.json"
    path.write_text('{"spans_v9": [], "owner": "me"}')
    (problem,) = list(convert_file(path))
    assert isinstance(problem, Problem)
    assert "owner, spans_v9" in problem.message
    assert all(source in problem.message for source in source_names())


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("langfuse/weather_agent_export.json", "langfuse"),
        ("langfuse/api_traces_page.json", "langfuse"),
        ("phoenix/spans_dataframe.jsonl", "phoenix"),
        ("jaeger/genai_agent_trace.json", "jaeger"),
        ("tempo/trace_by_id.json", "otlp"),
        ("otel_js/ai_sdk_generate_text.json", "otel-js"),
        ("otel/console_exporter_pretty.jsonl", "otlp"),
    ],
)
def test_each_export_is_recognised_by_its_first_record(path: str, source: str) -> None:
    first = next(item for item in read_records(DATA / path) if isinstance(item, Record))
    assert recognise(first.value) == source


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "trace",
                    "observations",
                    "data",
                    "id",
                    "traceId",
                    "type",
                    "timestamp",
                    "traceID",
                    "spans",
                    "spanID",
                    "tags",
                    "references",
                    "context.trace_id",
                    "context.span_id",
                    "name",
                    "spanContext",
                    "parentSpanId",
                    "attributes",
                    "startTime",
                    "status",
                    "parent_id",
                    "span_kind",
                    "level",
                    "input",
                    "output",
                    "metadata",
                    "processes",
                ]
            )
            | st.text(max_size=6),
            children,
            max_size=6,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON, source=st.sampled_from(EXPORTS))
def test_converting_any_json_gives_traces_or_located_problems(value: Any, source: str) -> None:
    """Whatever the record, a reader answers with traces and located problems, never raises."""
    record = Record(Location("f.json", 1, 0), value)
    for item in get_source(source).convert([record], TraceOptions()):
        assert isinstance(item, TraceItem | Problem)
        if isinstance(item, Problem):
            assert item.location.file == "f.json"


def test_langfuse_fills_what_the_span_attributes_leave_out_gemini_parts_included(
    tmp_path: Path,
) -> None:
    """A Google ADK run: the spans say what they are, Langfuse's input/output hold the content."""
    adk = {"scope": json.dumps({"name": "gcp.vertex.agent"})}
    call = {"function_call": {"id": "adk-1", "name": "get_time", "args": {"city": "Tokyo"}}}
    export = {
        "trace": {"id": "ad1", "timestamp": "2025-01-01T00:00:00Z", "name": "invocation"},
        "observations": [
            _observation(
                "ad1",
                "ag",
                "AGENT",
                0,
                name="invoke_agent time_agent",
                input={"parts": [{"text": "What time is it in Tokyo?"}], "role": "user"},
                output=None,
                metadata={
                    **adk,
                    "attributes": json.dumps(
                        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "time_agent"}
                    ),
                },
            ),
            _observation(
                "ad1",
                "l1",
                "GENERATION",
                1,
                name="call_llm",
                parentObservationId="ag",
                input={"contents": []},
                output={"content": {"role": "model", "parts": [call]}},
            ),
            _observation(
                "ad1",
                "t1",
                "TOOL",
                2,
                name="execute_tool get_time",
                parentObservationId="ag",
                input={"city": "Tokyo"},
                output={"time": "10:30"},
                metadata={
                    **adk,
                    "attributes": json.dumps(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "get_time",
                            "gen_ai.tool.call.id": "adk-1",
                        }
                    ),
                },
            ),
            _observation(
                "ad1",
                "l2",
                "GENERATION",
                3,
                name="call_llm",
                parentObservationId="ag",
                output={
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "The user wants the time.", "thought": True},
                            {"text": "It is 10:30 in Tokyo."},
                        ],
                    }
                },
            ),
        ],
    }
    path = tmp_path / "adk.json"
    path.write_text(json.dumps(export))
    trace = only(path).trace
    assert steps(trace) == [
        ("tool_call", "get_time"),
        ("observation", "get_time"),
        ("thought", None),
        ("thought", None),
    ]
    assert trace.steps[0].input == {"city": "Tokyo"}
    assert trace.steps[2].content == "The user wants the time."
    assert trace.outcome.result_summary == "It is 10:30 in Tokyo."
    assert trace.task.objective == "What time is it in Tokyo?"
    assert trace.metadata.framework == "gcp.vertex.agent"


def test_langfuse_generation_output_as_anthropic_content_blocks(tmp_path: Path) -> None:
    export = {
        "trace": {"id": "cl1", "timestamp": "2025-01-01T00:00:00Z", "input": "List the files."},
        "observations": [
            _observation(
                "cl1",
                "g1",
                "GENERATION",
                1,
                output=[
                    {"type": "thinking", "thinking": "I should run ls."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    },
                ],
            ),
            _observation(
                "cl1",
                "t1",
                "TOOL",
                2,
                name="Bash",
                input={"command": "ls"},
                output="README.md\nsrc",
            ),
            _observation(
                "cl1",
                "g2",
                "GENERATION",
                3,
                output=[{"type": "text", "text": "Two entries: README.md and src."}],
            ),
        ],
    }
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(export))
    trace = only(path).trace
    assert [(step.type, step.content) for step in trace.steps] == [
        ("thought", "I should run ls."),
        ("tool_call", 'Bash {"command":"ls"}'),
        ("observation", "README.md\nsrc"),
        ("thought", "Two entries: README.md and src."),
    ]


def test_langfuse_generation_output_none_as_python_writes_it_is_no_thought(
    tmp_path: Path,
) -> None:
    """OpenLIT writes a reply of tool calls only as ``str(None)``: no words of the model.

    Agno's run as Langfuse keeps it (``langfuse/agno-2025-06-11.json``): kp read a thought
    ``None`` before the search; a model that answers the word in a sentence is still read.
    """
    export = {
        "trace": {"id": "ag1", "timestamp": "2025-01-01T00:00:00Z", "input": "What is trending?"},
        "observations": [
            _observation(
                "ag1",
                "g1",
                "GENERATION",
                1,
                input="user: What is trending?",
                output="None",
            ),
            _observation("ag1", "t1", "TOOL", 2, name="search", input={"q": "trends"}, output="[]"),
            _observation("ag1", "g2", "GENERATION", 3, output="None of them, says the search."),
        ],
    }
    path = tmp_path / "agno.json"
    path.write_text(json.dumps(export))
    trace = only(path).trace
    assert [(step.type, step.content) for step in trace.steps] == [
        ("tool_call", 'search {"q":"trends"}'),
        ("observation", "[]"),
        ("thought", "None of them, says the search."),
    ]


@pytest.mark.parametrize("attributes", [{}, "openinference"])
def test_a_lone_vertex_ai_generation_fetched_without_its_trace_is_the_run(
    tmp_path: Path, attributes: Any
) -> None:
    """A page whose one observation is a Vertex AI model call gives its question and answer.

    Langfuse's own copy of the call is Gemini's request (``contents``) and response
    (``candidates``); OpenInference's Vertex AI instrumentor writes each part's text without its
    ``message_content.type``. Before, both said nothing and the page gave no trace.
    """
    request = {"contents": [{"role": "user", "parts": [{"text": "What is Langfuse?"}]}]}
    answer = "Langfuse is an LLM engineering platform."
    response = {"candidates": [{"content": {"role": "model", "parts": [{"text": answer}]}}]}
    own = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.text": "What is Langfuse?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.contents.0.message_content.text": answer,
    }
    generation = _observation(
        "v1",
        "g1",
        "GENERATION",
        1,
        name="generate_content",
        input=json.dumps(request),
        output=json.dumps(response),
        metadata=json.dumps({"attributes": own if attributes else {}}),
    )
    page = tmp_path / "observations.json"
    page.write_text(json.dumps({"data": [generation], "meta": {"page": 1}}))
    trace = only(page).trace
    assert trace.task.objective == "What is Langfuse?"
    assert [(step.type, step.content) for step in trace.steps] == [("thought", answer)]
    assert trace.outcome.result_summary == answer


def test_a_bad_item_of_a_langfuse_page_is_located_by_its_own_keys(tmp_path: Path) -> None:
    page = {
        "data": [
            _observation("p1", "g1", "GENERATION", 1, output="Fine.", input="Hi?"),
            {"unexpected": 1},
        ]
    }
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    items = list(convert_file(path))
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert problem.path == "data[1]"
    assert problem.message.endswith("found an object with keys unexpected")
    assert sum(isinstance(item, TraceItem) for item in items) == 1


@pytest.mark.parametrize(
    ("index", "key", "odd"), [(1, "id", []), (0, "parentObservationId", ["5043b6d994a0663c"])]
)
def test_a_langfuse_observation_id_that_is_a_list_is_a_problem_at_that_key(
    tmp_path: Path, index: int, key: str, odd: Any
) -> None:
    """An observation's ``id`` or ``parentObservationId`` that is a list is a problem located at
    it, as any other id that is no hex; the trace still converts (before: TypeError, an
    unhashable id, and the whole file lost; found by bench/fuzz_loaders.py --structured)."""
    export = json.loads((CORPUS / "langfuse" / "agent-prism-qa-chatbot-3.json").read_text())
    export["observations"][index][key] = odd
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    items = convert_file(path, source="langfuse")
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert problem.path == f"observations[{index}].{key}"
    assert sum(isinstance(item, TraceItem) for item in items) == 1


def test_kp_score_from_auto_says_what_it_read_too() -> None:
    path = str(DATA / "otel_js" / "ai_sdk_generate_text.json")
    result = CliRunner().invoke(cli, ["score", "--from", "auto", "--no-embedder", path])
    assert result.exit_code == 0, result.output
    assert f"{path}: read as otel-js (1 trace)" in result.stderr


LANGFUSE_EXPORT = json.loads((DATA / "langfuse" / "weather_agent_export.json").read_text())
JAEGER_TRACE = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())


def _trace_of(source: str, value: Any) -> ReasoningTrace:
    (converted,) = get_source(source).convert(
        [Record(Location("f.json", 1, 0), value)], TraceOptions()
    )
    assert isinstance(converted, TraceItem)
    return converted.trace


@settings(max_examples=40, deadline=None)
@given(
    langfuse=st.permutations(range(len(LANGFUSE_EXPORT["observations"]))),
    jaeger=st.permutations(range(len(JAEGER_TRACE["data"][0]["spans"]))),
)
def test_the_order_observations_and_spans_are_written_in_does_not_change_the_trace(
    langfuse: list[int], jaeger: list[int]
) -> None:
    """Steps come from start times and the tree, never from the order in the file."""
    observations = LANGFUSE_EXPORT["observations"]
    shuffled = {**LANGFUSE_EXPORT, "observations": [observations[n] for n in langfuse]}
    assert _trace_of("langfuse", shuffled) == _trace_of("langfuse", LANGFUSE_EXPORT)
    spans = JAEGER_TRACE["data"][0]["spans"]
    trace = {**JAEGER_TRACE["data"][0], "spans": [spans[n] for n in jaeger]}
    assert _trace_of("jaeger", {"data": [trace]}) == _trace_of("jaeger", JAEGER_TRACE)


def test_two_shapes_the_fuzzer_found_are_located_problems_or_traces_not_crashes() -> None:
    """A status code that is an object (found by bench/fuzz_loaders.py, seed 1), and an
    OpenInference message index of 5,000 digits (seed 2)."""
    row = json.loads((DATA / "phoenix" / "spans_dataframe.jsonl").read_text().splitlines()[4])
    odd_status = {**row, "status_code": {"code": 2}}
    huge_index = {**row, "attributes.llm.output_messages.9" + "9" * 4999 + ".message.role": "x"}
    for value in (odd_status, huge_index):
        (item,) = get_source("phoenix").convert([Record(Location("f"), value)], TraceOptions())
        assert isinstance(item, TraceItem | Problem)


def test_a_langfuse_event_at_error_level_is_an_error_the_next_action_recovers_from(
    tmp_path: Path,
) -> None:
    """An EVENT at ERROR: an observation with its text; the next tool call is the recovery."""

    def call(call_id: str) -> dict[str, Any]:
        function = {"name": "search", "arguments": '{"q": "flights"}'}
        return {"role": "assistant", "tool_calls": [{"id": call_id, "function": function}]}

    observations = [
        _observation("e1", "g1", "GENERATION", 1, output=call("c1")),
        _observation("e1", "s1", "TOOL", 2, name="search", input={"q": "flights"}, output="[]"),
        _observation("e1", "v0", "EVENT", 3, name="cache-miss"),  # not an error: nothing
        _observation(
            "e1", "v1", "EVENT", 3, name="guardrail", level="ERROR", output="rate limit hit"
        ),
        _observation("e1", "g2", "GENERATION", 4, output=call("c2")),
        _observation("e1", "s2", "TOOL", 5, name="search", input={"q": "flights"}, output="[1]"),
        _observation("e1", "g3", "GENERATION", 6, output="One flight."),
    ]
    for item in observations[1:]:
        item["parentObservationId"] = "g1" if item["type"] == "EVENT" else None
    export = {
        "trace": {"id": "e1", "timestamp": "2025-01-01T00:00:00Z", "input": "Find flights."},
        "observations": observations,
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    trace = only(path).trace
    assert steps(trace) == [
        ("tool_call", "search"),
        ("observation", "search"),
        ("observation", None),
        ("error_recovery", "search"),
        ("observation", "search"),
        ("thought", None),
    ]
    assert trace.steps[2].content == "rate limit hit"
    assert trace.metadata.success is True  # the error was recovered from, below the root


def test_spans_that_share_an_id_are_each_read_and_the_id_is_named(tmp_path: Path) -> None:
    """A damaged export giving four spans one id: still five steps, and a warning naming it."""
    export = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())
    spans = export["data"][0]["spans"]
    shared = spans[0]["spanID"]
    for span in spans[2:5]:  # two tool calls and a model call, children of the agent
        span["spanID"] = shared
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(export))
    item = only(path, "jaeger")
    assert len(item.trace.steps) == len(
        only(DATA / "jaeger" / "genai_agent_trace.json").trace.steps
    )
    assert item.warnings == (
        f"4 different spans have the span id {shared}: each is read, and the spans whose "
        "parent it is hang under the first",
    )


def test_a_span_sent_twice_is_read_once_without_a_warning(tmp_path: Path) -> None:
    """An exporter's retry repeats a span whole: one step, nothing to warn of."""
    export = json.loads((DATA / "jaeger" / "genai_agent_trace.json").read_text())
    export["data"][0]["spans"].append(export["data"][0]["spans"][2])
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(export))
    item = only(path, "jaeger")
    assert item.trace.steps == only(DATA / "jaeger" / "genai_agent_trace.json").trace.steps
    assert item.warnings == ()


def _langfuse_export(trace: dict[str, Any], *observations: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace": {"id": "lf1", "timestamp": "2025-01-01T00:00:00Z", **trace},
        "observations": list(observations),
    }


def test_langfuse_input_and_output_kept_as_json_text_of_json_text_give_the_texts() -> None:
    """An OTel span's JSON input, kept by Langfuse as JSON text again, is decoded all the way."""
    question = {"messages": [{"role": "user", "content": "What is Langfuse?"}]}
    export = _langfuse_export(
        {"input": json.dumps(json.dumps(question)), "output": json.dumps("A tracing tool.")},
        _observation("lf1", "g1", "GENERATION", 1, output="A tracing tool."),
    )
    trace = _trace_of("langfuse", export)
    assert trace.task.objective == "What is Langfuse?"
    assert trace.outcome.result_summary == "A tracing tool."


def test_langfuse_google_adk_run_gives_the_new_message_and_the_model_content() -> None:
    """ADK's run arguments (user and session ids around ``new_message``) give the user's text."""
    arguments = {
        "user_id": "demo-user",
        "session_id": "demo-session",
        "new_message": {"parts": [{"text": "hi"}], "role": "user"},
    }
    event = {"content": {"parts": [{"text": "Hello!"}], "role": "model"}, "author": "agent"}
    export = _langfuse_export(
        {"input": json.dumps(json.dumps(arguments)), "output": json.dumps(json.dumps(event))},
    )
    trace = _trace_of("langfuse", export)
    assert trace.task.objective == "hi"
    assert trace.outcome.result_summary == "Hello!"


def test_langfuse_langchain_tool_calls_in_additional_kwargs_name_the_tool_span() -> None:
    """A LangChain message dump keeps its calls in ``additional_kwargs``: the SPAN is that tool."""
    call = {"id": "c1", "type": "function", "function": {"name": "Web-Search", "arguments": "{}"}}
    export = _langfuse_export(
        {"input": "Search the web."},
        _observation(
            "lf1",
            "g1",
            "GENERATION",
            1,
            output={
                "role": "assistant",
                "content": "",
                "additional_kwargs": {"tool_calls": [call]},
            },
        ),
        _observation("lf1", "s1", "SPAN", 2, name="Web-Search", input={"q": 1}, output="found"),
        _observation("lf1", "g2", "GENERATION", 3, output="Found it."),
    )
    assert steps(_trace_of("langfuse", export)) == [
        ("tool_call", "Web-Search"),
        ("observation", "Web-Search"),
        ("thought", None),
    ]


def test_a_langsmith_tool_run_in_langfuse_has_the_arguments_the_model_gave_not_their_wrapper() -> (
    None
):
    """LangSmith's Claude Agent SDK hooks record a tool's arguments as ``{"input": ...}``; the
    call's arguments are what it holds, as the LangSmith runs reader reads them."""
    langsmith = {"scope": {"name": "langsmith"}, "attributes": {"langsmith.span.kind": "tool"}}
    export = _langfuse_export(
        {"input": "Weather in Berlin?"},
        _observation(
            "lf1",
            "t1",
            "TOOL",
            1,
            name="get_weather",
            input={"input": {"city": "Berlin"}},
            output="Cloudy",
            metadata=langsmith,
        ),
    )
    (call, _result) = _trace_of("langfuse", export).steps
    assert (call.type, call.input) == ("tool_call", {"city": "Berlin"})


def test_an_ai_sdk_run_that_ended_asking_for_tools_says_no_answer_not_their_json() -> None:
    """``generateText`` stopped at its tool calls: Langfuse keeps ``ai.response.toolCalls`` as
    its output, which is no words of the model (before: a thought and an answer of that JSON)."""
    item = only(CORPUS / "langfuse" / "vercel-aisdk-2025-11-17.json")
    assert steps(item.trace) == [("tool_call", "getWeather"), ("observation", "getWeather")]
    assert item.trace.outcome.result_summary == "completed"


def test_langfuse_langchain_js_serialised_messages_give_the_answer() -> None:
    """LangChain.js messages serialised with their class (``lc``, ``kwargs``) keep their roles."""

    def message(kind: str, content: str) -> dict[str, Any]:
        path = ["langchain_core", "messages", kind]
        return {"lc": 1, "type": "constructor", "id": path, "kwargs": {"content": content}}

    output = {"messages": [message("HumanMessage", "Weather?"), message("AIMessage", "Sunny.")]}
    export = _langfuse_export({"input": "Weather?", "output": json.dumps(json.dumps(output))})
    assert _trace_of("langfuse", export).outcome.result_summary == "Sunny."


def test_tool_calls_written_as_the_message_text_and_results_naming_no_call_pair_in_order() -> None:
    """Koog writes its calls as JSON text and its results without a call id: two named calls."""
    calls = [
        {"function": {"name": name, "arguments": "{}"}, "id": f"c{n}", "type": "function"}
        for n, name in enumerate(("HelloTool", "ByeTool"))
    ]
    asked = [{"role": "assistant", "content": json.dumps([call])} for call in calls]
    history = [
        {"role": "user", "content": "Greet Bob."},
        {"role": "tool", "content": json.dumps([calls[0]])},
        {"role": "tool", "content": "Hello Bob!"},
        {"role": "tool", "content": json.dumps([calls[1]])},
        {"role": "tool", "content": "Bye Bob!"},
    ]
    export = _langfuse_export(
        {},
        _observation("lf1", "g1", "GENERATION", 1, input=history[:1], output=asked),
        _observation("lf1", "g2", "GENERATION", 2, input=history, output="Hello and bye, Bob!"),
    )
    trace = _trace_of("langfuse", export)
    assert steps(trace) == [
        ("tool_call", "HelloTool"),
        ("observation", "HelloTool"),
        ("tool_call", "ByeTool"),
        ("observation", "ByeTool"),
        ("thought", None),
    ]


def test_tool_calls_as_the_message_content_already_parsed_name_their_tools() -> None:
    """Langfuse's seeder export keeps Koog's calls parsed: OpenAI call objects as the content."""
    asked = [
        {
            "role": "assistant",
            "content": [{"type": "function", "id": n, "function": {"name": name}}],
        }
        for n, name in (("c0", "HelloTool"), ("c1", "ByeTool"))
    ]
    export = _langfuse_export(
        {},
        _observation("lf1", "g1", "GENERATION", 1, input="Greet Bob.", output=asked),
        _observation("lf1", "g2", "GENERATION", 2, output="Hello and bye, Bob!"),
    )
    tools = [step.tool.name for step in _trace_of("langfuse", export).steps if step.tool]
    assert tools == ["HelloTool", "ByeTool"]


def test_an_object_under_a_dotted_attribute_name_is_that_attribute_whole() -> None:
    """A parsed JSON attribute (BeeAI's ``tool.parameters``) is not split into made-up names."""
    nested = {"tool.parameters": {"query": "Barcelona"}, "llm": {"model_name": "m"}}
    assert dotted(nested) == {"tool.parameters": {"query": "Barcelona"}, "llm.model_name": "m"}
    (item,) = convert_file(CORPUS / "langfuse" / "seeder-beeai-2025-08-01.json")
    assert isinstance(item, TraceItem)
    calls = [step.tool.name for step in item.trace.steps if step.type == "tool_call" and step.tool]
    assert calls == ["Wikipedia", "OpenMeteoTool"]


def test_langfuse_ai_sdk_tool_observation_is_the_tool_its_attributes_name() -> None:
    """An AI SDK tool observation Langfuse named ``ai.toolCall`` ran ``ai.toolCall.name``; the
    app's handler typed GENERATION around the SDK's call is no second model call (the answer is
    told once, after the tool)."""
    answer = "A dataset is a collection of items to test your application on."
    tool_attributes = {
        "operation.name": "ai.toolCall",
        "ai.operationId": "ai.toolCall",
        "ai.toolCall.name": "searchDocs",
        "ai.toolCall.id": "call_1",
        "ai.toolCall.args": '{"query": "dataset"}',
        "ai.toolCall.result": '{"text": "Datasets are..."}',
    }
    export = _langfuse_export(
        {"input": json.dumps("what is a dataset"), "output": json.dumps(answer)},
        _observation("lf1", "a1", "GENERATION", 1, name="handle-message", output=answer),
        _observation(
            "lf1",
            "a2",
            "GENERATION",
            2,
            name="ai.streamText",
            parentObservationId="a1",
            output=answer,
        ),
        _observation(
            "lf1",
            "a3",
            "TOOL",
            3,
            name="ai.toolCall",
            parentObservationId="a2",
            input='{"query": "dataset"}',
            output='{"text": "Datasets are..."}',
            metadata=json.dumps({"attributes": tool_attributes}),
        ),
    )
    trace = _trace_of("langfuse", export)
    assert steps(trace) == [
        ("tool_call", "searchDocs"),
        ("observation", "searchDocs"),
        ("thought", None),
    ]
    assert answers(trace) == 1


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}],
        [{"role": "user", "content": [{"type": "text", "text": "Capital?"}]}],
        [{"type": "message", "role": "user", "content": "Capital?"}],
    ],
)
def test_a_phoenix_row_whose_input_value_is_chat_messages_is_read_as_phoenix(
    messages: list[dict[str, Any]],
) -> None:
    """OpenInference's Agents SDK spans keep a model call's request messages as its
    ``input.value``: the chat sources recognise that column too, and the Phoenix row (its
    ``context.*`` columns say what it is) must not be refused as ambiguous."""
    row = json.loads((DATA / "phoenix" / "spans_dataframe.jsonl").read_text().splitlines()[0])
    row["attributes.input.value"] = json.dumps(messages)
    assert [source.name for source in detect(row)] == ["phoenix"]


@pytest.mark.parametrize("index_kept", [True, False])
def test_phoenix_dataframe_saved_by_pandas_default_gives_the_same_trace(
    tmp_path: Path, index_kept: bool
) -> None:
    """``df.to_json("spans.json")`` writes the dataframe by columns (``{column: {row: value}}``):
    read as its rows. ``get_spans_dataframe`` indexes the rows by ``context.span_id``, which that
    form keeps only as the columns' keys."""
    text = (DATA / "phoenix" / "spans_dataframe.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    index = [row["context.span_id"] for row in rows]
    columns = {key for row in rows for key in row} - (set() if index_kept else {"context.span_id"})
    by_column = {
        column: {span_id: row.get(column) for span_id, row in zip(index, rows, strict=True)}
        for column in sorted(columns)
    }
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(by_column))
    converted = only(path)
    assert source_of(converted)["format"] == "phoenix"
    assert converted.trace == only(DATA / "phoenix" / "spans_dataframe.jsonl").trace


def _nested_span(row: dict[str, Any]) -> dict[str, Any]:
    """A dataframe row as Phoenix's REST API writes the span: ``context`` and ``attributes``."""
    span: dict[str, Any] = {"context": {}, "attributes": {}}
    for key, value in row.items():
        head, _, rest = key.partition(".")
        if head in ("context", "attributes") and rest:
            span[head][rest] = value
        else:
            span[key] = value
    return span


def test_a_page_of_phoenix_rest_spans_gives_the_trace_of_its_rows(tmp_path: Path) -> None:
    """``GET /v1/projects/{project}/spans`` answers ``{"data": [span...], "next_cursor"}``, saved as
    it came: read as its spans (it was refused as an unknown object, though the same spans as a
    list were read); a span it cannot read is a problem located in ``data``."""
    text = (DATA / "phoenix" / "spans_dataframe.jsonl").read_text()
    spans = [_nested_span(json.loads(line)) for line in text.splitlines()]
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"data": spans, "next_cursor": None}))
    converted = only(path)
    assert source_of(converted)["format"] == "phoenix"
    assert converted.trace == only(DATA / "phoenix" / "spans_dataframe.jsonl").trace
    path.write_text(json.dumps({"data": [*spans, {"name": "x"}], "next_cursor": "c2"}))
    items = list(convert_file(path))
    (problem,) = [item for item in items if isinstance(item, Problem)]
    assert "data[" in str(problem)
    assert "Phoenix span" in str(problem)
    assert [item.trace for item in items if isinstance(item, TraceItem)] == [converted.trace]


CSHARP = CORPUS / "langfuse" / "csharp-agent-with-gemini-2026-03-09.json"
"""A C# agent's tool that returns ``{"response_status": "Error", "message": ...}`` at level
DEFAULT (its span's status unset), then the model explains and answers."""


def _with_tool_output(tmp_path: Path, output: Any) -> ReasoningTrace:
    export = json.loads(CSHARP.read_text())
    for observation in export["observations"]:
        if observation["name"] == "get_custom_report" and observation["type"] == "TOOL":
            observation["output"] = json.dumps(output)
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(export))
    return only(path).trace


def test_a_langfuse_tool_that_reports_its_own_failure_is_an_error_at_any_level(
    tmp_path: Path,
) -> None:
    """Langfuse keeps a span at DEFAULT whether its status was OK or unset: a tool's output
    that says it failed (a ``status``/``..._status`` of error, an ``error``, text starting
    ``Error``) is the error, its message the observation; the model's next reply recovers."""
    trace = only(CSHARP).trace
    assert steps(trace)[:3] == [
        ("tool_call", "get_custom_report"),
        ("observation", "get_custom_report"),
        ("error_recovery", None),
    ]
    assert (trace.steps[1].content or "").startswith("ERROR: No data found for dimensions")
    adk = {"status": "error", "error_message": "Weather for 'Atlantis' is not available."}
    assert _with_tool_output(tmp_path, adk).steps[2].type == "error_recovery"
    assert _with_tool_output(tmp_path, "Error: quota exceeded").steps[2].type == "error_recovery"
    for fine in ({"status": "success", "report": []}, {"response_status": "NoDataFound"}):
        assert _with_tool_output(tmp_path, fine).steps[2].type == "thought"
