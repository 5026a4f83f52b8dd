"""Detection by content: every bundled file is read as its own source, with no source named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowledgepulse import sources
from knowledgepulse.cli.main import cli
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import RowOptions, TraceOptions
from knowledgepulse.sources._registry import detect, source_names
from knowledgepulse.trace import TraceItem, load_traces
from knowledgepulse.value import TraceValueScorer

ROOT = Path(__file__).parents[2]
TRACES = ROOT / "examples" / "traces" / "traces.jsonl"

READ_AS: dict[str, str | None] = {
    "corpora/reflexion_hotpotqa.jsonl": "reasoning-trace",
    "corpora/taubench.jsonl": "reasoning-trace",
    "examples/datasets/anthropic.jsonl": "anthropic",
    "examples/datasets/anthropic.parquet": "anthropic",
    "examples/datasets/hermes.jsonl": "hermes",
    "examples/datasets/hermes.parquet": "hermes",
    "examples/datasets/openai_chat.jsonl": "openai-chat",
    "examples/datasets/openai_chat.parquet": "openai-chat",
    "examples/datasets/openai_chat_hf/data-00000-of-00001.arrow": "openai-chat",
    "examples/datasets/openai_chat_hf/dataset_info.json": None,  # save_to_disk's own metadata
    "examples/datasets/openai_chat_hf/state.json": None,
    "examples/datasets/openai_responses.jsonl": "openai-responses",
    "examples/datasets/openai_responses.parquet": "openai-responses",
    "examples/datasets/sharegpt.jsonl": "sharegpt",
    "examples/datasets/sharegpt.parquet": "sharegpt",
    "examples/datasets/swe_agent.jsonl": "sharegpt",
    "examples/datasets/swe_agent.parquet": "sharegpt",
    "examples/evals/after.jsonl": None,  # evaluation cases, not traces
    "examples/evals/cases.jsonl": None,
    "examples/evals/invalid-cases.jsonl": None,
    "examples/integrations/langgraph/runs.json": "langsmith",
    "examples/integrations/openai_agents/agents_export.jsonl": "openai-agents",
    "examples/integrations/otel/pydantic_ai_weather.otlp.jsonl": "otlp",
    "examples/integrations/pydantic_ai/messages.json": "pydantic-ai",
    "examples/integrations/smolagents/steps.json": "smolagents",
    "examples/summaries/cases.jsonl": None,
    "examples/traces/finance-tsmc.json": "reasoning-trace",
    "examples/traces/invalid.jsonl": "reasoning-trace",
    "examples/traces/traces.jsonl": "reasoning-trace",
    "tests/sources/data/chat/anthropic.jsonl": "anthropic",
    "tests/sources/data/chat/hermes.json": "hermes",
    "tests/sources/data/chat/openai_chat.jsonl": "openai-chat",
    "tests/sources/data/chat/openai_responses.jsonl": "openai-responses",
    "tests/sources/data/chat/sharegpt.jsonl": "sharegpt",
    "tests/sources/data/chat/swe_agent.jsonl": "sharegpt",
    "tests/sources/data/chat/toolace_messages_string.jsonl": "openai-chat",
    "tests/sources/data/jaeger/genai_agent_trace.json": "jaeger",
    "tests/sources/data/langchain/langsmith_py_wrap_openai_.json": "langsmith",
    "tests/sources/data/langchain/langsmith_py_wrap_openai_reasoning.json": "langsmith",
    "tests/sources/data/langchain/tracer_nested_run.json": "langsmith",
    "tests/sources/data/langchain/tracer_nested_runs_on_error.json": "langsmith",
    "tests/sources/data/langfuse/api_traces_page.json": "langfuse",
    "tests/sources/data/langfuse/observations_v2.parquet": "langfuse",
    "tests/sources/data/langfuse/weather_agent_export.json": "langfuse",
    # The SDK's own test snapshots, from which the tests rebuild exported objects.
    "tests/sources/data/openai_agents/mcp_tracing.snapshot.json": None,
    "tests/sources/data/openai_agents/tool_call_error.snapshot.json": None,
    "tests/sources/data/otel/console_exporter_pretty.jsonl": "otlp",
    "tests/sources/data/otel/genai_invoke_agent.otlp.json": "otlp",
    "tests/sources/data/otel/genai_semconv_examples.otlp.jsonl": "otlp",
    "tests/sources/data/otel/openinference_tool_calling.jsonl": "otlp",
    "tests/sources/data/otel/openinference_traces.json": "otlp",
    "tests/sources/data/otel/opentelemetry_proto_trace.json": "otlp",
    "tests/sources/data/otel_js/ai_sdk_generate_text.json": "otel-js",
    "tests/sources/data/phoenix/spans_dataframe.jsonl": "phoenix",
    "tests/sources/data/pydantic_ai/legacy_retry_prompt.json": "pydantic-ai",
    "tests/sources/data/pydantic_ai/weather_retry.json": "pydantic-ai",
    "tests/sources/data/smolagents/action_step_dict.json": "smolagents",
    "tests/sources/data/tempo/trace_by_id.json": "otlp",
}
"""Every bundled example, corpus and reader fixture, and the source it is read as."""


def _bundled() -> list[str]:
    patterns = ("examples/**/*", "corpora/*", "tests/sources/data/**/*")
    return sorted(
        path.relative_to(ROOT).as_posix()
        for pattern in patterns
        for path in ROOT.glob(pattern)
        if path.suffix in (".json", ".jsonl", ".parquet", ".arrow")
    )


def test_the_table_covers_every_bundled_file() -> None:
    """A file added to examples/, corpora/ or the fixtures needs its line in READ_AS."""
    assert sorted(READ_AS) == _bundled()


@pytest.mark.parametrize(("path", "expected"), sorted(READ_AS.items()))
def test_each_bundled_file_is_read_as_its_source(path: str, expected: str | None) -> None:
    """The first record decides: one source recognises it (or none, for a file of cases)."""
    first = next(item for item in read_records(ROOT / path) if isinstance(item, Record))
    assert [source.name for source in detect(first.value)] == ([expected] if expected else [])


@pytest.mark.parametrize("path", [path for path, source in sorted(READ_AS.items()) if source])
def test_each_bundled_trace_file_reads_without_a_source_named(path: str) -> None:
    """``sources.read`` gives traces for every file a source recognises, no source named."""
    said: list[str] = []
    items = list(sources.read([ROOT / path], notes=said.append))
    if READ_AS[path] == "reasoning-trace":
        assert any(isinstance(item, TraceItem) for item in items)
        assert said == []  # a trace file is what every command reads: nothing to say
    else:
        (line,) = said
        assert line.startswith(f"{ROOT / path}: read as {READ_AS[path]}")


def test_convert_passes_a_reasoning_trace_file_through_unchanged() -> None:
    """``kp convert`` of our own file gives back the same documents, with nothing said."""
    result = CliRunner().invoke(cli, ["convert", str(TRACES)])
    assert result.exit_code == 0
    written = [json.loads(line) for line in result.stdout.splitlines()]
    assert written == [json.loads(line) for line in TRACES.read_text().splitlines()]
    assert "read as" not in result.stderr


def test_a_reasoning_trace_scores_the_same_read_by_detection() -> None:
    """Detected as itself, never converted: the scores are those of ``load_traces``."""
    scorer = TraceValueScorer(embedder=None)
    detected = [i.trace for i in sources.read([TRACES]) if isinstance(i, TraceItem)]
    loaded = [i.trace for i in load_traces([TRACES]) if isinstance(i, TraceItem)]
    assert detected == loaded
    assert [scorer.score(t).score for t in detected] == [scorer.score(t).score for t in loaded]


@pytest.mark.parametrize("path", [TRACES, str(TRACES)])
def test_one_path_not_in_a_list_is_read_as_that_file(path: str | Path) -> None:
    """``sources.read("traces.jsonl")`` reads the file (its letters were read as paths: '/')."""
    items = list(sources.read(path))
    assert [type(item).__name__ for item in items] == ["TraceItem"] * 8


def test_a_reasoning_trace_with_options_keeps_its_own_domain_and_says_so() -> None:
    """A domain given for converted traces is not applied to a trace file: a warning says so."""
    items = list(sources.read([TRACES], options=TraceOptions(domain="given")))
    warning = items[0]
    assert isinstance(warning, Problem)
    assert warning.warning
    assert "not applied" in warning.message
    traces = [item.trace for item in items if isinstance(item, TraceItem)]
    assert len(traces) == 8
    assert "given" not in {trace.metadata.task_domain for trace in traces}


@pytest.mark.parametrize(
    ("path", "source"),
    [
        (TRACES, "reasoning-trace"),
        (
            ROOT / "tests" / "conformance" / "files" / "langfuse" / "agno-2025-06-11.json",
            "langfuse",
        ),
    ],
)
def test_row_options_on_a_file_that_is_not_rows_are_warned_of(path: Path, source: str) -> None:
    """Row columns given for a trace file or an export are not applied: one warning names them,
    as a caller wrote them and as kp's options (a combination trial met the Python names alone)."""
    rows = RowOptions(messages_field="m", id_field="i", success_field="s", success_threshold=0.3)
    items = list(sources.read([path], options=TraceOptions(rows=rows)))
    said = [item.message for item in items if isinstance(item, Problem) and item.warning]
    unapplied = [message for message in said if "row options" in message]
    assert unapplied == [
        f"a {source} file is not dataset rows: the row options given "
        "(messages_field, id_field, success_field, success_threshold; kp: --messages-field, "
        "--id-field, --success-field, --success-threshold) are not applied to it"
    ]


