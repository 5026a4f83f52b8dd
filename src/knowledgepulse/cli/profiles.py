"""``kp profiles``: the weight table."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.text import printable
from knowledgepulse.cli._options import format_option
from knowledgepulse.value.profiles import ProfileRegistry, load_profiles

profiles_file_option = click.option(
    "--profiles",
    "profiles_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML/JSON file of extra weight profiles: {domain: {complexity, novelty, tool_diversity, "
    "outcome_confidence}}.",
)


def registry_from(profiles_file: Path | None) -> ProfileRegistry:
    """The built-in profiles plus any from the user's file."""
    return ProfileRegistry(load_profiles(profiles_file) if profiles_file is not None else None)


@click.command("profiles")
@format_option(("table", "json"), "Output format.", "table")
@profiles_file_option
def profiles_command(output_format: str, profiles_file: Path | None) -> int:
    """Show the weight profiles: which domain weighs which dimension how much.

    A trace's metadata.task_domain picks the profile by exact match; any other domain uses
    'default'.
    """
    registry = registry_from(profiles_file)
    if output_format == "json":
        data = {name: weights.to_dict() for name, weights in registry.items()}
        click.echo(json.dumps(data, indent=2))
        return 0
    table = Table(header_style="bold", show_edge=False, pad_edge=False)
    for column in ("profile", "complexity", "novelty", "tool_diversity", "outcome_confidence"):
        table.add_column(column, justify="left" if column == "profile" else "right")
    for name, weights in registry.items():
        table.add_row(
            Text(printable(name, one_line=True)), *(f"{w:.2f}" for w in weights.as_tuple())
        )
    Console().print(table)
    return 0
