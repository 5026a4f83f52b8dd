"""The Python calls take kp's reading options as keywords: each reads the rows as the flag does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.cli.main import main
from knowledgepulse.errors import SettingTypeError
from knowledgepulse.runs import decontaminate, dedupe, redact, score, select, split
from knowledgepulse.runs.read import TraceSettings
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer


def _messages(task: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": task}, {"role": "assistant", "content": answer}]


def _rows() -> list[dict[str, Any]]:
    """Rows whose guessed columns say one thing and the named ones another."""
    tasks = ("Sort a list of numbers.", "Parse a date string.", "Reverse a linked list.")
    return [
        {
            "id": f"guessed-{n}",
            "uid": f"named-{n}",
            "messages": _messages(task, "Done: here it is."),
            "alt": _messages(f"Other task {n}: {task}", "Another answer."),
            "reward": 0.7,
            "ok": False,
            "area": "math",
        }
        for n, task in enumerate(tasks)
    ]


# annotate takes score's settings (ScoreSettings) and reads through the same run.
# Each keyword with a value that changes what these rows read as, and its kp flag.
SETTINGS: dict[str, tuple[Any, str]] = {
    "domain": ("math", "--domain"),
    "confidence": (0.3, "--confidence"),
    "messages_field": ("alt", "--messages-field"),
    "id_field": ("uid", "--id-field"),
    "success_field": ("ok", "--success-field"),
    "success_threshold": (0.9, "--success-threshold"),
    "domain_field": ("area", "--domain-field"),
}

Read = Callable[[list[dict[str, Any]], dict[str, Any]], list[ReasoningTrace]]


def _scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


CALLS: dict[str, Read] = {
    "score": lambda rows, kw: [s.trace for s in score(rows, scorer=_scorer(), **kw)],
    "select": lambda rows, kw: [s.trace for s in select(rows, scorer=_scorer(), **kw).corpus.items],
    "dedupe": lambda rows, kw: [s.trace for s in dedupe(rows, scorer=_scorer(), **kw).corpus.items],
    "split": lambda rows, kw: [
        i.trace for i in split(rows, test=0.4, scorer=_scorer(), **kw).items
    ],
    "decontaminate": lambda rows, kw: [
        i.trace for i in decontaminate(rows, against_texts=["x"], scorer=_scorer(), **kw).items
    ],
    "redact": lambda rows, kw: [i.trace for i in redact(rows, **kw).items],
}


def _converted(path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]) -> list[Any]:
    capsys.readouterr()
    assert main(["convert", str(path), *flags]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_every_reading_option_of_kp_is_a_keyword() -> None:
    """Each of kp's --domain, --confidence and row options has its keyword."""
    assert set(SETTINGS) == TraceSettings.__optional_keys__


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("keyword", sorted(SETTINGS))
def test_a_keyword_reads_the_rows_as_its_flag_does(
    call: str, keyword: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """success_field="passed" (each keyword) changes what a call reads, as --success-field does."""
    rows = _rows()
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    value, flag = SETTINGS[keyword]
    read = CALLS[call]
    plain, given = read(rows, {}), read(rows, {keyword: value})
    assert given != plain
    by_flag = _converted(path, [flag, str(value)], capsys)
    assert by_flag != _converted(path, [], capsys)
    dumped = [
        json.loads(trace.model_dump_json(by_alias=True, exclude_none=True)) for trace in given
    ]
    for mine, theirs in zip(dumped, by_flag, strict=True):
        mine["metadata"].pop("created_at", None), theirs["metadata"].pop("created_at", None)
        assert mine == theirs


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_misspelt_reading_keyword_is_refused_with_the_right_one(call: str) -> None:
    """success_feild= is a TypeError naming success_field, never silently ignored."""
    with pytest.raises(SettingTypeError, match="success_field"):
        CALLS[call](_rows(), {"success_feild": "passed"})