def test_row_options_on_rows_are_not_warned_of() -> None:
    """A dataset's rows read the row columns given: no warning."""
    rows = ROOT / "examples" / "datasets" / "openai_chat.jsonl"
    options = TraceOptions(rows=RowOptions(id_field="trajectory_id", success_threshold=0.3))
    items = list(sources.read([rows], options=options))
    assert [item for item in items if isinstance(item, Problem)] == []


def test_a_file_of_traces_and_a_file_of_rows_read_together_each_by_its_own_source() -> None:
    """Detection is per file: a trace file and a dataset in one read."""
    rows = ROOT / "examples" / "datasets" / "openai_chat.parquet"
    said: list[str] = []
    items = [i for i in sources.read([TRACES, rows], notes=said.append) if isinstance(i, TraceItem)]
    assert [item.row is not None for item in items] == [False] * 8 + [True] * 3
    assert [item.task for item in items[8:]] == [
        "acme__widgets-42",
        "acme__widgets-42",
        "weather-1",
    ]
    assert said == [
        f"{rows}: read as openai-chat rows (3 traces): messages from 'trajectory'; id from "
        "'trajectory_id'; task from 'instance_id'; success from 'resolved' (a number counts "
        "from 0.5)"
    ]


def test_trace_documents_are_read_as_themselves_whatever_source_is_named() -> None:
    """A file of ``ReasoningTrace`` documents beside rows named by their source (the rows'
    ``--from``, which also reads ``kp dedupe --against REF``) is read as itself, and says so.

    Before: every document was an error (no column holds openai-chat messages) and none read.
    """
    rows = ROOT / "examples" / "datasets" / "openai_chat.jsonl"
    said: list[str] = []
    items = list(sources.read([TRACES, rows], source="openai-chat", notes=said.append))
    documents = [json.loads(line) for line in TRACES.read_text().splitlines()]
    assert [item.document for item in items[:8] if isinstance(item, TraceItem)] == documents
    assert [item.row is not None for item in items if isinstance(item, TraceItem)] == [
        False
    ] * 8 + [True] * 3
    assert said[0] == (
        f"{TRACES}: read as reasoning-trace: ReasoningTrace documents are read as themselves, "
        "never converted from openai-chat"
    )
    # Named as their own source, they are read alike, with nothing to say.
    said.clear()
    named = list(sources.read(TRACES, source="reasoning-trace", notes=said.append))
    assert [item.document for item in named if isinstance(item, TraceItem)] == documents
    assert said == []


