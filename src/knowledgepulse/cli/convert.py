"""``kp convert``: agent frameworks' telemetry files to ``ReasoningTrace`` JSON Lines.

Written as the files are read (an OTel file exporter's run can be long); ``quality_score`` is
0.0 until scored (``kp score --from`` converts and scores in one go).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowledgepulse.cli._console import output_target
from knowledgepulse.cli._options import TO_MESSAGES_HELP, command, output_option, to_option
from knowledgepulse.cli._redaction import notes_said, redact_options, redactor_from
from knowledgepulse.cli._traces import (
    InputPaths,
    exit_code,
    paths_argument,
    say_summary,
    shown_problems,
    source_options,
    trace_options_of,
)
from knowledgepulse.runs.convert import ConvertTo, convert_files


@command("convert")
@paths_argument
@source_options(required=True)
@output_option("Write the traces here instead of stdout (atomically); a .parquet name: Parquet.")
@to_option(
    ("trace", "messages", "atif"),
    "trace: ReasoningTrace JSON Lines; " + TO_MESSAGES_HELP + " atif: Harbor's ATIF "
    "trajectories, one a line.",
    "trace",
)
@redact_options
def convert_command(
    *, paths: InputPaths, output: Path | None, to: ConvertTo, allow_empty: bool, **options: Any
) -> int:
    """Convert agent frameworks' files to ReasoningTrace JSON Lines, one trace per run.

    The files: an agent framework's or observability tool's export, a coding agent's session
    log, or a dataset of conversation rows, each format listed under --from. Each file is
    recognised by its content, and what it was read as is said on stderr. --to messages
    writes training rows instead, which --from auto reads back.

    PATH is a JSON, JSON Lines (.gz, .xz, .bz2 too) or Parquet file, or - for standard input.
    A record that cannot be read is reported on stderr as FILE:LINE: message and the others go
    on; exit code 1 when there was any.
    """
    redactor = redactor_from(options)
    with output_target(output) as target:
        done = convert_files(
            paths.given,
            target,
            to=to,
            redact=redactor or False,
            options=trace_options_of(options),
            notes=notes_said(redactor),
            on_problem=shown_problems(),
            **options,
        )
    say_summary(done.summary)
    return exit_code(done.tally, done.traces, allow_empty=allow_empty)
