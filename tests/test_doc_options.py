"""Every ``kp COMMAND ... --option`` the README and docs/ write (in a code block or inline) names
an option that command has: a renamed or removed option cannot stay in the docs, whether or not
the command is run by a test (most are not: they name the reader's own files)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from knowledgepulse.cli.main import cli
from knowledgepulse.sources._registry import source_names
from tests.paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# `kp NAME` and what follows it on the line, up to the end of the code span, a comment, a pipe or
# a redirection into a file (`2>&1 >/dev/null` is part of the command).
USE = re.compile(r"\bkp (\w[\w-]*)((?: +(?:[^`#|;&>\n]|>(?!/))*)?)")
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")


def options() -> dict[str, set[str]]:
    """Each command's option names, as ``kp COMMAND --help`` lists them."""
    context = click.Context(cli)
    found = {}
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None
        names = {"-h", "--help"}
        for parameter in command.params:
            names.update(parameter.opts, parameter.secondary_opts)
        found[name] = names
    return found


def uses(text: str) -> list[tuple[int, str, str]]:
    """Each ``(line, command, option)`` written after ``kp COMMAND`` in a text."""
    return [
        (number, use.group(1), option)
        for number, line in enumerate(text.splitlines(), 1)
        for use in USE.finditer(line)
        for option in OPTION.findall(use.group(2))
    ]


@pytest.mark.parametrize("path", PAGES, ids=[path.name for path in PAGES])
def test_every_option_written_after_a_command_is_one_it_has(path: Path) -> None:
    """An option the page gives a ``kp`` command is in that command's ``--help``."""
    known = options()
    wrong = [
        f"{path.name}:{line}: kp {name} {option}"
        for line, name, option in uses(path.read_text("utf-8"))
        if name in known and option not in known[name]
    ]
    assert wrong == []


def test_options_are_read_where_the_pages_write_them() -> None:
    """Inline, in blocks, after positional words, ``-o`` short forms, not past a comment."""
    assert uses("`kp score FILE --explain -o x.json` and kp select a # --nope") == [
        (1, "score", "--explain"),
        (1, "score", "-o"),
    ]
    assert ("score", "--no-embedder") in {
        (name, option)
        for _, name, option in uses((REPO / "docs" / "scoring.md").read_text("utf-8"))
    }
    assert "--frobnicate" not in options()["score"]


def test_the_from_values_integrations_lists_are_every_built_in_source() -> None:
    """The list of ``--from SOURCE`` values (and of conversation formats after it) names each.

    It lacked the sessions' sources added after it was written (pi, goose, opencode...): a
    reader of the page could not tell that ``--from pi`` exists.
    """
    text = (REPO / "docs" / "integrations.md").read_text("utf-8")
    start = text.index("`--from SOURCE` (`otlp`")
    end = text.index("are read the same way", start)
    listed = set(re.findall(r"`(?:--from )?([a-z][a-z0-9-]*)`", text[start:end]))
    assert [name for name in source_names() if name not in listed] == []
