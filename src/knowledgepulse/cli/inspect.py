"""``kp inspect``: how one file is read, on one screen, to check a conversion in a minute."""

from __future__ import annotations

from typing import Any

import click

from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._options import command, format_option
from knowledgepulse.cli._redaction import redact_options, redactor_from
from knowledgepulse.cli._traces import source_options, trace_options_of
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.runs.redaction import inspect_redacted
from knowledgepulse.sources import Inspection


@command("inspect")
@click.argument("path")
@source_options(required=True, task_field=True)
@format_option(
    ("text", "json"),
    "text: one screen for a person; json: every part whole, for a program.",
    "text",
)
@redact_options
def inspect_command(
    *, path: str, source: str, output_format: str, allow_empty: bool, **options: Any
) -> int:
    """Say how PATH is read: its source and why, and where each part of its first trace came from.

    Shows the source that reads the file and the evidence (the sources that also recognise it,
    and records no source knows), the field each part of the first trace came from (objective,
    steps, answer, success, reward, task, domain, id), that trace's steps beside the record it
    was made of, and the counts of records, traces, errors and warnings. Exit code 1 when the
    file gives no trace, an empty one too (unless --allow-empty); 2 when it cannot be read or,
    without --from, holds records no source recognises. Secrets in the values shown are always
    redacted, as in any message; --redact redacts personal data too, by the trace's privacy
    level (see kp redact), for an inspection to paste in a bug report. A vector cache (what kp
    score saves) is described instead: its embedder, size, expired vectors and ids.
    """
    from knowledgepulse.novelty.cache.describe import describe_cache, is_cache_file  # noqa: PLC0415
    from knowledgepulse.reports.inspection import inspection_report  # noqa: PLC0415
    from knowledgepulse.reports.redaction import identifiers_kept  # noqa: PLC0415

    redactor = redactor_from(options)
    inspected = (
        describe_cache(path)  # a vector cache: described, not read as traces
        if is_cache_file(path)
        else inspect_redacted(
            path, source=source, options=trace_options_of(options), redact=redactor or False
        )
    )
    with open_output(None, for_people=output_format == "text") as stream:
        stream.write(inspection_report(inspected, output_format))
    if redactor is not None and redactor.kept_private:  # as every redacting command says
        say(identifiers_kept(redactor))
    found = not isinstance(inspected, Inspection) or inspected.traces
    return EXIT_OK if found or allow_empty else EXIT_FINDINGS
