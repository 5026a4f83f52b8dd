"""Reading items for a run: any input recognised by content, each item with its task, set once."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.records import Problem
from knowledgepulse.runs import items_of
from knowledgepulse.runs.read import read_items
from knowledgepulse.trace import TraceItem
from tests.builders import trace_json
from tests.redact.examples import secret_examples

ROOT = Path(__file__).parents[2]
TRACES = ROOT / "examples" / "traces" / "traces.jsonl"
ROWS = ROOT / "examples" / "datasets" / "openai_chat.jsonl"


def _tasks(items: Iterable[object]) -> list[str | None]:
    return [item.task for item in items if isinstance(item, TraceItem)]


def test_no_source_means_each_file_is_recognised_and_rows_carry_their_task_column() -> None:
    """``source=None`` is auto: a trace file as itself, rows with their guessed task column."""
    assert _tasks(read_items([TRACES, ROWS])) == [None] * 8 + [
        "acme__widgets-42",
        "acme__widgets-42",
        "weather-1",
    ]


def test_a_task_field_is_a_rows_column_or_a_path_in_a_trace() -> None:
    """The same ``task_field`` names a dataset's column and a dotted path in a trace's JSON."""
    assert _tasks(read_items([ROWS], task_field="repo")) == ["acme/widgets"] * 2 + [None]
    domains = _tasks(read_items([TRACES], task_field="metadata.task_domain"))
    assert domains[:2] == ["finance", "code"]


def test_rows_in_memory_are_recognised_like_a_file_of_them() -> None:
    """``items_of`` on row dicts gives what ``read_items`` gives for the same rows in a file."""
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    from_memory = [i for i in items_of(rows) if isinstance(i, TraceItem)]
    from_file = [i for i in read_items([ROWS]) if isinstance(i, TraceItem)]
    assert [i.trace.steps for i in from_memory] == [i.trace.steps for i in from_file]
    assert [i.task for i in from_memory] == [i.task for i in from_file]


def test_a_problem_never_quotes_a_secret(tmp_path: Path) -> None:
    """A refused value is quoted in its problem's message: any secret in it redacted."""
    token = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    path = tmp_path / "t.jsonl"
    bad = trace_json()
    bad["metadata"]["success"] = token
    long = trace_json()
    long["metadata"]["success"] = "words " * 8 + token  # cut in the preview past 60 characters
    path.write_text(json.dumps(bad) + "\n" + json.dumps(long) + "\n")
    problems = [item for item in read_items([path]) if isinstance(item, Problem)]
    assert [problem.path for problem in problems] == ["metadata.success"] * 2
    assert problems[0].message == 'got "[REDACTED:api_key]"; expected a valid boolean'
    assert not any("ghp_" in str(problem) for problem in problems)


@pytest.mark.parametrize("example", secret_examples(), ids=lambda example: example["rule"])
def test_a_problem_never_quotes_any_secret_shape(example: dict[str, str]) -> None:
    """Whatever secret a refused value holds: the message quotes it as JSON (its quotes
    escaped, "password: \\"...\\""), and no part of the secret is in it."""
    bad = trace_json()
    bad["metadata"]["success"] = example["sample"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text(json.dumps(bad) + "\n")
        problems = [item for item in read_items([path]) if isinstance(item, Problem)]
    assert problems
    assert example["secret"] not in str(problems[0])


@pytest.mark.parametrize("level", ["private", "aggregated"])
def test_rows_in_memory_get_problems_cleaned_as_a_files_rows_do(level: Any) -> None:
    """A refused value of a row dict is quoted cleaned at ``messages``' level, as in a file:
    a secret always, an e-mail address when the run redacts (``aggregated``)."""
    token = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    email = "jane.roe@acme-mail.com"
    rows = []
    for value in (token, email):
        bad = trace_json()
        bad["metadata"]["success"] = value
        rows.append(bad)
    problems = [p for p in items_of(rows, messages=level) if isinstance(p, Problem)]
    assert [problem.path for problem in problems] == ["metadata.success"] * 2
    assert token not in str(problems)
    assert (email in str(problems)) == (level == "private")
