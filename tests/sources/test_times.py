"""Times in real files: the same instants written in other zones, or none, convert the same."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from knowledgepulse.sources import read
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
