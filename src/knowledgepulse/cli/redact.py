"""``kp redact``: traces cleaned of secrets and identifiers to be shared.

Each trace is cleaned by its privacy level as it is read (its dataset row too) and written back
in its own form; what was redacted is said by JSON path, never by value.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._options import command, output_option
from knowledgepulse.cli._redaction import level_option, rules_option
from knowledgepulse.cli._traces import (
    ProblemSink,
    item_output,
    paths_argument,
    read_traces,
    source_options,
    sources,
    trace_options_of,
)
from knowledgepulse.reports.redaction import finding_line, redaction_summary
from knowledgepulse.reports.rows import kept_tail
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.reports.value import dumps
from knowledgepulse.runs.redaction import finding_entry, redact_items, redaction_report, unread_rows
from knowledgepulse.runs.write import rows_form
from knowledgepulse.trace.item import TraceItem

if TYPE_CHECKING:
    from knowledgepulse.redact.walk import Finding


@command("redact")
@paths_argument
@level_option
@rules_option("--rules")
@output_option(
    "Write the redacted traces here (JSONL, atomically) instead of stdout; dataset rows go "
    "as JSONL or, for a .parquet name, Parquet."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write what was redacted in each trace here (JSON: id, file, line, and each JSON "
    "path's type, rule and count) instead of listing it on stderr.",
)
@source_options(required=False)
def redact_command(
    *,
    paths: tuple[str, ...],
    privacy_level: str | None,
    rules_file: Path | None,
    output: Path | None,
    report_path: Path | None,
    allow_empty: bool,
    **options: Any,
) -> int:
    """Redact secrets and personal data from traces, so that they are safe to share.

    Every free-text string of a trace (objective, step content, tool input at any depth,
    observations, result summary) is cleaned; keys, ids, enumerations and non-strings are
    never changed, and no trace is dropped. Secrets (API keys and tokens of some 200
    providers, private keys, JWTs, connection strings, passwords, credentials in URLs, values
    under keys such as password or api_key) are always replaced by [REDACTED:<type>]; e-mails,
    phone numbers, IP addresses, home-directory paths, card numbers, IBANs and US SSNs too,
    unless the trace's privacy level is private (a trace converted with --from is private:
    give --privacy-level aggregated to remove identifiers too). Dataset rows (--from) are
    written back in their own form, every string cleaned; a row that cannot be read too, with
    kp_error saying why.

    PATH is a JSON or JSON Lines file (.gz too), or - for standard input. A record that cannot
    be read is reported on stderr as FILE:LINE: PATH: message and the others go on; exit code
    1 when there was any.
    """
    convert_options = trace_options_of(options)
    inputs = sources(paths)
    form = rows_form(output, inputs)  # Parquet without -o refused before reading
    for path in (output, report_path):
        if path is not None:
            check_destination(path, what="output")
    from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load only here

    redactor = Redactor(privacy_level, rules_file=rules_file)
    # A dataset row that gives no trace is written back too, cleaned as a read row is.
    unread = unread_rows(redactor)
    sink = ProblemSink(unread=unread)
    reported: list[dict[str, Any]] = []

    def found(item: TraceItem, findings: list[Finding]) -> None:
        if findings and report_path is not None:
            reported.append(finding_entry(item, findings))
            return
        for finding in findings:
            say(finding_line(item.location, finding))

    with ReadProgress.for_sources(inputs) as progress:
        read = read_traces(inputs, sink, progress, options=convert_options, **options)
        first = next(read, None)
        again = unread.items(itertools.chain([] if first is None else [first], read))
        items = redact_items(again, redactor, found=found)
        # Dataset rows go back as rows (their form, or -o's), anything else as trace documents.
        rows = first is None or first.row is not None  # none: Parquet stays Parquet
        with item_output(output, form if rows else "jsonl", added=(), unread=unread) as out:
            for item in items:
                if rows:
                    out.write_row(item, {})
                else:
                    out.write_trace(item)
    if report_path is not None:
        with open_output(report_path) as stream:
            stream.write(dumps(redaction_report(redactor, out.items, reported)) + "\n")
    message = f"read {counted(out.items, 'trace')}; {redaction_summary(redactor)}"
    if sink.tally.invalid:
        message += f"; {counted(sink.tally.invalid, 'record')} could not be read"
    say(message + kept_tail(unread.written))
    return sink.exit_code(out.items, allow_empty=allow_empty)
