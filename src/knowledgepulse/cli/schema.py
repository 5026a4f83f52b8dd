"""``kp schema``: print the JSON Schema of a file format, for editors and CI checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from knowledgepulse.cli._console import write_output

NAMES = ("trace", "suite", "case")


def _generator(name: str) -> Callable[[], dict[str, Any]]:
    # Each schema's module loads only when asked for: `kp schema trace` needs no evals code.
    if name == "trace":
        from knowledgepulse.trace.models import trace_json_schema  # noqa: PLC0415

        return trace_json_schema
    if name == "case":
        from knowledgepulse.evals.models import case_json_schema  # noqa: PLC0415

        return case_json_schema
    from knowledgepulse.evals.suite import suite_json_schema  # noqa: PLC0415

    return suite_json_schema


@click.command("schema")
@click.argument("name", type=click.Choice(NAMES))
def schema_command(name: str) -> int:
    """Print the JSON Schema of NAME: 'trace', 'suite' (suite files) or 'case' (one case).

    Point an editor at it to check files while typing, e.g. put
    '# yaml-language-server: $schema=suite.schema.json' at the top of a suite.
    """
    schema = _generator(name)()
    write_output(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", None)
    return 0
