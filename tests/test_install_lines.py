"""The install lines in the README, docs/ and examples/ work as written: every extra they name
is one pyproject.toml defines, the framework examples (which score) install the embedding model,
a command to copy installs knowledgepulse from a checkout (no package index has it), and both
lists of extras name every extra there is."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.paths import REPO

EXTRAS: dict[str, list[str]] = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))[
    "project"
]["optional-dependencies"]
PAGES = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "examples").rglob("README.md")),
    *sorted((REPO / "examples").rglob("*.py")),
]
# `".[a,b]"` (from a checkout) or `knowledgepulse[a,b]` (a name in a table or a message).
EXTRAS_NAMED = re.compile(r"(?:\"\.|knowledgepulse)\[([\w,-]+)\]")
FENCED_SHELL = re.compile(r"^```(?:sh|bash|console)\n(.*?)^```", re.S | re.M)


def text(page: Path) -> str:
    """A page's text."""
    return page.read_text("utf-8")


def install_lines(page: Path) -> list[str]:
    """Each line of a page that runs ``pip install``."""
    return [line for line in text(page).splitlines() if "pip install" in line]


def with_included(extras: set[str]) -> set[str]:
    """The extras and every extra they take in (``dev`` takes ``test``, which takes ``ray``...)."""
    found = set(extras)
    while True:
        more = {
            name
            for extra in found & set(EXTRAS)
            for requirement in EXTRAS[extra]
            if requirement.startswith("knowledgepulse[")
            for name in requirement.partition("[")[2].rstrip("]").split(",")
        }
        if more <= found:
            return found
        found |= more


def named_extras(line: str) -> set[str]:
    """The extras one line names."""
    return {name for group in EXTRAS_NAMED.findall(line) for name in group.split(",")}


def test_every_extra_named_exists() -> None:
    """Each ``.[extra]`` or ``knowledgepulse[extra]`` in a page is defined in pyproject.toml."""
    named = {(page.name, extra) for page in PAGES for extra in named_extras(text(page))}
    assert len(named) > 20
    assert {(page, extra) for page, extra in named if extra not in EXTRAS} == set()


def test_every_framework_example_installs_the_embedding_model() -> None:
    """An example that runs an agent and scores its trace installs ``embeddings`` (else every
    score's novelty is 0.5), by name or through an extra that takes it in (``examples``)."""
    lines = [
        line
        for page in PAGES
        for line in install_lines(page)
        if "examples/integrations" in str(page) or "python examples/integrations/" in line
    ]
    assert len(lines) >= 13  # six examples' READMEs and scripts, and the README's one-liner
    for line in lines:
        assert named_extras(line), line
        for group in EXTRAS_NAMED.findall(line):
            assert "embeddings" in with_included(set(group.split(","))), line


def test_a_command_to_copy_installs_knowledgepulse_from_a_checkout() -> None:
    """No shell block runs ``pip install knowledgepulse...``: it is on no package index."""
    commands = [
        line
        for page in PAGES
        for block in FENCED_SHELL.findall(text(page))
        for line in block.splitlines()
        if "pip install" in line
    ]
    assert len(commands) > 10
    assert [line for line in commands if re.search(r"pip install [^#]*knowledgepulse", line)] == []


def test_both_lists_of_extras_name_every_extra() -> None:
    """The README's list and the getting-started table leave no extra out (``parquet`` was)."""
    readme = text(REPO / "README.md").partition("## Install")[2].partition("\n## ")[0]
    table = (
        text(REPO / "docs" / "getting-started.md").partition("| extra |")[2].partition("\n\n")[0]
    )
    readme_names = set(re.findall(r"`([\w-]+)`", readme)) | named_extras(readme)
    table_names = set(re.findall(r"`([\w-]+)`", table))
    assert set(EXTRAS) - readme_names == set()
    assert set(EXTRAS) - table_names == set()
