"""Writing evaluation projects (suite, case files, evaluation file) into a pytester directory."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.evals import registry
from tests.evals.builders import op, page

Json = dict[str, Any]
SUITE = """\
name: rename
scorers:
  - type: operation-accuracy
  - type: content-quality
"""


def rename_case(case_id: str, *, renamed: str = "Basket") -> Json:
    """A one-page rename case; with ``renamed`` other than Basket its content pattern fails."""
    return {
        "id": case_id,
        "pages": [page("p", b1="Your Cart")],
        "actual": {"operations": [op("update", "b1", content=f"Your {renamed}")]},
        "expected": {"operations": [op("update", "b1")], "contentPatterns": ["Basket"]},
    }


def write_jsonl(path: Path, records: Sequence[Json | str]) -> Path:
    """One record a line; a string is written as it is (a broken line, say)."""
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def literal(pattern: str) -> str:
    """An fnmatch pattern whose ``[`` are characters, not sets (``cases[0]``)."""
    return pattern.replace("[", "[[]")


Project = Callable[..., Path]


@pytest.fixture(autouse=True)
def user_code(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget the tasks and scorer plugins a test imported; leave the registry as it was."""
    registry.get_scorer_class("operation-accuracy")  # the built-ins are in the snapshot
    saved = dict(registry._registry)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        # Never a library the test happened to load first (numpy cannot be imported twice).
        origin = str(getattr(sys.modules[name], "__file__", None) or "")
        if "site-packages" not in origin and f"src{os.sep}knowledgepulse" not in origin:
            del sys.modules[name]
    registry._registry.clear()
    registry._registry.update(saved)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Project:
    """Write ``suite.yaml``, ``cases.jsonl`` (the given records) and ``evals.kp.yaml``.

    Returns the evaluation file's path; ``suite`` replaces the suite's text, ``eval_file`` the
    evaluation file's.
    """

    def write(*records: Json | str, suite: str = SUITE, eval_file: str | None = None) -> Path:
        root = pytester.path
        (root / "suite.yaml").write_text(suite, encoding="utf-8")
        write_jsonl(root / "cases.jsonl", records)
        target = root / "evals.kp.yaml"
        target.write_text(eval_file or "suite: suite.yaml\ncases: cases.jsonl\n", "utf-8")
        return target

    return write
