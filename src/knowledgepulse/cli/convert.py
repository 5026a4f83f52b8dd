"""``kp convert``: agent frameworks' telemetry files to ``ReasoningTrace`` JSON Lines.

Written as the files are read (an OTel file exporter's run can be long); ``quality_score`` is
0.0 until scored (``kp score --from`` converts and scores in one go).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._options import TO_MESSAGES_HELP, command, output_option, to_option
from knowledgepulse.cli._redaction import redact_options, redactor_from
from knowledgepulse.cli._traces import (
    ProblemSink,
    item_output,
    paths_argument,
    read_traces,
    source_options,
    sources,
    trace_options_of,
)
from knowledgepulse.records.readers import open_source
from knowledgepulse.reports.redaction import summary_tail
from knowledgepulse.reports.rows import kept_tail
from knowledgepulse.reports.value import dumps
from knowledgepulse.runs.redaction import unread_rows, written_items
from knowledgepulse.runs.write import rows_form
from knowledgepulse.sources._sessions.atif import to_atif


@command("convert")
@paths_argument
@source_options(required=True)
@output_option("Write the traces here instead of stdout (atomically: the file appears when done).")
@to_option(
    ("trace", "messages", "atif"),
    "trace: ReasoningTrace JSON Lines; " + TO_MESSAGES_HELP + " atif: Harbor's ATIF "
    "trajectories, one a line.",
    "trace",
)
@redact_options
def convert_command(
    *, paths: tuple[str, ...], output: Path | None, to: str, allow_empty: bool, **options: Any
) -> int:
    """Convert agent frameworks' files to ReasoningTrace JSON Lines, one trace per run.

    The files: OpenTelemetry (OTLP JSON), LangSmith runs, OpenAI Agents SDK spans, smolagents
    steps, Pydantic AI messages, an observability tool's export (Langfuse, Arize Phoenix,
    Jaeger, Tempo, OTel JS spans) or datasets of conversation rows (see --from). Each file is
    recognised by its content, and what it was read as is said on stderr. --redact cleans
    the traces of secrets and personal data (see kp redact). --to messages writes training
    rows instead (JSON Lines, or Parquet for a .parquet -o), which --from auto reads back.

    --to atif writes each trace as a Harbor ATIF trajectory instead, one a line.

    PATH is a JSON, JSON Lines (.gz too) or Parquet file, or - for standard input. A record
    that cannot be read is reported on stderr as FILE:LINE: message and the others go on; exit
    code 1 when there was any.
    """
    convert_options = trace_options_of(options)
    redactor = redactor_from(options)
    inputs = sources(paths)
    for path in inputs:
        if path != "-":
            with open_source(path):  # a missing file fails now, before any output
                pass
    if output is not None:
        check_destination(output, what="output")
    messages = to == "messages"
    # Training rows: a row that gives no trace is written too (every field empty, kp_error).
    unread = unread_rows(redactor) if messages else None
    sink = ProblemSink(unread=unread)
    read = read_traces(inputs, sink, options=convert_options, **options)
    items = written_items(read, unread, redactor)
    count = 0
    if to == "atif":
        with open_output(output) as stream:
            for item in items:
                stream.write(dumps(to_atif(item.trace)) + "\n")
                count += 1
    else:
        form = rows_form(output, ()) if messages else "jsonl"
        with item_output(output, form, (), messages=messages, unread=unread) as written:
            for item in items:
                written.write_trace(item)
        count = written.items
    message = f"converted {counted(count, 'trace')}"
    if sink.tally.invalid:
        message += f"; {counted(sink.tally.invalid, 'record')} could not be read"
    if sink.tally.warnings:
        message += f"; {counted(sink.tally.warnings, 'warning')}"
    message += kept_tail(0 if unread is None else unread.written)
    say(message + summary_tail(redactor))
    return sink.exit_code(count, allow_empty=allow_empty)
