"""Each command's ``--help``: the options it names are ones the command has."""

from __future__ import annotations

import re

import click
import pytest

from knowledgepulse.cli.main import EXIT_USAGE, cli
from tests.cli.conftest import KpRunner

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")
ANOTHER_COMMANDS_LINE = re.compile(r"\bkp (\w+)\b[^.;)]*")
"""``kp eval CASES --suite SUITE``: an example of another command, whose options it names."""


def _help_texts(command: click.Command) -> list[str]:
    texts = [command.help or "", command.epilog or ""]
    return texts + [p.help or "" for p in command.params if isinstance(p, click.Option)]


@pytest.mark.parametrize("name", cli.list_commands(click.Context(cli)))
def test_every_option_a_commands_help_names_is_its_own(name: str) -> None:
    """An option named in a command's help (its text, its options') is one it takes."""
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    own = {flag for p in command.params for flag in (*p.opts, *p.secondary_opts)}
    texts = (
        ANOTHER_COMMANDS_LINE.sub(lambda m: "" if m[1] != name else m[0], text)
        for text in _help_texts(command)
    )
    named = {flag for text in texts for flag in OPTION.findall(text)}
    assert named - own - {"--help"} == set()


@pytest.mark.parametrize(("typed", "meant"), [("scroe", "score"), ("selct", "select")])
def test_a_misspelt_command_is_answered_with_the_nearest_one(
    kp: KpRunner, typed: str, meant: str
) -> None:
    """``kp scroe`` says ``Did you mean 'score'?``, as a misspelt option does; before, no guess."""
    run = kp(typed, "x.jsonl")
    assert run.code == EXIT_USAGE
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in run.err


@pytest.mark.parametrize("flag", ["-v", "-vv", "--verbose"])
def test_verbose_after_the_command_says_where_it_goes(kp: KpRunner, flag: str) -> None:
    """``kp score -v`` says -v is kp's own option, to put before the command."""
    run = kp("score", flag, "x.jsonl")
    assert run.code == EXIT_USAGE
    assert "It is kp's own: kp -v COMMAND" in run.err
