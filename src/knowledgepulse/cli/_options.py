"""What the commands' shared options are made with: a group of options as one decorator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

Command = TypeVar("Command", bound=Callable[..., Any])


def option_group(command: Command, *options: Callable[[Any], Any]) -> Command:
    """``command`` with ``options``, which ``--help`` lists in the order given."""
    for option in reversed(options):
        command = option(command)
    return command


def output_option(help: str) -> Callable[[Command], Command]:
    """``-o/--output PATH``: where a command writes instead of stdout."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help=help
    )


def refuse_usage(*rules: tuple[bool, str]) -> None:
    """Raise the first ``(broken, message)`` rule that is broken as a usage error (exit 2)."""
    for broken, message in rules:
        if broken:
            raise click.UsageError(message)
