"""What the reader tests share: one file read by one source, and what a converted trace says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import TraceOptions, read
from knowledgepulse.sources._envelope import NO_TEXT
from knowledgepulse.sources._registry import detect, get_source
from knowledgepulse.trace import TraceItem
from tests.paths import REPO


def convert_file(
    path: str | Path, *, source: str = "auto", options: TraceOptions | None = None
) -> list[TraceItem | Problem]:
    """What one source gives for a file, as its reader yields it (no repeated-id checks).

    A file no source (or more than one) recognises gives what ``sources.read`` says of it.
    """
    records = list(read_records(path))
    found = get_source(source) if source != "auto" else None
    if found is None:
        first = next((record for record in records if isinstance(record, Record)), None)
        candidates = [] if first is None else detect(first.value)
        if len(candidates) != 1:
            return list(read([path]))
        found = candidates[0]
    return list(found.convert(records, options or TraceOptions()))


def one_trace(path: str | Path) -> TraceItem:
    """A file's one trace, the file giving nothing else (no problem, no warning)."""
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem), item
    return item


def recognise(value: Any) -> str | None:
    """The one source that reads a record, or ``None`` when none or several do."""
    found = detect(value)
    return found[0].name if len(found) == 1 else None


def source_of(item: TraceItem) -> dict[str, Any]:
    """The converted trace's ``metadata.source``: its format, the origins of its values."""
    found = getattr(item.trace.metadata, "source", None)
    assert isinstance(found, dict)
    return found


def has_text(item: TraceItem) -> bool:
    """Whether the source recorded any message text (else a warning says it holds none)."""
    return not any(NO_TEXT in warning for warning in item.warnings)


CORPUS = REPO / "tests" / "conformance" / "files"
SHAPE_FOLDERS = {
    "prompt-completion": "openai-chat",
    "preference": "openai-chat",
    "alpaca": "openai-chat",
    "xlam": "openai-chat",
}
"""Corpus folders named after a shape of rows, and the source that reads that shape."""
FIRST_FILES = {
    # Each other folder is named after the source that reads its files.
    files[0]: SHAPE_FOLDERS.get(folder.name, folder.name)
    for folder in sorted(CORPUS.iterdir())
    if folder.is_dir()
    and folder.name != "rows"  # rows kp reads no run from, given back (test_rows_back.py)
    and (files := sorted(p for p in folder.iterdir() if not p.name.endswith(".facts.json")))
}
"""The first file of each folder of the conformance corpus, and the source that reads it."""
EXAMPLES = {
    "datasets/anthropic.jsonl": "anthropic",
    "datasets/anthropic.parquet": "anthropic",
    "datasets/hermes.jsonl": "hermes",
    "datasets/hermes.parquet": "hermes",
    "datasets/openai_chat.jsonl": "openai-chat",
    "datasets/openai_chat.parquet": "openai-chat",
    "datasets/openai_chat_hf": "openai-chat",
    "datasets/openai_responses.jsonl": "openai-responses",
    "datasets/openai_responses.parquet": "openai-responses",
    "datasets/sharegpt.jsonl": "sharegpt",
    "datasets/sharegpt.parquet": "sharegpt",
    "datasets/swe_agent.jsonl": "sharegpt",
    "datasets/swe_agent.parquet": "sharegpt",
    "integrations/langgraph/runs.json": "langsmith",
    "integrations/openai_agents/agents_export.jsonl": "openai-agents",
    "integrations/otel/pydantic_ai_weather.otlp.jsonl": "otlp",
    "integrations/pydantic_ai/messages.json": "pydantic-ai",
    "integrations/smolagents/steps.json": "smolagents",
    "traces/finance-tsmc.json": "reasoning-trace",
    "traces/traces.jsonl": "reasoning-trace",
}
INSPECTED = FIRST_FILES | {REPO / "examples" / name: source for name, source in EXAMPLES.items()}


def first_trace(path: Path) -> TraceItem | None:
    """The first trace ``sources.read`` gives of a file, or ``None``."""
    return next((item for item in read([path]) if isinstance(item, TraceItem)), None)


_LANGFUSE_ROW_COLUMNS = {
    "id": "id",
    "traceId": "trace_id",
    "type": "type",
    "name": "name",
    "startTime": "start_time",
    "endTime": "end_time",
    "parentObservationId": "parent_observation_id",
    "level": "level",
    "statusMessage": "status_message",
    "input": "input",
    "output": "output",
    "metadata": "metadata",
}
"""An API observation's fields, and the blob storage export's columns of the same."""


def langfuse_fetched(observations: list[dict[str, Any]], how: str) -> str:
    """A trace's observations as the public API's page of them (``page``), as the UI's batch
    export of the observations table (``table``: a JSON array of them), or as blob storage
    rows (JSON Lines, nested values as JSON text)."""
    if how == "page":
        return json.dumps({"data": observations, "meta": {"page": 1}})
    if how == "table":
        return json.dumps(observations)
    return "\n".join(
        json.dumps(
            {
                column: value if isinstance(value, str | None) else json.dumps(value)
                for field, column in _LANGFUSE_ROW_COLUMNS.items()
                if (value := item.get(field)) is not None or field == "parentObservationId"
            }
        )
        for item in observations
    )
