"""Writing evaluation projects (suite, case files, evaluation file) into a pytester directory."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

# Imported here, in the outer session: pytester's in-process runs drop the modules a run imported
# when it ends, and PyYAML imported again keeps libyaml's parser (an extension module, imported
# once per process) with the first import's event classes, so a later run's YAML reads failed
# (UnboundLocalError in yaml.composer) whenever no earlier test had imported it; numpy (which the
# items import through knowledgepulse.testing) refuses a second import in a process outright.
import knowledgepulse.pytest_plugin.items
import knowledgepulse.records.yaml  # noqa: F401
from tests.evals.builders import op, page
from tests.user_code import user_code_forgotten

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
def user_code() -> Iterator[None]:
    """Forget the tasks and scorer plugins a test imported; leave the registry as it was."""
    with user_code_forgotten():
        yield


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