def test_a_record_no_source_recognises_names_every_source() -> None:
    """Not a format this tool knows: a problem at each record, the sources listed."""
    problems = list(sources.convert([{"hello": "world"}, {"hello": "again"}]))
    assert [str(p).split(": not a trace")[0] for p in problems] == ["rows:1", "rows:2"]
    first = problems[0]
    assert isinstance(first, Problem)
    assert all(isinstance(problem, Problem) for problem in problems)
    assert str(first).startswith("rows:1: not a trace file this tool knows: an object")
    assert all(name in first.message for name in source_names())


def test_a_stray_first_record_costs_no_trace_after_it() -> None:
    """The first record a source knows decides the file; a stray line before it is one problem."""
    documents = [json.loads(line) for line in TRACES.read_text().splitlines()]
    items = list(sources.convert([{"hello": "world"}, *documents]))
    assert isinstance(items[0], Problem)
    assert items[0].location.line == 1
    assert [item.document for item in items[1:] if isinstance(item, TraceItem)] == documents


def test_in_memory_trace_documents_are_read_as_themselves() -> None:
    """``sources.convert`` of ``ReasoningTrace`` dicts validates them; nothing is converted."""
    documents = [json.loads(line) for line in TRACES.read_text().splitlines()]
    items = list(sources.convert(documents))
    assert [item.document for item in items if isinstance(item, TraceItem)] == documents


@pytest.mark.parametrize(
    "command",
    [
        ["score", "--no-embedder"],
        ["select", "--no-embedder"],
        pytest.param(["dedupe"], marks=pytest.mark.embedder),
    ],
    ids=["score", "select", "dedupe"],
)
@pytest.mark.parametrize("name", ["openai_chat.parquet", "sharegpt.jsonl"])
def test_the_trace_commands_read_rows_with_no_source_named(
    command: list[str], name: str, tmp_path: Path
) -> None:
    """``kp score``, ``select`` and ``dedupe`` on Parquet or chat rows need no ``--from``."""
    path = ROOT / "examples" / "datasets" / name
    # kp score writes a report (JSON Lines), not rows: an .parquet name is refused.
    output = tmp_path / ("out.jsonl" if command[0] == "score" else f"out{path.suffix}")
    result = CliRunner().invoke(cli, [*command, str(path), "-o", str(output)])
    assert result.exit_code == 0, result.stderr
    assert f"{path}: read as " in result.stderr
    assert output.stat().st_size > 0
