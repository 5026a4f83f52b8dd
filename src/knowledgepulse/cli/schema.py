"""``kp schema``: print the JSON Schema of a file format, for editors and CI checks."""

from __future__ import annotations

import json
import pkgutil

import click

from knowledgepulse.cli._console import open_output
from knowledgepulse.cli._options import command

# Each schema's module loads only when asked for: `kp schema trace` needs no evals code.
_SCHEMAS = {
    "trace": "knowledgepulse.trace.models:trace_json_schema",
    "suite": "knowledgepulse.evals.suite:suite_json_schema",
    "case": "knowledgepulse.evals.models:case_json_schema",
}


@command("schema")
@click.argument("name", type=click.Choice(tuple(_SCHEMAS)))
def schema_command(name: str) -> int:
    """Print the JSON Schema of NAME: 'trace', 'suite' (suite files) or 'case' (one case).

    Point an editor at it to check files while typing, e.g. put
    '# yaml-language-server: $schema=suite.schema.json' at the top of a suite.
    """
    schema = pkgutil.resolve_name(_SCHEMAS[name])()
    with open_output(None) as stream:
        stream.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    return 0
