"""Times in real files: the same instants written in other zones, or none, convert the same."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.sources import StepBuilder, convert, read
from knowledgepulse.trace import TraceItem
from tests.paths import REPO

FILES = REPO / "tests" / "conformance" / "files"
ISO = re.compile(r'"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})"')
PACIFIC = timezone(timedelta(hours=-8))


@pytest.fixture
def machine_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone is Los Angeles (a naive time read as local would move)."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def rewritten(text: str) -> str:
    """Every time of ``text`` as the same instant: in turn without a zone (UTC) and at -08:00."""
    naive = itertools.cycle([True, False])

    def instant(match: re.Match[str]) -> str:
        at = datetime.fromisoformat(match[1] + match[2].replace("Z", "+00:00")).astimezone(UTC)
        written = at.replace(tzinfo=None) if next(naive) else at.astimezone(PACIFIC)
        return f'"{written.isoformat()}"'

    return ISO.sub(instant, text)


def traces(path: Path) -> list[str]:
    items = list(read([path]))
    assert all(isinstance(item, TraceItem) for item in items), items
    return [item.trace.model_dump_json() for item in items if isinstance(item, TraceItem)]


@pytest.mark.usefixtures("machine_zone")
@pytest.mark.parametrize(
    "name",
    [
        "pydantic-ai/google_model_retry.json",
        "openai-agents/google_model_retry.jsonl",
        "langfuse/agno-2025-06-11.json",
        "claude-code/claude_code_viewer_init.jsonl",
        "codex/agent_sessions_small.jsonl",
    ],
)
def test_times_without_a_zone_are_utc_beside_times_with_one(name: str, tmp_path: Path) -> None:
    """A run whose times are partly zone-less converts as written in UTC, on any machine."""
    original = FILES / name
    moved = tmp_path / original.name
    moved.write_text(rewritten(original.read_text(encoding="utf-8")), encoding="utf-8")
    assert moved.read_text(encoding="utf-8") != original.read_text(encoding="utf-8")
    assert traces(moved) == traces(original)


def with_ends(value: Any, keys: tuple[str, str], *, swap: bool) -> Any:
    """``value`` with each object's start and end (``keys``) swapped, or its end its start."""
    if isinstance(value, list):
        return [with_ends(item, keys, swap=swap) for item in value]
    if not isinstance(value, dict):
        return value
    changed = {key: with_ends(item, keys, swap=swap) for key, item in value.items()}
    start, end = keys
    if start in changed and end in changed:
        changed[start], changed[end] = (changed[end] if swap else changed[start]), changed[start]
    return changed


def tool_latencies(path: Path, keys: tuple[str, str], *, swap: bool | None) -> list[Any]:
    """The latencies of the tool calls of ``path`` (times as they are, with ``swap=None``)."""
    text = path.read_text(encoding="utf-8")
    records = (
        [json.loads(text)]
        if path.suffix == ".json"
        else list(map(json.loads, text.split("\n")[:-1]))
    )
    if swap is not None:
        records = [with_ends(record, keys, swap=swap) for record in records]
    items = list(convert(records, name=path.name))
    steps = [s for i in items if isinstance(i, TraceItem) for s in i.trace.model_dump()["steps"]]
    return [step.get("latency_ms") for step in steps if step["type"] == "tool_call"]


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        (
            FILES / "otlp/agentevals_kagent_adk_go_1turn.json",
            ("startTimeUnixNano", "endTimeUnixNano"),
        ),
        (FILES / "openai-agents/google_model_retry.jsonl", ("started_at", "ended_at")),
    ],
    ids=["otlp", "openai-agents"],
)
def test_an_end_before_the_start_is_an_unknown_latency(path: Path, keys: tuple[str, str]) -> None:
    """Clock skew (a span that ends before it starts) gives no latency, not 0; a span that
    ends as it starts took 0 ms."""
    told = [latency for latency in tool_latencies(path, keys, swap=None) if latency is not None]
    assert all(told)
    assert tool_latencies(path, keys, swap=True) == [None] * len(told)
    assert tool_latencies(path, keys, swap=False) == [0.0] * len(told)


def test_a_negative_latency_told_to_the_builder_is_unknown() -> None:
    """A source that passes end - start as it is (LangChain runs) gets no latency, not 0."""
    builder = StepBuilder()
    builder.tool_result("search", output="found", call_id="1", at=10.0, latency_ms=-250.0)
    builder.tool_result("search", output="again", call_id="2", at=11.0, latency_ms=0.0)
    steps = [step for step in builder.steps() if step["type"] == "tool_call"]
    assert [step.get("latency_ms") for step in steps] == [None, 0.0]


def created_at(written: Any) -> str:
    """The ``created_at`` a chat row stamped ``written`` converts to."""
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}]
    (item,) = convert([{"timestamp": written, "messages": turns}])
    assert isinstance(item, TraceItem)
    value = item.trace.model_dump(mode="json")["metadata"]["created_at"]
    assert isinstance(value, str)
    return value


def test_a_time_utc_cannot_hold_keeps_its_own_offset() -> None:
    """The year 10000 in UTC: created_at is written in its offset, not a crash."""
    assert created_at("9999-12-31T23:00:00-05:00") == "9999-12-31T23:00:00-05:00"


@pytest.mark.parametrize("written", ["0001-01-01T00:00:00+05:00", "1999-12-31T23:59:59Z", 1, 2])
def test_a_time_before_2000_is_no_runs_date(written: Any) -> None:
    """A placeholder (a fixture's ``1``, the year 1) leaves the trace undated, as no time does."""
    assert created_at(written) == "1970-01-01T00:00:00Z"
    assert created_at("2000-01-01T00:00:00Z") == "2000-01-01T00:00:00Z"


WRITINGS = st.lists(st.one_of(st.none(), st.integers(-14 * 60, 14 * 60)), min_size=1)
"""How each time is written in turn: without a zone (UTC), or at that many minutes' offset."""


def written_as(text: str, writings: list[int | None]) -> str:
    """Every time of ``text`` as the same instant, written as ``writings`` says in turn."""
    turns = itertools.cycle(writings)

    def instant(match: re.Match[str]) -> str:
        at = datetime.fromisoformat(match[1] + match[2].replace("Z", "+00:00")).astimezone(UTC)
        minutes = next(turns)
        if minutes is None:
            return f'"{at.replace(tzinfo=None).isoformat()}"'
        return f'"{at.astimezone(timezone(timedelta(minutes=minutes))).isoformat()}"'

    return ISO.sub(instant, text)


@pytest.mark.usefixtures("machine_zone")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    writings=WRITINGS,
    name=st.sampled_from(
        ["pydantic-ai/google_model_retry.json", "openai-agents/google_model_retry.jsonl"]
    ),
)
def test_the_same_instants_in_any_zones_convert_the_same(
    writings: list[int | None], name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Law: rewriting a run's times as the same instants in other zones changes no trace."""
    original = FILES / name
    moved = tmp_path_factory.mktemp("times") / original.name
    moved.write_text(written_as(original.read_text(encoding="utf-8"), writings), encoding="utf-8")
    assert traces(moved) == traces(original)
