"""``kp redact``: traces made safe to share, with a report of what was redacted where.

Each trace is cleaned by its own ``metadata.privacy_level`` (or ``--privacy-level``) and
written as it is read; what was redacted (JSON path, type, rule, count: never the value) goes
to stderr, or to ``--report`` as JSON with stderr keeping the summary.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import ReadProgress, open_output, say
from knowledgepulse.cli._emit import parquet_rows, row_output
from knowledgepulse.cli._options import output_option
from knowledgepulse.cli._redact import Redactor, level_option, rules_option
from knowledgepulse.cli._traces import (
    ProblemSink,
    paths_argument,
    read_traces,
    source_options,
    sources,
    trace_options,
)
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.redact import Finding
from knowledgepulse.reports.value import dumps
from knowledgepulse.trace.load import LoadedTrace


@click.command("redact")
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
    source: str | None,
    domain: str | None,
    confidence: float | None,
    **row_columns: str | float | None,
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
    written back in their own form, every string cleaned.

    PATH is a JSON or JSON Lines file (.gz too), or - for standard input. A record that cannot
    be read is reported on stderr as FILE:LINE: PATH: message and the others go on; exit code
    1 when there was any.
    """
    options = trace_options(source, domain, confidence, row_columns)
    inputs = sources(paths)
    if source is not None:
        parquet_rows(output, inputs)  # Parquet needs -o: refused before reading
    for path in (output, report_path):
        if path is not None:
            check_destination(path, what="output")
    redactor = Redactor(privacy_level, rules_file)
    sink = ProblemSink()
    reported: list[dict[str, Any]] = []
    written = 0
    with ReadProgress.for_sources(inputs) as progress:
        traces = read_traces(inputs, sink, progress, source, options)
        first = next(traces, None)
        if first is not None:
            traces = itertools.chain([first], traces)
        redacted = _redacted(traces, redactor, reported if report_path else None)
        if first is not None and first.row is not None:
            with row_output(output, inputs, added=()) as rows:
                for loaded in redacted:
                    rows.write(loaded.row or loaded.record, {})
                    written += 1
        else:
            with open_output(output) as stream:
                for loaded in redacted:
                    stream.write(dumps(loaded.record.value) + "\n")
                    written += 1
    if report_path is not None:
        report = {
            "traces": written,
            "redacted_traces": redactor.redacted,
            "redactions": dict(redactor.types.most_common()),
            "by_trace": reported,
        }
        with open_output(report_path) as stream:
            stream.write(dumps(report) + "\n")
    message = f"read {counted(written, 'trace')}; {redactor.summary()}"
    if sink.tally.invalid:
        message += f"; {counted(sink.tally.invalid, 'record')} could not be read"
    say(message)
    return EXIT_FINDINGS if sink.errors else EXIT_OK


def _redacted(
    traces: Iterator[LoadedTrace], redactor: Redactor, reported: list[dict[str, Any]] | None
) -> Iterator[LoadedTrace]:
    for loaded in traces:
        cleaned, findings = redactor.redact(loaded)
        if findings and reported is not None:
            reported.append(_trace_entry(loaded, findings))
        elif findings:
            for finding in findings:
                say(
                    f"{loaded.location}: {finding.path}: redacted {finding.count} "
                    f"{finding.type} ({finding.rule})"
                )
        yield cleaned


def _trace_entry(loaded: LoadedTrace, findings: list[Finding]) -> dict[str, Any]:
    location = loaded.location
    return {
        "id": loaded.trace.id,
        "file": location.file,
        "line": location.line,
        "redactions": [
            {"path": f.path, "type": f.type, "rule": f.rule, "count": f.count} for f in findings
        ],
    }
