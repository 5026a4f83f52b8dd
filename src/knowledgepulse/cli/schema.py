"""``kp schema``: print the JSON Schema of a file format, for editors and CI checks."""

from __future__ import annotations

import sys

import click

from knowledgepulse.evals.schema import SCHEMAS, schema_text


@click.command("schema")
@click.argument("name", type=click.Choice(tuple(SCHEMAS)))
def schema_command(name: str) -> int:
    """Print the JSON Schema of NAME: 'suite' (suite files) or 'case' (one evaluation case).

    Point an editor at it to check files while typing, e.g. put
    '# yaml-language-server: $schema=suite.schema.json' at the top of a suite.
    """
    sys.stdout.write(schema_text(name))
    sys.stdout.flush()
    return 0
