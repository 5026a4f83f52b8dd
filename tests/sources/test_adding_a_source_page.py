"""docs/integrations.md's "Adding a source" works as written: its source, defined as in a
notebook, reads a file of the events it describes, and its entry point names the same source."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources._registry import Source, unregister_source
from knowledgepulse.trace import TraceItem
from tests.paths import REPO

SECTION = (REPO / "docs" / "integrations.md").read_text("utf-8").split("## Adding a source")[1]
PYTHON, TOML = (
    re.search(rf"^```{kind}\n(.*?)^```", SECTION, re.S | re.M).group(1)  # type: ignore[union-attr]
    for kind in ("python", "toml")
)
EVENTS: list[dict[str, Any]] = [
    {"event": "user", "text": "Find the cheapest flight from Oslo to Rome"},
    {"event": "think", "text": "Search the flights first."},
    {"event": "tool", "tool": "flight_search", "args": {"to": "FCO"}, "call": "c1"},
    {"event": "tool_result", "tool": "flight_search", "error": "timeout", "call": "c1"},
    {"event": "tool", "tool": "flight_search", "args": {"to": "FCO"}, "call": "c2"},
    {"event": "tool_result", "tool": "flight_search", "output": "FR1234 89 EUR", "call": "c2"},
    {"event": "final", "text": "FR1234 at 89 EUR is the cheapest.", "ok": True},
]


@pytest.fixture
def defined() -> Iterator[dict[str, Any]]:
    """The page's block run as a notebook cell runs it; the source forgotten afterwards."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(PYTHON, "integrations.md", "exec"), namespace)
    yield namespace
    unregister_source("acme-log")


def test_the_pages_source_reads_a_run_spread_over_lines(
    defined: dict[str, Any], tmp_path: Path
) -> None:
    """One run of seven events is one trace, its failed call recovered, no problem said."""
    path = tmp_path / "runs.jsonl"
    lines = [
        {"acme_log": 1, "run": "r1", "ts": f"2026-11-01T10:00:0{i}+00:00", **event}
        for i, event in enumerate(EVENTS)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = list(sources.read([path]))
    assert [str(item) for item in read if isinstance(item, Problem)] == []
    (item,) = read
    assert isinstance(item, TraceItem)
    assert item.trace.id == "kp:trace:acme:r1"
    assert item.trace.task.objective == EVENTS[0]["text"]
    assert [step.type for step in item.trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert sources.inspect_file(path).source == "acme-log"


def test_the_pages_entry_point_names_the_pages_class(defined: dict[str, Any]) -> None:
    """The TOML publishes the class under the name its decorator gives it."""
    published = tomllib.loads(TOML)["project"]["entry-points"]["knowledgepulse.sources"]
    ((name, target),) = published.items()
    assert name == defined["AcmeLog"].name
    assert target.endswith(":AcmeLog")


def test_the_pages_source_is_annotated_as_the_base_class_declares(
    defined: dict[str, Any],
) -> None:
    """Pasted into a mypy --strict project the class checks: each method it overrides is typed
    as ``Source`` declares it (an unannotated one is "missing a type annotation")."""
    cls = defined["AcmeLog"]
    for method in ("recognises", "convert"):
        hints = get_type_hints(getattr(cls, method), defined)
        assert hints == get_type_hints(getattr(Source, method)), method
