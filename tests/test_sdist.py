"""The sdist carries what the tests read, so the suite passes from an unpacked sdist (the tests
read docs/ pages and run their commands: docs/ was left out once)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.paths import REPO

# hatch puts these in every sdist whatever `include` says; `.git` is read only when present.
ALWAYS = {"pyproject.toml", ".git"}
ROOTED = re.compile(r"\b(?:ROOT|REPO)\s*/\s*\"([^\"/]+)")
UP = re.compile(r"\bparents\[(\d)\]\s*/\s*\"([^\"/]+)")


def read_by_tests() -> set[str]:
    """The repository's top-level names the tests join onto its root."""
    names: set[str] = set()
    for test in (REPO / "tests").rglob("*.py"):
        text = test.read_text("utf-8")
        names.update(ROOTED.findall(text))
        here = test.resolve()
        names.update(name for up, name in UP.findall(text) if here.parents[int(up)] == REPO)
    return names


def test_the_sdist_ships_every_top_level_path_the_tests_read() -> None:
    """Each of docs/, examples/, schemas/, README.md... that a test reads is in the sdist."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    shipped = set(config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]) | ALWAYS
    read = read_by_tests()
    assert {"docs", "examples", "README.md"} <= read  # the scan finds what it is for
    assert read - shipped == set()
    assert "tests" in shipped


def test_every_path_the_sdist_includes_exists() -> None:
    """No include names something the repository does not have."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    included = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert [name for name in included if not Path(REPO, name).exists()] == []
